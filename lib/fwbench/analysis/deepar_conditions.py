"""What explains the gap between B's ratio here and the post's 4.5: every condition measured, both frameworks alike,
as its effect on the MXNet / PyTorch ratio (issue 24).

- ``contention_rows``: the ``contention`` part's trials (``studies.deepar``: training only, at 1, 2, 4, 8 threads
  on an otherwise idle machine and at 2 threads beside one burner), one row each with its cost per batch (the
  median of its later epochs, as the coverage part's), the CPUs its training kept busy and the burner's share.
- ``conditions_table``: per dataset and condition, each framework's cost per batch (geometric mean over trials),
  its slowdown against its own baseline (the profile's threads, no load), the MXNet / PyTorch ratio and the
  condition's effect on it (ratio / baseline ratio), every interval over independent trials
  (``stats.log_contrast_ci``).
- ``factor_table``: one row per factor: the post's library versions (the versions part), oneDNN off (the variants
  part), each contention condition (pooled over the part's datasets, each weighted alike), the post's datasets not
  staged here (the window line's estimate over the judged subset total), and the post's machine as its chart
  implies it (inferred, not measured). Each with each framework's slowdown, the effect on the ratio with its CI,
  and the share of the gap to 4.5 it would close alone (log scale: ``log(effect) / log(4.5 / B)``). The factors
  are not multiplied together: they are alternatives measured one at a time, not a decomposition.

Their Markdown (the factor table, its reading, the contention part per dataset) is
``analysis.deepar_conditions_markdown``'s.

Decision: the post's per-dataset prediction (``deepar_post.comparison``) stays at the quiet 2-thread condition,
the only one measured on every staged dataset; which measured condition's per-framework slowdowns look like the
post's (its chart against our quiet costs) is shown beside them here, never used to choose or scale the
prediction, so nothing is fitted to the chart it is judged against.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..floatmode import DEFAULT
from ..paths import results_path
from ..published.deepar2024 import CLAIMED_SPEEDUP
from ..stats import CONFIDENCE, log_contrast_ci
from ..store import ResultsStore
from ..studies import get_study
from .cpu_models import stored_conditions
from .deepar import STUDY, load_trials, reference_arms
from .deepar_coverage import cost_rows
from .deepar_post import (
    against_chart,
    against_chart_summary,
    archive_estimate,
    chart,
    comparison,
    sides,
    weighted_total,
)

CONTENTION = "contention"
BASELINE_LOAD = 0


def contention_rows(
    profile: str | None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """One row per finished contention trial (``deepar_coverage.COST_COLUMNS``)."""
    return cost_rows(profile, overrides, store, part=CONTENTION)


def baseline_threads(profile: str, overrides: dict | None = None) -> int:
    """The profile's thread count: the contention part's baseline (with no background load)."""
    return int(get_study(STUDY).resolve(profile, overrides)["threads"])


def condition_label(threads: int, load: int, baseline: int, cores: int | None = None) -> str:
    """'8 threads (oversubscribed 4x)', '2 threads + 1 busy core', '2 threads (baseline)'."""
    cores = cores or baseline
    text = f"{threads} thread{'s' if threads > 1 else ''}"
    if load:
        return f"{text} + {load} busy core{'s' if load > 1 else ''} (a background burner)"
    if threads == baseline:
        return f"{text} (baseline)"
    return f"{text} (oversubscribed {threads / cores:g}x)" if threads > cores else text


def _by_arm(g: pd.DataFrame) -> dict[str, np.ndarray]:
    return {arm: g.loc[g.arm == arm, "c_batch"].to_numpy(float) for arm in reference_arms()}


def _contrast(cond: dict, base: dict, weight: float = 1.0) -> list[tuple[float, np.ndarray]]:
    """The terms of (MXNet_cond / PyTorch_cond) / (MXNet_base / PyTorch_base), each weighted ``weight``."""
    mx, pt = reference_arms()
    return [(weight, cond[mx]), (-weight, cond[pt]), (-weight, base[mx]), (weight, base[pt])]


def conditions_table(rows: pd.DataFrame, baseline: int, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per dataset (by window) and condition (threads, background load): see the module docstring."""
    cols = ["dataset", "window", "threads", "background_load", "condition", "n_trials", "mxnet_ms", "pytorch_ms",
            "mxnet_slowdown", "mxnet_slowdown_low", "mxnet_slowdown_high", "pytorch_slowdown",
            "pytorch_slowdown_low", "pytorch_slowdown_high", "ratio", "ratio_low", "ratio_high", "effect",
            "effect_low", "effect_high", "mxnet_cpus_busy", "pytorch_cpus_busy", "burner_cpu_frac"]  # fmt: skip
    if rows.empty:
        return pd.DataFrame(columns=cols)
    mx, pt = reference_arms()
    out = []
    for dataset, g in rows.groupby("dataset"):
        base_rows = g[(g.threads == baseline) & (g.background_load == BASELINE_LOAD)]
        base = _by_arm(base_rows)
        for (threads, load), c in g.groupby(["threads", "background_load"]):
            cond = _by_arm(c)
            slow = {arm: log_contrast_ci([(1, cond[arm]), (-1, base[arm])], confidence) for arm in (mx, pt)}
            ratio = log_contrast_ci([(1, cond[mx]), (-1, cond[pt])], confidence)
            effect = log_contrast_ci(_contrast(cond, base), confidence)
            busy = c.groupby("arm").cpus_busy.median()
            out.append(
                {
                    "dataset": dataset,
                    "window": int(c.window.iloc[0]),
                    "threads": int(threads),
                    "background_load": int(load),
                    "condition": condition_label(int(threads), int(load), baseline),
                    "n_trials": int(min(len(cond[mx]), len(cond[pt]))),
                    "mxnet_ms": 1000 * _gmean(cond[mx]),
                    "pytorch_ms": 1000 * _gmean(cond[pt]),
                    **_ci("mxnet_slowdown", slow[mx]),
                    **_ci("pytorch_slowdown", slow[pt]),
                    **_ci("ratio", ratio),
                    **_ci("effect", effect),
                    "mxnet_cpus_busy": float(busy.get(mx, math.nan)),
                    "pytorch_cpus_busy": float(busy.get(pt, math.nan)),
                    "burner_cpu_frac": float(c.burner_cpu_frac.median()) if load else math.nan,
                }
            )
    table = pd.DataFrame(out, columns=cols)
    return table.sort_values(["window", "dataset", "background_load", "threads"], kind="stable").reset_index(drop=True)


