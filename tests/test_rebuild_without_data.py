"""A post is rebuilt from a complete store without the data: the runner opens a study's data (its ``preflight``)
only when a trial is about to run, so `FWBENCH_RESULTS=results/paper/paper-run.sqlite make reproduce
PROFILE=paper` works on a machine without the IMDB archive once every needed trial is stored.

Each case plants every needed trial of a small profile in a fresh store, points ``FWBENCH_DATA_DIR`` at an empty
folder and replaces the IMDB loaders with spies: the sweep (what the notebooks call) must finish without error,
run nothing and never look for the archive. The control removes one stored trial: then the archive is looked for
before any trial starts, and the missing archive is the one-line error it always was.
"""

from __future__ import annotations

import pytest

from fwbench import planning, runner
from fwbench.errors import DataUnavailable
from fwbench.store import ResultsStore

SMALL = {"extra_arms": [], "scaling": False, "workers": [0]}
ADAPTIVE = {**SMALL, "adaptive": {"min_blocks": 2, "max_blocks": 4, "target": 0.5, "futility": False}}


def plant(store: ResultsStore, trials, profile: str) -> None:
    """Every trial of ``trials`` stored as finished, with a per-trial epoch time (MXNet 10 % slower, small noise)."""
    for i, trial in enumerate(trials):
        base = (1.1 if "mxnet" in str(trial.config.get("arm", "")) else 1.0) * (1 + 0.001 * (i % 3))
        runner.store_outcome(
            store,
            trial,
            {
                "status": "done",
                "summary": {"median_epoch_s": base},
                "measurements": [(1, "train_time_s", base)],
                "provenance": {"host": "planted"},
                "started_at": None,
                "ended_at": None,
                "error": None,
                "stderr_tail": None,
            },
            profile,
            {},
        )


@pytest.fixture
def no_archive(tmp_path, monkeypatch):
    """An empty data folder, no downloads, and spies on every way to the IMDB archive; returns the calls."""
    import fwbench.data.imdb as imdb_data

    (tmp_path / "data").mkdir()
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    monkeypatch.setenv("FWBENCH_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[str] = []
    for name in ("find_source", "check_source", "load_imdb"):
        real = getattr(imdb_data, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(imdb_data, name, spy)

    def no_trial(*args, **kwargs):
        raise AssertionError("a trial was started")

    monkeypatch.setattr("fwbench.executors.execute", no_trial)
    return calls


@pytest.mark.parametrize(
    ("study", "overrides"),
    [("imdb", SMALL), ("onnx", None), ("imdb", ADAPTIVE)],
    ids=["imdb", "onnx (reads IMDB too)", "imdb adaptive (later blocks not needed)"],
)
def test_a_complete_store_needs_no_data(study, overrides, tmp_path, no_archive):
    store = ResultsStore(tmp_path / "complete.sqlite")
    planned = planning.plan(study, "smoke", overrides)
    needed = planned
    if overrides and overrides.get("adaptive"):  # only the minimum blocks: tight ratios stop every setting there
        needed = [t for t in planned if t.config["repeat"] < overrides["adaptive"]["min_blocks"]]
        assert len(needed) < len(planned)
    plant(store, needed, "smoke")
    summary = runner.run_sweep(study, "smoke", overrides, store=store, progress="none")
    assert summary.ok and summary.done == 0 and summary.skipped == len(needed)
    assert no_archive == [], f"the IMDB archive was looked for: {no_archive}"


def test_a_missing_trial_still_checks_the_data_first(tmp_path, no_archive):
    """The control: with one trial to run, the data is checked before it starts and its absence is the error."""
    store = ResultsStore(tmp_path / "partial.sqlite")
    planned = planning.plan("imdb", "smoke", SMALL)
    plant(store, planned[1:], "smoke")
    with pytest.raises(DataUnavailable, match="IMDB dataset not found"):
        runner.run_sweep("imdb", "smoke", SMALL, store=store, progress="none")
    assert "check_source" in no_archive


def test_without_a_store_file_the_data_is_checked_before_the_store_is_made(tmp_path, monkeypatch, no_archive):
    path = tmp_path / "new.sqlite"
    monkeypatch.setenv("FWBENCH_RESULTS", str(path))
    with pytest.raises(DataUnavailable):
        runner.run_sweep("imdb", "smoke", SMALL, progress="none")
    assert not path.exists() and "check_source" in no_archive
