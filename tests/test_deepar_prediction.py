"""Claim B over the post's datasets from the coverage part (issue 24): the weighted total, the prediction of the
post's per-dataset totals, and the comparison with its chart, on planted per-batch costs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fwbench.analysis import deepar_prediction as post
from fwbench.data import monash
from fwbench.pages import render_markdown
from fwbench.stats import sum_of_means_ratio_ci
from fwbench.studies import deepar as study

MX, PT = study.STUDY.reference_arm("mxnet"), study.STUDY.reference_arm("torch")


def _window(name: str) -> int:
    meta = monash.info(name)
    return int(meta.context_length + meta.horizon)


def planted_rows(datasets=("m1_yearly", "m1_monthly", "nn5_weekly"), noise=0.02) -> pd.DataFrame:
    """Coverage trials: MXNet 1 ms + 0.4 ms per window step per batch, PyTorch 10 ms flat; 2 trials each, the
    second `noise` slower; 1 s warm-up and 0.5 s outside the epochs."""
    rows = []
    for name in datasets:
        w = _window(name)
        for arm, c in ((MX, 0.001 + 0.0004 * w), (PT, 0.010)):
            for k in range(2):
                rows.append({"trial_id": f"{name}-{arm}-{k}", "dataset": name, "arm": arm, "seed": 42 + k,
                             "window": w, "epochs": 4, "num_batches_per_epoch": 50, "c_batch": c * (1 + noise * k),
                             "warmup": 1.0, "fit_fixed": 0.5, "train_time_s": 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_sum_of_means_ratio_and_its_interval():
    r = sum_of_means_ratio_ci([[10.0, 12.0], [100.0, 100.0]], [[5.0, 5.0], [50.0, 50.0]])
    assert r["ratio"] == pytest.approx(111 / 55) and r["ci_low"] < r["ratio"] < r["ci_high"]
    exact = sum_of_means_ratio_ci([[2.0, 2.0]], [[1.0, 1.0]])
    assert exact["ci_low"] == exact["ci_high"] == pytest.approx(2.0)  # no spread: a point
    assert math.isnan(sum_of_means_ratio_ci([[2.0]], [[1.0, 1.0]])["ci_low"])  # one trial: no interval
    wide = sum_of_means_ratio_ci([[10.0, 14.0], [100.0, 100.0]], [[5.0, 5.0], [50.0, 50.0]])
    assert wide["ci_high"] - wide["ci_low"] > r["ci_high"] - r["ci_low"]  # more spread, wider


def test_the_weighted_total_sums_datasets_at_the_protocols_scale():
    rows = planted_rows(noise=0.0)
    total = post.weighted_total(rows)
    mx = sum(1.5 + 5000 * (0.001 + 0.0004 * _window(d)) for d in ("m1_yearly", "m1_monthly", "nn5_weekly"))
    assert total["n_datasets"] == 3 and total["mxnet_s"] == pytest.approx(mx)
    assert total["pytorch_s"] == pytest.approx(3 * (1.5 + 50.0)) and total["ratio"] == pytest.approx(mx / 154.5)
    assert total["ci_low"] == pytest.approx(total["ratio"])  # identical trials: no spread
    text = render_markdown("deepar_post_total", total=total, archive=None)
    assert f"MXNet / PyTorch {total['ratio']:.2f}" in text and "over the 3 datasets" in text
    one_side = post.weighted_total(rows[~((rows.dataset == "nn5_weekly") & (rows.arm == PT))])
    assert one_side["n_datasets"] == 2 and one_side["datasets"] == ["m1_monthly", "m1_yearly"]


def test_the_prediction_covers_the_posts_list_and_models_only_what_was_not_measured():
    rows = planted_rows()
    table = post.comparison(rows)
    assert list(table.columns) == post.COMPARISON_COLUMNS
    assert sorted(table.dataset) == sorted(monash.names(in_2024_post=True)) and len(table) == 41
    assert set(table.loc[table.measured, "dataset"]) == {"m1_yearly", "m1_monthly", "nn5_weekly"}
    # the window line recovers the planted MXNet cost where nothing was measured (m4_hourly: window 258)
    m4h = table.set_index("dataset").loc["m4_hourly"]
    assert not m4h.measured and "window line" in m4h.condition
    assert m4h.ours_mxnet_s_per_batch == pytest.approx(0.001 + 0.0004 * 258, rel=0.02)
    assert m4h.predicted_post_pytorch_s == pytest.approx(5 * (1.5 + 5000 * 0.0101), rel=0.02)
    assert (table.predicted_post_ratio == table.predicted_post_mxnet_s / table.predicted_post_pytorch_s).all()
    estimate = post.archive_estimate(table)
    assert estimate["n_datasets"] == 41 and estimate["n_modelled"] == 38
    staged = table.loc[table.measured, "window"]
    modelled = table.loc[~table.measured, "window"]
    assert estimate["staged"] == (staged.min(), staged.max())  # the window line extrapolated beyond them
    assert estimate["n_beyond"] == ((modelled < staged.min()) | (modelled > staged.max())).sum() > 0
    spread = post.dataset_range(table)  # over the measured datasets only, each end with its dataset
    measured = table[table.measured].set_index("dataset").predicted_post_ratio
    assert spread["min"] == (measured.idxmin(), spread["min"][1]) and spread["min"][1].value == measured.min()
    assert spread["max"][0] == measured.idxmax() and spread["max"][1].value == measured.max()
    assert post.dataset_range(table[~table.measured]) is None


def test_against_the_chart_says_which_framework_differs():
    table = post.comparison(planted_rows(noise=0.0))
    # a planted chart: the post's MXNet batches 3x ours, its PyTorch batches as ours
    chart = table[["dataset"]].assign(
        post_mxnet_s=3 * post.POST_BATCHES * table.ours_mxnet_s_per_batch,
        post_pytorch_s=post.POST_BATCHES * table.ours_pytorch_s_per_batch,
    )
    merged = post.against_chart(table, chart.head(12))
    summary = post.against_chart_summary(merged)
    assert summary["post_over_ours_mxnet"] == pytest.approx(3.0) and summary["post_over_ours_pytorch"] == pytest.approx(
        1.0
    )
    assert np.isfinite(summary["post_ratio_vs_window"])
    text = render_markdown("deepar_chart", sentence_only=False, **post.chart_facts(merged))
    assert "a batch cost the post's machine 3.00x ours in MXNet and 1.00x in PyTorch" in text


def test_the_chart_is_read_from_the_reference_folder():
    chart = post.chart()
    assert len(chart) == 21 and {"dataset", "post_mxnet_s", "post_pytorch_s"} <= set(chart.columns)
    assert set(chart.dataset) <= set(monash.names(in_2024_post=True))


def test_the_best_fit_names_a_near_tie_and_its_conditions():
    """The best fit and a runner-up within 5 % of its RMS log error: both named; further off, no runner-up."""
    n = len(monash.names(in_2024_post=True))
    table = pd.DataFrame({"predicted_post_mxnet_s": [2.0] * n, "predicted_post_pytorch_s": 1.0, "measured": True,
                          "window": 8})  # fmt: skip
    intel, amd = "GenuineIntel/6/207", "AuthenticAMD/25/17"
    conditions = {"a": post.PredictionCondition(intel), "b": post.PredictionCondition(amd),
                  "c": post.PredictionCondition(amd, 2, 0)}  # fmt: skip

    def facts(rms_b: float) -> dict:
        fits = pd.DataFrame({"key": list("abc"), "n": 21, "rms_log_error": [0.770, rms_b, 2.0], "n_within_25": 1,
                             "median_error": 1.9, "chosen": [True, False, False],
                             "archive_ratio": [2.69, 2.5, 0.3], "n_measured": 27,
                             "reproduces": False, "threads": ["2", "2", "default"], "mxnet_omp_threads": 1.0,
                             "pytorch_omp_threads": 2.0})  # fmt: skip
        return post.facts({"fits": fits, "tables": dict.fromkeys("abc", table), "conditions": conditions})

    near = facts(0.777)
    assert near["runner_up"].key == "b" and facts(0.9)["runner_up"] is None
    assert near["chosen_ratio"].conditions == {"cpu": "Intel Xeon 6/207", "runs at once": "1 run at a time",
                                               "threads": "2 threads"}  # fmt: skip
    answer = render_markdown("post_conditions_answer", **near)
    assert "**The best-fitting measured condition**" in answer and "post's own conditions" not in answer
    assert "A near-tie: AMD EPYC 25/17, 1 run at a time, 2 threads" in answer
    page = render_markdown("post_conditions", **near)
    assert f"the {n} datasets of its list (its text says 40)" in page and "near-tie" in page
    assert "No ranked condition reproduces" in answer and "Not ranked" not in answer + page  # no contention part


def test_the_words_say_what_was_ranked_and_name_the_contention_condition_nearest_the_gap():
    """The ranking holds the coverage and post_conditions parts' conditions only: the contention part's are named
    as not ranked, with its datasets, and in the answer (where the factor table was read) its row that alone comes
    closest to the gap, with that row's effect as the factor table's quantity."""
    from types import SimpleNamespace

    from fwbench.quantity import Quantity

    n = len(monash.names(in_2024_post=True))
    table = pd.DataFrame({"predicted_post_mxnet_s": [2.0] * n, "predicted_post_pytorch_s": 1.0, "measured": True,
                          "window": 8})  # fmt: skip
    fits = pd.DataFrame({"key": ["a"], "n": 21, "rms_log_error": [0.77], "n_within_25": 1, "median_error": 1.9,
                         "chosen": [True], "archive_ratio": [2.69], "n_measured": 27, "reproduces": False,
                         "threads": ["2"], "mxnet_omp_threads": 1.0, "pytorch_omp_threads": 2.0})  # fmt: skip
    effect = Quantity("deepar.gap_factor.threads_4", 2.4, 2.17, 2.65, label="4 threads (oversubscribed 2x)",
                      conditions={"cpu": "AMD EPYC 25/17", "part": "contention part, 3 x 50 trials"})  # fmt: skip
    closing = SimpleNamespace(factor=effect.label, cpu="AMD EPYC 25/17", effect_q=effect, gap_share=0.99)
    post_ = {"fits": fits, "tables": {"a": table}, "conditions": {"a": post.PredictionCondition("GenuineIntel/6/207")}}
    datasets = ["m1_yearly", "tourism_monthly"]
    unranked = {"datasets": datasets, "closing": closing}
    answer = render_markdown("post_conditions_answer", **post.facts({**post_, "unranked": unranked}))
    assert "the coverage and post_conditions parts" in answer and "No ranked condition reproduces" in answer
    assert "Not ranked: the contention part's conditions" in answer
    assert "measured on 2 datasets only (m1_yearly, tourism_monthly)" in answer
    assert "**4 threads (oversubscribed 2x)** (AMD EPYC 25/17) alone comes closest to the gap" in answer
    assert 'data-q="deepar.gap_factor.threads_4"' in answer and "99 % of the gap" in answer
    page = render_markdown("post_conditions", **post.facts({**post_, "unranked": {"datasets": datasets}}))
    assert "No condition in the table reproduces" in page
    assert "(the answer's factor table has each one's effect)" in page  # no factor table read: none named
