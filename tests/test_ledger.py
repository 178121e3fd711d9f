"""The claims ledger: each rule gives both outcomes on planted synthetic store rows, absent rows give 'not measured
yet' (and flip once rows exist), and the CSV export works from the CLI."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from fwbench import ledger as L
from fwbench.cli import main as cli_main
from fwbench.errors import FwbenchError
from fwbench.ledger.data import named_arm
from fwbench.ledger.sources import borealis2018, deepar2024, overview
from fwbench.runner import plan
from fwbench.store import ResultsStore, trial_id
from fwbench.studies import get_study

_counter = itertools.count()
IMDB, DEEPAR, VGG, ONNX = (get_study(s) for s in ("imdb", "deepar", "vgg16", "onnx"))
# the arms the claims compare: the studies' reference arms, and the claim-specific ones by name
PT, MX = IMDB.reference_arm("torch"), IMDB.reference_arm("mxnet")
SPARSE, HYBRID, COMPILE = borealis2018.SPARSE_ARM, borealis2018.HYBRID_ARM, overview.COMPILE_ARM


def _noise(i: int) -> float:
    """Deterministic +-0.5 % jitter, so bootstrap CIs are narrow but not degenerate."""
    return 1.0 + 0.005 * math.sin(1.7 * i + 0.3)


def _template(study: str, **where) -> dict:
    """A real config of the study's smoke grid (every field the analysis loaders read), to plant rows from."""
    return next(t.config for t in plan(study, "smoke") if all(t.config.get(k) == v for k, v in where.items()))


def _record(store, study, config, status, rows, provenance=None, summary=None, profile=None):
    store.record(trial_id=trial_id(study, config, "planted"), study=study, status=status, config=config,
                 provenance={"host": "synthetic", **(provenance or {})}, summary=summary or {},
                 measurements=rows if status == "done" else [], profile=profile,
                 error=None if status == "done" else "planted failure")


def add_imdb(store, arm, batch, workers, epoch_s, *, seed=42, epochs=6, final_loss=0.5, status="done",
             extra=None, profile="synthetic"):
    config = {**_template("imdb", part="main"), "arm": arm, "batch_size": batch, "num_workers": workers,
              "epochs": epochs, "n_train": 512, "seed": seed, "repeat": seed - 42}
    rows = []
    for e in range(epochs):
        k = next(_counter)
        rows += [(e, "train_time_s", epoch_s * _noise(k) * (1.4 if e == 0 else 1.0)),
                 (e, "train_loss", final_loss + 0.05 * (epochs - 1 - e) + 0.001 * seed),
                 (e, "test_acc", 0.8), (e, "proc_cpu_pct", 100.0)]
        for metric, value in (extra or {}).items():
            rows.append((e, metric, value * _noise(k)))
    provenance = {"cpu_model": "Planted CPU", "cpu_count": 2, "python": "3.11",
                  "framework": IMDB.framework_of(arm), "framework_version": "0"}
    _record(store, "imdb", config, status, rows, provenance, profile=profile)


def add_other(store, study, config, metrics, status="done", summary=None):
    rows = [(step, m, v * _noise(next(_counter))) for m, values in metrics.items() for step, v in enumerate(values)]
    _record(store, study, config, status, rows, summary=summary)


def plant_imdb(store, *, matches: bool):
    """A full synthetic sweep; ``matches`` plants every effect as claimed, otherwise planted against the claims."""
    D = 1.0  # dense epoch time at batch 1024, 0 workers
    slow64 = 4.0 if matches else 0.5  # batch 64 slower (1024 best) or faster (claim A6 contradicted)
    times = {
        # arm: {workers: time at batch 1024}
        PT: {0: D, 1: D / 1.01, 2: D / 1.01, 4: D / (1.02 if matches else 1.5)},
        MX: ({0: 1.1 * D, 1: 1.516 * 1.1 * D / 2.3, 2: 1.1 * D / 2.3, 4: 1.1 * D / 2.3} if matches else
             {0: 0.7 * D, 1: 0.7 * D, 2: 0.7 * D / 1.1, 4: 0.7 * D / 1.2 / 1.1}),
        SPARSE: ({0: D / 1.4, 1: D / 1.4, 2: D / 1.4, 4: 1.2 * 1.1 * D / 2.3} if matches else
                 {w: D for w in (0, 1, 2, 4)}),
    }
    for arm, by_workers in times.items():
        for batch, scale in ((1024, 1.0), (64, slow64)):
            for w, t in by_workers.items():
                gpu = {"gpu_util_pct": {PT: 77.0, MX: 65.0}.get(arm, 70.0) if w == 0 else 85.0}
                for seed in (42, 43):
                    add_imdb(store, arm, batch, w, t * scale, seed=seed,
                             extra=gpu if matches else None)
    # the convergence setting for A8: final train loss MXNet above (or below) PyTorch dense
    # (batch 256 is slower than 1024 per epoch; MXNet / PyTorch as at the other batch sizes)
    for arm, loss, t in ((PT, 0.35, 2.0), (MX, 0.40 if matches else 0.30, 2.2 if matches else 1.4)):
        for seed in (42, 43):
            add_imdb(store, arm, 256, 0, t, seed=seed, epochs=30, final_loss=loss)


