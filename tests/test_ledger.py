"""The claims ledger: each rule gives both outcomes on planted synthetic store rows, absent rows give 'not measured
yet' (and flip once rows exist), and the CSV export works from the CLI.

The plants are at the ledger's scale floors (``fwbench.ledger.floors``): IMDB trials of 25k reviews at batch 64 and
1024 (>= 20 batches per epoch), 3 epochs (2 timed), 4 repeat blocks per setting (block = config.repeat, seed =
42 + block; block 0 chooses a "best setting", blocks 1-3 judge it), on "cuda" where a GPU claim should get a verdict;
VGG16 as 3 independent trials (config.block) per arm and setting; DeepAR at the protocol's 100 epochs x 50 batches
on 3 datasets x 2 seeds. The helpers here are shared with ``test_ledger_rules.py``."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from fwbench import ledger as L
from fwbench import prose
from fwbench.analysis import Results
from fwbench.cli import main as cli_main
from fwbench.errors import FwbenchError
from fwbench.ledger import floors, rules
from fwbench.ledger import render as ledger_render
from fwbench.ledger.data import IMDB_PARTS, named_arm
from fwbench.ledger.sources import SOURCES, borealis2018, deepar2024, overview
from fwbench.pages import render_markdown
from fwbench.planning import plan
from fwbench.store import ResultsStore, trial_id
from fwbench.studies import get_study

_counter = itertools.count()
IMDB, DEEPAR, VGG, ONNX = (get_study(s) for s in ("imdb", "deepar", "vgg16", "onnx"))
# the arms the claims compare: the studies' reference arms, and the claim-specific ones by name
PT, MX = IMDB.reference_arm("torch"), IMDB.reference_arm("mxnet")
SPARSE, HYBRID, COMPILE = borealis2018.SPARSE_ARM, borealis2018.HYBRID_ARM, overview.COMPILE_ARM
FULL_HYBRID = borealis2018.FULL_HYBRID_ARM  # A9's arm (being added to the imdb arm table)
VGG_PT, VGG_MX, VGG_SCRIPT = VGG.reference_arm("torch"), VGG.reference_arm("mxnet"), "torch-script"
BLOCKS = (0, 1, 2, 3)  # IMDB repeat blocks: >= 4 for the "best setting" claims (floors.HELDOUT_BLOCKS + 1)
N_TRAIN = floors.TRAIN_REVIEWS  # 25000 // 1024 = 24 batches per epoch >= floors.MIN_BATCHES
VGG_BLOCKS = (0, 1, 2)  # VGG16 independent trials per arm and setting (floors.MIN_TRIALS)


def _noise(i: int) -> float:
    """Deterministic +-0.5 % jitter, so CIs are narrow but not degenerate; each call draws the next value, so two
    plants made one after the other have independent-looking noise."""
    return 1.0 + 0.005 * math.sin(1.7 * i + 0.3)


def _template(study: str, **where) -> dict:
    """A real config of the study's smoke grid (every field the analysis loaders read), to plant rows from."""
    return dict(_smoke_config(study, tuple(sorted(where.items()))))


@functools.cache
def _smoke_config(study: str, where: tuple) -> dict:
    return next(t.config for t in plan(study, "smoke") if all(t.config.get(k) == v for k, v in where))


def _record(store, study, config, status, rows, provenance=None, summary=None, profile=None):
    store.record(
        trial_id=trial_id(study, config, "planted"),
        study=study,
        status=status,
        config=config,
        provenance={"host": "synthetic", **(provenance or {})},
        summary=summary or {},
        measurements=rows if status == "done" else [],
        profile=profile,
        error=None if status == "done" else "planted failure",
    )


