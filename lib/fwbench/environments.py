"""Declared environments: each trial runs in the Python environment its arm (or its study part) names.

An environment is a folder ``envs/NAME/`` holding ``requirements.in`` (the top-level packages, a ``# purpose:``
line, optionally a ``# check: import a, b`` line that must run once it is built and ``# set: NAME=VALUE`` lines,
variables every trial process of it gets, recorded as ``env_variables``), ``requirements.lock`` (every package
pinned by ``make lock``; its hash is the environment's identity) and optionally ``constraints.txt`` and
``overrides.txt`` (versions forced past a package's own metadata) used when locking.

``fwbench envs --build`` (``make envs``) builds it into ``envs/NAME/.venv`` with uv where installed, else venv and
pip, installing the lock with ``--no-deps`` (a lock is complete); after the ``check`` imports pass, the lock's hash
is stamped into the venv: ``built`` when the stamp matches the lock, ``stale`` when not, ``missing`` when never built.
``main`` is the project's own ``.venv`` (root lock, ``make setup``), whose trials run with the interpreter running
fwbench.

Decision (trial identity): a config names its environment (``env``, ``env_lock``) only when it is not ``main``, so
a ``main`` trial's id is what it was before environments existed and the committed paper store stays current;
main's lock hash is in every trial's provenance. A relocked non-main environment makes its trials new trials.

A trial child gets the checkout's ``lib`` on ``PYTHONPATH``, so an environment needs only what a trial process
imports (numpy, pandas, scipy, psutil, platformdirs, its framework). ``FWBENCH_ENVS=dir[:dir]`` (folders of
``NAME/`` folders) or ``register_environment`` add declarations (a plugin's, a test's).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import FwbenchError
from .paths import REPO_ROOT
from .pip_sources import pip_sources

MAIN = "main"
ENVS_DIR = REPO_ROOT / "envs"
STAMP = "fwbench-lock.sha256"
LIB_DIR = Path(__file__).resolve().parents[1]  # the checkout's lib/: a trial child imports fwbench from here


def lock_hash(path: Path) -> str:
    """The first 12 hex digits of the SHA-256 of a lock file (its identity)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


@dataclass(frozen=True)
class Environment:
    name: str
    folder: Path  # where requirements.in / requirements.lock live
    venv: Path

    @property
    def requirements_in(self) -> Path:
        return self.folder / "requirements.in"

    @property
    def lock(self) -> Path:
        return self.folder / "requirements.lock"

    def _in_lines(self) -> list[str]:
        if not self.requirements_in.exists():
            return []
        return [line.strip() for line in self.requirements_in.read_text().splitlines()]

    def _comment(self, key: str) -> str:
        for line in self._in_lines():
            if m := re.match(rf"#\s*{key}:\s*(.*)", line):
                return m.group(1).strip()
        return ""

    @property
    def purpose(self) -> str:
        return self._comment("purpose") or ("the project's own environment (.venv)" if self.name == MAIN else "")

    @property
    def check(self) -> str:
        """The import statement that must run in the built environment (``# check:`` line)."""
        return self._comment("check")

    def variables(self) -> dict[str, str]:
        """The ``# set: NAME=VALUE`` lines: variables set in every trial process of this environment."""
        found = (re.match(r"#\s*set:\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)", x) for x in self._in_lines())
        return {m.group(1): m.group(2).strip() for m in found if m}

    def packages(self) -> list[str]:
        """The top-level package names of ``requirements.in`` (their versions go into every trial's provenance)."""
        names = []
        for line in self._in_lines():
            line = line.split("#", 1)[0].strip()
            m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)", line)
            if m and not line.startswith("-"):
                names.append(m.group(1).lower())
        return names

    def lock_hash(self) -> str:
        if not self.lock.exists():
            raise FwbenchError(f"environment {self.name!r} has no lock file {self.lock}; run 'make lock'")
        return lock_hash(self.lock)

    @property
    def python(self) -> Path:
        """The environment's interpreter (for ``main``: the one running fwbench)."""
        return Path(sys.executable) if self.name == MAIN else self.venv / "bin" / "python"

    def state(self) -> str:
        """``built``, ``missing`` (never built, or its interpreter is gone) or ``stale`` (lock changed since);
        ``main`` is the running interpreter, stale only when make setup stamped another lock."""
        stamp = self.venv / STAMP
        if self.name == MAIN:
            stale = stamp.exists() and self.lock.exists() and stamp.read_text().strip() != self.lock_hash()
            return "stale" if stale else "built"
        if not self.python.exists() or not stamp.exists():
            return "missing"
        return "built" if stamp.read_text().strip() == self.lock_hash() else "stale"

    def build_command(self) -> str:
        if self.name == MAIN:
            return "make setup"
        return "make envs" if self.folder.parent == ENVS_DIR else f"fwbench envs --build {self.name}"

    def require_built(self) -> None:
        """A one-line error naming the command that builds it, unless the environment is built and current."""
        state = self.state()
        if state == "missing":
            raise FwbenchError(f"environment {self.name!r} is not built ({self.venv}); run '{self.build_command()}'")
        if state == "stale":
            raise FwbenchError(
                f"environment {self.name!r} is stale (its lock changed since it was built); "
                f"run '{self.build_command()}'"
            )