def plant_other(store, *, matches: bool):
    # A9: the advised hybrid blocks train (or every such trial fails)
    add_imdb(store, HYBRID, 1024, 0, 0.4, status="done" if matches else "failed")
    # C4: torch-compile faster (or slower) than torch-eager
    for batch, scale in ((1024, 1.0), (64, 4.0 if matches else 0.5)):
        for seed in (42, 43):
            add_imdb(store, COMPILE, batch, 0, (0.8 if matches else 1.2) * scale, seed=seed)
    # A10: the MXNet import of the ONNX file works with parity (or fails), as the onnx study stores it
    export, mx_import = ONNX.reference_arm("torch"), borealis2018.ONNX_IMPORT_STEP
    add_other(store, "onnx", {**_template("onnx"), "step": export}, {}, summary={"step_status": "ok"})
    add_other(store, "onnx", {**_template("onnx"), "step": mx_import}, {},
              summary={"step_status": "ok", "max_abs_diff": 2e-6} if matches else
              {"step_status": "step_failed", "error": "planted: import_model failed"})
    # C1 / C3: VGG16 latency (oneDNN on; an oneDNN-off row that must be ignored); C2: 8-GPU training time
    ms = overview.VGG16_LATENCY_MS
    for framework, s, train_s in (("torch", ms["torch"] / 1e3, 21.6),
                                  ("mxnet", ms["mxnet"] / 1e3 if matches else 0.025, 15.4 if matches else 21.6)):
        arm = VGG.reference_arm(framework)
        config = {**_template("vgg16"), "arm": arm, "batch_size": 1, "image_size": 224, "device": "cpu"}
        add_other(store, "vgg16", {**config, "onednn": True}, {"latency_s": [s] * 20})
        add_other(store, "vgg16", {**config, "onednn": False}, {"latency_s": [s * 7] * 20})
        add_other(store, "vgg16", {"arm": arm, "gpus": 8}, {"train_time_s": [train_s] * 5})
    # B: DeepAR total train time MXNet / PyTorch (4.5 claimed)
    factor = deepar2024.CLAIMED_SPEEDUP if matches else 2.0
    for dataset, base in (("m1_yearly", 10.0), ("cif_2016", 20.0), ("nn5_weekly", 40.0)):
        for seed in (42, 43):
            for framework in ("torch", "mxnet"):
                value = base * (factor if framework == "mxnet" else 1.0)
                config = {**_template("deepar"), "dataset": dataset, "arm": DEEPAR.reference_arm(framework),
                          "seed": seed}
                _record(store, "deepar", config, "done",
                        [(-1, "train_time_s", value * _noise(next(_counter))), (-1, "predict_time_s", 1.0),
                         (0, "train_loss", 1.0)], provenance={"dataset_kind": "original"})


@pytest.fixture
def store_pair(tmp_path):
    good, bad = ResultsStore(tmp_path / "good.sqlite"), ResultsStore(tmp_path / "bad.sqlite")
    plant_imdb(good, matches=True)
    plant_other(good, matches=True)
    plant_imdb(bad, matches=False)
    plant_other(bad, matches=False)
    return good, bad


def _verdicts(store) -> dict:
    table = L.build(store, profile="all")
    assert list(table.columns) == L.COLUMNS
    assert set(table.verdict) <= set(L.VERDICTS)
    return dict(zip(table.claim_id, table.verdict))