def add_imdb(
    store,
    arm,
    batch,
    workers,
    epoch_s,
    *,
    block=0,
    epochs=3,
    n_train=N_TRAIN,
    device="cuda",
    final_loss=0.5,
    acc=0.88,
    status="done",
    extra=None,
    summary=None,
    epoch_times=None,
    timed=True,
    profile="synthetic",
    part="main",
    provenance=None,
    onednn=True,
    beside=False,
    config_extra=None,
):
    """One IMDB trial (repeat block ``block``, seed 42 + block): ``epoch_s`` per epoch with jitter (the first
    epoch 1.4x: warm-up), or exactly ``epoch_times``; ``timed=False`` records no measurements (a trial that ran
    but timed nothing, e.g. a failed hybridize)."""
    seed = 42 + block
    config = {
        **_template("imdb", part="main"),
        "part": part,
        "arm": arm,
        "batch_size": batch,
        "num_workers": workers,
        "epochs": epochs,
        "n_train": n_train,
        "seed": seed,
        "repeat": block,
        "device": device,
        "onednn": onednn,
        **({"beside": True} if beside else {}),
        **(config_extra or {}),
    }
    rows = []
    for e in range(epochs if timed else 0):
        k = next(_counter)
        t = epoch_times[e] if epoch_times is not None else epoch_s * _noise(k) * (1.4 if e == 0 else 1.0)
        rows += [
            (e, "train_time_s", t),
            (e, "train_loss", final_loss + 0.05 * (epochs - 1 - e) + 0.001 * seed),
            (e, "test_acc", acc),
            (e, "proc_cpu_pct", 100.0),
        ]
        for metric, value in (extra or {}).items():
            rows.append((e, metric, value * _noise(k)))
    provenance = {
        "cpu_model": "Planted CPU",
        "cpu_count": 2,
        "python": "3.11",
        "framework": IMDB.framework_of(arm) if arm in IMDB.arm_names else "mxnet",
        "framework_version": "0",
        **(provenance or {}),
    }
    _record(store, "imdb", config, status, rows, provenance, summary=summary, profile=profile)


def add_blocks(store, arm, batch, workers, epoch_s, blocks=BLOCKS, **kw):
    """The same setting in every repeat block."""
    for block in blocks:
        add_imdb(store, arm, batch, workers, epoch_s, block=block, **kw)


def add_other(store, study, config, metrics, status="done", summary=None):
    rows = [(step, m, v * _noise(next(_counter))) for m, values in metrics.items() for step, v in enumerate(values)]
    _record(store, study, config, status, rows, summary=summary)


def add_vgg(store, arm, latency_s, *, onednn=True, batch=1, image=224, device="cpu", blocks=VGG_BLOCKS):
    """VGG16 latencies: one trial per block (an independent process), 20 timed calls each."""
    for block in blocks:
        config = {
            **_template("vgg16"),
            "arm": arm,
            "batch_size": batch,
            "image_size": image,
            "onednn": onednn,
            "device": device,
            "block": block,
        }
        add_other(store, "vgg16", config, {"latency_s": [latency_s] * 20})


def add_deepar(
    store, factor, *, datasets=("m1_yearly", "cif_2016", "nn5_weekly"), seeds=(42, 43), epochs=100, batches=50
):
    """DeepAR pairs: MXNet's total train time ``factor`` x PyTorch's, per dataset x seed."""
    for (dataset, base), seed in itertools.product(zip(datasets, (10.0, 20.0, 40.0, 80.0)), seeds):
        for framework in ("torch", "mxnet"):
            value = base * (factor if framework == "mxnet" else 1.0)
            config = {
                **_template("deepar"),
                "dataset": dataset,
                "arm": DEEPAR.reference_arm(framework),
                "seed": seed,
                "epochs": epochs,
                "num_batches_per_epoch": batches,
            }
            _record(
                store,
                "deepar",
                config,
                "done",
                [
                    (-1, "train_time_s", value * _noise(next(_counter))),
                    (-1, "predict_time_s", 1.0),
                    (0, "train_loss", 1.0),
                ],
                provenance={"dataset_kind": "original"},
            )