def states_here(names: list[str]) -> dict[str, tuple[str, str | None]]:
    """Name -> (state, lock hash) of each environment as this host declares and has built it; an environment
    this host does not declare is ``("undeclared", None)``. A Dask worker answers this before any trial is sent."""
    declared = all_environments()
    out: dict[str, tuple[str, str | None]] = {}
    for name in names:
        env = declared.get(name)
        lock = env.lock_hash() if env and env.lock.exists() else None
        out[name] = (env.state(), lock) if env else ("undeclared", None)
    return out


def require_built_where(answers: dict[str, dict[str, tuple[str, str | None]]], planned: dict[str, str | None]) -> None:
    """One line naming every host whose environment is not built, not current, or built from another lock than
    the plan's (``answers``: host -> ``states_here``; ``planned``: environment -> the lock hash its trials name),
    and the command that builds each. A trial sent there would fail, or run other packages than its id says."""
    problems: dict[str, list[str]] = {}
    not_ready: set[str] = set()
    for host, states in sorted(answers.items()):
        for name, lock in sorted(planned.items()):
            state, there = states.get(name, ("undeclared", None))
            if state == "built" and lock is not None and there != lock:
                state = f"locked {there} there, {lock} here"
            if state != "built":
                problems.setdefault(f"{name!r} {state}", []).append(host)
                not_ready.add(name)
    if problems:
        declared = all_environments()
        commands = sorted({declared[n].build_command() if n in declared else "make envs" for n in not_ready})
        where = "; ".join(f"environment {what} on {', '.join(hosts)}" for what, hosts in problems.items())
        run = " / ".join(f"'{c}'" for c in commands)
        raise FwbenchError(
            f"{where}: run {run} in the fwbench checkout of each host named (from the same commit), "
            "then rerun; no trial was sent"
        )


_EXTRA: dict[str, Environment] = {}


def register_environment(folder: str | Path, name: str | None = None) -> Environment:
    """Declare the environment in ``folder`` (a plugin's or a test's), built into ``folder/.venv``."""
    folder = Path(folder).resolve()
    env = Environment(name or folder.name, folder, folder / ".venv")
    if env.name == MAIN:
        raise FwbenchError("the environment name 'main' is the project's own; pick another")
    _EXTRA[env.name] = env
    return env


def _declared_in(root: Path) -> dict[str, Environment]:
    if not root.is_dir():
        return {}
    return {
        d.name: Environment(d.name, d.resolve(), d.resolve() / ".venv")
        for d in sorted(root.iterdir())
        if d.is_dir() and (d / "requirements.in").exists()
    }


def all_environments() -> dict[str, Environment]:
    """Name -> environment: ``main``, then ``envs/*``, ``FWBENCH_ENVS`` folders and registered ones."""
    found = {MAIN: Environment(MAIN, REPO_ROOT, REPO_ROOT / ".venv")}
    found.update(_declared_in(ENVS_DIR))
    for root in filter(None, os.environ.get("FWBENCH_ENVS", "").split(os.pathsep)):
        found.update(_declared_in(Path(root)))
    found.update(_EXTRA)
    return found


