"""What explains B's gap to the post (issue 24): the contention part's conditions and the factor table, on planted
per-batch costs whose effects are known."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fwbench.analysis import deepar_conditions as conditions
from fwbench.pages import render_markdown
from fwbench.published.deepar2024 import post_ratio
from fwbench.stats import log_contrast_ci, trial_ratio_ci
from fwbench.studies import deepar as study

MX, PT = study.STUDY.reference_arm("mxnet"), study.STUDY.reference_arm("torch")
# planted cost per batch (s) at the baseline, and each condition's slowdown per framework
BASE = {MX: 0.020, PT: 0.010}
SLOW = {(1, 0): {MX: 1.5, PT: 1.8}, (2, 0): {MX: 1.0, PT: 1.0}, (8, 0): {MX: 5.0, PT: 2.0}, (2, 1): {MX: 1.8, PT: 1.2}}
NOISE = (1.0, 1.03, 0.97)  # three independent trials, the same spread in every group
TOGETHER = {2: (1.03, 1.03, 0.97), 4: (1.0, 1.0, 1.0)}  # three seeds run k at once: a group's trials move together


def planted(datasets=(("m1_yearly", 8), ("tourism_monthly", 39))) -> pd.DataFrame:
    rows = []
    for name, window in datasets:
        for (threads, load), slow in SLOW.items():
            for arm in (MX, PT):
                for k, n in enumerate(NOISE):
                    rows.append({"trial_id": f"{name}-{threads}-{load}-{arm}-{k}", "dataset": name, "arm": arm,
                                 "seed": 42 + k, "window": window, "threads": threads, "background_load": load,
                                 "c_batch": BASE[arm] * slow[arm] * n, "cpus_busy": min(threads, 2) * 0.9,
                                 "burner_cpu_frac": 0.8 if load else 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_log_contrast_is_the_welch_ratio_and_a_ratio_of_ratios():
    a, b = [2.0, 2.2, 1.9], [1.0, 1.1, 0.95]
    two = log_contrast_ci([(1, a), (-1, b)])
    welch = trial_ratio_ci(a, b)
    assert two["ratio"] == pytest.approx(welch["ratio"]) and two["ci_low"] == pytest.approx(welch["ci_low"])
    assert two["ci_high"] == pytest.approx(welch["ci_high"])
    four = log_contrast_ci([(1, a), (-1, b), (-1, b), (1, b)])  # (a / b) / (b / b)
    assert (
        four["ratio"] == pytest.approx(welch["ratio"])
        and four["ci_high"] - four["ci_low"] > two["ci_high"] - two["ci_low"]
    )  # more groups, more variance
    assert math.isnan(log_contrast_ci([(1, [2.0]), (-1, b)])["ci_low"])  # one trial: no interval


def test_each_condition_moves_each_framework_and_the_ratio_as_planted():
    table = conditions.conditions_table(planted(), baseline=2)
    assert len(table) == 2 * len(SLOW) and table.window.tolist() == sorted(table.window.tolist())
    for r in table.itertuples():
        slow = SLOW[(r.threads, r.background_load)]
        assert r.mxnet_slowdown == pytest.approx(slow[MX]) and r.pytorch_slowdown == pytest.approx(slow[PT])
        assert r.effect == pytest.approx(slow[MX] / slow[PT])
        assert r.ratio == pytest.approx(2.0 * slow[MX] / slow[PT])
        assert r.effect_low < r.effect < r.effect_high and r.n_trials == 3
        assert (r.burner_cpu_frac == pytest.approx(0.8)) if r.background_load else math.isnan(r.burner_cpu_frac)
    base = table[(table.threads == 2) & (table.background_load == 0)]
    assert base.condition.str.contains("baseline").all() and base.effect.tolist() == pytest.approx([1.0, 1.0])
    assert "oversubscribed 4x" in table.loc[table.threads == 8, "condition"].iloc[0]
    assert "busy core" in table.loc[table.background_load == 1, "condition"].iloc[0]


def test_the_factor_table_reads_each_effect_against_the_gap():
    coverage = pd.DataFrame(
        [{"trial_id": f"{arm}{k}", "dataset": "m1_monthly", "arm": arm, "seed": 42 + k, "window": 33, "epochs": 4,
          "num_batches_per_epoch": 50, "c_batch": c * (1 + 0.01 * k), "warmup": 0.0, "fit_fixed": 0.0,
          "train_time_s": 0.0} for arm, c in ((MX, 0.02), (PT, 0.01)) for k in range(2)]
    )  # fmt: skip
    factors, total = conditions.factor_table(pd.DataFrame(), coverage, planted(), baseline=2)
    gap = post_ratio() / total["ratio"]  # the post's totals' ratio, not its rounded wording
    assert total["gap"] == pytest.approx(gap)
    eight = factors.set_index("key").loc["threads_8"]
    assert eight.effect == pytest.approx(2.5) and eight.mxnet_slowdown == pytest.approx(5.0)
    assert eight.gap_share == pytest.approx(math.log(2.5) / math.log(gap))
    assert eight.effect_low < 2.5 < eight.effect_high
    one = factors.set_index("key").loc["threads_1"]
    assert one.gap_share < 0  # PyTorch loses more at 1 thread: it widens the gap
    assert "threads_2" not in set(factors.key)  # the baseline is no factor
    assert "post_machine" in set(factors.key) and factors.set_index("key").loc["post_machine", "kind"] == "inferred"
    facts = conditions.factor_facts(factors, total)
    text = render_markdown("deepar_factors", **facts)
    assert 'data-q="deepar.gap_factor.threads_8"' in text and "share of the gap" in text
    assert "| CPU |" in text and "it states 4.5" in text
    assert "at the threads each row names (2 a trial, the main part's, where it names none)" in text  # the baseline
    q = facts["factors"].set_index("key").loc["threads_8", "effect_q"]
    assert q.label == eight.factor and q.conditions == {"part": eight.source}  # no CPU recorded: none declared
    # the contention row that alone comes nearest the gap (2.5 against 4.46 / 2: 114 %; the busy core's 1.5: 51 %)
    assert facts["closing"].key == "threads_8"
    # every trial within 1.03 / 0.97 of its group's: no row's trials lie apart, and the page says nothing of it
    assert factors.pytorch_spread.max() == pytest.approx(1.03 / 0.97) and not facts["apart_rows"]
    assert "apart" not in text


def test_a_pooled_effect_shows_how_far_its_datasets_lie_apart():
    """8 threads slow MXNet 6x on one dataset and 4x on the other (PyTorch 2x on both): the row's effect is their
    geometric mean, and the page gives each dataset's alone beside it (the CI holds the trials' noise only)."""
    rows = planted()
    eight_mx_tourism = (rows.threads == 8) & (rows.arm == MX) & (rows.dataset == "tourism_monthly")
    rows.loc[eight_mx_tourism, "c_batch"] *= 4.0 / 5.0
    rows.loc[(rows.threads == 8) & (rows.arm == MX) & (rows.dataset == "m1_yearly"), "c_batch"] *= 6.0 / 5.0
    factors, total = conditions.factor_table(pd.DataFrame(), pd.DataFrame(), rows, baseline=2)
    eight = factors.set_index("key").loc["threads_8"]
    assert eight.effect == pytest.approx(6**0.5) and eight.dataset_effects == pytest.approx([2.0, 3.0])
    assert factors.set_index("key").loc["threads_1", "dataset_effects"] == pytest.approx([1.5 / 1.8] * 2)
    text = render_markdown("deepar_factors", **conditions.factor_facts(factors, {"ratio": 1.8, "gap": 2.5}))
    row = next(line for line in text.splitlines() if line.startswith("| 8 threads"))
    assert "; its datasets 2 to 3 |" in row and "not how the datasets differ" in text


def test_a_part_run_on_another_boot_than_the_main_part_says_so():
    """The versions part against the main part, the same seeds: on the same boot the row says nothing of boots; on
    another boot it says the effect holds the boots' difference too (one boot's speed is not the other's)."""
    from fwbench.machines import MACHINE

    rows = [{"part": part, "env": env, "dataset": "m1_yearly", "seed": 42 + k, "arm": arm, "train_time_s": t * n}
            for part, env in (("main", "main"), ("versions", "gluonts-0.13")) for arm, t in ((MX, 20.0), (PT, 10.0))
            for k, n in enumerate(NOISE)]  # fmt: skip
    for boots, said in ((("a", "a"), False), (("a", "b"), True)):
        trials = pd.DataFrame(rows)
        trials[MACHINE] = trials.part.map(dict(zip(("main", "versions"), boots)))
        factors, _ = conditions.factor_table(trials, pd.DataFrame(), pd.DataFrame(), baseline=2)
        source = factors.set_index("key").loc["versions", "source"]
        assert source.startswith("versions part against the main part") and ("another boot" in source) == said


