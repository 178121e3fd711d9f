"""Convergence curves from the results store (nothing is trained here): IMDB train/test loss and accuracy per
epoch and against cumulative training seconds, DeepAR training loss per epoch; repeats (seeds) summarised as a
median with a min-max band and the interquartile range."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import gmean

from ..machines import CPU, NOT_RECORDED
from ..published.keras_imdb import LSTM_TEST_ACCURACY
from ..quantity import Quantity
from ..studies import imdb as imdb_study
from . import Results, arm_order, cpu_models
from . import imdb as imdb_analysis

DEEPAR_MAX_DATASETS = 6  # panels of the DeepAR figure (3 rows of 2); the summary names the datasets left out


def setting_label(batch_size: int, num_workers: int, lr_schedule: bool) -> str:
    schedule = "factor LR schedule" if lr_schedule else "constant LR"
    return f"batch {int(batch_size)} / {int(num_workers)} workers, {schedule}"


def convergence_labels() -> list[str]:
    """The 2018 post's convergence runs (``imdb_study.CONVERGENCE_EPOCHS`` epochs each), by their settings' labels."""
    return [setting_label(**s) for s in imdb_study.CONVERGENCE_SETTINGS]


# ---------------------------------------------------------------------------------------------------- IMDB
def load_imdb(results: Results) -> pd.DataFrame:
    """One row per (trial, epoch) of the profile's finished IMDB trials, with ``setting`` and ``wall_s`` (the
    cumulative training-pass seconds at the end of the epoch)."""
    frame = imdb_analysis.load_sweep(results)
    # the scaling part varies sequence length, threads and n_train: not a convergence curve
    frame = frame[frame.part != "scaling"] if not frame.empty else frame
    if frame.empty:
        return frame
    frame = frame.sort_values(["trial_id", "epoch"]).copy()
    frame["wall_s"] = frame.groupby("trial_id")["train_time_s"].cumsum()
    frame["setting"] = [
        setting_label(b, w, s) for b, w, s in zip(frame.batch_size, frame.num_workers, frame.lr_schedule)
    ]
    return frame.reset_index(drop=True)


def curve_settings(frame: pd.DataFrame) -> tuple[list[str], str]:
    """The settings to draw and what they are: the training-quality part's (``quality``), else the post's convergence
    settings in ``frame`` (``convergence``: longest run of each), else every setting of the profile (``sweep``)."""
    if frame.empty:
        return [], "sweep"
    if "part" in frame and (frame.part == "quality").any():
        return sorted(set(frame.loc[frame.part == "quality", "setting"])), "quality"
    long = frame[frame.epochs >= imdb_study.CONVERGENCE_EPOCHS]
    present = [w for w in convergence_labels() if w in set(long.setting)]
    if present:
        return present, "convergence"
    order = frame.drop_duplicates("setting").sort_values(["batch_size", "num_workers", "lr_schedule"])
    return list(order.setting), "sweep"


def bands(frame: pd.DataFrame, metric: str, x: str = "epoch", by: tuple[str, ...] = ("setting", "arm")) -> pd.DataFrame:
    """Median, min, max, quartiles and n of ``metric`` over repeats at each ``x`` per group. For ``x='wall_s'``
    the x value is the median cumulative time at that epoch."""
    if frame.empty or metric not in frame:
        return pd.DataFrame()
    keys = list(by) + ["epoch"]
    g = frame.groupby(keys)[metric]
    out = pd.DataFrame(
        {
            "median": g.median(),
            "lo": g.min(),
            "hi": g.max(),
            "q1": g.quantile(0.25),
            "q3": g.quantile(0.75),
            "n": g.count(),
        }
    ).reset_index()
    if x != "epoch":
        out[x] = frame.groupby(keys)[x].median().to_numpy()
    return out


def missing_convergence(profile: str, frame: pd.DataFrame) -> list[dict]:
    """The convergence settings this profile's store lacks, with the profiles that include them."""
    have = set(frame.setting[frame.epochs >= imdb_study.CONVERGENCE_EPOCHS]) if not frame.empty else set()
    makers = [name for name, opts in imdb_study.PROFILES.items() if opts.get("convergence")]
    epochs = imdb_study.CONVERGENCE_EPOCHS
    return [{"setting": s, "epochs": epochs, "profiles": makers} for s in convergence_labels() if s not in have]


