"""Our DeepAR MASE against the Monash paper's: planted trial frames and a planted reference file (no training)
drive each rule both ways: the ratio, the goal band, original vs rebuilt data, the goal share, the missing-reference
error, the protocol-scale flag, and the README block with and without stored trials."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fwbench import prose
from fwbench.analysis import Results
from fwbench.analysis import mase_reference as mr
from fwbench.errors import FwbenchError
from fwbench.planning import plan
from fwbench.store import ResultsStore

PT, MX = "torch-eager", "mxnet-hybrid-partial"
# planted paper values; m1_quarterly is staged rebuilt, the others from original files
PAPER = {"m1_yearly": 2.0, "m1_quarterly": 1.5, "cif_2016": 1.0, "tourism_monthly": 1.4, "electricity_weekly": 1.0}

# the paper profile narrowed to its main part (one seed): the other parts plant nothing in these tests
MAIN_PART_ONLY = {"seeds": [42], "variants_part": False, "versions_part": False, "coverage_part": False,
                  "contention_part": False, "post_conditions_part": False}  # fmt: skip


@pytest.fixture
def reference(tmp_path, monkeypatch):
    folder = tmp_path / "reference"
    folder.mkdir()
    pd.DataFrame(
        {
            "dataset_key": list(PAPER),
            "paper_label": [k.replace("_", " ").title() for k in PAPER],
            "deepar_mean_mase": list(PAPER.values()),
        }
    ).to_csv(folder / mr.REFERENCE_FILE, index=False)
    monkeypatch.setenv("FWBENCH_REFERENCE_DIR", str(folder))
    return folder


def trials(spec: dict, epochs: int = 100, batches: int = 50, kinds: dict | None = None) -> pd.DataFrame:
    """One row per trial: ``spec`` maps (dataset, arm) to the MASE of each seed (seeds 42, 43, ...)."""
    kinds = kinds or {}
    rows = [
        {
            "dataset": d,
            "arm": arm,
            "seed": 42 + i,
            "MASE": v,
            "epochs": epochs,
            "num_batches_per_epoch": batches,
            "dataset_kind": kinds.get(d, "rebuilt" if d == "m1_quarterly" else "original"),
        }
        for (d, arm), values in spec.items()
        for i, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def at_ratio(ratios: dict) -> dict:
    """(dataset, arm) -> one seed at ``ratio`` x the planted paper value."""
    return {(d, arm): [r * PAPER[d]] for (d, arm), r in ratios.items()}


def row(table: pd.DataFrame, dataset: str, arm: str) -> pd.Series:
    hit = table[(table.dataset == dataset) & (table.arm == arm)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_ratio_is_our_mean_over_seeds_over_the_paper(reference):
    table = mr.mase_vs_reference(trials({("m1_yearly", PT): [1.8, 2.0, 2.2], ("m1_yearly", MX): [2.4]}))
    pt = row(table, "m1_yearly", PT)
    assert pt.n_seeds == 3 and math.isclose(pt.mase_mean, 2.0) and math.isclose(pt.ratio, 1.0)
    assert (pt.mase_min, pt.mase_max, pt.paper_mase) == (1.8, 2.2, 2.0)
    logs = np.log([1.8, 2.0, 2.2])  # the interval is the log MASE's, back on the MASE scale
    half = stats.t.ppf(0.975, 2) * logs.std(ddof=1) / math.sqrt(3)
    assert np.allclose([pt.ci_low, pt.ci_high], np.exp([logs.mean() - half, logs.mean() + half]))
    assert pt.within_goal and pt.note == "" and pt.framework == "torch" and not pt.below_scale
    mx = row(table, "m1_yearly", MX)
    assert math.isclose(mx.ratio, 1.2) and mx.within_goal and mx.framework == "mxnet"  # the band's edge is in
    assert mx.n_seeds == 1 and np.isnan(mx.ci_low)  # one seed: no spread
    assert list(table.arm) == [PT, MX]  # the arm table's order
    # a dataset the paper did not report is left out, not guessed
    assert mr.mase_vs_reference(trials({("covid_deaths", PT): [1.0]})).empty


def test_a_dataset_off_by_2x_is_outside_the_goal_with_its_causes(reference):
    table = mr.mase_vs_reference(
        trials(at_ratio({("cif_2016", PT): 2.0, ("cif_2016", MX): 0.5, ("tourism_monthly", PT): 0.7}))
    )
    off = row(table, "cif_2016", PT)
    assert math.isclose(off.ratio, 2.0) and not off.within_goal
    assert "6- and 12-step parts" in off.note and "one run" in off.note and "gluonts' PyTorch network" in off.note
    assert "rebuilt" not in off.note
    assert not row(table, "cif_2016", MX).within_goal  # 0.5x: too good is off too
    assert row(table, "tourism_monthly", PT).within_goal  # 0.7x: the band's lower edge
    text = prose.mase_report(None, table)
    assert "| cif_2016 | torch-eager |" in text and "**no**" in text and "| 2 |" in text


def test_known_causes_come_from_the_dataset_facts(reference):
    table = mr.mase_vs_reference(trials({("electricity_weekly", MX): [2.0, 2.2], ("m1_yearly", PT): [1.0, 5.0]}))
    weekly = row(table, "electricity_weekly", MX).note
    assert "rounded forecasts to integers" in weekly and "weekly MASE lag 52" in weekly
    assert "gluonts' MXNet network" in weekly and "our 2 seed(s)" in weekly
    yearly = row(table, "m1_yearly", PT)  # mean 3.0 vs 2.0: off, but the paper's value is inside our seeds
    assert not yearly.within_goal and "within our seed range" in yearly.note
    assert "integers" not in yearly.note and "weekly" not in yearly.note


def test_rebuilt_dataset_is_labelled_so(reference):
    table = mr.mase_vs_reference(trials(at_ratio({("m1_quarterly", PT): 2.0, ("m1_yearly", PT): 2.0})))
    rebuilt, original = row(table, "m1_quarterly", PT), row(table, "m1_yearly", PT)
    assert rebuilt.data_source == "rebuilt" and "rebuilt data" in rebuilt.note
    assert original.data_source == "original" and "rebuilt" not in original.note
    # trials that recorded no kind: the catalogue's staged kind
    bare = trials(at_ratio({("m1_quarterly", PT): 1.0, ("m1_yearly", PT): 1.0})).drop(columns="dataset_kind")
    table = mr.mase_vs_reference(bare)
    assert row(table, "m1_quarterly", PT).data_source == "rebuilt"
    assert row(table, "m1_yearly", PT).data_source == "original"


def test_goal_share_counts_original_file_datasets_only(reference):
    good = {(d, arm): 1.0 for d in ("m1_yearly", "cif_2016", "tourism_monthly") for arm in (PT, MX)}
    # electricity_weekly off on one arm only; the rebuilt m1_quarterly off on both (does not count)
    spec = {
        **good,
        ("electricity_weekly", PT): 1.0,
        ("electricity_weekly", MX): 2.0,
        ("m1_quarterly", PT): 3.0,
        ("m1_quarterly", MX): 3.0,
    }
    s = mr.goal_summary(mr.mase_vs_reference(trials(at_ratio(spec))))
    assert (s["n_original"], s["n_within"], s["share"], s["goal_met"]) == (4, 3, 0.75, False)
    assert s["outside"] == ["electricity_weekly"] and s["n_rebuilt"] == 1
    s = mr.goal_summary(mr.mase_vs_reference(trials(at_ratio({**spec, ("electricity_weekly", MX): 1.1}))))
    assert (s["n_original"], s["n_within"], s["goal_met"]) == (4, 4, True)
    # a rebuilt dataset within the band adds nothing; 4 of 5 originals is exactly the 80 % goal
    spec = {**good, ("electricity_weekly", PT): 1.0, ("m1_quarterly", PT): 1.0}
    s = mr.goal_summary(mr.mase_vs_reference(trials(at_ratio(spec), kinds={"m1_quarterly": "original"})))
    assert (s["n_original"], s["share"], s["goal_met"]) == (5, 1.0, True)
    s = mr.goal_summary(
        mr.mase_vs_reference(trials(at_ratio({**spec, ("m1_quarterly", PT): 2.0}), kinds={"m1_quarterly": "original"}))
    )
    assert (s["n_original"], s["n_within"], s["share"], s["goal_met"]) == (5, 4, 0.8, True)
    assert "Goal met" in prose.mase_report(None, mr.mase_vs_reference(trials(at_ratio(good))))


def test_missing_reference_file_gives_a_clear_error(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("FWBENCH_REFERENCE_DIR", str(empty))
    with pytest.raises(FwbenchError, match=f"{empty / mr.REFERENCE_FILE} is missing.*FWBENCH_REFERENCE_DIR"):
        mr.load_reference()
    frame = trials({("m1_yearly", PT): [2.0]})
    assert prose.mase_report(frame).startswith("Not compared with the published MASE:")
    monkeypatch.setenv("FWBENCH_REFERENCE_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(FwbenchError, match=f"no reference folder at {tmp_path / 'nowhere'}"):
        mr.mase_vs_reference(frame)
    # the default: beside the data dir
    monkeypatch.delenv("FWBENCH_REFERENCE_DIR")
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(FwbenchError, match=f"no reference folder at {tmp_path / 'reference'}"):
        mr.load_reference()
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / mr.REFERENCE_FILE).write_text("dataset_key,paper_label\nm1_yearly,M1 Yearly\n")
    with pytest.raises(FwbenchError, match="lacks column.*deepar_mean_mase"):
        mr.load_reference()


def test_the_staged_reference_file_reads(monkeypatch):
    from fwbench.paths import data_dir

    path = data_dir().parent / "reference" / mr.REFERENCE_FILE
    if not path.is_file():
        pytest.skip(f"no staged reference at {path}")
    monkeypatch.delenv("FWBENCH_REFERENCE_DIR", raising=False)
    ref = mr.load_reference()
    assert {"m1_yearly", "cif_2016", "nn5_weekly"} <= set(ref.dataset) and (ref.paper_mase > 0).all()


def test_below_scale_rows_are_flagged_and_left_out_of_the_goal(reference):
    small = trials(at_ratio({("m1_yearly", PT): 1.0, ("m1_yearly", MX): 3.0}), epochs=2, batches=10)
    table = mr.mase_vs_reference(small)
    assert table.below_scale.all() and (table.epochs == 2).all() and (table.num_batches_per_epoch == 10).all()
    within = row(table, "m1_yearly", PT)
    assert within.within_goal and within.note.startswith("below protocol scale (2 x 10 < 100 x 50)")
    assert row(table, "m1_yearly", MX).note.startswith("below protocol scale")
    s = mr.goal_summary(table)
    assert s["n_original"] == 0 and not s["goal_met"] and math.isnan(s["share"]) and s["n_below_scale_rows"] == 2
    assert mr.goal_summary(table, include_below_scale=True)["n_original"] == 1
    text = prose.mase_report(None, table)
    assert "2 x 10 (below protocol scale)" in text and "Goal not judged" in text
    # both scales of one dataset: separate rows, only the protocol's counts
    both = pd.concat([small, trials(at_ratio({("m1_yearly", PT): 1.0, ("m1_yearly", MX): 1.0}))])
    table = mr.mase_vs_reference(both)
    assert len(table) == 4 and table.below_scale.sum() == 2
    assert mr.goal_summary(table)["goal_met"]


# -- the README block -----------------------------------------------------------------------------------------
def plant(store: ResultsStore, profile: str, overrides: dict | None, mase: float) -> None:
    for t in plan("deepar", profile, overrides):
        values = {"train_time_s": 10.0, "predict_time_s": 1.0, "MASE": mase, "sMAPE": 0.2, "mean_wQL": 0.1}
        store.record(
            trial_id=t.trial_id,
            study="deepar",
            status="done",
            config=t.config,
            provenance={"host": "h", "dataset_kind": "original"},
            summary={},
            measurements=[(-1, k, v) for k, v in values.items()],
            profile=profile,
        )


def test_readme_block_renders_with_and_without_trials(reference, tmp_store, tmp_path):
    from fwbench import generated_blocks, readme

    store = ResultsStore(tmp_store)
    text = readme.render_mase(store)
    assert text.startswith("No DeepAR trials of profile") and "`quick`" in text
    plant(store, "quick", None, mase=2.0)
    text = readme.render_mase(store)
    assert "Profile `quick`" in text and "2 epochs x 10 batches" in text
    assert "| m1_yearly | torch-eager | original | 2 x 10 (below protocol scale) |" in text
    assert "Goal not judged" in text and "covid_deaths" not in text  # no published value for it
    plant(store, "full", {"datasets": ["m1_yearly"], "seeds": [44, 45]}, mase=2.1)  # the better profile wins
    text = readme.render_mase(store)
    assert "Profile `full`" in text and "100 epochs x 50 batches" in text and "Goal met" in text
    page = tmp_path / "README.md"
    page.write_text("before\n<!-- mase:start -->\nold\n<!-- mase:end -->\nafter\n")
    generated_blocks.write_block("mase", text, page)
    assert page.read_text() == f"before\n<!-- mase:start -->\n{text}\n<!-- mase:end -->\nafter\n"


def test_headline_comes_from_the_paper_run_when_stored_and_names_older_code(tmp_store):
    """`make readme` takes the paper profile when the store has it, says which scale the numbers are, and counts
    the rows measured with other trial code than the checkout's (left out of the numbers)."""
    from fwbench import readme
    from fwbench.studies import get_study

    store = ResultsStore(tmp_store)
    assert readme.headline_profile(store) == "quick"
    assert "Small-scale check" in readme.scale_note("quick", store)
    current = get_study("deepar").code_version()
    for i, t in enumerate(
        plan(
            "deepar",
            "paper",
            {**MAIN_PART_ONLY, "datasets": ["m1_yearly"]},
        )
    ):
        store.record(
            trial_id=t.trial_id if i else "old-code-trial",
            study="deepar",
            status="done",
            config=t.config,
            provenance={"host": "h", "code_version": current if i else "0ld"},
            summary={},
            measurements=[(-1, "train_time_s", 1.0)],
            profile="paper",
        )
    assert readme.headline_profile(store) == "quick"  # a partial paper run never stands in for the answer
    done, needed = readme.paper_progress(store)
    assert done == 1 and needed > 100  # one current trial of the checkout's plan (the other is old code)
    note = readme.scale_note("paper", store)
    assert "The papers' scale" in note and "1 stored trial(s) of this profile were measured with older" in note
    _complete_paper_run(store)  # the whole plan (adaptive: its minimum blocks)
    assert readme.paper_progress(store)[0] == readme.paper_progress(store)[1]
    assert readme.headline_profile(store) == "paper"


