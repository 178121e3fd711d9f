"""Where B's ratio comes from, measured on this CPU: the DeepAR variants part (1 thread, and oneDNN off in both
frameworks; ``studies.deepar``'s ``variants_part``) set against the main part's trials of the same seeds. Read
with ``analysis.deepar.load_trials(..., parts=None)``; the variants never enter B or the accuracy tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .deepar import reference_arms

VARIANT_LABELS = {"main": "main part ({threads} threads, oneDNN on)", "threads": "{threads} thread(s), oneDNN on",
                  "onednn": "{threads} threads, oneDNN off"}


def variants_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Where B's ratio comes from, measured here (``load_trials(..., parts=None)``): per dataset of the variants
    part and per setting (the main part's trials of the same seeds, 1 thread, oneDNN off), the median training
    seconds of each reference arm, the MXNet / PyTorch training and training + forecasting ratios, and each
    framework's training time against its own main-part time (>1: the setting is slower). ``seed_spread``: the
    largest max/min - 1 of the main part's training times over seeds per arm on that dataset, the run-to-run
    yardstick a setting's change should clear."""
    cols = ["dataset", "window", "setting", "part", "threads", "n_seeds", "mxnet_train_s", "torch_train_s",
            "train_ratio", "total_ratio", "mxnet_vs_main", "torch_vs_main", "seed_spread"]
    if trials.empty or "part" not in trials or not (trials.part != "main").any():
        return pd.DataFrame(columns=cols)
    mx, pt = reference_arms()
    rows = []
    for dataset, g in trials.groupby("dataset"):
        variant_seeds = set(g.loc[g.part != "main", "seed"])
        if not variant_seeds:
            continue
        main = g[g.part == "main"]
        spread = max((float(v.max() / v.min() - 1) for _, v in main.groupby("arm").train_time_s if len(v) > 1),
                     default=np.nan)
        main = main[main.seed.isin(variant_seeds)]
        base = {arm: main.loc[main.arm == arm, "train_time_s"].median() for arm in (mx, pt)}
        for part in ("main", "threads", "onednn"):
            sub = g[g.part == part] if part != "main" else main
            if sub.empty:
                continue
            med = {arm: sub[sub.arm == arm][["train_time_s", "total_time_s"]].median() for arm in (mx, pt)}
            threads = int(sub.threads.iloc[0])
            rows.append({"dataset": dataset, "window": int(g.window.iloc[0]), "part": part, "threads": threads,
                         "setting": VARIANT_LABELS[part].format(threads=threads),
                         "n_seeds": int(sub.seed.nunique()),
                         "mxnet_train_s": med[mx].train_time_s, "torch_train_s": med[pt].train_time_s,
                         "train_ratio": med[mx].train_time_s / med[pt].train_time_s,
                         "total_ratio": med[mx].total_time_s / med[pt].total_time_s,
                         "mxnet_vs_main": med[mx].train_time_s / base[mx],
                         "torch_vs_main": med[pt].train_time_s / base[pt],
                         "seed_spread": spread})
    return pd.DataFrame(rows, columns=cols).sort_values(["window", "dataset"], kind="stable").reset_index(drop=True)


def variants_markdown(table: pd.DataFrame) -> str:
    """``variants_table`` as Markdown, with what it can and cannot say."""
    if table.empty:
        return "_No variant trials (1 thread, oneDNN off) stored for this profile._"
    lines = ["| dataset (window) | setting | seeds | MXNet train | PyTorch train | MXNet / PyTorch train | "
             "train + forecast | MXNet vs its main | PyTorch vs its main |", "|---|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.dataset} ({r.window}) | {r.setting} | {r.n_seeds} | {r.mxnet_train_s:.0f} s | "
                     f"{r.torch_train_s:.0f} s | {r.train_ratio:.2f} | {r.total_ratio:.2f} | {r.mxnet_vs_main:.2f} | "
                     f"{r.torch_vs_main:.2f} |")
    spread = table.groupby("dataset").seed_spread.first()
    note = ", ".join(f"{d} {100 * v:.0f} %" for d, v in spread.items() if not np.isnan(v))
    lines += ["", "One trial per arm, setting and seed (no CI). The run-to-run yardstick is the main part's "
              f"spread over seeds (largest max/min - 1 per arm): {note or 'n/a (one seed)'}; a change smaller "
              "than that is not told apart from noise."]
    return "\n".join(lines)
