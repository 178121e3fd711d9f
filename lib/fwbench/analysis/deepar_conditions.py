"""What explains the gap between B's ratio here and the post's (its totals' 4.46, stated as 4.5): every condition
measured, both frameworks alike, as its effect on the MXNet / PyTorch ratio.

- ``contention_rows``: the ``contention`` part's trials (``studies.deepar``: training only, at 1, 2, 4, 8 threads
  on an otherwise idle machine and at 2 threads beside one burner), one row each with its cost per batch (the
  median of its later epochs, as the coverage part's), the CPUs its training kept busy and the burner's share.
- ``conditions_table``: per dataset and condition, each framework's cost per batch (geometric mean over trials),
  its slowdown against its own baseline (the profile's threads, no load), the MXNet / PyTorch ratio and the
  condition's effect on it (ratio / baseline ratio), every interval over independent trials
  (``stats.log_contrast_ci``).
- ``factor_table``: one row per factor, each with the CPU model its trials ran on: the post's library versions
  (the versions part), oneDNN off (the variants part), each contention condition (pooled over the part's
  datasets, each weighted alike), each other CPU model, no thread setting and k runs at once (the post_conditions
  part), the post's datasets not staged here, the post's machine as its chart implies it (inferred, not
  measured), the best-fitting measured condition and the residual. Each with each framework's slowdown, the
  effect on the ratio with its CI, and the share of the gap it would close alone (log scale:
  ``log(effect) / log(post / B)``). The measured factors are not multiplied together: they are alternatives
  measured one at a time, not a decomposition (the last three rows chain: see ``factor_table``).

``factor_facts`` and ``contention_facts`` are what the pages read (the words are the templates'
``deepar_factors`` and ``deepar_contention``): each effect as a ``Quantity``, the measured factor that moves the
ratio most beside what the post's chart implies of its machine, and whether a framework stalled beside the load.

Decision: the post's per-dataset prediction is made under every measured condition (``deepar_prediction.predictions``),
each from its own trials; the chart's given datasets only rank them (``deepar_prediction.choose``), and what the
best-fitting one adds to the coverage part's whole-list prediction is a row of the factor table, with the residual
it leaves.

The variants and versions parts, and the window line of the main part's trials, measured on this CPU:

- ``variants_table``: the DeepAR variants part (1 thread, and oneDNN off in both frameworks; ``studies.deepar``'s
  ``variants_part``) set against the main part's trials of the same seeds. Read with
  ``analysis.deepar.load_trials(..., parts=None)``; the variants never enter B or the accuracy tables.
- ``versions_table``: the post's library versions (``studies.deepar``'s ``versions_part``: the main part's configs
  run again in the ``gluonts-0.13`` environment) beside the main part: per dataset, the MXNet / PyTorch training
  ratio under each environment. Rows of two environments meet only in this table, never in one ratio.
- ``window_model`` / ``window_facts``: per framework, training seconds per batch as a line in the unrolled
  window (context + prediction length), fitted on the main part's trials. It describes the windows it was
  fitted on; the post's whole list is predicted once, from the coverage part (``deepar_prediction``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..machines import CPU
from ..published.deepar2024 import CLAIMED_SPEEDUP, post_ratio
from ..quantity import Quantity
from ..stats import CONFIDENCE, log_contrast_ci
from ..studies import get_framework, get_study
from . import Results
from .cpu_models import Condition
from .deepar import STUDY, load_trials, reference_arms
from .deepar_coverage import DEFAULT_THREADS, cost_rows
from .deepar_prediction import (
    against_chart,
    against_chart_summary,
    archive_estimate,
    chart,
    comparison,
    prediction_conditions,
    predictions,
    sides,
    weighted_total,
)

# -- the variants and versions parts, the window line of the main part -------------------------------------------
VARIANT_LABELS = {
    "main": "main part ({threads} threads, oneDNN on)",
    "threads": "{threads} thread(s), oneDNN on",
    "onednn": "{threads} threads, oneDNN off",
}


def variants_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Where B's ratio comes from, measured here (``load_trials(..., parts=None)``): per dataset of the variants
    part and per setting (the main part's trials of the same seeds, 1 thread, oneDNN off), the median training
    seconds of each reference arm, the MXNet / PyTorch training and training + forecasting ratios, and each
    framework's training time against its own main-part time (>1: the setting is slower). ``seed_spread``: the
    largest max/min - 1 of the main part's training times over seeds per arm on that dataset, the run-to-run
    yardstick a setting's change should clear."""
    cols = [
        "dataset",
        "window",
        "setting",
        "part",
        "threads",
        "n_seeds",
        "mxnet_train_s",
        "torch_train_s",
        "train_ratio",
        "total_ratio",
        "mxnet_vs_main",
        "torch_vs_main",
        "seed_spread",
    ]
    if trials.empty or "part" not in trials:
        return pd.DataFrame(columns=cols)
    trials = trials[trials.part.isin(list(VARIANT_LABELS))]  # the versions part is another environment's
    if not (trials.part != "main").any():
        return pd.DataFrame(columns=cols)
    mx, pt = reference_arms()
    rows = []
    for dataset, g in trials.groupby("dataset"):
        variant_seeds = set(g.loc[g.part != "main", "seed"])
        if not variant_seeds:
            continue
        main = g[g.part == "main"]
        spread = max(
            (float(v.max() / v.min() - 1) for _, v in main.groupby("arm").train_time_s if len(v) > 1), default=np.nan
        )
        main = main[main.seed.isin(variant_seeds)]
        base = {arm: main.loc[main.arm == arm, "train_time_s"].median() for arm in (mx, pt)}
        for part in ("main", "threads", "onednn"):
            sub = g[g.part == part] if part != "main" else main
            if sub.empty:
                continue
            med = {arm: sub[sub.arm == arm][["train_time_s", "total_time_s"]].median() for arm in (mx, pt)}
            threads = int(sub.threads.iloc[0])
            rows.append(
                {
                    "dataset": dataset,
                    "window": int(g.window.iloc[0]),
                    "part": part,
                    "threads": threads,
                    "setting": VARIANT_LABELS[part].format(threads=threads),
                    "n_seeds": int(sub.seed.nunique()),
                    "mxnet_train_s": med[mx].train_time_s,
                    "torch_train_s": med[pt].train_time_s,
                    "train_ratio": med[mx].train_time_s / med[pt].train_time_s,
                    "total_ratio": med[mx].total_time_s / med[pt].total_time_s,
                    "mxnet_vs_main": med[mx].train_time_s / base[mx],
                    "torch_vs_main": med[pt].train_time_s / base[pt],
                    "seed_spread": spread,
                }
            )
    return pd.DataFrame(rows, columns=cols).sort_values(["window", "dataset"], kind="stable").reset_index(drop=True)


