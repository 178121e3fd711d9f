"""Tables of the DeepAR / Monash study, computed from the results store (restricted to one profile's trials).

The 2024 post compared total *training* time (395,807 s vs 88,756 s): the headline and per-dataset ratios are of
``train_time_s`` (the whole ``estimator.train`` call), with training + forecasting (``total_time_s``) beside them.
Per dataset and arm the median over seeds is used; ratios MXNet / PyTorch are geometric means over seeds (one trial
each) with its CI over them (``stats.trial_ratio_ci``; NaN with one seed). Accuracy is over the series where
each metric is finite (``n_series_dropped``: zero seasonal-naive scale). Trials that trained fewer epochs than set
(GluonTS' MXNet learning-rate floor) are flagged (``stopped_early``). "MXNet" and "PyTorch" are the study's
reference arms; arm order and labels come from its arm table, the post's totals from ``published.deepar2024``.
Where the time goes (the ``gap`` profile): ``breakdown_table``, ``cprofile_table``, ``hybridize_effect``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from ..data import monash
from ..machines import CPU, MACHINE, NOT_RECORDED, cpu_model_of, cpu_name, machine_of, one_cpu_model
from ..planning import plan
from ..published.deepar2024 import TOTAL_TRAIN_S, post_ratio
from ..quantity import Quantity
from ..stats import trial_ratio_ci
from ..studies import get_framework, get_study
from ..studies.deepar_trial import hybridization
from . import Results, arm_order

STUDY = "deepar"
ACCURACY = ["MASE", "sMAPE", "mean_wQL"]
TIMES = ["train_time_s", "predict_time_s", "total_time_s"]
CONFIG_KEYS = ["dataset", "arm", "seed", "epochs", "num_batches_per_epoch", "context_length", "prediction_length",
               "part", "threads", "onednn", "env"]  # fmt: skip
RATIO_COLUMNS = ["dataset", "ratio", "ci_low", "ci_high", "n_num", "n_den", "method"]
PROTOCOL_EPOCHS, PROTOCOL_BATCHES = 100, 50  # the post's protocol: epochs x batches per epoch


def reference_arms() -> tuple[str, str]:
    """(MXNet arm, PyTorch arm) standing for the frameworks in the 2024 post's comparison."""
    study = get_study(STUDY)
    return study.reference_arm("mxnet"), study.reference_arm("torch")


def framework_names() -> tuple[str, str]:
    """The reference arms' framework labels: ('MXNet', 'PyTorch')."""
    study = get_study(STUDY)
    return tuple(get_framework(study.arm(arm).framework).label for arm in reference_arms())


def unrolled_window(context_length, prediction_length):
    """The steps MXNet's DeepAR unrolls per training window: context + prediction length (numbers or columns)."""
    return context_length + prediction_length


def csv_arguments(description: str, argv: list[str] | None) -> tuple[argparse.Namespace, Results]:
    """A CSV writer's command line (``--profile``, ``-o``, ``--store``): its arguments and the store it reads."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--profile", default="paper")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--store", default=None, help="default: FWBENCH_RESULTS")
    args = parser.parse_args(argv)
    return args, Results.open(args.profile, path=args.store)


def load_trials(results: Results, parts: tuple[str, ...] | None = ("main",)) -> pd.DataFrame:
    """One row per finished trial of the profile: config, dataset provenance and every whole-trial value; only the
    main part's (what B and the accuracy tables read) unless ``parts`` (None: every part; column ``env``)."""
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
    long[MACHINE] = long["provenance.boot_id"].map(machine_of) if "provenance.boot_id" in long else NOT_RECORDED
    keys = {"trial_id": "trial_id", **{f"config.{k}": k for k in CONFIG_KEYS}}
    keys.update({"provenance.dataset_kind": "dataset_kind", "host": "host", CPU: CPU, MACHINE: MACHINE})
    wide = long.pivot_table(index=list(keys), columns="metric", values="value").reset_index().rename(columns=keys)
    wide.columns.name = None
    if "predict_time_s" not in wide:  # only coverage trials (training only) selected
        wide["predict_time_s"] = np.nan
    wide["total_time_s"] = wide["train_time_s"] + wide["predict_time_s"]
    wide["window"] = unrolled_window(wide["context_length"], wide["prediction_length"])
    for key in ("n_series_dropped", "epochs_run"):  # rows stored before these were measured: unknown
        if key not in wide:
            wide[key] = np.nan
    wide["stopped_early"] = wide["epochs_run"] < wide["epochs"]
    # one CPU model for every part: parts are compared with each other (versions and variants against main)
    wide, other_cpus = one_cpu_model(wide.assign(frame="every part"), part="frame")
    wide = wide.drop(columns="frame").sort_values(["dataset", "arm", "seed"]).reset_index(drop=True)
    wide.attrs["other_cpu_trials"] = other_cpus
    return wide