def test_every_rule_gives_both_outcomes_on_planted_rows(store_pair):
    good, bad = map(_verdicts, store_pair)
    expected_good = {c.id: L.REPRODUCED for c in L.CLAIMS}
    expected_bad = {c.id: L.CONTRADICTED for c in L.CLAIMS}
    # A1 (PyTorch faster, GPU) and C3 (MXNet's CPU kernels faster) say opposite things: one plant flips both
    # (in the 'bad' plant MXNet is faster on the CPU for the LSTM and for VGG16, though not by C1's 1.48)
    expected_good["C3"], expected_bad["C3"] = L.CONTRADICTED, L.REPRODUCED
    # without GPU utilisation rows the GPU claims cannot be judged at all; C2 needs >= 8 GPUs on both sides
    expected_bad.update({"A2": L.NOT_TESTABLE, "A3": L.NOT_TESTABLE})
    assert good == expected_good
    assert bad == expected_bad


def test_ledger_rows_carry_measurement_ci_and_conditions(store_pair):
    table = L.build(store_pair[0], profile="all").set_index("claim_id")
    a1 = table.loc["A1"]
    assert a1.ci_low <= a1.estimate <= a1.ci_high
    assert 1.10 / 1.05 <= a1.ci_low and a1.ci_high <= 1.10 * 1.05
    assert "Planted CPU" in a1.our_conditions and "V100" in a1.source_conditions
    assert "batch 64" in a1.measurement and "batch 1024" in a1.measurement


def test_empty_store_is_not_measured_or_not_testable(tmp_path):
    table = L.build(ResultsStore(tmp_path / "empty.sqlite"), profile="all").set_index("claim_id")
    assert set(table.verdict) <= {L.NOT_MEASURED, L.NOT_TESTABLE}
    assert table.loc["A2", "verdict"] == L.NOT_TESTABLE and table.loc["C2", "verdict"] == L.NOT_TESTABLE
    assert HYBRID in table.loc["A9", "reason"]
    assert table.loc["A9", "verdict"] == L.NOT_MEASURED


