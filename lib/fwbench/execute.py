"""One trial, run in a fresh child process: the bottom layer that every executor calls.

``execute(trial)`` writes the trial's spec (study, its module, config, environment) and starts ``python -m
fwbench.trial`` with the interpreter of the trial's environment (resolved on the host that runs it; a non-``main``
one gets the checkout's ``lib`` on ``PYTHONPATH``), the thread settings in its environment before any framework
import, and its own scratch working directory (Lightning and friends write logs into the cwd). It returns a
framework-free outcome: ``done`` with summary, measurements and provenance, or ``failed`` with the error and the
tail of stderr (an exception, a signal, a timeout, or going over ``memory_limit_mb``).
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .environments import LIB_DIR, MAIN, get_environment
from .errors import FwbenchError
from .provenance import host_info

STDERR_TAIL_LINES = 40


@dataclass
class PlannedTrial:
    trial_id: str
    study: str
    config: dict
    label: str
    module: str = ""  # the module that declares the study (imported by the trial process)
    import_root: str | None = None  # where that module is imported from, when it is not installed
    position: int = -1  # index in the sweep's plan (the order trials are handed to the executor)
    code_version: str = ""  # the study's code fingerprint when the plan was made (part of trial_id)
    env: str = "main"  # the environment it runs in (``fwbench.environments``)
    env_lock: str | None = None  # that environment's lock hash when the plan was made
    env_packages: tuple = ()  # its top-level packages: the trial records their versions
    slots: int = 1  # executor slots it occupies (a trial that starts a group of processes: their cores)


def interpreter_of(env_name: str) -> tuple[str, str | None, dict]:
    """(python, extra PYTHONPATH entry, variables) of a declared environment: this interpreter for ``main``,
    else the environment's, with this checkout's ``lib`` on its path."""
    if env_name == MAIN:
        return sys.executable, None, {}
    env = get_environment(env_name)
    return str(env.python), str(LIB_DIR), env.variables()


def child_env(threads: int | None, import_root: str | None = None, lib: str | None = None) -> dict:
    """The trial process's environment: the thread variables set to ``threads``, or removed for None (a config
    with ``threads`` None: the libraries choose, as the post's runs did)."""
    env = dict(os.environ)
    # a study declared outside the installed package (a plugin, a test); the checkout's lib for another environment
    env["PYTHONPATH"] = os.pathsep.join(p for p in (import_root, lib, env.get("PYTHONPATH")) if p)
    if not env["PYTHONPATH"]:
        del env["PYTHONPATH"]
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        if threads is None:
            env.pop(var, None)
        else:
            env[var] = str(threads)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("MPLBACKEND", "agg")
    return env


def _die_with_parent() -> None:
    """Linux: the child gets SIGKILL if the sweep process dies, so no orphan keeps loading the CPU."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _child_preexec(memory_limit_mb: int | None) -> None:
    if memory_limit_mb:
        limit = int(memory_limit_mb) << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _die_with_parent()


def execute(trial: PlannedTrial, timeout_s: float | None = None, memory_limit_mb: int | None = None) -> dict:
    """Run one trial in a fresh process; returns a record for ``ResultsStore.record`` (framework-free).

    ``memory_limit_mb`` caps the child's address space (virtual memory, not RSS: frameworks reserve more than
    they touch, so give them room); a trial going over is recorded as failed."""
    with tempfile.TemporaryDirectory(prefix="fwbench-trial-") as tmp:
        tmp = Path(tmp)
        spec, result, stderr_path = tmp / "spec.json", tmp / "result.json", tmp / "stderr.txt"
        unresolved = None
        try:
            python, lib, variables = interpreter_of(trial.env)
        except FwbenchError as exc:  # an environment this host does not declare
            python, lib, variables, unresolved = "", None, {}, f"environment {trial.env!r}: {exc}"
        env_spec = {"name": trial.env, "lock": trial.env_lock, "packages": list(trial.env_packages)}
        env_spec["variables"] = variables
        spec.write_text(
            json.dumps({"study": trial.study, "module": trial.module, "config": trial.config, "env": env_spec})
        )
        threads = trial.config.get("threads", os.cpu_count() or 1)
        threads = None if threads is None else int(threads)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        rc, error = None, unresolved
        with open(stderr_path, "wb") as err:
            try:
                if unresolved is None:
                    proc = subprocess.run(
                        [python, "-m", "fwbench.trial", str(spec), str(result)],
                        cwd=tmp,
                        env={**child_env(threads, trial.import_root, lib), **variables},
                        stdout=err,
                        stderr=err,
                        timeout=timeout_s,
                        preexec_fn=functools.partial(_child_preexec, memory_limit_mb),
                    )
                    rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc, error = None, f"timed out after {timeout_s:.0f} s"
            except OSError as exc:  # the environment's interpreter is missing on this host
                rc, error = None, f"environment {trial.env!r}: {exc}"
        tail = stderr_path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:]
        if rc == 0 and result.exists():
            out = json.loads(result.read_text())
            kept = ("summary", "measurements", "provenance", "started_at", "ended_at")
            return {"status": "done", **{key: out[key] for key in kept}, "error": None, "stderr_tail": None}
        if error is None:
            if rc is not None and rc < 0:
                error = f"killed by signal {signal.Signals(-rc).name}"
            else:
                last = next((line for line in reversed(tail) if line.strip()), "no output")
                error = f"exit status {rc}: {last.strip()}"
            if memory_limit_mb and any("MemoryError" in line or "bad_alloc" in line for line in tail):
                error = f"exceeded the memory limit of {memory_limit_mb} MB ({error})"
        return {
            "status": "failed",
            "summary": {},
            "measurements": [],
            "provenance": {**host_info(), "env": trial.env, "env_lock": trial.env_lock},
            "started_at": started,
            "ended_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "error": error,
            "stderr_tail": "\n".join(tail),
        }