def _gmean(values: np.ndarray) -> float:
    v = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else math.nan


def _ci(name: str, r: dict) -> dict:
    return {name: r["ratio"], f"{name}_low": r["ci_low"], f"{name}_high": r["ci_high"]}


def _pooled(per_dataset: list, confidence: float) -> dict | None:
    """Per framework the slowdown of a condition against its base, and the effect on the ratio, over ``(cond,
    base)`` pairs of trials by arm (one pair per dataset, each weighted alike: the mean of their log effects)."""
    if not per_dataset:
        return None
    mx, pt = reference_arms()
    w = 1 / len(per_dataset)
    return {
        "n_datasets": len(per_dataset),
        "n_trials": int(sum(min(len(c[mx]), len(c[pt])) for c, _ in per_dataset)),
        **{
            f"{side}_slowdown": log_contrast_ci(
                [t for c, b in per_dataset for t in ((w, c[arm]), (-w, b[arm]))], confidence
            )  # fmt: skip
            for side, arm in zip(sides(), (mx, pt))
        },
        "effect": log_contrast_ci([t for c, b in per_dataset for t in _contrast(c, b, w)], confidence),
    }


def pooled_condition(rows: pd.DataFrame, threads: int, load: int, baseline: int, confidence: float = CONFIDENCE):
    """A condition's effect over every dataset that ran it and the baseline, each dataset weighted alike
    (the mean of their log effects): per framework slowdown and the effect on the ratio, each with its CI."""
    mx, pt = reference_arms()
    per_dataset = []
    for _, g in rows.groupby("dataset"):
        cond = _by_arm(g[(g.threads == threads) & (g.background_load == load)])
        base = _by_arm(g[(g.threads == baseline) & (g.background_load == BASELINE_LOAD)])
        if all(len(cond[a]) and len(base[a]) for a in (mx, pt)):
            per_dataset.append((cond, base))
    return _pooled(per_dataset, confidence)