def _complete_paper_run(store) -> None:
    """Every trial the paper profile needs (``completeness.required_trials``), recorded as done."""
    from fwbench.completeness import required_trials
    from fwbench.studies import all_studies

    for s in all_studies():  # every study the paper profile runs (one declaration adds one)
        if "paper" not in s.profiles:
            continue
        code_version = s.code_version()
        for t in required_trials(s):
            store.record(
                trial_id=t.trial_id,
                study=s.name,
                status="done",
                config=t.config,
                provenance={"code_version": code_version},
                summary={},
                measurements=[],
                profile="paper",
            )


def test_readme_headline_falls_back_to_the_committed_paper_run_once_it_is_complete(tmp_store, tmp_path):
    """A checkout whose own store holds only quick rows keeps the paper run's headline (the stamp names the
    committed store); a partial committed run does not stand in, and a complete local paper run comes first."""
    from fwbench import readme

    local = ResultsStore(tmp_store)
    committed_path = tmp_path / "committed.sqlite"
    committed = ResultsStore(committed_path)
    assert readme.headline_source(committed_path)[0] == "quick"  # nothing complete anywhere
    _complete_paper_run(committed)
    profile, store = readme.headline_source(committed_path)
    assert profile == "paper" and store.path.resolve() == committed_path.resolve()
    assert readme.headline_source(tmp_path / "absent.sqlite")[0] == "quick"
    _complete_paper_run(local)
    profile, store = readme.headline_source(committed_path)
    assert profile == "paper" and store.path.resolve() == Path(tmp_store).resolve()


