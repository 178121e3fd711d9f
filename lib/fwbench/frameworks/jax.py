"""JAX's process-level facts (same public names as ``fwbench.frameworks.torch``), and how a JAX trial's threads are
set. Imported in the parent process too: jax is imported inside the functions only.

Threads: XLA's CPU client reads no ``OMP_NUM_THREADS``; it sizes its thread pool from the CPUs the process may run
on when the first computation creates the client. Its ``XLA_FLAGS`` thread options (``--xla_cpu_multi_thread_eigen=
false intra_op_parallelism_threads=1``) did not hold in jax 0.10.2 here (a 2000 x 2000 matmul loop kept 1.24 CPUs
busy with them, 1.33 without), CPU affinity did (0.99). So ``pin_to_cpus(n)`` restricts the calling thread, before
JAX makes any other, to ``n`` of the process's CPUs: the pool's threads inherit it. The trial's measured CPU
(``proc_cpu_pct``) shows whether it held. ``n`` above the CPUs there are cannot be pinned and is an error.

oneDNN: XLA's CPU backend runs its own kernels (Eigen and XLA-generated code), not oneDNN, so JAX sets nothing and
``onednn_enabled`` is False; an arm asked to run with oneDNN on records that it did not.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from ..errors import FwbenchError

FRAMEWORK = "jax"
PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy")
__all__ = ["FRAMEWORK", "info", "onednn_env", "describe_build", "pin_to_cpus", "onednn", "onednn_enabled"]


def info() -> dict:
    from importlib import metadata

    import jax

    versions = {}
    for name in PACKAGES:
        try:
            versions[f"{name}_version"] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[f"{name}_version"] = None
    return {
        "framework": FRAMEWORK,
        "framework_version": jax.__version__,
        **versions,
        "jax_backend": jax.default_backend(),
        "jax_devices": [str(d) for d in jax.devices()],
        "cpu_affinity_used": sorted(os.sched_getaffinity(0)),
        "onednn_available": False,
    }


def onednn_env(enabled: bool) -> dict[str, str]:
    """Nothing: XLA's CPU backend does not run oneDNN kernels (see the module docstring)."""
    return {}


def describe_build(recorded: Callable[[str], object]) -> str:
    """The versions that make a JAX build, from the recorded provenance."""
    parts = [f"{name} {recorded(f'{name}_version')}" for name in PACKAGES if recorded(f"{name}_version")]
    return "XLA CPU; " + ", ".join(parts) if parts else "build not recorded"


def pin_to_cpus(n: int) -> list[int]:
    """Restrict the calling thread (and every thread it creates from now on) to the first ``n`` CPUs of this
    process's affinity set; returns them."""
    cpus = sorted(os.sched_getaffinity(0))
    if not 1 <= n <= len(cpus):
        raise FwbenchError(f"JAX threads are set by CPU affinity: {n} asked, {len(cpus)} CPU(s) available")
    chosen = cpus[:n]
    os.sched_setaffinity(0, chosen)
    return chosen


def onednn_enabled() -> bool:
    return False


@contextlib.contextmanager
def onednn(enabled: bool):
    """Nothing to switch (XLA runs no oneDNN kernels): the trial records ``onednn_enabled()``, False."""
    yield
