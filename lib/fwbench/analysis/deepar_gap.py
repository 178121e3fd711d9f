"""Where the DeepAR time goes (the ``gap`` profile's questions), from the trials of ``fwbench.analysis.deepar``:
training split into data pipeline, network steps and setup; cProfile shares by module; what hybridizing MXNet's
training and prediction networks buys; and the prose that reads them. "MXNet" and "PyTorch" are the study's
reference arms; arms, labels and what each MXNet arm hybridizes come from the study (``get_study``,
``fwbench.studies.deepar_trial.hybridization``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import trial_ratio_ci
from ..studies import get_study
from ..studies.deepar_trial import hybridization
from . import arm_order
from .deepar import STUDY, reference_arms

BREAKDOWN_PHASES = ["data_pipeline", "model_code", "trainer_loop", "framework", "other"]


def breakdown_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Where the time goes, per dataset x arm (trials run with ``breakdown``): training split into the data
    pipeline alone (same number of batches), the epochs' remainder (network step: forward, backward, update), and
    the fit overhead outside the epochs (setup, checkpointing); plus prediction; and the cProfile own-time shares
    of one profiled training epoch and of forecasting 32 windows."""
    if trials.empty or "data_time_s" not in trials:
        return pd.DataFrame()
    sub = trials[trials.data_time_s.notna()]
    if sub.empty:
        return pd.DataFrame()
    cols = ["train_time_s", "data_time_s", "fit_overhead_s", "predict_time_s"]
    sub = sub.assign(window=sub.context_length + sub.prediction_length)
    table = sub.groupby(["dataset", "arm", "window"])[cols].median()
    epochs_s = table.train_time_s - table.fit_overhead_s
    table["network_step_s"] = (epochs_s - table.data_time_s).clip(lower=0)
    table["share_data"] = table.data_time_s / table.train_time_s
    table["share_network_step"] = table.network_step_s / table.train_time_s
    table["share_fit_overhead"] = table.fit_overhead_s / table.train_time_s
    return table.reset_index()


def cprofile_table(trials: pd.DataFrame, part: str = "train") -> pd.DataFrame:
    """cProfile own-time share of each phase (``part``: ``train`` = one profiled epoch, ``predict`` = forecasting
    32 windows) per dataset x arm; phases as columns. cProfile inflates Python-heavy code, so read shares, not
    seconds."""
    prefix = f"cprofile_{part}_frac_"
    cols = [c for c in trials.columns if c.startswith(prefix)] if not trials.empty else []
    if not cols:
        return pd.DataFrame()
    table = trials.dropna(subset=cols).groupby(["dataset", "arm"])[cols].median()
    return table.rename(columns=lambda c: c.removeprefix(prefix)).reset_index()


def hybridize_effect(trials: pd.DataFrame) -> pd.DataFrame:
    """What hybridizing buys, per dataset: each other MXNet arm against the MXNet reference arm (gluonts' default:
    training hybridized, forecasting imperative), on the time of each network whose hybridization differs
    between the two (``hybridize_train``: ``train_time_s``; ``hybridize_predict``: ``predict_time_s``). The
    ratio is the arm with that network imperative over the arm with it hybridized (>1: hybridizing helps), with
    a 95 % CI over seeds (one trial each; ``trial_ratio_ci``)."""
    study, mx = get_study(STUDY), reference_arms()[0]
    others = [a.name for a in study.arms if a.framework == study.framework_of(mx) and a.name != mx]
    parts = (("training", "hybridize_train", "train_time_s"), ("forecasting", "hybridize_predict", "predict_time_s"))
    rows = []
    for dataset, g in trials.groupby("dataset") if not trials.empty else []:
        for arm in others:
            for part, key, metric in parts:
                if hybridization(arm)[key] == hybridization(mx)[key]:
                    continue
                num, den = (arm, mx) if hybridization(mx)[key] else (mx, arm)  # imperative / hybridized
                a = g.loc[g.arm == num, metric].to_numpy(float)
                b = g.loc[g.arm == den, metric].to_numpy(float)
                if a.size and b.size:
                    rows.append(
                        {
                            "dataset": dataset,
                            "arm": arm,
                            "baseline": mx,
                            "part": part,
                            "metric": metric,
                            "numerator": num,
                            "denominator": den,
                            **trial_ratio_ci(a, b),
                        }
                    )
    return pd.DataFrame(rows)


