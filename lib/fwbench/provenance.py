"""What changes a timing, captured next to every measurement.

The host part (CPU, cores, load, git) is framework-free; the framework part is filled inside the trial
process, where exactly one framework is imported.
"""

from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
from pathlib import Path

from .frameworks import all_frameworks, get_framework
from .paths import REPO_ROOT

THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MXNET_CPU_WORKER_NTHREADS",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "KMP_AFFINITY",
    "OMP_WAIT_POLICY",  # set by the test suite (threads sleep, not spin, while waiting); the study leaves it unset
)


def cpu_model() -> str:
    fields = _cpuinfo_fields()
    return fields["model name"] if "model name" in fields else platform.processor() or platform.machine()


def cpu_id() -> str | None:
    """Vendor, family, model and stepping from /proc/cpuinfo: VMs often name the CPU only "AMD EPYC", and these
    tell its generations apart (None where /proc/cpuinfo is missing)."""
    fields = _cpuinfo_fields()
    parts = [fields.get(k) for k in ("vendor_id", "cpu family", "model", "stepping")]
    return "/".join(p or "?" for p in parts) if any(parts) else None


# The ISA features that choose kernels in oneDNN, MKL, OpenBLAS and XLA (an Intel Xeon with AVX-512 and VNNI runs
# other code paths than an AMD EPYC with AVX2 only); recorded per trial beside the CPU model.
KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")


def _cpuinfo_fields() -> dict[str, str]:
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line)}


def cpu_key(cpu_id_value) -> str | None:
    """The CPU model a comparison stays within: vendor/family/model of a recorded ``cpu_id`` (its stepping
    dropped: steppings of one model share their kernels); None when not recorded."""
    return "/".join(cpu_id_value.split("/")[:3]) if isinstance(cpu_id_value, str) and cpu_id_value else None


def this_cpu() -> str | None:
    """This machine's CPU model, as ``cpu_key`` spells it (e.g. ``GenuineIntel/6/207``)."""
    return cpu_key(cpu_id())


def cpu_flags() -> list[str]:
    """Which of ``KERNEL_FLAGS`` this CPU reports."""
    flags = set(_cpuinfo_fields().get("flags", "").split())
    return [f for f in KERNEL_FLAGS if f in flags]


def boot_id() -> str | None:
    """This boot of this machine (Linux): trials of a run made in pieces on several machines, all named "vm",
    are told apart by it."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def git_output(*args: str) -> str | None:
    """``git ARGS`` run in the checkout fwbench runs from: its output, None outside a checkout or where it fails."""
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def git_state() -> dict:
    """Git SHA and dirty flag of the checkout fwbench runs from (None outside a checkout)."""
    sha = git_output("rev-parse", "HEAD")
    dirty = git_output("status", "--porcelain", "--untracked-files=no")
    return {"git_sha": sha, "git_dirty": None if dirty is None else bool(dirty)}


def host_info() -> dict:
    """Framework-free facts about the machine and the moment."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    load1, load5, _ = os.getloadavg()
    return {
        "host": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_id": cpu_id(),
        "cpu": this_cpu(),
        "cpu_flags": cpu_flags(),
        "boot_id": boot_id(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "loadavg_1m": round(load1, 2),
        "loadavg_5m": round(load5, 2),
        "thread_env": {k: os.environ.get(k) for k in THREAD_ENV_VARS if os.environ.get(k) is not None},
        **git_state(),
    }


def imported_frameworks() -> list[str]:
    """Which registered frameworks (``fwbench.frameworks``) are loaded in this process (the isolation rule says at
    most one)."""
    return sorted(framework.name for framework in all_frameworks() if framework.imported())


def framework_facts(frameworks: list[str]) -> dict:
    """The facts (versions, build) of the frameworks a trial process loaded, from their table entries; the
    backend's own ``framework_info`` adds to them and wins where both name a field."""
    facts = {}
    for name in frameworks:
        facts.update(get_framework(name).info())
    return facts


# A trial ran on a busy machine when other processes kept more than this share of its CPUs busy, or the hypervisor
# stole more than STEAL_LIMIT of the time. The 1-minute load average at its start is recorded but decides nothing:
# it decays over minutes, so after the sweep's own previous trial it reads as busy whatever else runs.
OTHER_BUSY_LIMIT = 0.25
STEAL_LIMIT = 0.05


class MachineLoad:
    """CPU time of the whole machine and of this process tree between its creation and ``stop()``: how busy the
    machine was with other work (``other_busy_frac``) and the hypervisor's steal (``steal_frac``)."""

    def __init__(self):
        import psutil

        self.psutil = psutil
        self.proc = psutil.Process()
        self.sys0 = psutil.cpu_times()
        self.own0 = self.own_cpu_s()

    def own_cpu_s(self) -> float:
        """CPU seconds of this process and its children so far (reaped or live): the trial's own work."""
        t = self.proc.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in self.proc.children(recursive=True):  # live workers (not reaped yet)
            try:
                c = child.cpu_times()
                total += c.user + c.system
            except self.psutil.Error:
                pass
        return total

    def stop(self) -> dict:
        sys1 = self.psutil.cpu_times()
        total = sum(sys1) - sum(self.sys0)
        idle = (sys1.idle + getattr(sys1, "iowait", 0)) - (self.sys0.idle + getattr(self.sys0, "iowait", 0))
        steal = getattr(sys1, "steal", 0.0) - getattr(self.sys0, "steal", 0.0)
        wall_cpu = total or 1e-9  # CPU-seconds the machine had (all CPUs)
        busy = max(total - idle - steal, 0.0)
        own = max(self.own_cpu_s() - self.own0, 0.0)
        other = max(busy - own, 0.0) / wall_cpu
        out = {"steal_frac": steal / wall_cpu, "other_busy_frac": other, "machine_busy_frac": busy / wall_cpu}
        reasons = []
        if out["other_busy_frac"] > OTHER_BUSY_LIMIT:
            reasons.append(f"other processes used {100 * other:.0f} % of the CPUs")
        if out["steal_frac"] > STEAL_LIMIT:
            reasons.append(f"CPU steal {100 * out['steal_frac']:.0f} %")
        return {**out, "busy_machine": bool(reasons), "busy_reasons": reasons}