# ---------------------------------------------------------------------------------------------------- DeepAR
def load_deepar(results: Results, max_datasets: int | None = DEEPAR_MAX_DATASETS) -> pd.DataFrame:
    """Per-epoch DeepAR training loss (step >= 0) of the profile's finished main-part trials, for at most
    ``max_datasets`` datasets (those with the most epochs recorded, then by name; None: every one)."""
    try:
        long = results.values("deepar")
    except Exception:  # the study's plan needs its data catalogue; without it, all rows
        long = results.every_row().values("deepar")
    if long.empty:
        return pd.DataFrame()
    long = long[(long.metric == "train_loss") & (long.step >= 0)]
    if "config.part" in long:  # the main part only: a 1-thread or oneDNN-off rerun of a seed is not another curve
        long = long[long["config.part"].fillna("main") == "main"]
    if long.empty:
        return pd.DataFrame()
    names = {
        "config.dataset": "dataset",
        "config.arm": "arm",
        "config.seed": "seed",
        "step": "epoch",
        "value": "train_loss",
    }
    frame = long.rename(columns=names)[["trial_id", *names.values()]]
    depth = frame.groupby("dataset")["epoch"].max().reset_index()
    keep = list(depth.sort_values(["epoch", "dataset"], ascending=[False, True]).dataset[:max_datasets])
    return frame[frame.dataset.isin(keep)].sort_values(["dataset", "arm", "seed", "epoch"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------- facts
def _final_by_arm(frame: pd.DataFrame, setting: str, metric: str, over_seeds="median") -> dict:
    sel = imdb_analysis.final_epochs(frame[frame.setting == setting])
    return sel.groupby("arm")[metric].agg(over_seeds).to_dict()


def summary_facts(results: Results, imdb: pd.DataFrame | None = None, deepar: pd.DataFrame | None = None) -> dict:
    """What the curves show and what is missing (template ``convergence_summary``), from the store: ``imdb`` (None
    without finished IMDB trials) with the settings drawn and what they are (``curve_settings``), their epochs,
    seeds per arm, each of the first three settings' final train loss (the geometric mean over seeds, as A8's ratio
    takes it) and test accuracy (the median) per arm, and the convergence runs the profile lacks; ``deepar`` (None
    without training-loss rows) with its datasets, those with curves not drawn, arms, epochs and seeds."""
    imdb = load_imdb(results) if imdb is None else imdb
    deepar = load_deepar(results) if deepar is None else deepar
    facts: dict = {"profile": results.profile, "imdb": None, "deepar": None}
    if not imdb.empty:
        settings, kind = curve_settings(imdb)
        seeds = imdb.groupby("setting")["seed"].nunique()
        finals = []
        for s in settings[:3]:
            loss = _final_by_arm(imdb, s, "train_loss", gmean)
            acc = _final_by_arm(imdb, s, "test_acc")
            if loss:
                arms = arm_order("imdb", loss)
                accuracy = [(a, float(acc[a])) for a in arms if a in acc]
                finals.append({"setting": s, "loss": [(a, float(loss[a])) for a in arms], "accuracy": accuracy})
        facts["imdb"] = {
            "n_settings": len(settings),
            "kind": kind,
            "epochs": sorted(set(int(e) for e in imdb[imdb.setting.isin(settings)].epochs)),
            "n_seeds": sorted(set(int(seeds[s]) for s in settings)),
            "finals": finals,
            "missing": missing_convergence(results.profile, imdb),
            "pooled": quality_conditions(imdb, set(imdb.arm)) if kind == "quality" else None,
        }
    if not deepar.empty:
        facts["deepar"] = {
            "n_datasets": int(deepar.dataset.nunique()),
            "datasets": sorted(set(deepar.dataset)),
            "not_drawn": sorted(set(load_deepar(results, None).dataset) - set(deepar.dataset)),
            "arms": sorted(set(deepar.arm)),
            "epochs": int(deepar.epoch.max()) + 1,
            "n_seeds": int(deepar.seed.nunique()),
        }
    return facts


def final_loss_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Final-epoch train/test loss and test accuracy per setting and arm: median and range over seeds."""
    if frame.empty:
        return pd.DataFrame()
    last = imdb_analysis.final_epochs(frame)
    train_s = frame.groupby("trial_id")["train_time_s"].sum()  # each trial's whole training pass
    rows = []
    for (setting, arm), g in last.groupby(["setting", "arm"]):
        row = {"setting": setting, "arm": arm, "seeds": g.seed.nunique(), "epochs": int(g.epochs.max())}
        for m in ("train_loss", "test_loss", "test_acc"):
            if m in g:
                row[f"{m}_median"] = float(np.median(g[m]))
                row[f"{m}_range"] = float(g[m].max() - g[m].min())
        row["train_s_total"] = float(train_s[train_s.index.isin(g.trial_id)].median())
        rows.append(row)
    return pd.DataFrame(rows)


ACCURACY_BAR = LSTM_TEST_ACCURACY[0]  # the low end of what the Keras IMDB LSTM reaches (the paper profile's bar)


def accuracy_bar_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The training-quality part (all 25k reviews in, all 25k scored): per arm, the final test accuracy (median
    and lowest over seeds), whether the arm passes ``ACCURACY_BAR`` (its median over seeds,
    as A8's scale floor reads it: an arm's level, not its unluckiest seed) and the seeds that ended below it."""
    if frame.empty or "part" not in frame:
        return pd.DataFrame()
    last = imdb_analysis.final_epochs(frame[frame.part == "quality"])
    rows = [
        {
            "arm": arm,
            "seeds": g.seed.nunique(),
            "epochs": int(g.epochs.max()),
            "n_train": int(g.n_train.max()),
            "test_acc_median": float(g.test_acc.median()),
            "test_acc_min": float(g.test_acc.min()),
            "passes_bar": bool(g.test_acc.median() >= ACCURACY_BAR),
            "seeds_below": [(int(r.seed), float(r.test_acc)) for r in g.itertuples() if not r.test_acc >= ACCURACY_BAR],
        }
        for arm, g in last.groupby("arm")
    ]
    return pd.DataFrame(rows)


def accuracy_quantity(row) -> Quantity:
    """An arm's final test accuracy (a row of ``accuracy_bar_table``) as the named quantity every page quotes."""
    return Quantity(f"imdb.test_accuracy.{row.arm}", row.test_acc_median, n=f"{row.seeds} seed(s)")


def seed_runs(frame: pd.DataFrame) -> list[dict]:
    """How the training-quality trials ran, from their configs and placement records: per (threads, most trials
    that shared the machine) the seeds and the number of trials. An accuracy is not a timing, so seeds may run two
    at once; the post says which did."""
    if frame.empty or "part" not in frame:
        return []
    q = frame[frame.part == "quality"].drop_duplicates("trial_id")
    sharing = q.trials_sharing_host if "trials_sharing_host" in q else pd.Series(1, index=q.index)
    return [
        {"threads": int(threads), "sharing": int(shared), "seeds": sorted(set(g.seed)), "trials": len(g)}
        for (threads, shared), g in q.assign(sharing=sharing.fillna(1)).groupby(["threads", "sharing"])
    ]


def quality_conditions(frame: pd.DataFrame, arms) -> dict:
    """The CPU models (as the first screen names them), threads and most trials sharing a machine of the quality
    part's trials of ``arms``: an accuracy is not a timing, so the part pools them; a page quoting it says so."""
    q = frame[frame.arm.isin(set(arms)) & frame.part.eq("quality")]
    runs, models = seed_runs(q), sorted(set(q[CPU] if CPU in q else ()) - {NOT_RECORDED})
    cpus = [cpu_models.Condition(m).cpu_name for m in models]
    return {"cpus": cpus, "threads": sorted({r["threads"] for r in runs}), "sharing": max(r["sharing"] for r in runs)}


def accuracy_facts(frame: pd.DataFrame) -> dict:
    """The training-quality part against ``ACCURACY_BAR`` (template ``convergence_accuracy``): ``accuracy_bar_table``
    with each arm's accuracy as a ``Quantity``, the bar, the training reviews and epochs, the arms whose median
    misses the bar (``failing``), the single seeds below it (``below``) and how the seeds ran (``seed_runs``)."""
    table = accuracy_bar_table(frame)
    if table.empty:
        return {"table": table, "bar": ACCURACY_BAR, "runs": []}
    return {
        "table": table.assign(accuracy=[accuracy_quantity(r) for r in table.itertuples()]),
        "bar": ACCURACY_BAR,
        "n_train": int(table.n_train.max()),
        "epochs": int(table.epochs.max()),
        "failing": list(table.loc[~table.passes_bar, "arm"]),
        "below": [(r.arm, seed, acc) for r in table.itertuples() for seed, acc in r.seeds_below],
        "runs": seed_runs(frame),
    }