def test_the_post_banner_states_the_profile_and_scale(tmp_store):
    from fwbench import post_text

    store = ResultsStore(tmp_store)
    quick, paper = post_text.profile_note(Results(store, "quick")), post_text.profile_note(Results(store, "paper"))
    assert quick.startswith("Small-scale check (profile quick)") and "**" not in quick and "`" not in quick
    assert paper.startswith("The papers' scale (profile paper:")  # what it ran: the answer's limits, the setup
    assert post_text.profile_note(Results(store, "full")) == ""


def test_paper_sofar_block_labels_a_partial_run_and_steps_aside_once_it_is_complete(tmp_store):
    """The README's paper-run block: while the run is incomplete it gives progress per study and the numbers of
    the stored trials under an 'in progress, partial' banner; once complete it only points to the headline."""
    from fwbench import readme

    store = ResultsStore(tmp_store)
    text = readme.render_paper_sofar(store)
    from fwbench.completeness import required_trials
    from fwbench.studies import get_study

    deepar_planned = len(required_trials(get_study("deepar")))  # the per-CPU pieces are not required
    assert (
        text.startswith("**In progress, partial: 0 of the ") and f"| deepar | 0 of {deepar_planned} | - | - |" in text
    )
    assert "#### Claims ledger" in text and "#### Arms" not in text and "## Headline numbers" not in text
    first = plan("deepar", "paper")[0]
    store.record(
        trial_id=first.trial_id,
        study="deepar",
        status="done",
        config=first.config,
        provenance={"host": "h", "boot_id": "b1", "dataset_kind": "original"},
        summary={},
        measurements=[
            (-1, k, v)
            for k, v in (
                ("train_time_s", 10.0),
                ("predict_time_s", 1.0),
                ("MASE", 2.0),
                ("sMAPE", 0.2),
                ("mean_wQL", 0.1),
            )
        ],
        profile="paper",
        started_at="2026-11-24T10:00:00+00:00",
        ended_at="2026-11-24T10:30:00+00:00",
    )
    text = readme.render_paper_sofar(store)
    assert (
        text.startswith("**In progress, partial: 1 of the ")
        and f"| deepar | 1 of {deepar_planned} | 30.0 min | 1 |" in text
    )
    _complete_paper_run(store)  # the whole plan of every study with a paper profile
    assert readme.render_paper_sofar(store).startswith("The paper run is complete")