def unavailable(results: Results) -> pd.DataFrame:
    """The profile's datasets that could not be used: with no local file (and no download here), or whose trials
    failed with ``DataUnavailable``. Never empty-by-omission: every dataset of the profile is checked."""
    datasets = sorted({t.config["dataset"] for t in plan(STUDY, results.profile, results.overrides_of(STUDY))})
    local = monash.availability(datasets, allow_download=False).set_index("dataset")
    failed = failures(results)
    failed = set(failed.loc[failed.error.fillna("").str.contains("unavailable"), "dataset"])  # DataUnavailable
    finished = load_trials(results, parts=None)  # a dataset any part ran is not unavailable
    done = set(finished["dataset"]) if not finished.empty else set()
    missing = [d for d in datasets if d not in done and (local.loc[d, "status"] == "unavailable" or d in failed)]
    rows = [(d, local.loc[d, "reason"] or "trial failed: unavailable") for d in missing]
    return pd.DataFrame(rows, columns=["dataset", "reason"])


def failures(results: Results) -> pd.DataFrame:
    cols, trials = ["trial_id", "dataset", "arm", "seed", "error"], results.trials(STUDY)
    if trials.empty:
        return pd.DataFrame(columns=cols)
    failed = trials[trials.status == "failed"].rename(columns={f"config.{k}": k for k in ("dataset", "arm", "seed")})
    return failed[cols].reset_index(drop=True)


def runtime_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median train, predict and total seconds per dataset x arm (over seeds), the seed count and how many of
    those trials stopped early."""
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


def _ratio_ci(g: pd.DataFrame, numerator: str, denominator: str, metric: str) -> dict | None:
    """``trial_ratio_ci`` of ``metric`` between two arms' trials in ``g``; None where an arm has none."""
    a = g.loc[g.arm == numerator, metric].to_numpy(float)
    b = g.loc[g.arm == denominator, metric].to_numpy(float)
    return trial_ratio_ci(a, b) if a.size and b.size else None


def ratio_table(trials: pd.DataFrame, metric: str = "train_time_s") -> pd.DataFrame:
    """MXNet / PyTorch of ``metric`` per dataset, the geometric-mean ratio over seeds with its CI (>1: MXNet is
    slower; NaN CI with one seed)."""
    mx, pt = reference_arms()
    rows = []
    for dataset, g in trials.groupby("dataset") if not trials.empty else ():
        if r := _ratio_ci(g, mx, pt, metric):
            rows.append({"dataset": dataset, **r})
    out = pd.DataFrame(rows, columns=RATIO_COLUMNS)
    return out.sort_values("ratio", ascending=False).reset_index(drop=True)


def totals(trials: pd.DataFrame) -> pd.DataFrame:
    """Sum over every finished trial, per arm, of train, predict and total seconds, over the datasets that both
    reference arms finished (like with like), with the post's training totals beside the reference arms."""
    if trials.empty:
        return pd.DataFrame()
    mx, pt = reference_arms()
    both = set(trials.loc[trials.arm == pt, "dataset"]) & set(trials.loc[trials.arm == mx, "dataset"])
    sub = trials[trials.dataset.isin(both)]
    table = sub.groupby("arm")[TIMES].sum()
    table["n_trials"] = sub.groupby("arm").size()
    table["n_datasets"] = sub.groupby("arm")["dataset"].nunique()
    table = table.reindex(arm_order(STUDY, table.index))
    post = {mx: TOTAL_TRAIN_S["mxnet"], pt: TOTAL_TRAIN_S["torch"]}
    table["post_train_s"] = [post.get(a, np.nan) for a in table.index]
    return table


