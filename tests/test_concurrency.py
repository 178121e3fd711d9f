"""One store, many users at once: two sweeps of different studies, a reader and exports, all on one store.

Two smoke sweeps (imdb and deepar, each ``python -m fwbench.cli run ... --profile smoke`` in its own process,
started together) write into one new store (so they also race to create it) while this process reads it in a
loop (``ResultsStore.trials`` and the analysis loaders) and runs ``fwbench export`` whenever a new trial has
landed. The rows must be exactly those of the same trials run one after the other, as the notebooks ran them into
the session's shared smoke store: trial ids are deterministic from the config, so the sets of (trial_id, step,
metric, row count) compare directly.

To keep the test short both grids are narrowed with ``--set`` to two trials (IMDB: torch-eager and mxnet, 0
workers, no extra arms or scaling runs; DeepAR: the main part).
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from fwbench import analysis
from fwbench.errors import FwbenchError
from fwbench.export import TABLES
from fwbench.planning import plan
from fwbench.store import ResultsStore

pytestmark = pytest.mark.slow

# study -> overrides; each narrowed to two trials: IMDB's two reference arms at 0 workers, DeepAR's main part (the
# versions part, the same trials under gluonts 0.13.3, is tested on its own)
SWEEPS = {
    "imdb": {"arms": ["torch-eager", "mxnet-imperative"], "workers": [0], "extra_arms": [], "scaling": False},
    "deepar": {"versions_part": False},
}


def cli_args(study: str, overrides: dict) -> list[str]:
    sets = [arg for key, value in overrides.items() for arg in ("--set", f"{key}={value!r}")]
    return ["run", study, "--profile", "smoke", *sets]


# what a reader may hear before the sweeps have created the store: no file yet, or a file without tables yet
EARLY = ("no results store at", "is empty, not an fwbench results store yet")


def env_for(store: Path) -> dict:
    return {**os.environ, "FWBENCH_RESULTS": str(store), "FWBENCH_OFFLINE": "1", "MPLBACKEND": "agg"}


def start(args: list[str], store: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "fwbench.cli", *args, "--progress", "lines"],
        env=env_for(store),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: subprocess.Popen, timeout: float = 900) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-4000:]
    return out


def rows(store: Path, ids: set | None = None) -> collections.Counter:
    """(trial_id, step, metric, value count) of every measurement (of the trials in ``ids``, when given); every
    such trial must be done."""
    s = ResultsStore.open_read(store)
    m, trials = s.measurements(), s.trials()
    if ids is not None:
        m, trials = m[m.trial_id.isin(ids)], trials[trials.trial_id.isin(ids)]
        assert set(trials.trial_id) == ids, f"not in the smoke store: {sorted(ids - set(trials.trial_id))}"
    keys = collections.Counter(zip(m.trial_id, m.step, m.metric))
    assert set(trials.status) == {"done"}, trials[["trial_id", "status", "error"]]
    return collections.Counter({(*k, n) for k, n in keys.items()})


def check_export(folder: Path) -> int:
    """An export is consistent in itself: every value's trial is in trials, every trial's environment listed."""
    m, t, e = (pd.read_parquet(folder / f"{name}.parquet") for name in TABLES)
    assert set(m.trial_id) <= set(t.trial_id) and set(t.environment_id) <= set(e.environment_id)
    for fmt_table in TABLES:
        assert len(pd.read_csv(folder / f"{fmt_table}.csv")) == len(pd.read_parquet(folder / f"{fmt_table}.parquet"))
    return len(t)


def test_two_sweeps_a_reader_and_exports_share_one_store(tmp_path, smoke_notebooks):
    # the reference: the same trials as the notebooks ran them, one sweep after the other, into the session's
    # shared smoke store (conftest); trial ids are deterministic from the config, so the plans pick them out
    planned = {t.trial_id for study, overrides in SWEEPS.items() for t in plan(study, "smoke", overrides)}
    reference = rows(smoke_notebooks.store, planned)

    shared = tmp_path / "shared.sqlite"
    sweeps = [start(cli_args(study, overrides), shared) for study, overrides in SWEEPS.items()]
    reads, errors, stop = collections.Counter(), [], threading.Event()

    def reader():
        while not stop.is_set():
            try:
                store = ResultsStore.open_read(shared)
            except FwbenchError as exc:  # before the first sweep has created it (or its tables)
                if not any(m in str(exc) for m in EARLY):
                    errors.append(exc)
                time.sleep(0.2)
                continue
            try:
                store.trials()
                analysis.Results(store).values("imdb")
                analysis.Results(store).trials("deepar")
                reads["loaders"] += 1
            except Exception as exc:  # noqa: BLE001 - every failure is reported below
                errors.append(exc)
            time.sleep(0.05)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    exports, seen = [], 0
    try:
        while any(p.poll() is None for p in sweeps):
            time.sleep(1)
            try:
                done = len(ResultsStore.open_read(shared).trials())
            except FwbenchError as exc:
                assert any(m in str(exc) for m in EARLY), exc
                continue
            if done > seen:  # a trial has landed: export now, while the other sweep is still writing
                seen, folder = done, tmp_path / f"export-{len(exports)}"
                proc = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "fwbench.cli",
                        "export",
                        "--format",
                        "csv",
                        "--format",
                        "parquet",
                        "-o",
                        str(folder),
                    ],
                    env=env_for(shared),
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert proc.returncode == 0, proc.stderr
                exports.append((folder, any(p.poll() is None for p in sweeps)))
        outputs = [finish(p) for p in sweeps]
    finally:
        stop.set()
        thread.join(timeout=60)
        for p in sweeps:
            if p.poll() is None:
                p.kill()
    assert not errors, errors[:3]
    assert reads["loaders"] > 10, reads
    assert any(during for _, during in exports), "no export ran while a sweep was writing"
    for folder, _ in exports:
        check_export(folder)
    assert all("0 failed" in out for out in outputs), outputs

    got = rows(shared)
    assert got == reference, f"missing: {sorted(reference - got)[:5]}, extra: {sorted(got - reference)[:5]}"
    trials = ResultsStore.open_read(shared).trials()
    assert set(trials.study) == {"imdb", "deepar"} and trials["provenance.loadavg_1m"].notna().all()
    assert max(n for *_, n in got) == 1, "a value was written twice"
