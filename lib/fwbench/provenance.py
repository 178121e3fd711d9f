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
import sys
from pathlib import Path

from .paths import REPO_ROOT

THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MXNET_CPU_WORKER_NTHREADS",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "KMP_AFFINITY",
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def git_state() -> dict:
    """Git SHA and dirty flag of the checkout fwbench runs from (None outside a checkout)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    sha = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
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
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "loadavg_1m": round(load1, 2),
        "loadavg_5m": round(load5, 2),
        "thread_env": {k: os.environ.get(k) for k in THREAD_ENV_VARS if os.environ.get(k) is not None},
        **git_state(),
    }


def imported_frameworks() -> list[str]:
    """Which of the two frameworks are loaded in this process (the isolation rule says at most one)."""
    return sorted(name for name in ("torch", "mxnet") if name in sys.modules)
