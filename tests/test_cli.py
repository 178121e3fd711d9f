"""The fwbench console script: export, status, and one-line errors."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pandas as pd

from fwbench.store import ResultsStore


def fwbench(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "fwbench.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def _seed_store(path):
    store = ResultsStore(path)
    store.record(
        trial_id="a1",
        study="imdb",
        status="done",
        config={"arm": "mxnet-imperative", "batch_size": 64},
        provenance={"host": "node-1"},
        summary={},
        measurements=[(0, "train_time_s", 2.0), (1, "train_time_s", 1.5)],
    )
    store.record(
        trial_id="b2",
        study="imdb",
        status="failed",
        config={"arm": "torch-eager", "batch_size": 64},
        provenance={"host": "node-1"},
        summary={},
        error="killed by signal SIGABRT",
    )


def test_export_writes_one_row_per_raw_value(tmp_path):
    _seed_store(tmp_path / "s.sqlite")
    env = {"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")}
    out = fwbench("export", env=env)
    assert out.returncode == 0, out.stderr
    frame = pd.read_csv(io.StringIO(out.stdout))
    assert len(frame) == 2 and set(frame["config.arm"]) == {"mxnet-imperative"} and sorted(frame.value) == [1.5, 2.0]
    assert fwbench("export", "-o", str(tmp_path / "m.csv"), env=env).returncode == 0
    assert len(pd.read_csv(tmp_path / "m.csv")) == 2


def test_status_lists_failures(tmp_path):
    _seed_store(tmp_path / "s.sqlite")
    out = fwbench("status", env={"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")})
    assert out.returncode == 0
    assert "failed imdb b2: killed by signal SIGABRT" in out.stdout


def test_bad_override_is_one_line_and_exit_2(tmp_path):
    out = fwbench(
        "run", "imdb", "--profile", "smoke", "--set", "workers=[3]", env={"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")}
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fwbench: error:") and "workers" in lines[0]


def _one_line_error(out):
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("fwbench: error: "), out.stderr
    return lines[0]


def test_reads_of_a_missing_store_say_so_and_create_nothing(tmp_path):
    store = tmp_path / "results" / "fwbench.sqlite"
    for args in (
        ["status"],
        ["status", "--profile", "smoke"],
        ["export"],
        ["ledger"],
        ["estimate", "imdb", "--workers", "2"],
    ):
        line = _one_line_error(fwbench(*args, env={"FWBENCH_RESULTS": str(store)}))
        assert "no results store at" in line and str(store) in line
    assert list(tmp_path.iterdir()) == [], "a read created a file or folder"


def test_status_on_a_corrupt_store_changes_nothing(tmp_path):
    store = tmp_path / "fwbench.sqlite"
    content = os.urandom(16384)
    store.write_bytes(content)
    line = _one_line_error(fwbench("status", env={"FWBENCH_RESULTS": str(store)}))
    assert "is not an fwbench results store" in line
    assert store.read_bytes() == content and [p.name for p in tmp_path.iterdir()] == ["fwbench.sqlite"]
