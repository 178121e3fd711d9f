"""Claim B over the 2024 post's datasets (issue 24): its total from the coverage part's per-batch costs, weighted
as the post weighted it, and a prediction of the post's per-dataset totals set beside the values read off its chart.

- ``weighted_total``: every dataset both core arms have coverage trials of, at the protocol's scale (each trial's
  cost as ``deepar_coverage.protocol_train_s`` at 100 x 50: the batches, the first epoch's warm-up and the time
  outside the epochs), summed per framework as the post summed its datasets: big datasets weigh what they cost.
  MXNet / PyTorch with ``stats.sum_of_means_ratio_ci`` over the independent coverage trials of each dataset.
- ``comparison``: one row per dataset of the post's list (41): our per-batch cost (measured where the coverage part
  ran; elsewhere the line ``c_batch = a + b x window`` fitted per framework on the measured datasets, labelled
  ``measured`` False) and the post's predicted totals (5 seeds x the protocol's training time). The prediction uses
  only costs measured here; the chart's values (``chart``) are never used to make it.
- ``against_chart``: the prediction beside the published per-dataset totals, with the post's per-batch cost of
  each framework over ours (which framework differs on the post's machine, and by how much).

``CONDITION`` names what the prediction assumes: this study's main environment (gluonts 0.17), the protocol's 2
threads, a quiet machine. The post's bars may include forecasting and whatever else a run did; ours are training.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..data import monash
from ..floatmode import DEFAULT
from ..paths import reference_dir, results_path
from ..stats import CONFIDENCE, sum_of_means_ratio_ci
from ..studies import get_framework, get_study
from .cpu_models import stored_conditions
from .deepar import STUDY, reference_arms
from .deepar_coverage import cost_table, protocol_train_s

CHART_FILE = "deepar_runtime_chart_2024_part.csv"
POST_SEEDS, PROTOCOL_EPOCHS, PROTOCOL_BATCHES = 5, 100, 50
POST_BATCHES = POST_SEEDS * PROTOCOL_EPOCHS * PROTOCOL_BATCHES  # per dataset and framework: 25,000
CONDITION = "gluonts 0.17 (main environment), 2 threads, quiet machine: the coverage part's conditions"
COMPARISON_COLUMNS = [
    "dataset",
    "window",
    "measured",
    "condition",
    "cpu",
    "ours_mxnet_s_per_batch",
    "ours_pytorch_s_per_batch",
    "predicted_post_mxnet_s",
    "predicted_post_pytorch_s",
    "predicted_post_ratio",
]


def sides() -> tuple[str, ...]:
    """The column prefix of each reference arm's framework (MXNet's, then PyTorch's): its label in lower case, as
    the issue names the comparison's columns (``ours_mxnet_s_per_batch``, ``ours_pytorch_s_per_batch``)."""
    study = get_study(STUDY)
    return tuple(get_framework(study.arm(arm).framework).label.lower() for arm in reference_arms())


def _trial_totals(rows: pd.DataFrame) -> pd.Series:
    """Each coverage trial's training time at the protocol's scale (one post seed of its dataset)."""
    return rows.apply(lambda r: protocol_train_s(r, PROTOCOL_EPOCHS, PROTOCOL_BATCHES), axis=1)


def weighted_total(rows: pd.DataFrame, confidence: float = CONFIDENCE) -> dict:
    """B over the datasets both core arms measured: Σ protocol-scale training time MXNet / PyTorch, with its CI
    over the coverage trials; ``n_datasets``, and each framework's total (one seed per dataset)."""
    mx, pt = reference_arms()
    out = {"ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_datasets": 0, "mxnet_s": math.nan,
           "pytorch_s": math.nan, "datasets": []}  # fmt: skip
    if rows.empty:
        return out
    rows = rows.assign(total_s=_trial_totals(rows))
    both = sorted(set(rows.loc[rows.arm == mx, "dataset"]) & set(rows.loc[rows.arm == pt, "dataset"]))
    if not both:
        return out
    groups = {arm: [rows.loc[(rows.arm == arm) & (rows.dataset == d), "total_s"].to_numpy() for d in both]
              for arm in (mx, pt)}  # fmt: skip
    r = sum_of_means_ratio_ci(groups[mx], groups[pt], confidence)
    return {
        **out,
        "ratio": r["ratio"],
        "ci_low": r["ci_low"],
        "ci_high": r["ci_high"],
        "n_datasets": len(both),
        "mxnet_s": float(sum(g.mean() for g in groups[mx])),
        "pytorch_s": float(sum(g.mean() for g in groups[pt])),
        "datasets": both,
    }