def _paired_parts(trials: pd.DataFrame, part: str, base_part: str = "main", column: str = "train_time_s"):
    """Per dataset, the trials of ``part`` and of ``base_part`` on the seeds both ran, split by arm (one row per
    trial of ``load_trials(..., parts=None)``)."""
    mx, pt = reference_arms()
    out = []
    for _, g in trials[trials.part.isin([part, base_part])].groupby("dataset"):
        seeds = set(g.loc[g.part == part, "seed"]) & set(g.loc[g.part == base_part, "seed"])
        g = g[g.seed.isin(seeds)]
        pick = {p: {a: g.loc[(g.part == p) & (g.arm == a), column].to_numpy(float) for a in (mx, pt)}
                for p in (part, base_part)}  # fmt: skip
        if all(len(pick[p][a]) for p in pick for a in (mx, pt)):
            out.append((pick[part], pick[base_part]))
    return out


def _pooled_parts(trials: pd.DataFrame, part: str, confidence: float) -> dict | None:
    """``pooled_condition``'s numbers for a part of whole trials (training seconds) against the main part."""
    return _pooled(_paired_parts(trials, part), confidence)


FACTOR_COLUMNS = ["key", "factor", "source", "kind", "n", "mxnet_slowdown", "pytorch_slowdown", "effect", "effect_low",
                  "effect_high", "gap_share"]  # fmt: skip


def pooled_cpu(coverage: pd.DataFrame, other: pd.DataFrame, confidence: float = CONFIDENCE):
    """Another CPU model's effect: its coverage trials against the first model's on every dataset both ran, each
    dataset weighted alike (``pooled_condition``'s numbers; ``other``: that CPU's cost rows)."""
    mx, pt = reference_arms()
    per_dataset = []
    for dataset, g in other.groupby("dataset"):
        cond, base = _by_arm(g), _by_arm(coverage[coverage.dataset == dataset])
        if all(len(cond[a]) and len(base[a]) for a in (mx, pt)):
            per_dataset.append((cond, base))
    return _pooled(per_dataset, confidence)


def factor_table(
    trials: pd.DataFrame,
    coverage: pd.DataFrame,
    contention: pd.DataFrame,
    baseline: int,
    confidence: float = CONFIDENCE,
    other_cpus: dict | None = None,
) -> tuple[pd.DataFrame, dict]:
    """(the factor table, B's judged subset total it is read against). ``trials``: ``load_trials(...,
    parts=None)``; ``coverage``/``contention``: the parts' cost rows; ``other_cpus``: ``{CPU model name: its
    coverage cost rows}`` for each other CPU model measured (a measured factor each, and the post's machine
    inferred again beyond it). ``kind``: measured (with a CI where every group has 2 or more trials), modelled, or
    inferred from the post's chart."""
    total = weighted_total(coverage, confidence) if not coverage.empty else {"ratio": math.nan, "n_datasets": 0}
    gap = CLAIMED_SPEEDUP / total["ratio"] if total["ratio"] > 0 else math.nan
    rows = []

    def add(key, factor, source, kind, pooled=None, *, mxnet=math.nan, pytorch=math.nan, effect=math.nan, n=""):
        if pooled is not None:
            e = pooled["effect"]
            mxnet, pytorch, effect = pooled["mxnet_slowdown"]["ratio"], pooled["pytorch_slowdown"]["ratio"], e["ratio"]
            low, high = e["ci_low"], e["ci_high"]
            n = f"{pooled['n_trials']} trials a side, {pooled['n_datasets']} dataset(s)"
        else:
            low = high = math.nan
        share = math.log(effect) / math.log(gap) if effect > 0 and gap > 0 and gap != 1 else math.nan
        rows.append(dict(zip(FACTOR_COLUMNS, [key, factor, source, kind, n, mxnet, pytorch, effect, low, high, share])))

    if not trials.empty and "part" in trials:
        versions = _pooled_parts(trials, "versions", confidence)
        if versions:
            envs = ", ".join(sorted(set(trials.loc[trials.part == "versions", "env"].dropna())))
            add("versions", f"the post's library versions ({envs})", "versions part, 100 x 50 trials", "measured",
                versions)  # fmt: skip
        onednn = _pooled_parts(trials, "onednn", confidence)
        if onednn:
            add("onednn_off", "oneDNN off in both frameworks", "variants part, 100 x 50 trials", "measured", onednn)
    if not contention.empty:
        for (threads, load), _ in contention.groupby(["threads", "background_load"]):
            if (threads, load) == (baseline, BASELINE_LOAD):
                continue
            pooled = pooled_condition(contention, int(threads), int(load), baseline, confidence)
            if pooled:
                add(f"threads_{threads}" + (f"_load_{load}" if load else ""),
                    condition_label(int(threads), int(load), baseline), "contention part, 3 x 50 trials", "measured",
                    pooled)  # fmt: skip
    for name, other in (other_cpus or {}).items():
        pooled = pooled_cpu(coverage, other, confidence) if not coverage.empty else None
        if pooled:
            add(f"cpu_{name.replace(' ', '_').replace('/', '_')}", f"the {name} CPU (its own trials, both frameworks)",
                "coverage part on that CPU, 4 x 50 trials", "measured", pooled)  # fmt: skip
    if not coverage.empty:
        table = comparison(coverage)
        archive = archive_estimate(table)
        if archive["n_modelled"] and total["ratio"] > 0:
            add("unstaged_datasets", f"the post's {archive['n_modelled']} datasets not staged here (longer windows)",
                "window line over the coverage part", "modelled", effect=archive["ratio"] / total["ratio"],
                n=f"{archive['n_datasets']} datasets")  # fmt: skip
        s = against_chart_summary(against_chart(table, chart()))
        if s["n_measured"]:
            add("post_machine", "the post's machine, builds and anything else its bars hold (not measurable here)",
                "the post's chart over our quiet per-batch costs", "inferred",
                mxnet=s["post_over_ours_mxnet"], pytorch=s["post_over_ours_pytorch"],
                effect=s["post_over_ours_mxnet"] / s["post_over_ours_pytorch"],
                n=f"{s['n_measured']} charted datasets")  # fmt: skip
        for name, other in (other_cpus or {}).items():
            s = against_chart_summary(against_chart(comparison(other), chart()))
            if s["n_measured"]:
                add(f"post_machine_{name.replace(' ', '_').replace('/', '_')}",
                    f"the post's machine beyond the {name} CPU (not measurable here)",
                    "the post's chart over that CPU's per-batch costs", "inferred",
                    mxnet=s["post_over_ours_mxnet"], pytorch=s["post_over_ours_pytorch"],
                    effect=s["post_over_ours_mxnet"] / s["post_over_ours_pytorch"],
                    n=f"{s['n_measured']} charted datasets")  # fmt: skip
    return pd.DataFrame(rows, columns=FACTOR_COLUMNS), {**total, "gap": gap}


