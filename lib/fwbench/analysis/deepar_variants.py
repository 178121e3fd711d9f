"""Where B's ratio comes from, measured on this CPU.

- ``variants_table``: the DeepAR variants part (1 thread, and oneDNN off in both frameworks; ``studies.deepar``'s
  ``variants_part``) set against the main part's trials of the same seeds. Read with
  ``analysis.deepar.load_trials(..., parts=None)``; the variants never enter B or the accuracy tables.
- ``versions_table``: the post's library versions (``studies.deepar``'s ``versions_part``: the main part's configs
  run again in the ``gluonts-0.13`` environment) beside the main part: per dataset, the MXNet / PyTorch training
  ratio under each environment. Rows of two environments meet only in this table, never in one ratio.
- ``window_model`` / ``post_ratio_from_windows``: how much of the post's 4.5 the window length explains. Per
  framework, training seconds per batch as a line in the unrolled window (context + prediction length), fitted on
  the main part's trials; summed over the windows of the post's datasets (every one trains the same 100 x 50
  batches), it predicts the post's total training-time ratio *on this CPU*. The percentile-bootstrap CI resamples
  the trials of each framework; datasets whose window lies outside the fitted range are counted (extrapolated).
  What the prediction leaves between itself and 4.5 is what this machine cannot reproduce: the post's CPU, its
  builds, its library versions, its thread count.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..data import monash
from ..published.deepar2024 import post_ratio
from .deepar import reference_arms

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


def variants_markdown(table: pd.DataFrame) -> str:
    """``variants_table`` as Markdown, with what it can and cannot say."""
    if table.empty:
        return "_No variant trials (1 thread, oneDNN off) stored for this profile._"
    lines = [
        "| dataset (window) | setting | seeds | MXNet train | PyTorch train | MXNet / PyTorch train | "
        "train + forecast | MXNet vs its main | PyTorch vs its main |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.dataset} ({r.window}) | {r.setting} | {r.n_seeds} | {r.mxnet_train_s:.0f} s | "
            f"{r.torch_train_s:.0f} s | {r.train_ratio:.2f} | {r.total_ratio:.2f} | {r.mxnet_vs_main:.2f} | "
            f"{r.torch_vs_main:.2f} |"
        )
    spread = table.groupby("dataset").seed_spread.first()
    note = ", ".join(f"{d} {100 * v:.0f} %" for d, v in spread.items() if not np.isnan(v))
    lines += [
        "",
        "One trial per arm, setting and seed (no CI). The run-to-run yardstick is the main part's "
        f"spread over seeds (largest max/min - 1 per arm): {note or 'n/a (one seed)'}; a change smaller "
        "than that is not told apart from noise.",
    ]
    return "\n".join(lines)


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


def versions_markdown(table: pd.DataFrame) -> str:
    """``versions_table`` as Markdown: per dataset, the MXNet / PyTorch training ratio under each environment."""
    if table.empty:
        return "_No trials of the versions part (the post's gluonts 0.13.3) stored for this profile._"
    lines = [
        "| dataset (window) | environment | seeds | MXNet train | PyTorch train | MXNet / PyTorch train |",
        "|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.dataset} ({r.window}) | {r.env} | {r.n_seeds} | {r.mxnet_train_s:.1f} s | "
            f"{r.torch_train_s:.1f} s | {r.train_ratio:.2f} |"
        )
    lines += ["", "Each ratio is within one environment; `fwbench envs` lists what each one pins."]
    return "\n".join(lines)


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


def post_ratio_from_windows(trials: pd.DataFrame, windows: list[int], n_boot: int = 2000, seed: int = 0) -> dict:
    """The post's total MXNet / PyTorch training-time ratio predicted on this CPU from ``window_model`` over the
    post's dataset ``windows`` (the same batches for each), with a percentile-bootstrap 95 % CI (trials resampled
    within each framework). NaN when a framework has fewer than 2 windows stored."""
    mx, pt = reference_arms()
    frame = _per_batch(trials)
    sides = {arm: frame[frame.arm == arm] for arm in (mx, pt)}
    w = np.asarray(windows, float)
    low, high = (float(frame.window.min()), float(frame.window.max())) if len(frame) else (math.nan, math.nan)
    out = {
        "ratio": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "n_datasets": len(windows),
        "n_outside": int(((w < low) | (w > high)).sum()) if len(frame) else len(windows),
        "fitted_windows": (low, high),
        "post_windows": (float(w.min()), float(w.max())) if len(w) else None,
    }
    if any(side.window.nunique() < 2 for side in sides.values()) or not len(w):
        return out

    def ratio(fits) -> float:
        totals = [np.maximum(a + b * w, 0.0).sum() for a, b in fits]
        return float(totals[0] / totals[1]) if totals[1] > 0 else math.nan

    out["ratio"] = ratio([_fit(sides[mx]), _fit(sides[pt])])
    rng, draws = np.random.default_rng(seed), []
    for _ in range(n_boot):
        resampled = [side.iloc[rng.integers(0, len(side), len(side))] for side in (sides[mx], sides[pt])]
        if all(r.window.nunique() >= 2 for r in resampled):
            draws.append(ratio([_fit(r) for r in resampled]))
    if len(draws) >= n_boot // 2:
        out["ci_low"], out["ci_high"] = (float(q) for q in np.nanpercentile(draws, [2.5, 97.5]))
    return out


def post_ratio_markdown(prediction: dict, post_ratio: float, model: dict) -> str:
    """What the window length explains of the post's ratio, in a few sentences."""
    if math.isnan(prediction["ratio"]):
        return "_Too few windows stored to fit the window model (each framework needs trials on 2 windows or more)._"
    mx, pt = reference_arms()
    (a_mx, b_mx), (a_pt, b_pt) = model[mx], model[pt]
    ci = (
        f" (95 % CI {prediction['ci_low']:.2f}-{prediction['ci_high']:.2f})"
        if not math.isnan(prediction["ci_low"])
        else " (no CI)"
    )
    low, high = prediction["fitted_windows"]
    ratio = prediction["ratio"]
    rest = (
        f"the window length explains a ratio of {ratio:.2f}, and a factor of {post_ratio / ratio:.1f} is left "
        "to what the window does not explain: the thread count and the oneDNN build are measured below (Threads "
        "and oneDNN); the post's CPU and library versions cannot be measured here"
        if ratio < post_ratio
        else "the window length alone accounts for the post's ratio on this CPU"
    )
    return (
        f"Seconds per training batch on this CPU: MXNet {1e3 * a_mx:.1f} ms + {1e3 * b_mx:.2f} ms x window, "
        f"PyTorch {1e3 * a_pt:.1f} ms + {1e3 * b_pt:.2f} ms x window (fitted on windows {low:.0f}-{high:.0f}). "
        f"Summed over the windows of the post's {prediction['n_datasets']} datasets, this predicts a total "
        f"training-time ratio of **{ratio:.2f}**{ci} on this CPU, against the post's {post_ratio:.1f}: {rest}. "
        f"{prediction['n_outside']} of the post's windows lie outside the fitted range (up to "
        f"{prediction['post_windows'][1]:.0f} steps): that part is extrapolated."
    )


def post_windows() -> list[int]:
    """The unrolled windows (context + prediction length) of the 2024 post's datasets that have a Monash lag."""
    infos = [monash.info(name) for name in monash.names(in_2024_post=True)]
    return [i.context_length + i.horizon for i in infos if i.context_length is not None]


def window_explanation(trials: pd.DataFrame) -> str:
    """``post_ratio_markdown`` for the main-part ``trials`` against the post's own ratio."""
    return post_ratio_markdown(post_ratio_from_windows(trials, post_windows()), post_ratio(), window_model(trials))