def test_the_threads_part_is_a_factor_row_of_its_own_beside_the_contention_parts():
    """The threads part (1 thread, the main part's seeds, the full protocol) is read against the main part as its own
    row, so the two 1-thread measurements sit side by side, each naming its part."""
    from fwbench.machines import MACHINE

    rows = [{"part": part, "env": "main", "dataset": "m1_yearly", "seed": 42 + k, "arm": arm, "threads": threads,
             "train_time_s": t * (1.2 if part == "threads" and arm == MX else 1.0) * n, MACHINE: "a"}
            for part, threads in (("main", 2), ("threads", 1)) for arm, t in ((MX, 20.0), (PT, 10.0))
            for k, n in enumerate(NOISE)]  # fmt: skip
    factors, _ = conditions.factor_table(pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), baseline=2)
    row = factors.set_index("key").loc["threads_part"]
    assert row.effect == pytest.approx(1.2) and row.mxnet_slowdown == pytest.approx(1.2)
    assert row.factor.startswith("1 thread a run in both frameworks (the threads part")
    assert row.source.startswith("threads part against the main part")


def test_no_contention_trials_says_so():
    empty = conditions.contention_facts(conditions.conditions_table(pd.DataFrame(), 2))
    assert "No contention trials" in render_markdown("deepar_contention", **empty)
    assert render_markdown("thread_condition", threads=1, load=0, baseline=2) == "1 thread"
    assert render_markdown("thread_condition", threads=4, load=0, baseline=2) == "4 threads (oversubscribed 2x)"