def accuracy_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Median (over seeds) MASE, sMAPE and mean weighted quantile loss per dataset, arms side by side, and
    ``n_series_dropped`` (the series left out of MASE: a property of the data, the same for every arm)."""
    if trials.empty:
        return pd.DataFrame()
    cols = ACCURACY + ["n_series_dropped"]
    med = trials.groupby(["dataset", "arm"])[cols].median().unstack("arm")
    arms = arm_order(STUDY, med.columns.get_level_values("arm"))
    return med.reindex(columns=pd.MultiIndex.from_product([cols, arms], names=["metric", "arm"]))


def window_ratio_table(trials: pd.DataFrame) -> pd.DataFrame:
    """``ratio_table`` of training (the post's measure) and of training + forecasting per dataset, against the
    unrolled window; sorted by window."""
    cols = ["dataset", "window", "context_length", "prediction_length"]
    if trials.empty:
        return pd.DataFrame(columns=cols + ["train_ratio", "total_ratio"])
    out = trials.groupby("dataset")[cols[1:]].first()
    for metric, name in (("train_time_s", "train"), ("total_time_s", "total")):
        r = ratio_table(trials, metric=metric).set_index("dataset")[["ratio", "ci_low", "ci_high"]]
        out = out.join(r.add_prefix(f"{name}_"), how="inner")
    return out.reset_index().sort_values(["window", "dataset"]).reset_index(drop=True)


def window_trend(table: pd.DataFrame, column: str = "train_ratio") -> float:
    """Spearman rank correlation of ``column`` with the window (NaN with fewer than three windows)."""
    if len(table) < 3 or table.window.nunique() < 3:
        return float("nan")
    return float(table[column].corr(table.window.astype(float), method="spearman"))


def mase_ratio(acc: pd.DataFrame) -> Quantity | None:
    """MASE MXNet / PyTorch paired by dataset (``acc``: ``accuracy_table``, each dataset's median over seeds), the
    geometric mean over the datasets both reference arms have: the one summary that compares like with like (a median
    per arm may come from different datasets). No interval: the datasets are not replications of one condition."""
    mx, pt = reference_arms()
    m = acc["MASE"][[mx, pt]].dropna() if {("MASE", mx), ("MASE", pt)} <= set(acc.columns) else pd.DataFrame()
    m = m[(m > 0).all(axis=1)]
    if m.empty:
        return None
    value = float(np.exp(np.log(m[mx] / m[pt]).mean()))
    return Quantity("deepar.mase_ratio", value, n=f"{len(m)} datasets", label="MASE MXNet / PyTorch")


def mase_wins(trials: pd.DataFrame, acc: pd.DataFrame) -> dict:
    """On how many datasets each reference arm had the lower MASE (``accuracy_table``: each dataset's median over
    seeds), over the datasets both have: ``{"n", "lower": {arm: count}, "apart": {arm: count}, "seeds"}``; ``apart``: on
    how many every seed of the arm lies below every seed of the other (the seeds' spread does not cover the gap),
    ``seeds``: the seeds a dataset ran; ``acc``: ``accuracy_table(trials)``. Empty without both arms' MASE."""
    mx, pt = reference_arms()
    if acc.empty or ("MASE", pt) not in acc or ("MASE", mx) not in acc:
        return {}
    m = acc["MASE"][[mx, pt]].dropna()
    span = trials[trials.arm.isin([mx, pt])].groupby(["dataset", "arm"]).MASE.agg(["min", "max"]).unstack("arm")
    apart = {a: int((span["max"][a] < span["min"][b]).reindex(m.index).sum()) for a, b in ((mx, pt), (pt, mx))}
    lower = {mx: int((m[mx] < m[pt]).sum()), pt: int((m[pt] < m[mx]).sum())}
    return {"n": int(len(m)), "lower": lower, "apart": apart, "seeds": int(trials.seed.nunique())}


def headline(trials: pd.DataFrame) -> dict:
    """Numbers for the notebook's prose. ``train_ratio`` (total training time MXNet / PyTorch over the datasets
    both finished) is the post's measure; ``total_ratio`` adds forecasting; ``n_summed``: the trials summed per arm."""
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
        out["n_summed"], out["n_seeds"] = tot.loc[[mx, pt], "n_trials"].tolist(), int(trials.seed.nunique())
    out["post_ratio"] = post_ratio()
    ratios = ratio_table(trials)
    if not ratios.empty:
        out |= dict(ratio_min=ratios.iloc[-1].to_dict(), ratio_max=ratios.iloc[0].to_dict())
        slower, one_seed = int((ratios.ratio > 1).sum()), bool(ratios.ci_low.isna().all())
        out |= dict(n_mxnet_slower=slower, n_ratio=len(ratios), one_seed=one_seed)
    out["window_rho"] = window_trend(window_ratio_table(trials))
    acc = accuracy_table(trials)
    wins = mase_wins(trials, acc)
    if wins:
        out |= dict(mase_torch_better=wins["lower"][pt], mase_n=wins["n"], mase_ratio=mase_ratio(acc))
        out |= dict(mase_apart=wins["apart"], mase_seeds=wins["seeds"])
        dropped = acc["n_series_dropped"].max(axis=1).dropna()
        out["n_series_dropped"] = {d: int(v) for d, v in dropped.items() if v > 0}
    out["n_stopped_early"] = int(trials.stopped_early.sum())
    return out


def headline_facts(trials: pd.DataFrame, profile: str) -> dict:
    """What the DeepAR headline paragraph shows (template ``deepar_headline``): ``headline``'s numbers, the post's
    totals, the trials that stopped early, the epochs and batches the trials ran, the series left out of MASE, the CPU
    models and threads the trials ran on and with."""
    (mx, pt), h = reference_arms(), headline(trials)
    ran = {k: sorted(set(trials[k].astype(int))) if len(trials) else [] for k in ("epochs", "num_batches_per_epoch")}
    cpus = sorted({cpu_name(c) for c in trials[CPU]}) if CPU in trials else []
    threads = sorted({int(t) for t in trials.threads.dropna()}) if "threads" in trials else []
    return {"h": h, "profile": profile, "post": TOTAL_TRAIN_S, "mx": mx, "pt": pt, "early": stopped_early(trials),
            "epochs": ran["epochs"], "batches": ran["num_batches_per_epoch"],
            "dropped": sorted(h.get("n_series_dropped", {}).items()), "early_only": False, "cpus": cpus,
            "threads": threads}  # fmt: skip


# -- where the time goes (the gap profile) ---------------------------------------------------------------------
BREAKDOWN_PHASES = ["data_pipeline", "model_code", "trainer_loop", "framework", "other"]


def breakdown_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x arm (trials run with ``breakdown``): training split into the data pipeline alone, the network
    steps (the epochs' remainder: forward, backward, update) and the fit overhead outside the epochs; prediction."""
    sub = trials[trials.data_time_s.notna()] if "data_time_s" in trials else trials.iloc[:0]
    if sub.empty:
        return pd.DataFrame()
    cols = ["train_time_s", "data_time_s", "fit_overhead_s", "predict_time_s"]
    table = sub.groupby(["dataset", "arm", "window"])[cols].median()
    epochs_s = table.train_time_s - table.fit_overhead_s
    table["network_step_s"] = (epochs_s - table.data_time_s).clip(lower=0)
    table["share_data"] = table.data_time_s / table.train_time_s
    table["share_network_step"] = table.network_step_s / table.train_time_s
    table["share_fit_overhead"] = table.fit_overhead_s / table.train_time_s
    return table.reset_index()


def cprofile_table(trials: pd.DataFrame, part: str = "train") -> pd.DataFrame:
    """cProfile own-time share of each phase per dataset x arm (``part``: one profiled ``train`` epoch, or
    ``predict``ing 32 windows). cProfile inflates Python-heavy code, so read shares, not seconds."""
    prefix = f"cprofile_{part}_frac_"
    cols = [c for c in trials.columns if c.startswith(prefix)] if not trials.empty else []
    if not cols:
        return pd.DataFrame()
    table = trials.dropna(subset=cols).groupby(["dataset", "arm"])[cols].median()
    return table.rename(columns=lambda c: c.removeprefix(prefix)).reset_index()


def hybridize_effect(trials: pd.DataFrame) -> pd.DataFrame:
    """What hybridizing buys, per dataset: each other MXNet arm against the MXNet reference arm, on the time of each
    network whose hybridization differs: imperative over hybridized (>1: hybridizing helps), CI over seeds."""
    study, mx = get_study(STUDY), reference_arms()[0]
    parts = (("training", "hybridize_train", "train_time_s"), ("forecasting", "hybridize_predict", "predict_time_s"))
    pairs = []  # each other MXNet arm and network whose hybridization differs from the reference arm's
    for arm in (a.name for a in study.arms if a.framework == study.framework_of(mx) and a.name != mx):
        for part, key, metric in parts:
            if hybridization(arm)[key] != hybridization(mx)[key]:
                num, den = (arm, mx) if hybridization(mx)[key] else (mx, arm)  # imperative / hybridized
                pairs.append(dict(arm=arm, baseline=mx, part=part, metric=metric, numerator=num, denominator=den))
    rows = []
    for dataset, g in trials.groupby("dataset") if not trials.empty else ():
        for p in pairs:
            if r := _ratio_ci(g, p["numerator"], p["denominator"], p["metric"]):
                rows.append({"dataset": dataset, **p, **r})
    return pd.DataFrame(rows)


def gap_facts(trials: pd.DataFrame) -> dict:
    """Where the time goes (template ``deepar_gap``): per arm the median shares of the training time, the network
    steps' MXNet / PyTorch ratio by window and its trend (None with fewer than three windows), forecasting's
    ratio, the cProfile phases of 2 % or more and the hybridization ratios."""
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
            frame = ratio.rename("ratio").reset_index()
            out["step_ratio"] = [(d, int(w), float(r)) for (d, w), r in ratio.items()]
            out["step_median"] = float(ratio.median())
            out["trend_rho"] = window_trend(frame, "ratio") if frame.window.nunique() >= 3 else None
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