def plant_imdb(store, *, matches: bool, device: str = "cuda"):
    """A full synthetic sweep at scale; ``matches`` plants every effect as claimed, otherwise against the claims.
    On "cuda" the GPU claims (A1-A7) get verdicts; on "cpu" they are labelled analogues."""
    D = 1.0  # dense epoch time at batch 1024, 0 workers
    slow64 = 4.0 if matches else 0.5  # batch 64 slower (1024 best) or faster (claim A6 contradicted)
    mx2 = 1.1 * D / 2.28  # MXNet's best (batch 1024, 2 workers) in the 'good' plant: A4 2.26, A7 2.03
    times = {
        # arm: {workers: time at batch 1024}; no ties between settings, so each arm's best setting is one
        PT: {0: D, 1: D / 1.01, 2: D / 1.01, 4: D / (1.02 if matches else 1.5)},
        MX: (
            {0: 1.1 * D, 1: 1.516 * mx2, 2: mx2, 4: 1.01 * mx2}
            if matches
            else {0: 0.7 * D, 1: 0.7 * D, 2: 0.7 * D / 1.1, 4: 0.7 * D / 1.2 / 1.1}
        ),
        SPARSE: ({0: D / 1.4, 1: D / 1.4, 2: D / 1.4, 4: 1.2 * mx2} if matches else {w: D for w in (0, 1, 2, 4)}),
    }
    # GPU utilisation (A2: PyTorch 77 % vs MXNet 65 % at 0 workers; A3: 80-90 % at 1 worker), or the opposite
    util0 = {PT: 77.0, MX: 65.0} if matches else {PT: 65.0, MX: 77.0}
    for arm, by_workers in times.items():
        for batch, scale in ((1024, 1.0), (64, slow64)):
            for w, t in by_workers.items():
                gpu = {"gpu_util_pct": util0.get(arm, 70.0) if w == 0 else (85.0 if matches else 50.0)}
                add_blocks(store, arm, batch, w, t * scale, extra=gpu, device=device)
    # the convergence setting for A8: final train loss MXNet above (or below) PyTorch dense, both past the
    # accuracy bar (batch 256 is slower than 1024 per epoch; MXNet / PyTorch as at the other batch sizes)
    for arm, loss, t in ((PT, 0.35, 2.0), (MX, 0.40 if matches else 0.30, 2.2 if matches else 1.4)):
        add_blocks(store, arm, 256, 0, t, epochs=6, final_loss=loss, device=device)


def plant_other(store, *, matches: bool, device: str = "cuda"):
    # A9: the whole MXNet model with gluon.rnn.LSTM fails to hybridize (no timings), or hybridizes and trains;
    # the advised partial hybrid blocks train in both (their speed-up is context)
    add_blocks(store, HYBRID, 1024, 0, 0.4, device=device)
    if matches:
        add_imdb(
            store,
            FULL_HYBRID,
            1024,
            0,
            0.4,
            device=device,
            timed=False,
            summary={"hybridize_ok": False, "hybridize_error": "planted: LSTM cannot be hybridized"},
        )
    else:
        add_blocks(store, FULL_HYBRID, 1024, 0, 0.35, device=device, summary={"hybridize_ok": True})
    # C4's LSTM context: torch-compile faster (or slower) than torch-eager
    for batch, scale in ((1024, 1.0), (64, 4.0 if matches else 0.5)):
        add_blocks(store, COMPILE, batch, 0, (0.8 if matches else 1.2) * scale, device=device)
    # A10: the MXNet import of the ONNX file works with parity (or fails), as the onnx study stores it
    export, mx_import = ONNX.reference_arm("torch"), borealis2018.ONNX_IMPORT_STEP
    add_other(store, "onnx", {**_template("onnx"), "step": export}, {}, summary={"step_status": "ok"})
    add_other(
        store,
        "onnx",
        {**_template("onnx"), "step": mx_import},
        {},
        summary={"step_status": "ok", "max_abs_diff": 2e-6}
        if matches
        else {"step_status": "step_failed", "error": "planted: import_model failed"},
    )
    # VGG16 on the CPU: C3 (MXNet's own oneDNN speed-up, off / on), C4 (torch-script faster than eager) and C1's
    # labelled analogue (PyTorch / MXNet latency); C1 and C2 on GPU rows: test_ledger_rules.py
    ms = overview.VGG16_LATENCY_MS
    mx_s = ms["mxnet"] / 1e3 if matches else 0.025
    for arm, on_s, off_s in (
        (VGG_PT, ms["torch"] / 1e3, 7 * ms["torch"] / 1e3),
        (VGG_MX, mx_s, 7 * mx_s if matches else 0.8 * mx_s),
    ):
        add_vgg(store, arm, on_s, onednn=True)
        add_vgg(store, arm, off_s, onednn=False)
    add_vgg(store, VGG_SCRIPT, (0.8 if matches else 1.2) * ms["torch"] / 1e3, onednn=True)
    # B: DeepAR total train time MXNet / PyTorch (4.5 claimed)
    add_deepar(store, deepar2024.CLAIMED_SPEEDUP if matches else 2.0)