def test_not_measured_flips_once_rows_exist(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    assert _verdicts(store)["A9"] == L.NOT_MEASURED
    add_imdb(store, HYBRID, 256, 0, 1.0)
    assert _verdicts(store)["A9"] == L.REPRODUCED


def test_one_timed_epoch_per_side_is_insufficient_data(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    for arm in (PT, MX):
        add_imdb(store, arm, 64, 0, 1.0, epochs=2)  # one timed epoch each: a ratio but no CI
    table = L.build(store, profile="all").set_index("claim_id")
    assert table.loc["A1", "verdict"] == L.INSUFFICIENT
    assert not math.isnan(table.loc["A1", "estimate"]) and math.isnan(table.loc["A1", "ci_low"])


def test_profile_selects_only_that_profiles_trials(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    smoke = plan("imdb", "smoke")
    for t in smoke:
        store.record(trial_id=t.trial_id, study="imdb", status="done", config=t.config, provenance={"host": "x"},
                     summary={}, measurements=[(e, "train_time_s", 1.0 + 0.01 * e) for e in range(t.config["epochs"])])
    judged = [t for t in smoke if t.config.get("part", "main") in L.IMDB_PARTS]  # not the scaling part
    assert 0 < len(judged) and L.load(store, "smoke").imdb.trial_id.nunique() == len(judged)
    assert L.load(store, "quick").imdb.empty
    assert "no finished IMDB trials" in L.build(store, "quick").set_index("claim_id").loc["A1", "reason"]


@pytest.mark.parametrize("ci,band,expected", [
    ((1.06, 1.12), (1.05, 1.15), L.REPRODUCED), ((1.30, 1.40), (1.05, 1.15), L.CONTRADICTED),
    ((0.80, 0.90), (1.05, 1.15), L.CONTRADICTED), ((1.00, 1.10), (1.05, 1.15), L.INCONCLUSIVE),
    ((math.nan, math.nan), (1.05, 1.15), L.INSUFFICIENT)])
def test_band_rule(ci, band, expected):
    assert L.verdict_in_band(*ci, band) == expected


@pytest.mark.parametrize("ci,expected", [((1.1, 1.2), L.REPRODUCED), ((0.8, 0.95), L.CONTRADICTED),
                                         ((0.9, 1.1), L.INCONCLUSIVE), ((math.nan, 1.0), L.INSUFFICIENT)])
def test_above_rule(ci, expected):
    assert L.verdict_above(*ci) == expected


@pytest.mark.parametrize("ci,expected", [((0.9, 1.04), L.REPRODUCED), ((1.2, 1.3), L.CONTRADICTED),
                                         ((1.0, 1.2), L.INCONCLUSIVE)])
def test_at_most_rule(ci, expected):
    assert L.verdict_at_most(*ci) == expected


def test_fastest_is_rule():
    fast, slow = np.array([1.0, 1.01, 0.99]), np.array([2.0, 2.02, 1.98])
    assert L.fastest_is({64: slow, 1024: fast}, 1024).verdict == L.REPRODUCED
    assert L.fastest_is({64: fast, 1024: slow}, 1024).verdict == L.CONTRADICTED
    assert L.fastest_is({64: fast}, 1024).verdict == L.NOT_MEASURED


def test_combine_precedence():
    assert L.combine([L.REPRODUCED, L.CONTRADICTED]) == L.CONTRADICTED
    assert L.combine([L.REPRODUCED, L.INCONCLUSIVE]) == L.INCONCLUSIVE
    assert L.combine([L.REPRODUCED, L.REPRODUCED]) == L.REPRODUCED
    assert L.combine([]) == L.NOT_MEASURED


def test_cli_writes_csv(store_pair, tmp_path, monkeypatch):
    monkeypatch.setenv("FWBENCH_RESULTS", str(store_pair[0].path))
    out = tmp_path / "ledger.csv"
    assert cli_main(["ledger", "--profile", "all", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.claim_id) == [c.id for c in L.CLAIMS]
    assert list(table.verdict) == list(L.build(store_pair[0], profile="all").verdict)
    assert (table.verdict == L.REPRODUCED).sum() == len(L.CLAIMS) - 1  # all but C3 (see above)


def test_claims_compare_the_registry_arms_and_name_no_unknown_arm():
    assert (borealis2018.MX, borealis2018.PT) == (MX, PT) == ("mxnet-imperative", "torch-eager")
    assert {SPARSE, HYBRID, COMPILE} <= set(IMDB.arm_names)
    assert IMDB.framework_of(HYBRID) == "mxnet" and IMDB.framework_of(COMPILE) == "torch"
    assert borealis2018.ONNX_IMPORT_STEP in ONNX.arm_names
    with pytest.raises(FwbenchError, match="unknown arm"):
        named_arm("imdb", "mxnet-hybrid")  # an old name is an error, never a default
    rules = L.rules_markdown()
    assert f"{MX} / {PT}" in rules and DEEPAR.reference_arm("mxnet") in rules


def test_each_source_holds_its_numbers_once_and_its_claims():
    assert deepar2024.TOTAL_TRAIN_S == {"mxnet": 395_807.0, "torch": 88_756.0}
    assert overview.VGG16_LATENCY_MS == {"torch": 30.4, "mxnet": 20.5}
    assert [c.id for c in L.CLAIMS] == [c.id for s in L.SOURCES for c in s.CLAIMS]
    assert len({c.id for c in L.CLAIMS}) == len(L.CLAIMS) == 15
    claims = {c.id: c for c in L.CLAIMS}
    assert "395,807" in claims["B"].text and "88,756" in claims["B"].text and "30.4" in claims["C1"].text
    for c in L.CLAIMS:
        assert get_study(c.study).name == c.study and c.source in {s.SOURCE for s in L.SOURCES}


def test_a_profile_a_study_lacks_gives_no_rows_of_it(store_pair):
    table = L.build(store_pair[0], profile="gap").set_index("claim_id")  # gap: a DeepAR-only profile
    assert table.loc["A1", "verdict"] == L.NOT_MEASURED and table.loc["C1", "verdict"] == L.NOT_MEASURED


def test_host_text_names_cpu_cores_and_versions(store_pair):
    trials = store_pair[0].trials("imdb")
    text = L.host_text(trials)
    assert text == "CPU Planted CPU (2 cores); mxnet 0, torch 0"
    assert L.host_text(trials.iloc[:0]) == "no finished trials"


@pytest.mark.slow
def test_notebook_05_shows_the_ledger_of_the_store(smoke_notebooks):
    import nbformat

    store = ResultsStore(smoke_notebooks.store)
    nb = nbformat.read(smoke_notebooks.executed / "05_claims_ledger.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    html = "".join(o["data"].get("text/html", "") for o in outputs if "data" in o)
    markdown = "".join(o["data"].get("text/markdown", "") for o in outputs if "data" in o)
    assert L.rules_markdown() in markdown
    # 05 runs last: every study's rows were there when it ran, so it shows the ledger as built now
    table = L.build(store, profile="smoke")
    assert L.render.summary(table, L.PRECEDENCE) in markdown
    for claim_id, verdict in zip(table.claim_id, table.verdict):
        assert f">{claim_id}<" in html and verdict in html
