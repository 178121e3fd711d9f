"""Tables of the DeepAR / Monash study, computed from the results store (restricted to one profile's trials).

Runtime of a trial = ``train_time_s`` (the whole ``estimator.train`` call, as the 2024 post timed runs) +
``predict_time_s`` (forecasting every test window); both are also reported separately. Per dataset and arm the
median over seeds is used; ratios MXNet / PyTorch carry a bootstrap 95 % CI over seeds (NaN with one seed).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..runner import plan
from ..store import ResultsStore
from . import profile_measurements, profile_trials
from .stats import ratio_ci

STUDY = "deepar"
ARM_ORDER = ["torch", "mxnet", "mxnet-imperative"]
ARM_LABELS = {"torch": "PyTorch", "mxnet": "MXNet (hybridized)", "mxnet-imperative": "MXNet (imperative)"}
ACCURACY = ["MASE", "sMAPE", "mean_wQL"]
POST_TOTALS_S = {"mxnet": 395_807.0, "torch": 88_756.0}  # the 2024 post (shared/reference/PROTOCOLS.md B)


def _planned(profile: str, overrides: dict | None):
    return plan(STUDY, profile, overrides)


def load_trials(profile: str, overrides: dict | None = None, store: ResultsStore | None = None) -> pd.DataFrame:
    """One row per finished trial of the profile: config, dataset provenance and every whole-trial value."""
    long = profile_measurements(STUDY, profile, overrides, store)
    if long.empty:
        return pd.DataFrame()
    long = long[long.step == -1]
    if long.empty:
        return pd.DataFrame()
    keys = {"trial_id": "trial_id", "config.dataset": "dataset", "config.arm": "arm", "config.seed": "seed",
            "config.epochs": "epochs", "config.num_batches_per_epoch": "num_batches_per_epoch",
            "config.context_length": "context_length", "config.prediction_length": "prediction_length",
            "provenance.dataset_kind": "dataset_kind", "host": "host"}
    wide = long.pivot_table(index=list(keys), columns="metric", values="value").reset_index().rename(columns=keys)
    wide.columns.name = None
    wide["total_time_s"] = wide["train_time_s"] + wide["predict_time_s"]
    return wide.sort_values(["dataset", "arm", "seed"]).reset_index(drop=True)


def load_epochs(profile: str, overrides: dict | None = None, store: ResultsStore | None = None) -> pd.DataFrame:
    """Per-epoch values (``train_loss``, ``epoch_time_s``) of the profile's finished trials."""
    long = profile_measurements(STUDY, profile, overrides, store)
    if long.empty:
        return pd.DataFrame()
    long = long[long.step >= 0]
    if long.empty:
        return pd.DataFrame()
    wide = long.pivot_table(index=["trial_id", "config.dataset", "config.arm", "config.seed", "step"],
                            columns="metric", values="value").reset_index()
    wide.columns.name = None
    return wide.rename(columns={"config.dataset": "dataset", "config.arm": "arm", "config.seed": "seed",
                                "step": "epoch"})


def unavailable(profile: str, overrides: dict | None = None, store: ResultsStore | None = None) -> pd.DataFrame:
    """The profile's datasets that could not be used: with no local file (and no download here), or whose trials
    failed with ``DataUnavailable``. Never empty-by-omission: every dataset of the profile is checked."""
    from ..data import monash

    datasets = sorted({t.config["dataset"] for t in _planned(profile, overrides)})
    local = monash.availability(datasets, allow_download=False).set_index("dataset")
    trials = profile_trials(STUDY, profile, overrides, store)
    failed_unavail = set()
    if not trials.empty:
        bad = trials[(trials.status == "failed")
                     & trials.error.fillna("").str.contains("unavailable")]
        failed_unavail = set(bad["config.dataset"])
    finished = load_trials(profile, overrides, store)
    done = set(finished["dataset"]) if not finished.empty else set()
    rows = []
    for name in datasets:
        if name in done:
            continue
        if local.loc[name, "status"] == "unavailable" or name in failed_unavail:
            rows.append({"dataset": name, "reason": local.loc[name, "reason"] or "trial failed: unavailable"})
    return pd.DataFrame(rows, columns=["dataset", "reason"])