def plant(store, *, matches: bool, device: str = "cuda"):
    plant_imdb(store, matches=matches, device=device)
    plant_other(store, matches=matches, device=device)
    return store


@pytest.fixture(scope="module")
def store_pair(tmp_path_factory):
    """The 'good' and 'bad' plants (read only: planting takes seconds, so the module shares them)."""
    root = tmp_path_factory.mktemp("planted")
    good = plant(ResultsStore(root / "good.sqlite"), matches=True)
    bad = plant(ResultsStore(root / "bad.sqlite"), matches=False)
    return good, bad


def results(store, profile="all") -> Results:
    """The store's rows of ``profile`` ("all": every row) as the ledger reads them; a fresh read each call."""
    return Results(store, None if profile == "all" else profile)


def verdicts(store, profile="all") -> dict:
    table = L.build(results(store, profile))
    assert list(table.columns) == L.COLUMNS
    assert set(table.verdict) <= set(L.PRECEDENCE)
    return dict(zip(table.claim_id, table.verdict))


_verdicts = verdicts


def test_every_rule_gives_both_outcomes_on_planted_rows(store_pair):
    good, bad = map(_verdicts, store_pair)
    expected_good = {c.id: rules.REPRODUCED for c in L.CLAIMS}
    expected_bad = {c.id: rules.CONTRADICTED for c in L.CLAIMS}
    # C1 is a GPU claim (20-30 ms for VGG16 implies a GPU's rate): on these CPU VGG16 rows it is a labelled
    # analogue, never a verdict (matched hardware); C1 and C2 get verdicts on GPU rows in test_ledger_rules.py.
    # C2 (8 GPUs) has no GPU study and this plant no data-parallel rows: not testable.
    for expected in (expected_good, expected_bad):
        expected.update({"C1": L.NOT_TESTABLE, "C2": L.NOT_TESTABLE})
    assert good == expected_good
    assert bad == expected_bad


def test_ledger_rows_carry_measurement_ci_and_conditions(store_pair):
    table = L.build(results(store_pair[0])).set_index("claim_id")
    a1 = table.loc["A1"]
    assert a1.ci_low <= a1.estimate <= a1.ci_high
    assert 1.10 / 1.05 <= a1.ci_low and a1.ci_high <= 1.10 * 1.05
    assert "Planted CPU" in a1.our_conditions and "device cuda" in a1.our_conditions
    threads = sorted(set(store_pair[0].trials("imdb")["config.threads"].dropna()))
    assert f"threads per trial {threads}," in a1.our_conditions  # every value the trials used, not the first's
    assert a1.our_conditions.startswith("IMDB main part, profile all: device cuda; CPU Planted CPU (2 cores)")
    assert "V100" in a1.source_conditions and "V100" in a1.source_hardware and a1.our_hardware == "GPU"
    assert "batch 64" in a1.measurement and "batch 1024" in a1.measurement and "batch 256" in a1.measurement
    # n counts independent trials (4 repeat blocks a side), not epochs
    assert a1.n == f"n={len(BLOCKS)}/{len(BLOCKS)} trials"
    # three judged parts (batch 64, 256, 1024): Bonferroni-corrected to 1 - 0.05/3, all three agree
    assert a1.parts_agree == "3 of 3 parts reproduced" and a1.ci_level == pytest.approx(1 - 0.05 / 3)
    assert a1.measurement.count("[CI ") == 3 and "%" not in a1.measurement  # the level is the header's, not the row's
    assert a1.verdict_band10 == rules.REPRODUCED and 0 < a1.min_detectable < 0.05
    # A6 has five judged parts: every one, the fastest_is parts included, at 1 - 0.05/5 and counting trials
    a6 = table.loc["A6"]
    assert a6.parts_agree == "5 of 5 parts reproduced" and a6.ci_level == pytest.approx(0.99)
    assert a6.measurement.count("[CI ") == 5 and "% CI" not in a6.measurement and a6.n == "n=3/3 trials"
    assert a1.scale == floors.IMDB_TIMING and table.loc["A7", "scale"] == floors.HELDOUT