def test_the_sentences_read_the_tables():
    rows = planted().assign(c_batch_worst=lambda f: f.c_batch * 1.5)
    table = conditions.conditions_table(rows, baseline=2)
    stall = render_markdown("deepar_contention", **conditions.contention_facts(table, rows)).splitlines()[-1]
    # the worst: 20 ms x 1.8 (the load) x 1.03 (the slowest trial) x 1.5 (its slowest epoch)
    assert stall.startswith("Beside the background load") and "MXNet 56 ms (median 36 ms)" in stall
    factors, _ = conditions.factor_table(pd.DataFrame(), pd.DataFrame(), rows, baseline=2)
    text = render_markdown("deepar_factors", **conditions.factor_facts(factors, {"ratio": 1.8, "gap": 2.5}))
    assert "**8 threads (oversubscribed 4x)** moves the ratio most" in text


def test_the_conditions_figure_draws_a_panel_per_dataset():
    from fwbench.plots import deepar_conditions as plots

    fig = plots.conditions_figure(conditions.conditions_table(planted(), baseline=2))
    assert len(fig.axes) == 2 and fig.axes[0].get_yscale() == "log"


def _runs_at_once_factors(slow: dict, noise: dict | None = None, base_seeds: int = 3) -> pd.DataFrame:
    """The factor table of 1, 2 and 4 runs at once with the libraries' default threads (MXNet records 1, PyTorch 2)
    over the datasets ``slow`` gives each k and framework (the last ones of three), 4-epoch coverage rows the base;
    ``noise``: per k and framework, the trials' factors (``NOISE`` where not given); the base's first ``base_seeds``."""
    from fwbench.analysis.deepar_prediction import PredictionCondition

    cpu, mine = "GenuineIntel/6/207", ("m1_yearly", "cif_2016", "tourism_monthly")

    def rows(k: int) -> pd.DataFrame:
        return pd.DataFrame([{"dataset": d, "arm": arm, "seed": 42 + i, "epochs": 3, "c_batch": BASE[arm] * s * n,
                              "omp_max_threads": 1.0 if arm == MX else 2.0}
                             for arm in (MX, PT) for d, s in zip(mine[3 - len(slow[k][arm]):], slow[k][arm])
                             for i, n in enumerate((noise or {}).get((k, arm), TOGETHER.get(k, NOISE)))])  # fmt: skip

    base = rows(1).assign(epochs=4).query(f"seed < {42 + base_seeds}")
    measured = [(PredictionCondition(cpu, k, 0), base, rows(k)) for k in (1, 2, 4)]
    none = pd.DataFrame()
    return conditions.factor_table(none, none, none, baseline=2, measured_conditions=measured)[0]


