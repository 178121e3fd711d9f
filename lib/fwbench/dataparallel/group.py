"""Starting a data-parallel group on this host and getting every process back: framework-free.

A trial (``fwbench.studies.dataparallel_trial``) calls ``run_group``: it takes a free loopback port, starts every
process of the layout (``python -m fwbench.dataparallel.rank``, one spec each) and watches them. The group ends in
one of two ways, and nothing is left running after either:

- every worker exits 0: helper roles get ``HELPER_GRACE_S`` to exit on their own, then are killed; the workers'
  results are returned;
- a process fails (non-zero exit, killed by a signal) or ``timeout_s`` passes: every other process is killed at
  once (a missing rank would otherwise hang the rest in their collective), and ``GroupFailed`` names the
  process, how it ended and the tail of its stderr.

Every child also gets SIGKILL if the trial process dies (``PR_SET_PDEATHSIG``), so a killed trial leaves no rank.

Layouts, by the arm's variant (the sync mechanism):

- ``ddp``: ``world`` workers that meet at ``tcp://127.0.0.1:PORT`` (gloo over loopback);
- ``dist-sync`` and ``dist-sync-local``: MXNet's ps-lite: one scheduler at the port, one server, ``world``
  workers, each told its role and the scheduler's address through ``DMLC_*`` variables.

The group spans one host: its ranks talk over loopback. On a Dask cluster the executor reserves the trial's
``world`` slots on one host (``fwbench.cluster``); a group across hosts would need reachable addresses and is not
built.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FwbenchError
from ..execute import _die_with_parent

LOOPBACK = "127.0.0.1"
HELPER_GRACE_S = 20.0
POLL_S = 0.05
STDERR_TAIL_LINES = 20


class GroupFailed(RuntimeError):
    """A process of the group failed or the group timed out; every process has been stopped."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


@dataclass
class Member:
    role: str  # worker, server, scheduler
    rank: int
    env: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.role} {self.rank}" if self.role == "worker" else self.role


def _ddp(world: int, port: int) -> list[Member]:
    env = {"MASTER_ADDR": LOOPBACK, "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": "lo", "WORLD_SIZE": str(world)}
    return [Member("worker", r, {**env, "RANK": str(r)}) for r in range(world)]


def _dist_sync(world: int, port: int) -> list[Member]:
    env = {
        "DMLC_PS_ROOT_URI": LOOPBACK,
        "DMLC_PS_ROOT_PORT": str(port),
        "DMLC_NUM_SERVER": "1",
        "DMLC_NUM_WORKER": str(world),
        "DMLC_INTERFACE": "lo",
        "PS_VERBOSE": "0",
    }
    helpers = [
        Member("scheduler", 0, {**env, "DMLC_ROLE": "scheduler"}),
        Member("server", 0, {**env, "DMLC_ROLE": "server"}),
    ]
    return helpers + [Member("worker", r, {**env, "DMLC_ROLE": "worker"}) for r in range(world)]


LAYOUTS = {"ddp": _ddp, "dist-sync": _dist_sync, "dist-sync-local": _dist_sync}


def layout(variant: str, world: int, port: int) -> list[Member]:
    if variant not in LAYOUTS:
        raise FwbenchError(f"no data-parallel layout for variant {variant!r}; known: {', '.join(LAYOUTS)}")
    if world < 1:
        raise FwbenchError(f"world size must be at least 1, got {world}")
    return LAYOUTS[variant](world, port)


def thread_env(threads: int) -> dict:
    """Every process of the group, helpers included, gets the trial's per-rank thread count before any import."""
    return {var: str(threads) for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


@dataclass
class _Running:
    member: Member
    proc: subprocess.Popen
    result: Path
    stderr: Path
    exit_code: int | None = None
    cpu_s: float = 0.0


def _tail(path: Path) -> str:
    lines = path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:] if path.exists() else []
    return "\n".join(lines)


