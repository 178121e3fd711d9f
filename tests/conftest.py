"""Shared fixtures. The expensive one, ``smoke_notebooks``, runs every notebook once per test session under the
``smoke`` profile (through papermill, as `make reproduce` does) into a private store, figures dir and output
dir. It is the one smoke store of the suite: the notebook and site tests read what it produced, and so do the
tests that only read a smoke sweep's rows (VGG16, GEMM, ONNX, data-parallel, the concurrency test's reference)
instead of running the same sweep again. Tests about running (the runner, resume, the cluster) still run their
own. The committed paper store is read once too (``paper_results``), and its post built once (``paper_post``).

``make test`` runs the suite on two pytest-xdist workers (``-n 2``); a session fixture is built once per worker
that uses it, so the scheduler (``SharedFixtureScheduling``) sends every module of one shared fixture to one worker
and the other modules whole to whichever worker is free. Most of the suite's time is single-threaded (imports,
subprocess start-up, rendering), so two workers use both cores."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
PAPER_STORE = REPO / "results" / "paper" / "paper-run.sqlite"  # the committed paper run
# Same order as the Makefile: by file name (the ledger, 05, reads the store after every notebook that makes trials).
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
TOOLS = REPO / "tools"  # the repository's scripts (not the package fwbench, which never imports them)

# The harness self-test study (tests/selftest_study.py) is a plugin of the tests, registered as any study outside
# the package is; every process a test starts (a sweep, its trials, Dask workers) inherits both variables.
os.environ["FWBENCH_STUDIES"] = ",".join(filter(None, [os.environ.get("FWBENCH_STUDIES"), "selftest_study"]))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")]))


def load_tool(name: str):
    """The script ``tools/NAME.py`` as a module, loaded from its file (tools/ is no package; ``fwbench`` never
    imports it). Loaded once per session and kept in ``sys.modules`` under ``tools.NAME``, so every test that
    loads a tool, and a monkeypatch on it, sees the same module."""
    key = f"tools.{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before running it: a dataclass looks its module up while it is built
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
    return sys.modules[key]


LONG_MODULE_LINES = 400  # a prompt to look for a seam, not a limit: modules are split along seams, never squeezed


def pytest_terminal_summary(terminalreporter):
    """A soft report instead of a line cap: the longest modules of lib/, so a reviewer sees where a split along a
    seam may be due. It fails nothing (ruff, run by ``make lint``, is the style gate)."""
    sizes = {
        path.relative_to(REPO / "lib"): len(path.read_text().splitlines()) for path in (REPO / "lib").rglob("*.py")
    }
    long = sorted(((n, path) for path, n in sizes.items() if n > LONG_MODULE_LINES), reverse=True)
    if long:
        terminalreporter.write_sep("-", f"modules over {LONG_MODULE_LINES} lines (a report, not a failure)")
        for n, path in long:
            terminalreporter.write_line(f"{n:5d}  {path}")


def pytest_configure(config):
    os.environ.setdefault("FWBENCH_DATA_DIR", str(SHARED_DATA))
    os.environ.setdefault("MPLBACKEND", "agg")
    # Two workers on two cores each start 2-thread trials: OpenMP threads that spin while they wait then take the
    # cores the other worker's trial needs (two smoke sweeps side by side: 157 s spinning, 106 s sleeping, on the
    # AMD EPYC 25/1). The tests time nothing; a trial records the setting (provenance thread_env).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# The session fixtures worth building once, by group: a test module that names one of them runs on that group's worker.
SHARED_GROUPS = {"smoke": ("smoke_env", "smoke_notebooks", "smoke_site"), "paper": ("paper_results", "paper_post")}


@functools.cache
def shared_group(module: str) -> str:
    """The worker group of a test module (``tests/test_x.py``): the first shared group whose fixtures its text
    names, else the module itself (its module fixtures then run once). Read from the text because the scheduler
    runs in the controller, which collects no tests; a module defining a fixture on top of a shared one names it."""
    text = (REPO / module).read_text(encoding="utf-8") if (REPO / module).is_file() else ""
    return next((g for g, names in SHARED_GROUPS.items() if any(re.search(rf"\b{n}\b", text) for n in names)), module)


class SharedFixtureScheduling(LoadScopeScheduling):
    """pytest-xdist's scope scheduling with a module's shared group as its scope: every test of a group runs on one
    worker, in one go. (xdist's own ``--dist loadgroup`` marks do not reach its scheduler under pytest 9, whose
    node ids it can no longer suffix.)"""

    def _split_scope(self, nodeid: str) -> str:
        return shared_group(nodeid.split("::", 1)[0])


def pytest_xdist_make_scheduler(config, log):
    return SharedFixtureScheduling(config, log)


@pytest.fixture
def tmp_store(tmp_path, monkeypatch):
    """A fresh results store path for one test (FWBENCH_RESULTS points at it)."""
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FWBENCH_RESULTS", str(path))
    monkeypatch.setenv("FWBENCH_FIGURES", str(tmp_path / "figures"))
    return path


@dataclass
class SmokeRun:
    root: Path
    store: Path
    figures: Path
    executed: Path
    env: dict


@pytest.fixture(scope="session")
def smoke_env(tmp_path_factory) -> SmokeRun:
    root = tmp_path_factory.mktemp("smoke")
    env = dict(
        os.environ,
        FWBENCH_RESULTS=str(root / "results.sqlite"),
        FWBENCH_FIGURES=str(root / "figures"),
        FWBENCH_HEADLESS="1",
        MPLBACKEND="agg",
    )
    return SmokeRun(root, root / "results.sqlite", root / "figures", root / "executed", env)


@pytest.fixture(scope="session")
def smoke_notebooks(smoke_env) -> SmokeRun:
    """Every notebook executed with ``-p profile smoke``; fails with the papermill log if one breaks."""
    smoke_env.executed.mkdir(parents=True, exist_ok=True)
    for nb in NOTEBOOKS:
        out = smoke_env.executed / nb.name
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "papermill",
                "-k",
                "python3",
                "--cwd",
                str(REPO / "notebooks"),
                "--no-progress-bar",
                "--execution-timeout",
                "900",
                str(nb),
                str(out),
                "-p",
                "profile",
                "smoke",
            ],
            # no MPLBACKEND: the kernel then picks the inline backend and figures land in the outputs (and the
            # HTML pages); trials still get agg (runner.child_env)
            env={k: v for k, v in smoke_env.env.items() if k != "MPLBACKEND"},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            pytest.fail(f"{nb.name} failed under papermill:\n{proc.stderr[-4000:]}")
    return smoke_env


@pytest.fixture(scope="session")
def smoke_site(smoke_notebooks) -> SmokeRun:
    """The static site (``python -m fwbench.report``, as `make reproduce` runs it) built from the smoke notebooks
    into ``<root>/reports``."""
    out = smoke_notebooks.root / "reports"
    proc = subprocess.run(
        [sys.executable, "-m", "fwbench.report", "--executed", str(smoke_notebooks.executed), "--out", str(out)],
        env=smoke_notebooks.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        pytest.fail(f"fwbench.report failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return smoke_notebooks


@pytest.fixture(scope="session")
def paper_results():
    """The committed paper store, read once for the session (``open_read`` leaves no trace beside it). The frames
    are shared: a test that changes one copies it first. fwbench is imported here, not at the top: its study
    registry reads FWBENCH_STUDIES (set above) when first imported."""
    from fwbench.analysis import Results
    from fwbench.store import ResultsStore

    if not PAPER_STORE.exists():
        pytest.skip("no committed paper store")
    return Results(ResultsStore.open_read(PAPER_STORE), "paper")


@pytest.fixture(scope="session")
def paper_post(paper_results, tmp_path_factory) -> Path:
    """The paper post (index.html) as ``make publish PROFILE=paper`` builds it, without notebook pages."""
    from fwbench import report

    out = tmp_path_factory.mktemp("paper-post")
    return report.build(out / "no-notebooks", out / "site", "paper", figures=out / "no-figures", results=paper_results)