def test_runs_at_once_rows_a_reader_compares_are_over_the_same_datasets():
    """1 run at a time and 2 at once on three datasets, 4 at once on two of them: the 2-at-once row over all three,
    again over the two that 4 at once ran (named, and never the measured factor the page leads with), and 4 at once
    over those two, named. Planted PyTorch slowdowns at 2 at once: 2x, 4x, 4x; at 4 at once: 4x, 4x (MXNet 2x)."""
    slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (1, 1, 1), PT: (2, 4, 4)}, 4: {MX: (2, 2), PT: (4, 4)}}
    factors = _runs_at_once_factors(slow)
    at_once = factors[factors.key.str.startswith("at_once_")].set_index("key")
    assert len(at_once) == 3
    two, two_on_four, four = at_once.itertuples()
    assert two.effect == pytest.approx((1 / 2 * 1 / 4 * 1 / 4) ** (1 / 3)) and not two.limited_to
    assert "over 3 datasets, the" in two.factor  # the 1-run row's datasets: not named
    assert two_on_four.effect == pytest.approx(1 / 4) and two_on_four.limited_to == "cif_2016 tourism_monthly"
    assert four.effect == pytest.approx(2 / 4) and not four.limited_to
    named = "over 2 datasets (cif_2016, tourism_monthly), the libraries' default threads"
    assert named in two_on_four.factor and named in four.factor
    facts = conditions.factor_facts(factors, {"ratio": 1.8, "gap": 2.5})
    assert facts["top"].key == two.Index  # the limited row moves the ratio more, but is no factor of its own
    text = render_markdown("deepar_factors", **facts)
    assert text.count(named) == 2 and "**2 runs at once against one, over 3 datasets" in text
    assert "slow it less here" not in text  # 4 at once slows PyTorch as much as 2 at once on those datasets


def test_oversubscription_that_slows_opposite_frameworks_more_is_set_side_by_side():
    """Planted: 8 threads in one run slow MXNet 5x, PyTorch 2x (the contention part); runs at once slow PyTorch 4x,
    MXNet 1-2x. The page says the two point opposite ways; where runs at once slowed MXNet more too, it says nothing."""
    contention, _ = conditions.factor_table(pd.DataFrame(), pd.DataFrame(), planted(), baseline=2)
    for slow_mx, said in ((1, True), (5, False)):
        slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (slow_mx,) * 3, PT: (4, 4, 4)}, 4: {MX: (2, 2), PT: (4, 4)}}
        factors = pd.concat([contention, _runs_at_once_factors(slow)], ignore_index=True)
        text = render_markdown("deepar_factors", **conditions.factor_facts(factors, {"ratio": 1.8, "gap": 2.5}))
        assert ("Oversubscribing the cores points two ways here" in text) == said
        if said:
            assert "(4 threads (oversubscribed 2x)" not in text and "8 threads (oversubscribed 4x))" in text
            assert "default threads (on the Intel Xeon 6/207) slow PyTorch far more" in text


def test_more_runs_at_once_slowing_a_framework_less_on_the_same_datasets_is_said_with_both_numbers():
    """Planted PyTorch slowdowns on the two datasets 4 at once ran: 8x at 2 at once, 4x at 4 at once; the note names
    both, over the same datasets (not the 2-at-once row over three); MXNet, slowed more by 4, is not named."""
    slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (1, 1, 1), PT: (2, 8, 8)}, 4: {MX: (2, 2), PT: (4, 4)}}
    facts = conditions.factor_facts(_runs_at_once_factors(slow), {"ratio": 1.8, "gap": 2.5})
    text = render_markdown("deepar_factors", **facts)
    assert text.count("slow it less here") == 1
    assert (
        "same 2 datasets (cif_2016, tourism_monthly), 4 runs at once slow PyTorch 4.00x but 2 runs at once 8.00x"
        in (text)
    )


