"""The SQLite results store."""
from __future__ import annotations

import sqlite3

import pytest

from fwbench.errors import FwbenchError
from fwbench.store import SCHEMA_VERSION, ResultsStore, trial_id


def _record(store, tid="t1", status="done", values=((0, "train_time_s", 1.5), (1, "train_time_s", 1.2))):
    store.record(trial_id=tid, study="imdb", status=status, config={"arm": "mxnet-imperative", "batch_size": 64},
                 provenance={"host": "h1", "git_sha": "abc"}, summary={"median_epoch_s": 1.2},
                 measurements=values, profile="smoke", error=None if status == "done" else "boom")


def test_trial_id_depends_on_config_not_key_order():
    assert trial_id("imdb", {"a": 1, "b": 2}, "c1") == trial_id("imdb", {"b": 2, "a": 1}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("imdb", {"a": 2}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("deepar", {"a": 1}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("imdb", {"a": 1}, "c2")  # other code, other trial


def test_round_trip_flattens_config_and_keeps_raw_values(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    _record(store)
    m = store.measurements("imdb")
    assert sorted(m.value) == [1.2, 1.5]
    assert set(m["config.arm"]) == {"mxnet-imperative"} and set(m["provenance.git_sha"]) == {"abc"}
    assert store.status_of(["t1", "nope"]) == {"t1": "done"}


def test_rerecording_a_trial_replaces_it(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    _record(store, status="failed", values=())
    _record(store)
    trials = store.trials()
    assert len(trials) == 1 and trials.status.iloc[0] == "done"
    assert len(store.measurements()) == 2


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    ResultsStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(FwbenchError, match="schema version"):
        ResultsStore(path)


def test_foreign_files_are_refused(tmp_path):
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database at all" * 100)
    with pytest.raises(FwbenchError, match="not an fwbench results store"):
        ResultsStore(text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE x (a)")
    with pytest.raises(FwbenchError, match="not an fwbench results store"):
        ResultsStore(other)