def failures(profile: str, overrides: dict | None = None, store: ResultsStore | None = None) -> pd.DataFrame:
    trials = profile_trials(STUDY, profile, overrides, store)
    if trials.empty:
        return pd.DataFrame(columns=["trial_id", "dataset", "arm", "seed", "error"])
    failed = trials[trials.status == "failed"]
    return failed.rename(columns={"config.dataset": "dataset", "config.arm": "arm", "config.seed": "seed"})[
        ["trial_id", "dataset", "arm", "seed", "error"]].reset_index(drop=True)


def _arm_sorted(arms) -> list[str]:
    return [a for a in ARM_ORDER if a in set(arms)]


def runtime_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median train, predict and total seconds per dataset x arm (over seeds), with the seed count."""
    if trials.empty:
        return pd.DataFrame()
    g = trials.groupby(["dataset", "arm"])
    table = g[["train_time_s", "predict_time_s", "total_time_s"]].median()
    table["n_seeds"] = g.size()
    table["dataset_kind"] = g["dataset_kind"].first()
    return table.reset_index()


def ratio_table(trials: pd.DataFrame, numerator: str = "mxnet", denominator: str = "torch",
                metric: str = "total_time_s") -> pd.DataFrame:
    """numerator / denominator of the median ``metric`` per dataset, bootstrap 95 % CI over seeds (>1: the
    numerator is slower). With one seed per arm the CI is NaN."""
    rows = []
    if trials.empty:
        return pd.DataFrame(columns=["dataset", "ratio", "ci_low", "ci_high", "n_num", "n_den"])
    for dataset, g in trials.groupby("dataset"):
        a = g.loc[g.arm == numerator, metric].to_numpy(float)
        b = g.loc[g.arm == denominator, metric].to_numpy(float)
        if a.size and b.size:
            rows.append({"dataset": dataset, **ratio_ci(a, b)})
    out = pd.DataFrame(rows, columns=["dataset", "ratio", "ci_low", "ci_high", "n_num", "n_den"])
    return out.sort_values("ratio", ascending=False).reset_index(drop=True)


def totals(trials: pd.DataFrame) -> pd.DataFrame:
    """Sum over every finished trial, per arm, of train, predict and total seconds, over the datasets that both
    main arms finished (so the totals compare like with like), with the post's totals for scale."""
    if trials.empty:
        return pd.DataFrame()
    both = set(trials.loc[trials.arm == "torch", "dataset"]) & set(trials.loc[trials.arm == "mxnet", "dataset"])
    sub = trials[trials.dataset.isin(both)]
    table = sub.groupby("arm")[["train_time_s", "predict_time_s", "total_time_s"]].sum()
    table["n_trials"] = sub.groupby("arm").size()
    table["n_datasets"] = sub.groupby("arm")["dataset"].nunique()
    table = table.reindex(_arm_sorted(table.index))
    table["post_total_s"] = [POST_TOTALS_S.get(a, np.nan) for a in table.index]
    return table


def accuracy_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median (over seeds) MASE, sMAPE and mean weighted quantile loss per dataset, arms side by side."""
    if trials.empty:
        return pd.DataFrame()
    med = trials.groupby(["dataset", "arm"])[ACCURACY].median().unstack("arm")
    arms = _arm_sorted(med.columns.get_level_values("arm"))
    med = med.reindex(columns=pd.MultiIndex.from_product([ACCURACY, arms], names=["metric", "arm"]))
    return med


BREAKDOWN_PHASES = ["data_pipeline", "model_code", "trainer_loop", "framework", "other"]


def breakdown_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Where the time goes, per dataset x arm (trials run with ``breakdown``): training split into the data
    pipeline alone (same number of batches), the epochs' remainder (network step: forward, backward, update), and
    the fit overhead outside the epochs (setup, checkpointing); plus prediction; and the cProfile own-time shares
    of one profiled training epoch and of forecasting 64 windows."""
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
    """MXNet imperative / hybridized train and predict time per dataset (>1: hybridizing helps)."""
    rows = []
    for dataset, g in trials.groupby("dataset") if not trials.empty else []:
        for metric in ("train_time_s", "predict_time_s"):
            a = g.loc[g.arm == "mxnet-imperative", metric].to_numpy(float)
            b = g.loc[g.arm == "mxnet", metric].to_numpy(float)
            if a.size and b.size:
                rows.append({"dataset": dataset, "metric": metric, **ratio_ci(a, b)})
    return pd.DataFrame(rows)