def _trend_text(ratio: pd.Series) -> str:
    """Whether the MXNet / PyTorch step ratio rises with the unrolled window, by Spearman rank correlation."""
    windows = ratio.index.get_level_values("window").to_numpy(float)
    if len(ratio) < 3 or len(set(windows)) < 3:
        return (
            "Too few window lengths here to tell how the ratio changes with the window (the `gap` profile has three)."
        )
    rho = float(pd.Series(ratio.to_numpy(float)).corr(pd.Series(windows), method="spearman"))
    if rho >= 0.8:
        return f"The ratio rises with the window (Spearman rank correlation {rho:.2f})."
    if rho <= -0.8:
        return f"The ratio falls as the window grows (Spearman rank correlation {rho:.2f})."
    return f"No consistent trend with the window in these trials (Spearman rank correlation {rho:.2f})."


def gap_markdown(trials: pd.DataFrame) -> str:
    """Prose on where the time goes, from ``breakdown_table`` and ``hybridize_effect``."""
    table = breakdown_table(trials)
    if table.empty:
        return "No trial of this profile recorded a time breakdown (profile option `breakdown`)."
    med = table.groupby("arm")[["share_data", "share_network_step", "share_fit_overhead"]].median()
    names, (mx, pt) = get_study(STUDY).labels(), reference_arms()
    lines = []
    for arm in arm_order(STUDY, med.index):
        r = med.loc[arm]
        lines.append(
            f"- **{names[arm]}**: of the training time, the data pipeline alone accounts for "
            f"{100 * r.share_data:.0f} %, the network steps (forward, backward, update) for "
            f"{100 * r.share_network_step:.0f} %, and setup outside the epochs for "
            f"{100 * r.share_fit_overhead:.0f} % (median over datasets)."
        )
    step = table.pivot_table(index=["dataset", "window"], columns="arm", values="network_step_s")
    if {mx, pt} <= set(step.columns):
        ratio = (step[mx] / step[pt]).replace([np.inf, -np.inf], np.nan).dropna().sort_index(level="window")
        if len(ratio):
            by_window = ", ".join(f"{r:.1f}x on {d} ({w} steps)" for (d, w), r in ratio.items())
            lines.append(
                f"- The network steps alone (training epochs minus the data pipeline) are "
                f"{ratio.median():.1f}x slower in MXNet (median over {len(ratio)} dataset(s)); by unrolled "
                f"window (context + prediction length): {by_window}. MXNet steps through LSTMCell/"
                "ZoneoutCell/ResidualCell once per time step; PyTorch runs the whole window in one fused "
                f"`nn.LSTM` call. {_trend_text(ratio)}"
            )
    pred = table.pivot_table(index="dataset", columns="arm", values="predict_time_s")
    if {mx, pt} <= set(pred.columns):
        pr = (pred[mx] / pred[pt]).dropna()
        if len(pr):
            lines.append(
                f"- Forecasting (100 sample paths, one network call per step of the horizon) is "
                f"{pr.median():.1f}x slower in MXNet's default, whose prediction network gluonts 0.17 runs "
                f"imperatively (median over {len(pr)} dataset(s))."
            )
    prof = cprofile_table(trials, "train")
    if not prof.empty:
        fw = prof.groupby("arm")[[c for c in BREAKDOWN_PHASES if c in prof]].median()
        for arm in arm_order(STUDY, fw.index):
            top = fw.loc[arm].sort_values(ascending=False)
            parts = ", ".join(f"{name.replace('_', ' ')} {100 * v:.0f} %" for name, v in top.items() if v >= 0.02)
            lines.append(
                f"- cProfile, {names[arm]}, one training epoch (own time by module, median over datasets): {parts}."
            )
    hyb = hybridize_effect(trials)
    if not hyb.empty:
        for (num, den, part), g in hyb.groupby(["numerator", "denominator", "part"], sort=False):
            lines.append(
                f"- {names[num]} / {names[den]}, {part}: {g.ratio.median():.2f}x (median over "
                f"{len(g)} dataset(s); >1 means hybridizing the {part} network speeds it up)."
            )
    return "\n".join(lines)