def _how(code: int) -> str:
    return f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def _reap(running: list[_Running]) -> None:
    """Collect the exit code and CPU seconds (user + system, from ``wait4``) of every process that has ended."""
    for r in running:
        if r.exit_code is not None:
            continue
        pid, status, usage = os.wait4(r.proc.pid, os.WNOHANG)
        if pid:
            r.exit_code = r.proc.returncode = os.waitstatus_to_exitcode(status)
            r.cpu_s = usage.ru_utime + usage.ru_stime


def _stop(running: list[_Running]) -> None:
    for r in running:
        if r.exit_code is None:
            try:
                r.proc.kill()
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 10
    while any(r.exit_code is None for r in running) and time.monotonic() < deadline:
        _reap(running)
        time.sleep(POLL_S)


def run_group(variant: str, spec: dict, world: int, timeout_s: float, report=None) -> dict:
    """Run one group; returns ``{"workers": [result per worker], "cpu_s": {process: seconds}, "wall_s": s}``.

    ``spec`` is what every worker gets (backend, threads, model, steps, sync sweep); the launcher adds the
    variant, role, rank, world, address, port and the timeout."""
    port = free_port()
    members = layout(variant, world, port)
    running: list[_Running] = []
    with tempfile.TemporaryDirectory(prefix="fwbench-group-") as tmp:
        t0 = time.perf_counter()
        try:
            for m in members:
                base = Path(tmp) / m.name.replace(" ", "")
                own = {
                    **spec,
                    "role": m.role,
                    "variant": variant,
                    "rank": m.rank,
                    "world": world,
                    "address": LOOPBACK,
                    "port": port,
                    "timeout_s": timeout_s,
                }
                Path(f"{base}.json").write_text(json.dumps(own))
                err = open(f"{base}.err", "wb")  # noqa: SIM115 - closed right after the child has it
                proc = subprocess.Popen(
                    [sys.executable, "-m", "fwbench.dataparallel.rank", f"{base}.json", f"{base}.out.json"],
                    env={**os.environ, **thread_env(spec["threads"]), **m.env},
                    stdout=err,
                    stderr=err,
                    preexec_fn=_die_with_parent,
                )
                err.close()
                running.append(_Running(m, proc, Path(f"{base}.out.json"), Path(f"{base}.err")))
            if report:
                report(
                    f"group of {world} ({variant}): " + ", ".join(f"{r.member.name} pid {r.proc.pid}" for r in running)
                )
            _watch(running, t0, timeout_s)
        finally:
            _stop(running)
        wall = time.perf_counter() - t0
        workers = [json.loads(r.result.read_text()) for r in running if r.member.role == "worker"]
    return {"workers": workers, "cpu_s": {r.member.name: r.cpu_s for r in running}, "wall_s": wall}


def _watch(running: list[_Running], t0: float, timeout_s: float) -> None:
    helpers_deadline = None
    while True:
        _reap(running)
        failed = next((r for r in running if r.exit_code not in (None, 0)), None)
        if failed is not None:
            raise GroupFailed(
                f"{failed.member.name} of the group ended ({_how(failed.exit_code)}); every other process was "
                f"stopped\n{_tail(failed.stderr)}"
            )
        workers = [r for r in running if r.member.role == "worker"]
        if all(r.exit_code == 0 for r in workers):
            missing = [r.member.name for r in workers if not r.result.exists()]
            if missing:
                raise GroupFailed(f"{', '.join(missing)} exited without a result")
            if all(r.exit_code is not None for r in running):
                return
            helpers_deadline = helpers_deadline or time.monotonic() + HELPER_GRACE_S
            if time.monotonic() > helpers_deadline:  # the workers are done: a helper that lingers is stopped
                return
        if time.perf_counter() - t0 > timeout_s:
            alive = ", ".join(r.member.name for r in running if r.exit_code is None)
            raise GroupFailed(f"the group timed out after {timeout_s:.0f} s (still running: {alive}); all stopped")
        time.sleep(POLL_S)
