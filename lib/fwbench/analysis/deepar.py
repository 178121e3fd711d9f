"""Tables of the DeepAR / Monash study, computed from the results store (restricted to one profile's trials).

The 2024 post compared total *training* time (395,807 s vs 88,756 s): the headline ratio and the per-dataset ratios
here are of ``train_time_s`` (the whole ``estimator.train`` call), with training + forecasting (``total_time_s``,
adding ``predict_time_s``: forecasting every test window) shown beside them. Per dataset and arm the median over
seeds is used; ratios MXNet / PyTorch are geometric means over seeds (one trial each) with a 95 % CI over them
(``stats.trial_ratio_ci``; NaN with one seed). Accuracy is over
the series where each metric is finite (``n_series_dropped``: series left out of MASE, zero seasonal-naive scale).
Trials that trained fewer epochs than set (GluonTS' MXNet learning-rate floor) are flagged (``stopped_early``).
"MXNet" and "PyTorch" are the study's reference arms (``get_study("deepar").reference_arm``); arm order, labels and
frameworks come from its arm table, the 2024 post's totals from ``fwbench.published.deepar2024``.

Where the time goes (the ``gap`` profile's questions; the section "Where the time goes" below): training split
into data pipeline, network steps and setup; cProfile shares by module; what hybridizing MXNet's training and
prediction networks buys (what each MXNet arm hybridizes: ``fwbench.studies.deepar_trial.hybridization``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..data import monash
from ..machines import CPU, NOT_RECORDED, cpu_model_of, one_cpu_model
from ..planning import plan
from ..published.deepar2024 import TOTAL_TRAIN_S, post_ratio
from ..quantity import Quantity
from ..stats import trial_ratio_ci
from ..studies import get_study
from ..studies.deepar_trial import hybridization
from . import Results, arm_order

STUDY = "deepar"
ACCURACY = ["MASE", "sMAPE", "mean_wQL"]
TIMES = ["train_time_s", "predict_time_s", "total_time_s"]


def reference_arms() -> tuple[str, str]:
    """(MXNet arm, PyTorch arm) standing for the frameworks in the 2024 post's comparison."""
    study = get_study(STUDY)
    return study.reference_arm("mxnet"), study.reference_arm("torch")


def load_trials(results: Results, parts: tuple[str, ...] | None = ("main",)) -> pd.DataFrame:
    """One row per finished trial of the profile: config, dataset provenance and every whole-trial value. Only
    the main part's trials by default (what B and the accuracy tables read); ``parts=None`` for every part
    (``variants_table``: 1 thread, oneDNN off; ``versions_table``: the ``versions`` part, run in another declared
    environment, column ``env``; a main-part trial's ``env`` is ``main``)."""
    return results.frame((STUDY, "trials", parts), lambda: _trials(results.values(STUDY), parts))


