"""A controlled background load for contention trials: busy-loop processes, each pinned to one CPU, that a trial
starts around its timed region and stops after it, recording what they took.

Why: the 2024 post ran on a laptop with library defaults, where other programs share the cores the frameworks'
thread pools expect to own. A trial that measures that condition must make it on purpose and say how much it
made: ``BackgroundLoad(n)`` starts ``n`` burners (``n`` = 0: nothing), each a fresh interpreter spinning in pure
Python (no framework, no OpenMP) pinned with ``sched_setaffinity`` to one CPU of this process's affinity set,
counting down from the last (CPU 1 on a 2-core machine: the trial's threads keep CPU 0 to themselves). The
burners are the trial's children, so ``provenance.MachineLoad`` counts them as the trial's own CPU and does not
flag the trial ``busy_machine``; their CPU is reported apart (``burner_cpu_s``, ``burner_cpu_frac``: the share
of one CPU each burner got, 1.0 when it was never preempted). They run at the default priority, as another
program would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from .errors import FwbenchError

BURN_CODE = "while True:\n    pass\n"
SETTLE_S = 0.3


class BackgroundLoad:
    """``with BackgroundLoad(n) as load: ...`` then ``load.record``: ``{"burners", "burner_cpu_s",
    "burner_wall_s", "burner_cpu_frac"}`` (all zero for ``n`` = 0). The burners are killed on leaving the block,
    whatever raised inside it."""

    def __init__(self, burners: int):
        if burners < 0:
            raise FwbenchError(f"background load: burners must be >= 0, got {burners}")
        cpus = sorted(os.sched_getaffinity(0))
        if burners > len(cpus):
            raise FwbenchError(f"background load: {burners} burners asked, only {len(cpus)} CPUs in this process")
        self.burners = burners
        self.cpus = cpus[::-1][:burners]
        self.procs: list[subprocess.Popen] = []
        self.record: dict = {}
        self._t0 = self._cpu0 = 0.0

    def __enter__(self) -> BackgroundLoad:
        for cpu in self.cpus:
            proc = subprocess.Popen([sys.executable, "-c", BURN_CODE], stdin=subprocess.DEVNULL)
            self.procs.append(proc)
            os.sched_setaffinity(proc.pid, {cpu})
        if self.procs:  # an interpreter takes tens of ms to start spinning: let the load be there from the start
            time.sleep(SETTLE_S)
        self._t0 = time.perf_counter()
        self._cpu0 = self._cpu()
        return self

    def _cpu(self) -> float:
        """CPU seconds the burners have used so far (one that died early counts as nothing from then on)."""
        total = 0.0
        for proc in self.procs:
            try:
                t = psutil.Process(proc.pid).cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    def __exit__(self, *exc) -> None:
        wall = time.perf_counter() - self._t0
        cpu = max(self._cpu() - self._cpu0, 0.0)  # over the block only, not the settling
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.record = {
            "burners": float(self.burners),
            "burner_cpu_s": cpu,
            "burner_wall_s": wall if self.burners else 0.0,
            "burner_cpu_frac": cpu / (wall * self.burners) if self.burners and wall > 0 else 0.0,
        }