def load(profile: str, overrides: dict | None = None, store: ResultsStore | None = None) -> dict:
    """Everything the notebook, README and post show of the conditions, from one computation."""
    trials = load_trials(profile, overrides, store, parts=None)
    coverage = cost_rows(profile, overrides, store)
    contention = contention_rows(profile, overrides, store)
    baseline = baseline_threads(profile, overrides)
    other_cpus = {}
    for c in stored_conditions(store or ResultsStore.open_read(results_path()), STUDY):
        if c.named and c.fp_mode == DEFAULT:
            rows = cost_rows(profile, {**(overrides or {}), **c.overrides()}, store)
            if not rows.empty:
                other_cpus[c.cpu_name] = rows
    factors, total = factor_table(trials, coverage, contention, baseline, other_cpus=other_cpus)
    return {
        "rows": contention,
        "conditions": conditions_table(contention, baseline),
        "factors": factors,
        "total": total,
        "baseline": baseline,
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m fwbench.analysis.deepar_conditions --profile paper -o results/paper/deepar_gap_factors.csv``:
    the factor table, and beside it (``..._conditions.csv``) the contention part per dataset and condition."""
    import argparse

    parser = argparse.ArgumentParser(description="what explains B's gap to the post: the factor table")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--store", default=None, help="default: FWBENCH_RESULTS")
    args = parser.parse_args(argv)
    store = ResultsStore.open_read(args.store) if args.store else None
    result = load(args.profile, store=store)
    if result["factors"].empty:
        print(f"no factor of B's gap measured in profile {args.profile!r}: {args.output} not written")
        return 0
    result["factors"].to_csv(args.output, index=False, float_format="%.6g")
    beside = args.output.removesuffix(".csv").removesuffix("_factors") + "_conditions.csv"
    result["conditions"].to_csv(beside, index=False, float_format="%.6g")
    print(f"wrote {len(result['factors'])} factors to {args.output}, {len(result['conditions'])} rows to {beside}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