def test_deepar_headline_says_where_the_ratio_comes_from_once_two_windows_are_measured(reference, tmp_store):
    from fwbench import readme

    store = ResultsStore(tmp_store)
    plant(
        store,
        "paper",
        {**MAIN_PART_ONLY, "datasets": ["m1_yearly"]},
        mase=4.0,
    )
    one_window = readme.details(Results(store, "paper"))
    assert "**Training time, the post's measure.**" in one_window and "Where the ratio comes from" not in one_window
    plant(
        store,
        "paper",
        {**MAIN_PART_ONLY, "datasets": ["m1_yearly", "cif_2016"]},
        mase=4.0,
    )
    two_windows = readme.details(Results(store, "paper"))
    assert "**Where the ratio comes from.** Seconds per training batch in the main part's trials" in two_windows
    assert "the post's whole list is predicted once, from the coverage part" in two_windows  # not from this line


def test_the_interval_of_two_far_apart_seeds_stays_above_zero(reference):
    """MASE > 0: a symmetric t-interval over 2 seeds 1.0 and 1.25 (t = 12.7) would reach below zero."""
    table = mr.mase_vs_reference(trials({("m1_yearly", PT): [1.0, 1.25]}))
    pt = row(table, "m1_yearly", PT)
    assert 0 < pt.ci_low < pt.mase_min and pt.ci_high > pt.mase_max
    assert pt.mase_mean - stats.t.ppf(0.975, 1) * 0.125 < 0  # what the symmetric interval gave
