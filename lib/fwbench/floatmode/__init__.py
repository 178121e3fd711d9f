"""Subnormal floats as a declared condition of a trial (``fp_mode``), set before any framework import and verified
in the framework's own threads.

Why: backpropagating through 500 LSTM steps drives gradients into subnormal floats. Intel Xeon CPUs handle them in
microcode, about 5-13x slower per step here; AMD EPYC barely notices. Each library decides for itself whether to
flush them, so "the framework's speed" on Intel is mostly its subnormal policy unless that policy is a condition of
the trial, the same for every framework.

- ``default``: nothing is set; the trial records what its framework's kernels do (JAX's XLA flushes on its own,
  PyTorch and MXNet do not).
- ``flush``: flush-to-zero (FTZ, results) and denormals-are-zero (DAZ, inputs), bits 15 and 6 of the x86 MXCSR,
  set with glibc's ``fesetenv`` in the trial's main thread before the framework is imported (no framework call:
  every framework gets the same bits by the same means). Threads inherit the register from their creator, so every
  pool a framework starts later carries them; a pool started before, or a library resetting it, would not.

The check (``verify``): each framework's probe (``fwbench/floatmode/<framework>.py``, twins with one public name,
``subnormal_products``) multiplies large arrays with its own kernels on its own pool: a subnormal times 1e10 (zero
only under DAZ), two tiny normals with a subnormal product (zero only under FTZ), and a matrix product of subnormals
(the GEMM threads). Each result is split over the pool's threads, so the share of exact zeros is 1 only when every
thread flushes, 0 when none does. A ``flush`` trial whose shares are not all 1 is refused (its timing would be of a
mixed condition); a ``default`` trial records them as its framework's policy. The probes run after the trial's
work, on the threads that did it, outside any timing and outside the fingerprinted facts modules (they change
nothing a trial measures).

x86-64 Linux only (glibc's ``fenv_t`` keeps MXCSR at byte 28); elsewhere ``flush`` is refused with one line.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import platform
import struct

from ..errors import FwbenchError
from ..frameworks import get_framework

DEFAULT, FLUSH = "default", "flush"
FP_MODES = (DEFAULT, FLUSH)
FTZ, DAZ = 1 << 15, 1 << 6  # MXCSR bits
_FENV_SIZE, _MXCSR_OFFSET = 32, 28  # glibc x86-64 fenv_t: the x87 environment (28 bytes), then MXCSR

# The probe's operands (float32): SUBNORMAL x SCALE is 1e-29, normal, so zero only under DAZ; TINY x TINY is 1e-40,
# subnormal, so zero only under FTZ. SUBNORMAL is made from its bits (0x000AE398 x 2**-149 = 1.0e-39) and results are
# read as bits: a conversion or comparison in a flushing main thread would zero a subnormal itself, and the check
# would pass whatever the pool did.
SUBNORMAL_BITS, SCALE, TINY = 0x000AE398, 1e10, 1e-20
PROBE_ELEMENTS = 1 << 21  # split over the pool's threads by every framework's elementwise kernels
PROBE_GEMM = 256  # square matrices: the GEMM kernels run blocked over the pool


def _libm():
    if platform.machine() not in ("x86_64", "AMD64"):
        raise FwbenchError(f"fp_mode=flush sets the x86 MXCSR register; this machine is {platform.machine()}")
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def mxcsr() -> int | None:
    """The calling thread's MXCSR register (None off x86-64)."""
    try:
        libm = _libm()
    except (FwbenchError, OSError):
        return None
    env = ctypes.create_string_buffer(_FENV_SIZE)
    if libm.fegetenv(env) != 0:
        return None
    return struct.unpack_from("<I", env.raw, _MXCSR_OFFSET)[0]


def thread_mode(register: int | None) -> str | None:
    """``flush`` when both FTZ and DAZ are set, ``default`` when neither, ``partial`` otherwise."""
    if register is None:
        return None
    bits = register & (FTZ | DAZ)
    return FLUSH if bits == FTZ | DAZ else DEFAULT if bits == 0 else "partial"


def check_mode(mode) -> str:
    if mode not in FP_MODES:
        raise FwbenchError(f"fp_mode must be one of {', '.join(FP_MODES)}, got {mode!r}")
    return mode