def test_a_row_whose_sides_ran_different_trial_counts_names_both():
    """The default-threads row's base (the coverage part) planted with 2 seeds against the condition's 3: its n names
    9 and 6 trials per framework; rows with equal sides keep "a side"."""
    slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (1, 1, 1), PT: (2, 2, 2)}, 4: {MX: (2, 2), PT: (4, 4)}}
    factors = _runs_at_once_factors(slow, base_seeds=2).set_index("key")
    default = factors.loc[factors.index.str.startswith("default_threads_")].iloc[0]
    assert default.n == "9 and 6 trials per framework, 3 dataset(s)"
    at_once = factors.loc[factors.index.str.startswith("at_once_"), "n"]
    assert at_once.str.match(r"\d groups of [24] run at once and [69] trials alone per framework").all()


def test_runs_at_once_rows_name_each_frameworks_threads_and_trials_that_lie_apart():
    """With no thread setting each framework's rows name the threads its trials recorded (MXNet 1, PyTorch 2), a run
    and in all at k runs at once; planted PyTorch trials at 2 at once of 1, 1 and 9 (a run slowed by the runs beside
    it): the row's cell and the note say its trials lie 9x apart, against at most 1.06x in every other row."""
    slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (1, 1, 1), PT: (2, 2, 2)}, 4: {MX: (2, 2), PT: (4, 4)}}
    factors = _runs_at_once_factors(slow, noise={(2, PT): (1.0, 1.0, 9.0)}).set_index("key")
    default = factors.loc[factors.index.str.startswith("default_threads_"), "factor"].iloc[0]
    assert "no thread setting (the libraries' default threads: MXNet 1, PyTorch 2)" in default
    two, four = (factors.loc[factors.index.str.contains(f".x{k}.") & (factors.limited_to == "")].iloc[0]
                 for k in (2, 4))  # fmt: skip
    assert two.factor.endswith("the libraries' default threads (MXNet 1 a run, 2 in all; PyTorch 2 a run, 4 in all)")
    assert "(MXNet 1 a run, 4 in all; PyTorch 2 a run, 8 in all)" in four.factor
    assert two.pytorch_spread == pytest.approx(9.0) and two.mxnet_spread == pytest.approx(1.03 / 0.97)
    facts = conditions.factor_facts(factors.reset_index(), {"ratio": 1.8, "gap": 2.5})
    assert facts["apart_rows"] and facts["narrow"] == pytest.approx(1.03 / 0.97)
    text = render_markdown("deepar_factors", **facts)
    assert " (trials up to 9x apart) |" in text and "in every other measured row they lie at most 1.06x" in text
    assert "Under runs at once a run's time then depends on the runs beside it" in text
    assert "x, its trials up to 9x apart)" in text  # the sentence on the row that moves the ratio most, too


def test_a_row_whose_other_framework_lies_apart_still_counts_in_every_other_rows_spread():
    """4 runs at once with MXNet's trials 3x apart and PyTorch's 1.9x: the note's "at most" over every cell not
    flagged takes the 1.9, not only the rows with no flagged cell (at most 1.06x)."""
    slow = {1: {MX: (1, 1, 1), PT: (1, 1, 1)}, 2: {MX: (1, 1, 1), PT: (2, 2, 2)}, 4: {MX: (2, 2), PT: (4, 4)}}
    noise = {(4, MX): (1.0, 1.0, 3.0), (4, PT): (1.0, 1.0, 1.9)}
    facts = conditions.factor_facts(_runs_at_once_factors(slow, noise=noise), {"ratio": 1.8, "gap": 2.5})
    assert facts["apart_rows"] and facts["narrow"] == pytest.approx(1.9)
    assert "in every other measured row they lie at most 1.9x apart" in render_markdown("deepar_factors", **facts)


