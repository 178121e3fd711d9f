"""`fwbench export`: three tables linked by ids (measurements, trials, environments), in CSV and Parquet, and the
former single wide CSV with ``-o FILE.csv``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fwbench import export, stale
from fwbench.errors import FwbenchError
from fwbench.store import ResultsStore

ENV_A = {
    "host": "node-1",
    "cpu_model": "EPYC",
    "cpu_count": 2,
    "python": "3.11.9",
    "git_sha": "abc",
    "git_dirty": False,
    "thread_env": {"OMP_NUM_THREADS": "2"},
    "dataset_checksum": "sha256:1",
}


def fwbench(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "fwbench.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def seed(path):
    store = ResultsStore(path)
    torch_env = {**ENV_A, "framework": "torch", "framework_version": "2.13.0", "build_config": ["BLAS=MKL"]}
    store.record(
        trial_id="a1",
        study="imdb",
        status="done",
        profile="smoke",
        config={"arm": "torch-dense", "batch_size": 64, "model": {"hidden": 8}},
        provenance={**torch_env, "loadavg_1m": 0.5, "pid": 11, "trial_wall_s": 3.5, "code_version": "v1"},
        summary={},
        measurements=[(0, "train_time_s", 2.0), (1, "train_time_s", 1.5), (-1, "test_acc", 0.6)],
        started_at="2026-01-01T00:00:00+00:00",
        ended_at="2026-01-01T00:00:04+00:00",
    )
    store.record(
        trial_id="a2",
        study="imdb",
        status="done",
        profile="smoke",
        config={"arm": "torch-dense", "batch_size": 256, "model": {"hidden": 8}},
        provenance={**torch_env, "loadavg_1m": 1.7, "pid": 12, "trial_wall_s": 2.5},
        summary={},
        measurements=[(0, "train_time_s", 1.0), (-1, "latency_ms", 3.0)],
    )
    store.record(
        trial_id="b1",
        study="deepar",
        status="done",
        profile="smoke",
        config={"arm": "mxnet", "dataset": "m1_yearly"},
        provenance={**ENV_A, "framework": "mxnet", "framework_version": "1.9.1", "trial_wall_s": 9.0},
        summary={},
        measurements=[(-1, "MASE", 3.2), (-1, "cpu_util_pct", 180.0)],
    )
    store.record(
        trial_id="c1",
        study="imdb",
        status="failed",
        profile="smoke",
        config={"arm": "mxnet"},
        provenance={"host": "node-1"},
        summary={},
        error="killed by signal SIGKILL",
    )
    return store


def test_units_come_from_metric_names():
    metrics = ("train_time_s", "latency_ms", "cpu_util_pct", "peak_gflops", "samples_per_s", "MASE", "test_acc")
    assert [export.unit_of(m) for m in metrics] == ["s", "ms", "%", "GFLOP/s", "1/s", "", ""]


def test_framework_comes_from_the_arm_table_else_from_the_trial_process():
    # a declared arm: the arm table says (whatever an old provenance claims)
    assert (
        export.framework_of({"study": "imdb", "config.arm": "mxnet-imperative", "provenance.framework": "x"}) == "mxnet"
    )
    assert export.arm_of({"study": "onnx", "config.step": "onnxruntime"}) == "onnxruntime"
    assert export.framework_of({"study": "onnx", "config.step": "onnxruntime"}) == "onnxruntime"
    # an arm the table no longer has (renamed) or a study not declared: what the trial process recorded
    assert (
        export.framework_of({"study": "imdb", "provenance.framework": "mxnet", "config.arm": "torch-dense"}) == "mxnet"
    )
    assert export.framework_of({"study": "bench", "provenance.framework": float("nan")}) == ""
    assert export.framework_of({}) == ""


def test_three_tables_store_provenance_once_per_environment(tmp_path):
    frames = export.tables(seed(tmp_path / "s.sqlite"))
    m, t, e = frames["measurements"], frames["trials"], frames["environments"]
    assert list(m.columns) == ["trial_id", "step", "metric", "value", "unit"] and len(m) == 7
    assert dict(zip(m.metric, m.unit))["latency_ms"] == "ms"
    assert set(t.trial_id) == {"a1", "a2", "b1", "c1"}
    assert {"config.arm", "config.batch_size", "config.model.hidden", "config.dataset"} <= set(t.columns)
    a1 = t.set_index("trial_id").loc["a1"]
    assert (a1.framework, a1.arm, a1.code_version, a1.trial_wall_s, a1.loadavg_1m) == (
        "torch",
        "torch-dense",
        "v1",
        3.5,
        0.5,
    )
    by_id = t.set_index("trial_id").environment_id
    assert by_id["a1"] == by_id["a2"], "trials differing only in load, pid and wall time share an environment"
    assert len({by_id["a1"], by_id["b1"], by_id["c1"]}) == 3 and len(e) == 3
    assert set(t.environment_id) == set(e.environment_id)
    env_a = e.set_index("environment_id").loc[by_id["a1"]]
    assert env_a["thread_env.OMP_NUM_THREADS"] == "2" and env_a.build_config == '["BLAS=MKL"]'
    assert not {"loadavg_1m", "pid", "trial_wall_s", "framework"} & set(e.columns)
    assert t.set_index("trial_id").loc["c1", "error"] == "killed by signal SIGKILL"
    # the id is a function of the environment alone: same in an export of one study
    again = export.tables(ResultsStore.open_read(tmp_path / "s.sqlite"), study="imdb")["trials"]
    assert again.set_index("trial_id").environment_id["a1"] == by_id["a1"]


def test_cli_writes_csv_and_parquet_that_join_in_one_line(tmp_path):
    seed(tmp_path / "s.sqlite")
    env = {"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")}
    out = fwbench("export", "--format", "csv", "--format", "parquet", "-o", str(tmp_path / "results"), env=env)
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert names == sorted(f"{t}.{f}" for t in export.TABLES for f in ("csv", "parquet"))
    for fmt, read in (("csv", pd.read_csv), ("parquet", pd.read_parquet)):
        joined = read(tmp_path / "results" / f"measurements.{fmt}").merge(read(tmp_path / "results" / f"trials.{fmt}"))
        joined = joined.merge(read(tmp_path / "results" / f"environments.{fmt}"))
        assert len(joined) == 7 and set(joined.framework) == {"torch", "mxnet"}
        assert set(joined.loc[joined.trial_id == "a1", "cpu_model"]) == {"EPYC"}


def test_cli_single_file_csv_is_the_former_wide_table(tmp_path):
    seed(tmp_path / "s.sqlite")
    env = {"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")}
    assert fwbench("export", "-o", str(tmp_path / "wide.csv"), env=env).returncode == 0
    wide = pd.read_csv(tmp_path / "wide.csv")
    assert len(wide) == 7 and {"config.arm", "provenance.cpu_model", "metric", "value"} <= set(wide.columns)
    bad = fwbench("export", "--format", "parquet", "-o", str(tmp_path / "wide.csv"), env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("fwbench: error:") and len(bad.stderr.splitlines()) == 1


def test_export_of_a_missing_store_is_one_line_and_creates_nothing(tmp_path):
    store = tmp_path / "nowhere" / "s.sqlite"
    out = fwbench("export", "--format", "csv", "-o", str(tmp_path / "out"), env={"FWBENCH_RESULTS": str(store)})
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("fwbench: error: no results store at") and len(out.stderr.splitlines()) == 1
    assert sorted(tmp_path.iterdir()) == []


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    store = seed(tmp_path / "s.sqlite")
    (tmp_path / "taken").write_text("x")
    with pytest.raises(FwbenchError, match="is a file"):
        export.write_tables(store, tmp_path / "taken", ["csv"])


def test_a_profiles_rows_alone_for_committing(tmp_path):
    """`make publish PROFILE=paper` writes one profile's trials and their measurements, nothing else."""
    store = seed(tmp_path / "s.sqlite")
    store.record(
        trial_id="p1",
        study="deepar",
        status="done",
        profile="paper",
        config={"arm": "torch-eager"},
        provenance={**ENV_A, "framework": "torch"},
        summary={},
        measurements=[(-1, "MASE", 3.9)],
    )
    paper = export.tables(store, profile="paper")
    assert list(paper["trials"].trial_id) == ["p1"] and list(paper["measurements"].trial_id) == ["p1"]
    assert len(paper["environments"]) == 1
    assert len(export.tables(store)["trials"]) == 5  # no profile: every trial
    env = {"FWBENCH_RESULTS": str(tmp_path / "s.sqlite")}
    out = fwbench("export", "--profile", "paper", "--format", "csv", "-o", str(tmp_path / "paper"), env=env)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "paper" / "trials.csv").read_text().count("\n") == 2  # header + p1


def test_the_trials_table_keeps_every_stored_row_and_marks_those_a_rerun_superseded():
    paper = Path(__file__).resolve().parents[1] / "results" / "paper" / "paper-run.sqlite"
    if not paper.exists():
        pytest.skip("no committed paper store")
    t = export.tables(ResultsStore.open_read(paper), profile="paper")["trials"]
    stored = ResultsStore.open_read(paper).trials()
    stored = stored[stored.profile.eq("paper")]
    assert len(t) == len(stored)  # raw data: every stored row stays
    expected = set(stale.stale_trials(stored).query("superseded").trial_id)
    assert expected and set(t.trial_id[t.superseded]) == expected