def window_lines(costs: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per reference arm: (a, b) of ``c_batch = a + b x window``, least squares over the measured datasets."""
    lines = {}
    for arm in reference_arms():
        mine = costs[costs.arm == arm]
        if mine.window.nunique() >= 2:
            b, a = np.polyfit(mine.window.astype(float), mine.c_batch.astype(float), 1)
            lines[arm] = (float(a), float(b))
    return lines


def comparison(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset of the post's list (``COMPARISON_COLUMNS``), from the coverage trials ``rows`` (of one
    CPU model: ``cost_rows`` keeps one; its ``cpu`` names it in the ``condition``)."""
    cpu = str(rows.cpu.iloc[0]) if len(rows) and "cpu" in rows else "not recorded"
    mx, pt = reference_arms()
    costs = cost_table(rows)
    lines = window_lines(costs)
    by_key = costs.set_index(["dataset", "arm"]) if len(costs) else costs
    typical = {arm: costs[costs.arm == arm][["warmup", "fit_fixed"]].median() for arm in (mx, pt)}
    out = []
    for name in monash.names(in_2024_post=True):
        meta = monash.info(name)
        window = int((meta.context_length or 0) + meta.horizon)
        measured = all((name, arm) in by_key.index for arm in (mx, pt)) if len(costs) else False
        per_batch, totals = {}, {}
        for arm in (mx, pt):
            if measured:
                cost = by_key.loc[(name, arm)]
            elif arm in lines:
                a, b = lines[arm]
                cost = {"c_batch": max(a + b * window, 0.0), **typical[arm].to_dict()}
            else:
                cost = None
            per_batch[arm] = float(cost["c_batch"]) if cost is not None else math.nan
            totals[arm] = (
                POST_SEEDS * protocol_train_s(cost, PROTOCOL_EPOCHS, PROTOCOL_BATCHES) if cost is not None else math.nan
            )
        out.append(
            {
                "dataset": name,
                "window": window,
                "measured": bool(measured),
                "condition": f"{CONDITION}, CPU {cpu}"
                + ("" if measured else "; window line fitted on the measured datasets"),
                "cpu": cpu,
                "ours_mxnet_s_per_batch": per_batch[mx],
                "ours_pytorch_s_per_batch": per_batch[pt],
                "predicted_post_mxnet_s": totals[mx],
                "predicted_post_pytorch_s": totals[pt],
                "predicted_post_ratio": totals[mx] / totals[pt] if totals[pt] > 0 else math.nan,
            }
        )
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


def chart() -> pd.DataFrame:
    """The post's per-dataset totals read off its chart (reference folder, ``CHART_FILE``): 21 of its datasets."""
    frame = pd.read_csv(reference_dir() / CHART_FILE)
    return frame.rename(columns={"mxnet_total_s": "post_mxnet_s", "pytorch_total_s": "post_pytorch_s"})


def against_chart(table: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The prediction beside each published total: predicted / published per framework, and the post's per-batch
    cost over ours (``post_over_ours_*``: above 1, the framework was slower per batch on the post's machine)."""
    merged = table.merge(published[["dataset", "post_mxnet_s", "post_pytorch_s"]], on="dataset", how="inner")
    merged["post_ratio"] = merged.post_mxnet_s / merged.post_pytorch_s
    for side in sides():
        ours = f"ours_{side}_s_per_batch"
        merged[f"predicted_over_post_{side}"] = merged[f"predicted_post_{side}_s"] / merged[f"post_{side}_s"]
        merged[f"post_over_ours_{side}"] = merged[f"post_{side}_s"] / POST_BATCHES / merged[ours]
    return merged.sort_values("window", kind="stable").reset_index(drop=True)


def against_chart_summary(merged: pd.DataFrame) -> dict:
    """Geometric means over the charted datasets of the post's per-batch cost over ours, per framework (measured
    datasets only, and those with the larger bars: ``post_mxnet_s`` >= 2,000 s, where a pixel's 135 s matters
    least), and the correlation of the post's ratio with the window."""
    measured = merged[merged.measured]
    big = measured[measured.post_mxnet_s >= 2000]

    def gmean(values) -> float:
        v = np.asarray(values, float)
        v = v[np.isfinite(v) & (v > 0)]
        return float(np.exp(np.log(v).mean())) if v.size else math.nan

    return {
        "n_charted": len(merged),
        "n_measured": len(measured),
        "n_big": len(big),
        "post_over_ours_mxnet": gmean(measured.post_over_ours_mxnet),
        "post_over_ours_pytorch": gmean(measured.post_over_ours_pytorch),
        "post_over_ours_mxnet_big": gmean(big.post_over_ours_mxnet),
        "post_over_ours_pytorch_big": gmean(big.post_over_ours_pytorch),
        "post_ratio_vs_window": float(np.corrcoef(merged.window, merged.post_ratio)[0, 1])
        if len(merged) > 2
        else math.nan,
    }


def weighted_total_markdown(total: dict, archive: dict | None = None) -> str:
    """B as the post would need it: the subset total over the measured datasets, with the archive estimate."""
    if not total["n_datasets"]:
        return "_No dataset has coverage trials of both frameworks in this profile yet._"
    ci = (
        f" (95 % CI {total['ci_low']:.2f}-{total['ci_high']:.2f})"
        if not math.isnan(total["ci_low"])
        else " (no CI: a dataset with one trial)"
    )
    text = (
        f"Summed as the post summed its datasets (each at the protocol's 100 x 50 batches, one seed), over the "
        f"{total['n_datasets']} datasets of its list measured here: MXNet {total['mxnet_s']:,.0f} s, PyTorch "
        f"{total['pytorch_s']:,.0f} s, **MXNet / PyTorch {total['ratio']:.2f}{ci}**, a labelled subset total."
    )
    if archive is not None and np.isfinite(archive["ratio"]):
        text += (
            f" With the post's {archive['n_datasets']} datasets (the {archive['n_modelled']} not staged here from "
            f"the window line, labelled as modelled): {archive['ratio']:.2f}, an estimate beside it, not in its place."
        )
    return text


def archive_estimate(table: pd.DataFrame) -> dict:
    """The whole list's predicted MXNet / PyTorch total (measured and modelled rows of ``comparison``)."""
    usable = table.dropna(subset=["predicted_post_mxnet_s", "predicted_post_pytorch_s"])
    return {
        "ratio": float(usable.predicted_post_mxnet_s.sum() / usable.predicted_post_pytorch_s.sum())
        if len(usable)
        else math.nan,
        "n_datasets": len(usable),
        "n_modelled": int((~usable.measured).sum()),
    }


def against_chart_markdown(merged: pd.DataFrame) -> str:
    """Per charted dataset: published and predicted totals, and each framework's post / ours per-batch cost."""
    if merged.empty:
        return "_No charted dataset to compare with._"
    lines = [
        "| dataset | window | measured | post MXNet s | predicted | post PyTorch s | predicted | post ratio | "
        "predicted ratio | post / ours per batch, MXNet | PyTorch |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in merged.iterrows():
        lines.append(
            f"| {r.dataset} | {r.window} | {'yes' if r.measured else 'modelled'} | {r.post_mxnet_s:,.0f} | "
            f"{r.predicted_post_mxnet_s:,.0f} | {r.post_pytorch_s:,.0f} | {r.predicted_post_pytorch_s:,.0f} | "
            f"{r.post_ratio:.2f} | {r.predicted_post_ratio:.2f} | {r.post_over_ours_mxnet:.2f} | "
            f"{r.post_over_ours_pytorch:.2f} |"
        )
    return "\n".join(lines + ["", chart_sentence(merged)])


def chart_sentence(merged: pd.DataFrame) -> str:
    """Which framework differs on the post's machine, and by how much (``against_chart_summary`` in words)."""
    s = against_chart_summary(merged)
    return (
        f"Over the {s['n_measured']} charted datasets measured here, a batch cost the post's machine "
        f"{s['post_over_ours_mxnet']:.2f}x ours in MXNet and {s['post_over_ours_pytorch']:.2f}x in PyTorch "
        f"(geometric means; over the {s['n_big']} with MXNet bars of 2,000 s or more: "
        f"{s['post_over_ours_mxnet_big']:.2f}x and {s['post_over_ours_pytorch_big']:.2f}x). The post's ratio "
        f"against the window: correlation {s['post_ratio_vs_window']:.2f} over its {s['n_charted']} charted datasets."
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m fwbench.analysis.deepar_post --profile paper -o results/paper/deepar_post_comparison.csv``"""
    import argparse

    from ..store import ResultsStore
    from .deepar_coverage import cost_rows

    parser = argparse.ArgumentParser(description="the post's per-dataset totals predicted from the coverage part")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--store", default=None, help="default: FWBENCH_RESULTS")
    args = parser.parse_args(argv)
    store = ResultsStore.open_read(args.store) if args.store else ResultsStore.open_read(results_path())
    tables = []
    for c in stored_conditions(store, STUDY):  # one block of rows per CPU model (default fp mode), never pooled
        rows = cost_rows(args.profile, c.overrides() or None, store) if c.fp_mode == DEFAULT else pd.DataFrame()
        if not rows.empty:
            tables.append(comparison(rows))
    if not tables:
        print(f"no coverage trials in profile {args.profile!r}: {args.output} not written")
        return 0
    table = pd.concat(tables, ignore_index=True)
    table.to_csv(args.output, index=False, float_format="%.6g")
    print(f"wrote {len(table)} datasets ({int(table.measured.sum())} measured) to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