def _fmt_ratio(r: dict) -> str:
    if np.isnan(r["ci_low"]):
        return f"{r['ratio']:.2f}x (no CI: one seed per arm)"
    return f"{r['ratio']:.2f}x (95 % CI {r['ci_low']:.2f}-{r['ci_high']:.2f})"


def headline(trials: pd.DataFrame) -> dict:
    """Numbers for the notebook's prose."""
    out: dict = {"n_trials": int(len(trials))}
    if trials.empty:
        return out
    tot = totals(trials)
    if {"mxnet", "torch"} <= set(tot.index):
        out["total_mxnet_s"] = float(tot.loc["mxnet", "total_time_s"])
        out["total_torch_s"] = float(tot.loc["torch", "total_time_s"])
        out["total_ratio"] = out["total_mxnet_s"] / out["total_torch_s"]
        out["train_ratio"] = float(tot.loc["mxnet", "train_time_s"] / tot.loc["torch", "train_time_s"])
        out["predict_ratio"] = float(tot.loc["mxnet", "predict_time_s"] / tot.loc["torch", "predict_time_s"])
        out["n_datasets"] = int(tot.loc["torch", "n_datasets"])
    out["post_ratio"] = POST_TOTALS_S["mxnet"] / POST_TOTALS_S["torch"]
    ratios = ratio_table(trials)
    if not ratios.empty:
        out["ratio_min"] = ratios.iloc[-1].to_dict()
        out["ratio_max"] = ratios.iloc[0].to_dict()
        out["n_mxnet_slower"] = int((ratios.ratio > 1).sum())
        out["n_ratio"] = int(len(ratios))
        out["one_seed"] = bool(ratios.ci_low.isna().all())
    acc = accuracy_table(trials)
    if not acc.empty and ("MASE", "torch") in acc and ("MASE", "mxnet") in acc:
        m = acc["MASE"][["torch", "mxnet"]].dropna()
        out["mase_torch_better"] = int((m.torch < m.mxnet).sum())
        out["mase_n"] = int(len(m))
        out["mase_median_torch"] = float(m.torch.median())
        out["mase_median_mxnet"] = float(m.mxnet.median())
    return out


def headline_markdown(trials: pd.DataFrame, profile: str) -> str:
    h = headline(trials)
    if "total_ratio" not in h:
        return (f"No dataset of profile `{profile}` has finished trials of both PyTorch and MXNet yet; "
                "run the sweep first.")
    lines = [
        f"Over the {h['n_datasets']} dataset(s) that both frameworks finished under profile `{profile}`, MXNet "
        f"took **{h['total_mxnet_s']:,.0f} s** and PyTorch **{h['total_torch_s']:,.0f} s** in all (training + "
        f"forecasting): MXNet / PyTorch = **{h['total_ratio']:.2f}x** (training alone {h['train_ratio']:.2f}x, "
        f"forecasting alone {h['predict_ratio']:.2f}x). The 2024 post reported {h['post_ratio']:.2f}x "
        f"({POST_TOTALS_S['mxnet']:,.0f} s vs {POST_TOTALS_S['torch']:,.0f} s) for 100 epochs on a laptop.",
    ]
    if "n_ratio" in h:
        spread = (f"the per-dataset ratio ranges from {_fmt_ratio(h['ratio_min'])} on {h['ratio_min']['dataset']} "
                  f"to {_fmt_ratio(h['ratio_max'])} on {h['ratio_max']['dataset']}." if h["n_ratio"] > 1 else
                  f"the ratio is {_fmt_ratio(h['ratio_max'])} on {h['ratio_max']['dataset']}.")
        lines.append(
            f"MXNet was slower on {h['n_mxnet_slower']} of {h['n_ratio']} dataset(s); " + spread
            + (" With one seed per arm there is no spread to resample, so the confidence intervals are NaN; "
               "the `full` profile runs 5 seeds." if h.get("one_seed") else ""))
    if "mase_n" in h:
        lines.append(
            f"Accuracy: PyTorch had the lower MASE on {h['mase_torch_better']} of {h['mase_n']} datasets (median "
            f"MASE {h['mase_median_torch']:.3f} PyTorch vs {h['mase_median_mxnet']:.3f} MXNet).")
    epochs = sorted(set(trials.epochs.astype(int)))
    batches = sorted(set(trials.num_batches_per_epoch.astype(int)))
    if epochs != [100] or batches != [50]:
        lines.append(f"These trials ran {', '.join(map(str, epochs))} epoch(s) of {', '.join(map(str, batches))} "
                     "batches, not the protocol's 100 x 50: the accuracy is that of barely trained models and the "
                     "runtimes weigh fixed start-up costs more than a full run would.")
    return "\n\n".join(lines)