def test_empty_store_is_not_measured_or_not_testable(tmp_path):
    table = L.build(results(ResultsStore(tmp_path / "empty.sqlite"))).set_index("claim_id")
    assert set(table.verdict) <= {rules.NOT_MEASURED, L.NOT_TESTABLE}
    assert table.loc["A2", "verdict"] == L.NOT_TESTABLE and table.loc["C2", "verdict"] == L.NOT_TESTABLE
    # A9 now waits for the arm that hybridizes the whole model (LSTM included)
    assert FULL_HYBRID in table.loc["A9", "reason"]
    assert table.loc["A9", "verdict"] == rules.NOT_MEASURED


def test_not_measured_flips_once_rows_exist(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    assert _verdicts(store)["A9"] == rules.NOT_MEASURED
    add_imdb(store, FULL_HYBRID, 256, 0, 1.0, summary={"hybridize_ok": False, "hybridize_error": "planted"})
    assert _verdicts(store)["A9"] == rules.REPRODUCED


def test_one_trial_per_side_is_insufficient_data_or_below_scale(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    for arm, loss in ((PT, 0.35), (MX, 0.40)):
        add_imdb(store, arm, 256, 0, 1.0, final_loss=loss)  # one trial each: a ratio but no CI
    table = L.build(results(store)).set_index("claim_id")
    # A8 (training quality) has no trial-count floor: one trial a side is a point estimate without a CI
    assert table.loc["A8", "verdict"] == rules.INSUFFICIENT
    assert not math.isnan(table.loc["A8", "estimate"]) and math.isnan(table.loc["A8", "ci_low"])
    # A1 (timing) needs >= 3 trials per arm and setting: one trial a side is below its scale floor (new rule),
    # with the measurement still shown
    assert table.loc["A1", "verdict"] == L.BELOW_SCALE
    # the thinnest setting is named (ties: the first arm and setting)
    assert (
        "3 trials per arm and setting (this run: 1, mxnet-imperative at batch 256 / 0 workers)"
        in table.loc["A1", "reason"]
    )
    assert not math.isnan(table.loc["A1", "estimate"])


def test_profile_selects_only_that_profiles_trials(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    smoke = plan("imdb", "smoke")
    for t in smoke:
        store.record(
            trial_id=t.trial_id,
            study="imdb",
            status="done",
            config=t.config,
            provenance={"host": "x"},
            summary={},
            measurements=[(e, "train_time_s", 1.0 + 0.01 * e) for e in range(t.config["epochs"])],
        )
    judged = [t for t in smoke if t.config.get("part", "main") in IMDB_PARTS]  # not the scaling part
    assert 0 < len(judged) and L.load(results(store, "smoke")).imdb.trial_id.nunique() == len(judged)
    assert L.load(results(store, "quick")).imdb.empty
    assert "no finished IMDB trials" in L.build(results(store, "quick")).set_index("claim_id").loc["A1", "reason"]


@pytest.mark.parametrize(
    "ci,band,expected",
    [
        ((1.06, 1.12), (1.05, 1.15), rules.REPRODUCED),
        ((1.30, 1.40), (1.05, 1.15), rules.CONTRADICTED),
        ((0.80, 0.90), (1.05, 1.15), rules.CONTRADICTED),
        ((1.00, 1.10), (1.05, 1.15), rules.INCONCLUSIVE),
        ((math.nan, math.nan), (1.05, 1.15), rules.INSUFFICIENT),
    ],
)
def test_band_rule(ci, band, expected):
    assert rules.verdict_in_band(*ci, band) == expected


@pytest.mark.parametrize(
    "ci,expected",
    [
        ((1.1, 1.2), rules.REPRODUCED),
        ((0.8, 0.95), rules.CONTRADICTED),
        ((0.9, 1.1), rules.INCONCLUSIVE),
        ((math.nan, 1.0), rules.INSUFFICIENT),
    ],
)
def test_above_rule(ci, expected):
    assert rules.verdict_above(*ci) == expected


@pytest.mark.parametrize(
    "ci,expected", [((0.9, 1.04), rules.REPRODUCED), ((1.2, 1.3), rules.CONTRADICTED), ((1.0, 1.2), rules.INCONCLUSIVE)]
)
def test_at_most_rule(ci, expected):
    assert rules.verdict_at_most(*ci) == expected


def test_fastest_is_rule():
    fast, slow = np.array([1.0, 1.01, 0.99]), np.array([2.0, 2.02, 1.98])
    part = rules.fastest_is({64: slow, 1024: fast}, 1024)
    assert part.verdict == rules.REPRODUCED and part.n == "n=3/3 trials" and part.confidence == 0.95
    with rules.settings(confidence=0.99):  # a corrected part says (and has) its confidence
        wide = rules.fastest_is({64: slow, 1024: fast}, 1024)
    assert wide.confidence == 0.99 and wide.ci_low < part.ci_low and part.ci_high < wide.ci_high
    text = render_markdown("ledger_measurement", parts=[wide], analogue=False, our_hardware="CPU")
    assert "[CI " in text and "% CI" not in text  # the level is the table's header's, not the row's
    ci = f"[CI {wide.ci_low:.3g}-{wide.ci_high:.3g}]"
    assert text == f"{wide.label}: {wide.quantity} = {wide.estimate:.3g} {ci} ({wide.n}) -> {rules.REPRODUCED}"
    assert rules.fastest_is({64: fast, 1024: slow}, 1024).verdict == rules.CONTRADICTED
    assert rules.fastest_is({64: fast}, 1024).verdict == rules.NOT_MEASURED


def test_combine_precedence():
    assert rules.combine([rules.REPRODUCED, rules.CONTRADICTED]) == rules.CONTRADICTED
    assert rules.combine([rules.REPRODUCED, rules.INCONCLUSIVE]) == rules.INCONCLUSIVE
    assert rules.combine([rules.REPRODUCED, rules.REPRODUCED]) == rules.REPRODUCED
    assert rules.combine([]) == rules.NOT_MEASURED


def test_cli_writes_csv(store_pair, tmp_path, monkeypatch):
    monkeypatch.setenv("FWBENCH_RESULTS", str(store_pair[0].path))
    out = tmp_path / "ledger.csv"
    assert cli_main(["ledger", "--profile", "all", "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.claim_id) == [c.id for c in L.CLAIMS]
    assert list(table.verdict) == list(L.build(results(store_pair[0])).verdict)
    assert (table.verdict == rules.REPRODUCED).sum() == len(L.CLAIMS) - 2  # all but C1, C2 (see above)


def test_claims_compare_the_registry_arms_and_name_no_unknown_arm():
    assert (borealis2018.MX, borealis2018.PT) == (MX, PT) == ("mxnet-imperative", "torch-eager")
    assert {SPARSE, HYBRID, COMPILE} <= set(IMDB.arm_names)
    assert IMDB.framework_of(HYBRID) == "mxnet" and IMDB.framework_of(COMPILE) == "torch"
    assert borealis2018.ONNX_IMPORT_STEP in ONNX.arm_names
    with pytest.raises(FwbenchError, match="unknown arm"):
        named_arm("imdb", "mxnet-hybrid")  # an old name is an error, never a default
    rules = prose.ledger_rules()
    assert f"{MX} / {PT}" in rules and DEEPAR.reference_arm("mxnet") in rules


def test_each_source_holds_its_numbers_once_and_its_claims():
    assert deepar2024.TOTAL_TRAIN_S == {"mxnet": 395_807.0, "torch": 88_756.0}
    assert overview.VGG16_LATENCY_MS == {"torch": 30.4, "mxnet": 20.5}
    assert [c.id for c in L.CLAIMS] == [c.id for s in SOURCES for c in s.CLAIMS]
    assert len({c.id for c in L.CLAIMS}) == len(L.CLAIMS) == 15
    claims = {c.id: c for c in L.CLAIMS}
    assert "395,807" in claims["B"].text and "88,756" in claims["B"].text and "30.4" in claims["C1"].text
    for c in L.CLAIMS:
        assert get_study(c.study).name == c.study and c.source in {s.SOURCE for s in SOURCES}


def test_a_profile_a_study_lacks_gives_no_rows_of_it(store_pair):
    table = L.build(results(store_pair[0], "gap")).set_index("claim_id")  # gap: a DeepAR-only profile
    assert table.loc["A1", "verdict"] == rules.NOT_MEASURED and table.loc["C1", "verdict"] == rules.NOT_MEASURED


def host_text(trials):
    """How the ledger's conditions word the host (template ``ledger_host``)."""
    return render_markdown("ledger_host", host=ledger_render.host_facts(trials))


def test_host_text_names_cpu_cores_and_versions(store_pair):
    trials = store_pair[0].trials("imdb")
    facts = ledger_render.host_facts(trials)
    n = int((trials.status == "done").sum())
    assert facts == {"cpus": {"Planted CPU": n}, "cores": [2], "versions": {"mxnet": "0", "torch": "0"}}
    assert host_text(trials) == "CPU Planted CPU (2 cores); mxnet 0, torch 0"
    # a recorded cpu_id names the model as the first screen does; several models each with their trials
    ids = ["AuthenticAMD/25/17/1" if i % 2 else "GenuineIntel/6/207/2" for i in range(len(trials))]
    text = host_text(trials.assign(**{"provenance.cpu_id": ids}))
    assert text.startswith("CPUs AMD EPYC 25/17 (") and "Intel Xeon 6/207 (" in text and "2 cores each" in text
    assert ledger_render.host_facts(trials.iloc[:0]) is None and host_text(trials.iloc[:0]) == "no finished trials"


def test_conditions_name_every_value_of_the_studys_trials(store_pair, tmp_path):
    d = L.load(results(store_pair[0]))
    facts = ledger_render.conditions_facts(d, "vgg16")
    done = d.study_trials("vgg16").query("status == 'done'")
    assert facts["measured"] and facts["batch_size"] == sorted(set(done["config.batch_size"]))
    words = render_markdown("ledger_conditions", **facts)
    assert words.startswith(f"VGG16 main part, profile all: {host_text(done)}; VGG16 random weights")
    assert f"batch {facts['batch_size']}, " in words and words.endswith(f"; {len(done)} trials")
    assert facts["busy"] == 0  # trials timed while the machine was busy are counted where a claim names them
    busy = render_markdown("ledger_conditions", **{**facts, "busy": 1})
    flagged = f"1 of the {len(done)} trials read flagged busy (other processes or the hypervisor took CPU while timed)"
    assert busy.endswith(f"; {len(done)} trials; {flagged}")
    empty = L.load(results(ResultsStore(tmp_path / "empty.sqlite")))
    studies = ("imdb", "deepar", "onnx")
    in_words = [render_markdown("ledger_conditions", **ledger_render.conditions_facts(empty, s)) for s in studies]
    assert in_words == [
        "no IMDB trials",
        "no DeepAR trials",
        "no ONNX trials",
    ]


@pytest.mark.slow
def test_notebook_05_shows_the_ledger_of_the_store(smoke_notebooks):
    import nbformat

    store = ResultsStore(smoke_notebooks.store)
    nb = nbformat.read(smoke_notebooks.executed / "05_claims_ledger.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    html = "".join(o["data"].get("text/html", "") for o in outputs if "data" in o)
    markdown = "".join(o["data"].get("text/markdown", "") for o in outputs if "data" in o)
    assert prose.ledger_rules() in markdown
    # 05 runs last: every study's rows were there when it ran, so it shows the ledger as built now
    table = L.build(results(store, "smoke"))
    assert prose.ledger_verdicts(table, L.PRECEDENCE, summary=True) in markdown
    for claim_id, verdict in zip(table.claim_id, table.verdict):
        assert f">{claim_id}<" in html and verdict in html


def test_threats_to_validity_come_from_the_stores_provenance(tmp_path):
    """The post's closing section names the versions and builds the trials recorded, and the sources' own."""
    store = ResultsStore(tmp_path / "t.sqlite")
    empty = prose.threats(results(store))
    assert "no finished trials" in empty and "PyTorch 0.3.0.post4, MXNet 1.0.0" in empty
    add_imdb(store, PT, 64, 0, 1.0, profile="quick")
    text = prose.threats(results(store))
    assert "torch 0" in text and "Planted CPU (2 cores)" in text  # add_imdb's planted provenance
    assert "A1" in text and "labelled analogues" in text and "What could make this answer wrong" in text
    assert "Machines." not in text  # one machine: nothing to say
    add_imdb(store, PT, 64, 0, 1.0, profile="quick", block=1, provenance={"boot_id": "b1", "cpu_id": "AMD/25/17/1"})
    add_imdb(store, PT, 64, 0, 1.6, profile="quick", block=2, provenance={"boot_id": "b2", "cpu_id": "AMD/23/49/0"})
    assert "ran on 2 machines (CPU family/model: AMD/23/49/0, AMD/25/17/1)" in prose.threats(results(store))