def variants_facts(table: pd.DataFrame) -> dict:
    """What the variants page shows (template ``deepar_variants``): the table and the main part's spread over seeds
    per dataset (the run-to-run yardstick)."""
    spread = table.groupby("dataset").seed_spread.first() if len(table) else pd.Series(dtype=float)
    return {"table": table, "spread": [(d, float(v)) for d, v in spread.items() if not np.isnan(v)]}


def versions_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per dataset with ``versions`` trials and per environment (``main``, then the versions part's): the median
    MXNet and PyTorch training seconds over the seeds both environments ran, and their ratio. Each ratio is taken
    within one environment (``load_trials(..., parts=None)``)."""
    cols = ["dataset", "window", "env", "n_seeds", "mxnet_train_s", "torch_train_s", "train_ratio"]
    if trials.empty or "part" not in trials or not (trials.part == "versions").any():
        return pd.DataFrame(columns=cols)
    mx, pt = reference_arms()
    rows = []
    for dataset, g in trials[trials.part.isin(["main", "versions"])].groupby("dataset"):
        seeds = set(g.loc[g.part == "versions", "seed"]) & set(g.loc[g.part == "main", "seed"])
        for env, sub in g[g.seed.isin(seeds)].groupby("env", sort=False):
            med = {arm: sub.loc[sub.arm == arm, "train_time_s"].median() for arm in (mx, pt)}
            rows.append(
                {
                    "dataset": dataset,
                    "window": int(g.window.iloc[0]),
                    "env": env,
                    "n_seeds": int(sub.seed.nunique()),
                    "mxnet_train_s": med[mx],
                    "torch_train_s": med[pt],
                    "train_ratio": med[mx] / med[pt],
                }
            )
    table = pd.DataFrame(rows, columns=cols)
    table["main_first"] = table.env != "main"
    table = table.sort_values(["window", "dataset", "main_first"], kind="stable").drop(columns="main_first")
    return table.reset_index(drop=True)


def _per_batch(trials: pd.DataFrame) -> pd.DataFrame:
    main = trials[trials.part == "main"] if "part" in trials else trials
    return main.assign(per_batch_s=main.train_time_s / (main.epochs * main.num_batches_per_epoch))


def _fit(frame: pd.DataFrame) -> tuple[float, float]:
    """(intercept, slope) of seconds per batch against the window, least squares."""
    slope, intercept = np.polyfit(frame.window.astype(float), frame.per_batch_s.astype(float), 1)
    return float(intercept), float(slope)


def window_model(trials: pd.DataFrame) -> dict:
    """Per reference arm: seconds per training batch = intercept + slope x window, from the main part's trials
    (``load_trials``); needs 2 windows or more per arm."""
    frame = _per_batch(trials)
    out = {}
    for arm in reference_arms():
        mine = frame[frame.arm == arm]
        if mine.window.nunique() >= 2:
            out[arm] = _fit(mine)
    return out


def window_facts(trials: pd.DataFrame) -> dict:
    """The per-batch line of each framework, fitted on the main-part ``trials`` (template ``deepar_window``): each
    line, the windows it was fitted on and the trials' CPU. Decision: the post's whole list is predicted once, by
    the coverage part (``deepar_prediction.archive_estimate``, claim B's context part): this line predicts nothing
    beyond the windows it was fitted on."""
    mx, pt = reference_arms()
    model = window_model(trials)
    frame = _per_batch(trials)
    nan = (math.nan, math.nan)
    return {
        "mx_line": model.get(mx, nan),
        "pt_line": model.get(pt, nan),
        "fitted_windows": (int(frame.window.min()), int(frame.window.max())) if len(frame) else None,
        "n_datasets": int(frame.dataset.nunique()) if len(frame) else 0,
        "cpu": cpu_names(frame),
    }


def cpu_names(rows: pd.DataFrame) -> str:
    """'AMD EPYC 25/17': the CPU model names of the rows' CPU ids (column ``machines.CPU``), as the pages print
    them; empty where the rows have none."""
    cpus = rows[CPU].dropna().unique() if CPU in rows else ()
    return ", ".join(sorted({Condition(str(c)).cpu_name for c in cpus}))


# -- the contention part and the factor table ---------------------------------------------------------------------
CONTENTION = "contention"
BASELINE_LOAD = 0


def contention_rows(results: Results) -> pd.DataFrame:
    """One row per finished contention trial (``deepar_coverage.COST_COLUMNS``)."""
    return cost_rows(results, part=CONTENTION)


def baseline_threads(results: Results) -> int:
    """The profile's thread count: the contention part's baseline (with no background load)."""
    return int(get_study(STUDY).resolve(results.profile, results.overrides_of(STUDY))["threads"])


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


FACTOR_COLUMNS = ["key", "factor", "cpu", "source", "kind", "n", "mxnet_slowdown", "pytorch_slowdown", "effect",
                  "effect_low", "effect_high", "gap_share"]  # fmt: skip


def pooled_against(coverage: pd.DataFrame, other: pd.DataFrame, confidence: float = CONFIDENCE):
    """A condition's effect: the trials of ``other`` (another CPU model's coverage part, or a post_conditions
    group) against ``coverage`` (the base condition's cost rows) on every dataset both ran, each dataset weighted
    alike (``pooled_condition``'s numbers)."""
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
    post: dict | None = None,
    measured_conditions: list | None = None,
) -> tuple[pd.DataFrame, dict]:
    """(the factor table, B's judged subset total it is read against). ``trials``: ``load_trials(...,
    parts=None)``; ``coverage``/``contention``: the parts' cost rows; ``other_cpus``: ``{CPU model name: its
    coverage cost rows}`` for each other CPU model measured (a measured factor each, and the post's machine
    inferred again beyond it). ``kind``: measured (with a CI where every group has 2 or more trials), modelled, or
    inferred from the post's chart. ``cpu``: the CPU model the row's trials ran on. ``post``:
    ``deepar_prediction.predictions`` and ``measured_conditions`` its ``prediction_conditions``: each CPU's default
    threads (one run, no thread setting, against its coverage part) and each k of runs at once (against one run
    with default threads) as measured factors; what the chosen condition adds to the whole list's prediction
    (``chosen``), and what stays unexplained (``residual``: the post's ratio over the chosen prediction).

    The gap is the post's ratio from its totals (``published.deepar2024.post_ratio``, 4.46; it states 4.5) over B.
    Decision: three rows chain from B to the post and share nothing: the datasets not staged here (the coverage
    part's whole-list prediction over B), the chosen condition (its whole-list prediction over the coverage part's,
    both on the same 41 datasets with the same window-line fill-in, so the unstaged datasets are not counted
    twice) and the residual (the post over the chosen prediction). Their shares add up to the whole gap."""
    total = weighted_total(coverage, confidence) if not coverage.empty else {"ratio": math.nan, "n_datasets": 0}
    gap = post_ratio() / total["ratio"] if total["ratio"] > 0 else math.nan
    rows = []

    def add(key, factor, cpu, source, kind, pooled=None, *, mxnet=math.nan, pytorch=math.nan, effect=math.nan, n=""):
        if pooled is not None:
            e = pooled["effect"]
            mxnet, pytorch, effect = pooled["mxnet_slowdown"]["ratio"], pooled["pytorch_slowdown"]["ratio"], e["ratio"]
            low, high = e["ci_low"], e["ci_high"]
            n = f"{pooled['n_trials']} trials a side, {pooled['n_datasets']} dataset(s)"
        else:
            low = high = math.nan
        share = math.log(effect) / math.log(gap) if effect > 0 and gap > 0 and gap != 1 else math.nan
        values = [key, factor, cpu, source, kind, n, mxnet, pytorch, effect, low, high, share]
        rows.append(dict(zip(FACTOR_COLUMNS, values)))

    if not trials.empty and "part" in trials:
        versions = _pooled_parts(trials, "versions", confidence)
        if versions:
            envs = ", ".join(sorted(set(trials.loc[trials.part == "versions", "env"].dropna())))
            cpu = cpu_names(trials[trials.part == "versions"])
            add("versions", f"the post's library versions ({envs})", cpu, "versions part, 100 x 50 trials", "measured",
                versions)  # fmt: skip
        onednn = _pooled_parts(trials, "onednn", confidence)
        if onednn:
            add("onednn_off", "oneDNN off in both frameworks", cpu_names(trials[trials.part == "onednn"]),
                "variants part, 100 x 50 trials", "measured", onednn)  # fmt: skip
    if not contention.empty:
        for (threads, load), _ in contention.groupby(["threads", "background_load"]):
            if (threads, load) == (baseline, BASELINE_LOAD):
                continue
            pooled = pooled_condition(contention, int(threads), int(load), baseline, confidence)
            if pooled:
                add(f"threads_{threads}" + (f"_load_{load}" if load else ""),
                    condition_label(int(threads), int(load), baseline), cpu_names(contention),
                    "contention part, 3 x 50 trials", "measured", pooled)  # fmt: skip
    for name, other in (other_cpus or {}).items():
        pooled = pooled_against(coverage, other, confidence) if not coverage.empty else None
        if pooled:
            add(f"cpu_{name.replace(' ', '_').replace('/', '_')}", f"the {name} CPU (its own trials, both frameworks)",
                name, "coverage part on that CPU, 4 x 50 trials", "measured", pooled)  # fmt: skip
    by_cpu: dict = {}
    for c, base, own in measured_conditions or []:
        by_cpu.setdefault(c.cpu, {})[(c.trials_at_once, c.threads)] = (c, base, own)
    for found in by_cpu.values():
        alone = found.get((1, DEFAULT_THREADS))
        if alone is not None:
            c, base, own = alone
            pooled = pooled_against(base, own, confidence)
            if pooled:
                epochs = [int(r.epochs.max()) for r in (own, base)]
                add(f"default_threads_{c.key}", "no thread setting (the libraries' default threads), and the "
                    f"post_conditions part's harness ({epochs[0]} epochs) against the coverage part's ({epochs[1]} "
                    "epochs): threads and harness both differ", c.cpu_name,
                    "post_conditions part against the coverage part", "measured", pooled)  # fmt: skip
        for (k, threads), (c, _, own) in sorted(found.items()):
            if k == 1 or alone is None or threads != DEFAULT_THREADS:
                continue
            pooled = pooled_against(alone[2], own, confidence)
            if pooled:
                add(f"at_once_{c.key}", f"{k} runs at once against one, over {pooled['n_datasets']} datasets, the "
                    "libraries' default threads", c.cpu_name, "post_conditions part, 3 x 50 trials", "measured",
                    pooled)  # fmt: skip
    archive = {"ratio": math.nan}
    if not coverage.empty:
        table = comparison(coverage)
        archive = archive_estimate(table)
        if archive["n_modelled"] and total["ratio"] > 0:
            staged = table.loc[table.measured, "window"]
            modelled = table.loc[~table.measured, "window"]
            beyond = int(((modelled < staged.min()) | (modelled > staged.max())).sum())
            add("unstaged_datasets", f"the post's {archive['n_modelled']} datasets not staged here ({beyond} with "
                f"windows beyond the staged {staged.min()}-{staged.max()})", cpu_names(coverage),
                "window line over the coverage part", "modelled", effect=archive["ratio"] / total["ratio"],
                n=f"{archive['n_datasets']} datasets")  # fmt: skip
        s = against_chart_summary(against_chart(table, chart()))
        if s["n_measured"]:
            add("post_machine", "the post's machine, builds and anything else its bars hold (not measurable here)",
                cpu_names(coverage), "the post's chart over our quiet per-batch costs", "inferred",
                mxnet=s["post_over_ours_mxnet"], pytorch=s["post_over_ours_pytorch"],
                effect=s["post_over_ours_mxnet"] / s["post_over_ours_pytorch"],
                n=f"{s['n_measured']} charted datasets")  # fmt: skip
        for name, other in (other_cpus or {}).items():
            s = against_chart_summary(against_chart(comparison(other), chart()))
            if s["n_measured"]:
                add(f"post_machine_{name.replace(' ', '_').replace('/', '_')}",
                    f"the post's machine beyond the {name} CPU (not measurable here)", name,
                    "the post's chart over that CPU's per-batch costs", "inferred",
                    mxnet=s["post_over_ours_mxnet"], pytorch=s["post_over_ours_pytorch"],
                    effect=s["post_over_ours_mxnet"] / s["post_over_ours_pytorch"],
                    n=f"{s['n_measured']} charted datasets")  # fmt: skip
    chosen = post["chosen"] if post else None
    if chosen is not None and archive["ratio"] > 0:
        fit = post["fits"].set_index("key").loc[chosen]
        condition = post["conditions"][chosen]
        estimate = archive_estimate(post["tables"][chosen])
        add("chosen", f"the best-fitting measured condition: {condition.label} (the chart's {int(fit.n)} given "
            "datasets rank them), over the coverage part's prediction", condition.cpu_name,
            "both predictions over the post's whole list", "predicted", effect=estimate["ratio"] / archive["ratio"],
            n=f"{estimate['n_datasets']} datasets")  # fmt: skip
        add("residual", f"what the best-fitting condition leaves unexplained (the post's totals' {post_ratio():.3g} "
            "over its prediction)", condition.cpu_name, "the post's totals over the chosen prediction", "residual",
            effect=post_ratio() / estimate["ratio"])  # fmt: skip
    return pd.DataFrame(rows, columns=FACTOR_COLUMNS), {**total, "gap": gap}


def effect_quantity(row) -> Quantity:
    """A factor's effect on B's ratio as a named quantity (``deepar.gap_factor.<key>``): one value on every page,
    measured on its row's CPU model by its row's part (the table's ``cpu`` and ``from`` columns print both)."""
    conditions = {k: v for k, v in (("cpu", row.cpu), ("part", row.source)) if v}
    return Quantity(f"deepar.gap_factor.{row.key}", row.effect, row.effect_low, row.effect_high, n=row.n,
                    label=row.factor, conditions=conditions)  # fmt: skip


def factor_facts(table: pd.DataFrame, total: dict) -> dict:
    """What the factor table's page shows: the factors (each effect as a ``Quantity``, ``effect_q``), B and the
    gap (``total``), the measured factor that moves the ratio most (``top``, None when none is measured) and the
    post's machine as its chart implies it (``post_machine``), with whether both slow MXNet more
    (``same_pattern``). A reading of the table, not a fit."""
    factors = table.assign(effect_q=[effect_quantity(r) for r in table.itertuples()]) if len(table) else table
    out = {"factors": factors, "total": total, "claimed": post_ratio(), "stated": CLAIMED_SPEEDUP, "top": None,
           "post_machine": None, "same_pattern": False}  # fmt: skip
    if table.empty:
        return out
    measured = factors[(factors.kind == "measured") & np.isfinite(factors.effect.astype(float))]
    if measured.empty:
        return out
    top = measured.loc[measured.effect.map(lambda e: abs(math.log(e))).idxmax()]
    post = factors[factors.key == "post_machine"]
    p = post.iloc[0] if len(post) else None
    same = p is not None and (top.mxnet_slowdown > top.pytorch_slowdown) == (p.mxnet_slowdown > p.pytorch_slowdown)
    return {**out, "top": top, "post_machine": p, "same_pattern": bool(same)}


def contention_facts(table: pd.DataFrame, rows: pd.DataFrame | None = None) -> dict:
    """What the contention part's page shows: ``conditions_table`` and, beside the background load, each
    framework's slowest later epoch per batch against its median (``stalls``: a stall of seconds would show)."""
    stalls = []
    loaded = rows[rows.background_load > 0] if rows is not None and not rows.empty else pd.DataFrame()
    for arm in reference_arms() if len(loaded) else ():
        g = loaded[loaded.arm == arm]
        if len(g):
            framework = get_framework(get_study(STUDY).arm(arm).framework).label
            stalls.append({"framework": framework, "worst": float(g.c_batch_worst.max()),
                           "median": float(g.c_batch.median())})  # fmt: skip
    return {"table": table, "stalls": stalls}


def load(results: Results) -> dict:
    """Everything the notebook, README and post show of the conditions, from one computation (kept in
    ``results``: every page of one build reads the same)."""
    return results.frame((STUDY, "conditions"), lambda: _load(results))


def _load(results: Results) -> dict:
    trials = load_trials(results, parts=None)
    contention = contention_rows(results)
    baseline = baseline_threads(results)
    # every CPU's coverage rows are read once, by prediction_conditions: the unnamed condition's is B's base, each
    # named CPU's a measured factor of its own
    measured = prediction_conditions(results)
    bases = [(c, cov) for c, cov, own in measured if own is cov]
    coverage = next((cov for c, cov in bases if not c.named), None)
    coverage = cost_rows(results) if coverage is None else coverage
    other_cpus = {c.cpu_name: cov for c, cov in bases if c.named}
    post = predictions(results, measured=measured)
    factors, total = factor_table(
        trials, coverage, contention, baseline, other_cpus=other_cpus, post=post, measured_conditions=measured
    )
    return {
        "rows": contention,
        "conditions": conditions_table(contention, baseline),
        "factors": factors,
        "total": total,
        "baseline": baseline,
        "post": post,
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
    result = load(Results.open(args.profile, path=args.store))
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