def write_register(flush: bool) -> None:
    """Set (``flush``) or clear FTZ and DAZ in the calling thread's MXCSR, the rest of it kept."""
    libm = _libm()
    env = ctypes.create_string_buffer(_FENV_SIZE)
    if libm.fegetenv(env) != 0:
        raise FwbenchError("fegetenv failed")
    register = struct.unpack_from("<I", env.raw, _MXCSR_OFFSET)[0]
    struct.pack_into("<I", env, _MXCSR_OFFSET, register | FTZ | DAZ if flush else register & ~(FTZ | DAZ))
    if libm.fesetenv(env) != 0:
        raise FwbenchError("fesetenv failed")
    if thread_mode(mxcsr()) != (FLUSH if flush else DEFAULT):
        raise FwbenchError(f"MXCSR reads {mxcsr()!r} after {'setting' if flush else 'clearing'} FTZ and DAZ")


def apply(mode: str) -> dict:
    """Set ``mode`` in the calling thread (call it before any framework is imported); returns what the register
    held before and after. ``default`` sets nothing."""
    check_mode(mode)
    before = mxcsr()
    if mode == FLUSH:
        write_register(True)
    return {"fp_mxcsr_before": before, "fp_mxcsr_main": mxcsr()}


def pool_mode(shares: dict[str, float]) -> str:
    """What a probe's shares of exact zeros say of the pool: ``flush`` (every thread flushes), ``default`` (none
    does), ``mixed`` (some threads or kernels do)."""
    values = set(shares.values())
    return FLUSH if values == {1.0} else DEFAULT if values == {0.0} else "mixed"


def probe(framework: str) -> dict[str, float] | None:
    """The framework's probe shares (None for a framework without a probe: the self-test's ``none``)."""
    module = get_framework(framework).probe_module
    if module is None:
        return None
    return importlib.import_module(module).subnormal_products(PROBE_ELEMENTS, PROBE_GEMM)


def verify(mode: str, frameworks: list[str]) -> dict:
    """Run each imported framework's probe; a ``flush`` trial whose pool does not flush everywhere is refused
    (``FwbenchError``). Returns the provenance fields: the mode asked, each probe's shares and what they say."""
    out: dict = {"fp_mode": check_mode(mode), "fp_main_thread": thread_mode(mxcsr())}
    for name in frameworks:
        try:
            shares = probe(name)
        except Exception as exc:  # a default trial's timing stands without the probe; a flush trial's does not
            if mode == FLUSH:
                raise FwbenchError(f"fp_mode=flush: {name}'s probe failed ({exc!r}); the trial is refused") from exc
            out["fp_probe_error"] = repr(exc)
            continue
        if shares is None:
            continue
        found = pool_mode(shares)
        out.update(fp_probe=shares, fp_pool=found)
        if mode == FLUSH and found != FLUSH:
            raise FwbenchError(
                f"fp_mode=flush not carried by {name}'s threads: shares of flushed products {shares} "
                "(1.0 in every kernel when every thread flushes); the trial is refused"
            )
    if mode == FLUSH and "fp_pool" not in out:  # e.g. a study whose work runs in processes it starts itself
        raise FwbenchError(
            f"fp_mode=flush cannot be checked: this trial process ran no framework with a probe ({frameworks}); "
            "the trial is refused"
        )
    if mode == FLUSH and out["fp_main_thread"] != FLUSH:
        raise FwbenchError(f"fp_mode=flush lost in the trial's main thread (MXCSR {mxcsr()!r})")
    return out


def subnormals(shape) -> object:
    """A float32 numpy array of ``SUBNORMAL_BITS``, made without arithmetic (a view of integers)."""
    import numpy as np

    return np.full(shape, SUBNORMAL_BITS, dtype=np.uint32).view(np.float32)


def zero_share(values) -> float:
    """The share of exact zeros (+0 or -0) in a float32 numpy array, read from its bits: an integer comparison,
    which DAZ in the calling thread cannot bend (the probes' one statistic)."""
    import numpy as np

    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    return float(np.count_nonzero((bits & 0x7FFFFFFF) == 0)) / bits.size