def _trend_text(ratio: pd.Series) -> str:
    """Whether the MXNet / PyTorch step ratio rises with the unrolled window, by Spearman rank correlation."""
    windows = ratio.index.get_level_values("window").to_numpy(float)
    if len(ratio) < 3 or len(set(windows)) < 3:
        return "Too few window lengths here to tell how the ratio changes with the window (the `gap` profile has three)."
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
    lines = []
    for arm in _arm_sorted(med.index):
        r = med.loc[arm]
        lines.append(f"- **{ARM_LABELS[arm]}**: of the training time, the data pipeline alone accounts for "
                     f"{100 * r.share_data:.0f} %, the network steps (forward, backward, update) for "
                     f"{100 * r.share_network_step:.0f} %, and setup outside the epochs for "
                     f"{100 * r.share_fit_overhead:.0f} % (median over datasets).")
    step = table.pivot_table(index=["dataset", "window"], columns="arm", values="network_step_s")
    if {"mxnet", "torch"} <= set(step.columns):
        ratio = (step.mxnet / step.torch).replace([np.inf, -np.inf], np.nan).dropna().sort_index(level="window")
        if len(ratio):
            by_window = ", ".join(f"{r:.1f}x on {d} ({w} steps)" for (d, w), r in ratio.items())
            lines.append(f"- The network steps alone (training epochs minus the data pipeline) are "
                         f"{ratio.median():.1f}x slower in MXNet (median over {len(ratio)} dataset(s)); by unrolled "
                         f"window (context + prediction length): {by_window}. MXNet steps through LSTMCell/"
                         "ZoneoutCell/ResidualCell once per time step; PyTorch runs the whole window in one fused "
                         f"`nn.LSTM` call. {_trend_text(ratio)}")
    pred = table.pivot_table(index="dataset", columns="arm", values="predict_time_s")
    if {"mxnet", "torch"} <= set(pred.columns):
        pr = (pred.mxnet / pred.torch).dropna()
        if len(pr):
            lines.append(f"- Forecasting (100 sample paths, one network call per step of the horizon) is "
                         f"{pr.median():.1f}x slower in MXNet (median over {len(pr)} dataset(s)).")
    prof = cprofile_table(trials, "train")
    if not prof.empty:
        fw = prof.groupby("arm")[[c for c in BREAKDOWN_PHASES if c in prof]].median()
        for arm in _arm_sorted(fw.index):
            top = fw.loc[arm].sort_values(ascending=False)
            parts = ", ".join(f"{name.replace('_', ' ')} {100 * v:.0f} %" for name, v in top.items() if v >= 0.02)
            lines.append(f"- cProfile, {ARM_LABELS[arm]}, one training epoch (own time by module, median over "
                         f"datasets): {parts}.")
    hyb = hybridize_effect(trials)
    if not hyb.empty:
        for metric, g in hyb.groupby("metric"):
            what = "training" if metric == "train_time_s" else "forecasting"
            lines.append(f"- Imperative / hybridized MXNet, {what}: {g.ratio.median():.2f}x (median over "
                         f"{len(g)} dataset(s); >1 means hybridizing speeds it up).")
    return "\n".join(lines)
