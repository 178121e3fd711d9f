"""Shared fixtures. The expensive one, ``smoke_notebooks``, runs every notebook once per test session under the
``smoke`` profile (through papermill, as `make reproduce` does) into a private store, figures dir and output
dir. It is the one smoke store of the suite: the notebook and site tests read what it produced, and so do the
tests that only read a smoke sweep's rows (VGG16, GEMM, ONNX, data-parallel, the concurrency test's reference)
instead of running the same sweep again. Tests about running (the runner, resume, the cluster) still run their
own."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
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