def get_environment(name: str) -> Environment:
    envs = all_environments()
    if name not in envs:
        raise FwbenchError(f"unknown environment {name!r}; declared: {', '.join(envs)} (a folder envs/NAME/ adds one)")
    return envs[name]


# -- building and locking ---------------------------------------------------------------------------------------


def uv_path() -> str | None:
    """``uv`` beside the running interpreter (installed by ``make setup``) or on PATH."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def _run(cmd: list[str], what: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``cmd`` run to its end; its last non-empty line of output is the error where it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        last = next((x for x in reversed((proc.stderr + proc.stdout).splitlines()) if x.strip()), "no output")
        raise FwbenchError(f"{what} failed: {last.strip()}")
    return proc


def build(env: Environment, tool: str = "auto", log=print) -> float:
    """Build ``env`` from its lock into its venv (replacing it); returns the wall time in seconds.
    ``tool``: ``uv``, ``pip`` or ``auto`` (uv where installed)."""
    if env.name == MAIN:
        raise FwbenchError("'main' is built by 'make setup' (.venv), not by fwbench envs")
    lock = env.lock
    env.lock_hash()  # raises when there is no lock
    uv = uv_path() if tool in ("auto", "uv") else None
    if tool == "uv" and uv is None:
        raise FwbenchError("uv is not installed; 'pip install uv' (it is in requirements.lock) or use --tool pip")
    t0 = time.perf_counter()
    if env.venv.exists():
        shutil.rmtree(env.venv)
    py = str(env.python)
    if uv:
        log(f"{env.name}: uv venv + uv pip install --no-deps -r {lock.name}")
        _run([uv, "venv", "--quiet", "--python", sys.executable, str(env.venv)], f"uv venv {env.venv}")
        install = [uv, "pip", "install", "--quiet", "--python", py, "--no-deps", "-r", str(lock), *pip_sources()]
    else:
        log(f"{env.name}: python -m venv + pip install --no-deps -r {lock.name}")
        _run([sys.executable, "-m", "venv", str(env.venv)], f"python -m venv {env.venv}")
        install = [py, "-m", "pip", "install", "--quiet", "--no-deps", "-r", str(lock)]
    _run(install, f"installing environment {env.name!r} from {lock}")
    verify(env)
    (env.venv / STAMP).write_text(env.lock_hash() + "\n")
    return time.perf_counter() - t0


def verify(env: Environment) -> None:
    """The built environment imports its ``check`` packages and fwbench's trial entry point."""
    code = "; ".join(filter(None, [env.check, "import fwbench.trial, fwbench.studies"]))
    child = dict(os.environ)
    child["PYTHONPATH"] = os.pathsep.join(p for p in (str(LIB_DIR), child.get("PYTHONPATH")) if p)
    _run([str(env.python), "-c", code], f"environment {env.name!r}: '{code}'", env=child)


def lock(env: Environment, log=print) -> None:
    """Regenerate ``env``'s lock from its requirements.in (with uv: ``uv pip compile``)."""
    if env.name == MAIN:
        raise FwbenchError("main's lock is made by 'make lock' (pip freeze of a fresh venv)")
    uv = uv_path()
    if uv is None:
        raise FwbenchError("locking an environment needs uv; 'pip install uv' (it is in requirements.lock)")
    cmd = [uv, "pip", "compile", "--quiet", "--no-header", str(env.requirements_in)]
    cmd += ["--python-version", f"{sys.version_info.major}.{sys.version_info.minor}"]
    for flag, name in (("-c", "constraints.txt"), ("--override", "overrides.txt")):
        if (env.folder / name).exists():
            cmd += [flag, str(env.folder / name)]
    proc = _run(cmd + pip_sources(), f"locking environment {env.name!r}")
    # the local build tag (+cpu) is dropped, as in main's lock: the same lock installs from the registry elsewhere
    pinned = re.sub(r"^([A-Za-z0-9._-]+==[^\s+]+)\+[A-Za-z0-9.]+", r"\1", proc.stdout, flags=re.M)
    header = "# Generated by `make lock` (uv pip compile requirements.in with constraints/overrides). Do not edit.\n"
    env.lock.write_text(header + pinned)
    log(f"{env.name}: {env.lock} ({lock_hash(env.lock)})")