def test_the_post_machine_set_beside_the_top_factor_is_on_that_factors_cpu():
    """The top factor measured on one CPU is set beside the chart's implied costs over that CPU's per-batch costs
    (another pattern or the same is judged like with like), each named with its CPU."""
    row = dict.fromkeys(conditions.FACTOR_COLUMNS, math.nan) | {
        "limited_to": "",
        "n": "",
        "source": "a part",
        "dataset_effects": [],
    }
    table = pd.DataFrame([
        row | {"key": "at_once_x2", "factor": "2 runs at once", "cpu": "Intel X", "kind": "measured", "effect": 0.05,
               "mxnet_slowdown": 1.0, "pytorch_slowdown": 20.0},
        row | {"key": "post_machine", "factor": "ours", "cpu": "AMD Y", "kind": "inferred", "effect": 2.1,
               "mxnet_slowdown": 2.9, "pytorch_slowdown": 1.4},
        row | {"key": "post_machine_Intel_X", "factor": "beyond", "cpu": "Intel X", "kind": "inferred", "effect": 2.0,
               "mxnet_slowdown": 2.6, "pytorch_slowdown": 1.3},
    ])  # fmt: skip
    facts = conditions.factor_facts(table, {"ratio": 1.8, "gap": 2.5})
    assert facts["post_machine"].key == "post_machine_Intel_X" and not facts["same_pattern"]
    text = render_markdown("deepar_factors", **facts)
    assert "on the Intel X, **2 runs at once** moves the ratio most" in text
    assert "2.60x ours in MXNet and 1.30x in PyTorch (over our Intel X's per-batch costs, the same CPU)" in text
    facts = conditions.factor_facts(table[table.key != "post_machine_Intel_X"], {"ratio": 1.8, "gap": 2.5})
    assert facts["post_machine"].key == "post_machine"  # none on that CPU: ours, named
    assert "(over our AMD Y's per-batch costs)" in render_markdown("deepar_factors", **facts)


def test_each_row_names_the_parts_its_trials_belong_to():
    """As the setup lists the parts: the oneDNN-off row's trials are the onednn and main parts' (no part is called
    variants); the contention part's 1-thread row is not the threads part's."""
    assert render_markdown("deepar_factor", what="onednn_off").split("\n")[1].startswith("onednn part against the main")
    one = render_markdown("deepar_factor", what="threads", threads=1, load=0, baseline=2).split("\n")
    assert one == ["1 thread", "contention part (not the threads part), 3 x 50 trials"]
    eight = render_markdown("deepar_factor", what="threads", threads=8, load=0, baseline=2).split("\n")
    assert eight[1] == "contention part, 3 x 50 trials"


def test_trials_run_at_once_count_as_one_unit_of_the_interval():
    """Seeds 42-45 run two at once (42 with 43, 44 with 45): each pair's times move together, so the interval's
    units are the pairs (their geometric mean), two per dataset and framework, and it is wider than one over four
    trials treated as independent would be."""
    times = {42: 1.0, 43: 1.0, 44: 4.0, 45: 4.0}
    rows = pd.DataFrame([{"dataset": "d", "arm": arm, "seed": s, "c_batch": t * (2 if arm == MX else 1)}
                         for arm in (MX, PT) for s, t in times.items()])  # fmt: skip
    groups = conditions.runs_together(rows, 2).sort_values(["arm", "c_batch"])
    assert groups.c_batch.tolist() == pytest.approx([2.0, 8.0, 1.0, 4.0]) and len(groups) == 4
    failed = conditions.runs_together(rows[rows.seed != 43], 2)  # 42 ran beside a failed 43: 44 stays with 45
    assert sorted(failed[failed.arm == PT].c_batch) == pytest.approx([1.0, 4.0])
    alone = rows.assign(c_batch=rows.c_batch / 2)
    as_groups, as_trials = (conditions._pooled(r, alone, 0.95)["effect"] for r in (groups, rows))
    assert as_groups["ratio"] == pytest.approx(as_trials["ratio"])
    assert as_groups["ci_high"] / as_groups["ci_low"] > as_trials["ci_high"] / as_trials["ci_low"]