def _trials(long: pd.DataFrame, parts: tuple[str, ...] | None) -> pd.DataFrame:
    if long.empty:
        return pd.DataFrame()
    long = long[long.step == -1].copy()
    # rows stored before the variants part existed: the main part, oneDNN on
    defaults = (("config.part", "main"), ("config.onednn", True), ("config.threads", -1), ("config.env", "main"))
    for column, default in defaults:
        long[column] = long[column].fillna(default) if column in long else default
    if parts is not None:
        long = long[long["config.part"].isin(parts)]
    if long.empty:
        return pd.DataFrame()
    long[CPU] = long["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in long else NOT_RECORDED
    keys = {
        "trial_id": "trial_id",
        "config.dataset": "dataset",
        "config.arm": "arm",
        "config.seed": "seed",
        "config.epochs": "epochs",
        "config.num_batches_per_epoch": "num_batches_per_epoch",
        "config.context_length": "context_length",
        "config.prediction_length": "prediction_length",
        "config.part": "part",
        "config.threads": "threads",
        "config.onednn": "onednn",
        "config.env": "env",
        "provenance.dataset_kind": "dataset_kind",
        "host": "host",
        CPU: CPU,
    }
    wide = long.pivot_table(index=list(keys), columns="metric", values="value").reset_index().rename(columns=keys)
    wide.columns.name = None
    if "predict_time_s" not in wide:  # only coverage trials (training only) selected
        wide["predict_time_s"] = np.nan
    wide["total_time_s"] = wide["train_time_s"] + wide["predict_time_s"]
    wide["window"] = wide["context_length"] + wide["prediction_length"]  # steps MXNet unrolls per training window
    for key in ("n_series_dropped", "epochs_run"):  # rows stored before these were measured: unknown
        if key not in wide:
            wide[key] = np.nan
    wide["stopped_early"] = wide["epochs_run"] < wide["epochs"]
    # one CPU model for every part: parts are compared with each other (versions and variants against main)
    wide, other_cpus = one_cpu_model(wide.assign(frame="every part"), part="frame")
    wide = wide.drop(columns="frame")
    wide = wide.sort_values(["dataset", "arm", "seed"]).reset_index(drop=True)
    wide.attrs["other_cpu_trials"] = other_cpus
    return wide


def unavailable(results: Results) -> pd.DataFrame:
    """The profile's datasets that could not be used: with no local file (and no download here), or whose trials
    failed with ``DataUnavailable``. Never empty-by-omission: every dataset of the profile is checked."""
    datasets = sorted({t.config["dataset"] for t in plan(STUDY, results.profile, results.overrides_of(STUDY))})
    local = monash.availability(datasets, allow_download=False).set_index("dataset")
    trials = results.trials(STUDY)
    failed_unavail = set()
    if not trials.empty:
        bad = trials[(trials.status == "failed") & trials.error.fillna("").str.contains("unavailable")]
        failed_unavail = set(bad["config.dataset"])
    finished = load_trials(results, parts=None)  # a dataset any part ran is not unavailable
    done = set(finished["dataset"]) if not finished.empty else set()
    rows = []
    for name in datasets:
        if name in done:
            continue
        if local.loc[name, "status"] == "unavailable" or name in failed_unavail:
            rows.append({"dataset": name, "reason": local.loc[name, "reason"] or "trial failed: unavailable"})
    return pd.DataFrame(rows, columns=["dataset", "reason"])


def failures(results: Results) -> pd.DataFrame:
    trials = results.trials(STUDY)
    if trials.empty:
        return pd.DataFrame(columns=["trial_id", "dataset", "arm", "seed", "error"])
    failed = trials[trials.status == "failed"]
    return failed.rename(columns={"config.dataset": "dataset", "config.arm": "arm", "config.seed": "seed"})[
        ["trial_id", "dataset", "arm", "seed", "error"]
    ].reset_index(drop=True)


def runtime_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median train, predict and total seconds per dataset x arm (over seeds), with the seed count and how many
    of those trials stopped early (``n_stopped_early``: trained fewer epochs than set)."""
    if trials.empty:
        return pd.DataFrame()
    g = trials.groupby(["dataset", "arm"])
    table = g[TIMES].median()
    table["n_seeds"] = g.size()
    table["n_stopped_early"] = g["stopped_early"].sum().astype(int)
    table["dataset_kind"] = g["dataset_kind"].first()
    return table.reset_index()


def stopped_early(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials that trained fewer epochs than set: their times and accuracy describe less training."""
    cols = ["dataset", "arm", "seed", "epochs_run", "epochs"]
    if trials.empty:
        return pd.DataFrame(columns=cols)
    return trials.loc[trials.stopped_early, cols].reset_index(drop=True)


def ratio_table(
    trials: pd.DataFrame, numerator: str | None = None, denominator: str | None = None, metric: str = "train_time_s"
) -> pd.DataFrame:
    """numerator / denominator of ``metric`` per dataset, the geometric-mean ratio over seeds (one trial each)
    with its 95 % CI over them (``trial_ratio_ci``; >1: the numerator is slower); by default the reference arms,
    MXNet / PyTorch. With one seed per arm the CI is NaN."""
    mx, pt = reference_arms()
    numerator, denominator = numerator or mx, denominator or pt
    rows = []
    if trials.empty:
        return pd.DataFrame(columns=["dataset", "ratio", "ci_low", "ci_high", "n_num", "n_den"])
    for dataset, g in trials.groupby("dataset"):
        a = g.loc[g.arm == numerator, metric].to_numpy(float)
        b = g.loc[g.arm == denominator, metric].to_numpy(float)
        if a.size and b.size:
            rows.append({"dataset": dataset, **trial_ratio_ci(a, b)})
    out = pd.DataFrame(rows, columns=["dataset", "ratio", "ci_low", "ci_high", "n_num", "n_den"])
    return out.sort_values("ratio", ascending=False).reset_index(drop=True)


def totals(trials: pd.DataFrame) -> pd.DataFrame:
    """Sum over every finished trial, per arm, of train, predict and total seconds, over the datasets that both
    reference arms finished (so the totals compare like with like), with the post's totals (training seconds per
    framework) next to the reference arms for scale."""
    if trials.empty:
        return pd.DataFrame()
    mx, pt = reference_arms()
    both = set(trials.loc[trials.arm == pt, "dataset"]) & set(trials.loc[trials.arm == mx, "dataset"])
    sub = trials[trials.dataset.isin(both)]
    table = sub.groupby("arm")[["train_time_s", "predict_time_s", "total_time_s"]].sum()
    table["n_trials"] = sub.groupby("arm").size()
    table["n_datasets"] = sub.groupby("arm")["dataset"].nunique()
    table = table.reindex(arm_order(STUDY, table.index))
    post = {mx: TOTAL_TRAIN_S["mxnet"], pt: TOTAL_TRAIN_S["torch"]}
    table["post_train_s"] = [post.get(a, np.nan) for a in table.index]
    return table


def accuracy_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median (over seeds) MASE, sMAPE and mean weighted quantile loss per dataset, arms side by side, each over
    the series where it is finite, and ``n_series_dropped``: the series left out of MASE (zero seasonal-naive
    scale; a property of the data, so the same for every arm)."""
    if trials.empty:
        return pd.DataFrame()
    cols = ACCURACY + ["n_series_dropped"]
    med = trials.groupby(["dataset", "arm"])[cols].median().unstack("arm")
    arms = arm_order(STUDY, med.columns.get_level_values("arm"))
    return med.reindex(columns=pd.MultiIndex.from_product([cols, arms], names=["metric", "arm"]))


def window_ratio_table(trials: pd.DataFrame) -> pd.DataFrame:
    """MXNet / PyTorch per dataset against the unrolled window (context + prediction length, the steps MXNet's
    DeepAR steps through per training window): the training-time ratio (the post's measure) and the
    training + forecasting ratio, each with its 95 % CI over seeds (one trial each); sorted by window."""
    cols = ["dataset", "window", "context_length", "prediction_length"]
    if trials.empty:
        return pd.DataFrame(columns=cols + ["train_ratio", "total_ratio"])
    windows = trials.groupby("dataset")[cols[1:]].first()
    out = windows.copy()
    for metric, name in (("train_time_s", "train"), ("total_time_s", "total")):
        r = ratio_table(trials, metric=metric).set_index("dataset")
        out = out.join(
            r[["ratio", "ci_low", "ci_high"]].rename(columns=lambda c, prefix=name: f"{prefix}_{c}"), how="inner"
        )
    return out.reset_index().sort_values(["window", "dataset"]).reset_index(drop=True)


def window_trend(table: pd.DataFrame, column: str = "train_ratio") -> float:
    """Spearman rank correlation of ``column`` with the window (NaN with fewer than three windows)."""
    if len(table) < 3 or table.window.nunique() < 3:
        return float("nan")
    return float(table[column].corr(table.window.astype(float), method="spearman"))


def median_mase(trials: pd.DataFrame) -> dict[str, Quantity]:
    """Per arm, the median over datasets of the MASE (``accuracy_table``: each dataset's median over seeds), as the
    named quantity every page quotes; only the datasets every reference arm has."""
    acc = accuracy_table(trials)
    if acc.empty or "MASE" not in acc:
        return {}
    arms = [a for a in reference_arms() if a in acc["MASE"]]
    m = acc["MASE"][arms].dropna()
    return {arm: Quantity(f"deepar.median_mase.{arm}", float(m[arm].median()), n=f"{len(m)} datasets") for arm in arms}


def mase_wins(acc: pd.DataFrame) -> dict:
    """On how many datasets each reference arm had the lower MASE (``accuracy_table``: each dataset's median over
    seeds), over the datasets both have: ``{"n": datasets, "lower": {arm: count}}``; empty without both arms' MASE."""
    mx, pt = reference_arms()
    if acc.empty or ("MASE", pt) not in acc or ("MASE", mx) not in acc:
        return {}
    m = acc["MASE"][[mx, pt]].dropna()
    return {"n": int(len(m)), "lower": {mx: int((m[mx] < m[pt]).sum()), pt: int((m[pt] < m[mx]).sum())}}


def headline(trials: pd.DataFrame) -> dict:
    """Numbers for the notebook's prose. ``train_ratio`` (total training time MXNet / PyTorch over the datasets
    both finished) is the post's measure; ``total_ratio`` adds forecasting."""
    out: dict = {"n_trials": int(len(trials))}
    if trials.empty:
        return out
    mx, pt = reference_arms()
    tot = totals(trials)
    if {mx, pt} <= set(tot.index):
        for what in ("train", "predict", "total"):
            out[f"{what}_mxnet_s"] = float(tot.loc[mx, f"{what}_time_s"])
            out[f"{what}_torch_s"] = float(tot.loc[pt, f"{what}_time_s"])
            out[f"{what}_ratio"] = out[f"{what}_mxnet_s"] / out[f"{what}_torch_s"]
        out["n_datasets"] = int(tot.loc[pt, "n_datasets"])
    out["post_ratio"] = post_ratio()
    ratios = ratio_table(trials)
    if not ratios.empty:
        out["ratio_min"] = ratios.iloc[-1].to_dict()
        out["ratio_max"] = ratios.iloc[0].to_dict()
        out["n_mxnet_slower"] = int((ratios.ratio > 1).sum())
        out["n_ratio"] = int(len(ratios))
        out["one_seed"] = bool(ratios.ci_low.isna().all())
    out["window_rho"] = window_trend(window_ratio_table(trials))
    acc = accuracy_table(trials)
    wins = mase_wins(acc)
    if wins:
        out["mase_torch_better"] = wins["lower"][pt]
        out["mase_n"] = wins["n"]
        out["mase_median"] = median_mase(trials)
        dropped = acc["n_series_dropped"].max(axis=1).dropna()
        out["n_series_dropped"] = {d: int(v) for d, v in dropped.items() if v > 0}
    out["n_stopped_early"] = int(trials.stopped_early.sum())
    return out


def headline_facts(trials: pd.DataFrame, profile: str) -> dict:
    """What the DeepAR headline paragraph shows (template ``deepar_headline``): ``headline``'s numbers, the post's
    totals, the trials that stopped early, the epochs and batches the trials ran, the series left out of MASE."""
    mx, pt = reference_arms()
    h = headline(trials)
    return {
        "h": h,
        "profile": profile,
        "post": TOTAL_TRAIN_S,
        "mx": mx,
        "pt": pt,
        "early": stopped_early(trials),
        "epochs": sorted(set(trials.epochs.astype(int))) if len(trials) else [],
        "batches": sorted(set(trials.num_batches_per_epoch.astype(int))) if len(trials) else [],
        "dropped": sorted(h.get("n_series_dropped", {}).items()),
        "early_only": False,
    }


# -- where the time goes (the gap profile) ---------------------------------------------------------------------
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


def _trend_rho(ratio: pd.Series) -> float | None:
    """The Spearman rank correlation of the MXNet / PyTorch step ratio with the unrolled window; None with fewer
    than three windows."""
    windows = ratio.index.get_level_values("window").to_numpy(float)
    if len(ratio) < 3 or len(set(windows)) < 3:
        return None
    return float(pd.Series(ratio.to_numpy(float)).corr(pd.Series(windows), method="spearman"))


def gap_facts(trials: pd.DataFrame) -> dict:
    """Where the time goes (template ``deepar_gap``), from ``breakdown_table``, ``cprofile_table`` and
    ``hybridize_effect``: per arm the median shares of the training time; the network steps' MXNet / PyTorch
    ratio per dataset by window and its trend; forecasting's ratio; the cProfile phases of 2 % or more; the
    hybridization ratios."""
    table = breakdown_table(trials)
    names, (mx, pt) = get_study(STUDY).labels(), reference_arms()
    out = {"breakdown": table, "names": names, "shares": [], "step_ratio": [], "step_median": math.nan,
           "trend_rho": None, "predict_ratio": 0, "predict_median": math.nan, "profiles": [],
           "hybridize": []}  # fmt: skip
    if table.empty:
        return out
    med = table.groupby("arm")[["share_data", "share_network_step", "share_fit_overhead"]].median()
    out["shares"] = [(arm, med.loc[arm]) for arm in arm_order(STUDY, med.index)]
    step = table.pivot_table(index=["dataset", "window"], columns="arm", values="network_step_s")
    if {mx, pt} <= set(step.columns):
        ratio = (step[mx] / step[pt]).replace([np.inf, -np.inf], np.nan).dropna().sort_index(level="window")
        if len(ratio):
            out["step_ratio"] = [(d, int(w), float(r)) for (d, w), r in ratio.items()]
            out["step_median"], out["trend_rho"] = float(ratio.median()), _trend_rho(ratio)
    pred = table.pivot_table(index="dataset", columns="arm", values="predict_time_s")
    if {mx, pt} <= set(pred.columns):
        pr = (pred[mx] / pred[pt]).dropna()
        out["predict_ratio"], out["predict_median"] = len(pr), float(pr.median()) if len(pr) else math.nan
    prof = cprofile_table(trials, "train")
    if not prof.empty:
        fw = prof.groupby("arm")[[c for c in BREAKDOWN_PHASES if c in prof]].median()
        for arm in arm_order(STUDY, fw.index):
            top = fw.loc[arm].sort_values(ascending=False)
            out["profiles"].append((arm, [(name.replace("_", " "), float(v)) for name, v in top.items() if v >= 0.02]))
    hyb = hybridize_effect(trials)
    for (num, den, part), g in hyb.groupby(["numerator", "denominator", "part"], sort=False) if len(hyb) else ():
        out["hybridize"].append((num, den, part, float(g.ratio.median()), len(g)))
    return out
