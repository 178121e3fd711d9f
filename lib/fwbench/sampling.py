"""CPU time and peak memory of a process *and all its worker processes*, framework-free (psutil only).

A data-loader worker's CPU time reaches ``cpu_times().children_user`` of its parent only once the parent has
reaped it (``waitpid``): workers that outlive a timed window (MXNet's pool, PyTorch's persistent workers) would be
missed by that counter alone. ``ProcessTreeSampler`` therefore also reads the live descendants
(``children(recursive=True)``) from a background thread every ``interval`` seconds and at each ``snapshot()``,
remembering each process's last reading, so that

    window CPU = own CPU + reaped children's CPU + live descendants' CPU, each as the change over the window,

with every process counted once: a direct child that is reaped inside the window is carried by the reaped counter
(its full lifetime), so the part of it read before the window is subtracted; a deeper descendant that exits is
carried by its last reading (its parent's reaped counter is not ours). A process is keyed by (pid, create_time), so
a reused pid is a new process. Peak memory is the largest RSS of this process plus its live descendants at any
sample (shared copy-on-write pages count once per process, as ``top`` shows them).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import psutil

INTERVAL_S = 0.2


@dataclass(frozen=True)
class Snapshot:
    """Counters at one instant: own CPU, reaped-children CPU, and per tracked process (cpu, alive, direct)."""

    own: float
    reaped: float
    procs: dict = field(default_factory=dict)


class ProcessTreeSampler:
    """Start with ``start()`` (or ``with``); ``snapshot()`` at window edges; ``cpu_seconds(a, b)`` between two
    snapshots; ``peak_rss_bytes`` over the whole run; ``stop()`` ends the background thread."""

    def __init__(self, pid: int | None = None, interval: float = INTERVAL_S):
        self.proc = psutil.Process(pid or os.getpid())
        self.interval = interval
        self.peak_rss_bytes = 0
        self._procs: dict = {}  # (pid, create_time) -> [cpu seconds (user + system), alive, direct child]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- one reading ----------------------------------------------------------------------------------------
    def _sample(self) -> None:
        try:
            rss = self.proc.memory_info().rss
            children = self.proc.children(recursive=True)
        except psutil.Error:
            return
        seen = set()
        with self._lock:
            for child in children:
                try:
                    with child.oneshot():
                        key = (child.pid, child.create_time())
                        t = child.cpu_times()
                        direct = child.ppid() == self.proc.pid
                        child_rss = child.memory_info().rss
                except psutil.Error:  # exited between listing and reading: its last reading stands
                    continue
                seen.add(key)
                self._procs[key] = [t.user + t.system, True, direct]
                rss += child_rss
            for key, state in self._procs.items():
                if key not in seen:
                    state[1] = False
            self.peak_rss_bytes = max(self.peak_rss_bytes, rss)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    # -- public ---------------------------------------------------------------------------------------------
    def start(self) -> ProcessTreeSampler:
        self._sample()
        self._thread = threading.Thread(target=self._run, name="fwbench-cpu-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()

    def __enter__(self) -> ProcessTreeSampler:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def snapshot(self) -> Snapshot:
        """A fresh reading now. The reaped counter is read before and after the live processes and the reading
        is repeated if a child was reaped in between, so no process is both live and reaped in one snapshot."""
        for _ in range(10):
            before = self.proc.cpu_times()
            self._sample()
            t = self.proc.cpu_times()
            if (t.children_user, t.children_system) == (before.children_user, before.children_system):
                break
        with self._lock:
            procs = {k: tuple(v) for k, v in self._procs.items()}
        return Snapshot(own=t.user + t.system, reaped=t.children_user + t.children_system, procs=procs)

    @staticmethod
    def cpu_seconds(a: Snapshot, b: Snapshot) -> float:
        """CPU seconds used between snapshots ``a`` and ``b`` by this process and every worker."""
        return (b.own - a.own) + ProcessTreeSampler.worker_cpu_seconds(a, b)

    @staticmethod
    def worker_cpu_seconds(a: Snapshot, b: Snapshot) -> float:
        """The workers' share: reaped children plus live (or exited, not-ours-to-reap) descendants."""
        total = b.reaped - a.reaped
        for key, (cpu_b, alive_b, direct) in b.procs.items():
            cpu_a, alive_a, _ = a.procs.get(key, (0.0, False, direct))
            base = cpu_a if key in a.procs else 0.0
            if alive_b:
                total += cpu_b - (base if alive_a else 0.0)
            elif direct:  # reaped by us: the reaped counter holds its whole life; drop what preceded the window
                total -= base if alive_a else 0.0
            else:  # a deeper descendant, reaped by its own parent: its last reading is all we get
                total += cpu_b - base
        return total


def busy_fraction(a, b) -> float:
    """Fraction of all CPUs busy between two ``psutil.cpu_times()`` readings of the whole machine."""
    total = sum(b) - sum(a)
    idle = (b.idle + getattr(b, "iowait", 0)) - (a.idle + getattr(a, "iowait", 0))
    return (total - idle) / total if total > 0 else 0.0
