"""Convergence curves from the results store (nothing is trained here): IMDB train/test loss and accuracy per
epoch and against cumulative training seconds, DeepAR training loss per epoch; repeats (seeds) summarised as a
median with a min-max band and the interquartile range."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..paths import results_path
from ..published.keras_imdb import LSTM_TEST_ACCURACY
from ..quantity import Quantity
from ..store import ResultsStore
from ..studies import imdb as imdb_study
from . import arm_order, profile_measurements
from . import imdb as imdb_analysis

DEEPAR_MAX_DATASETS = 4


def setting_label(batch_size: int, num_workers: int, lr_schedule: bool) -> str:
    schedule = "factor LR schedule" if lr_schedule else "constant LR"
    return f"batch {int(batch_size)} / {int(num_workers)} workers, {schedule}"


def convergence_settings() -> list[dict]:
    """The 2018 post's convergence runs, as the IMDB study defines them."""
    return [dict(s, epochs=imdb_study.CONVERGENCE_EPOCHS) for s in imdb_study.CONVERGENCE_SETTINGS]


# ---------------------------------------------------------------------------------------------------- IMDB
def load_imdb(profile: str, store: ResultsStore | None = None) -> pd.DataFrame:
    """One row per (trial, epoch) of the profile's finished IMDB trials, with ``setting`` and ``wall_s`` (the
    cumulative training-pass seconds at the end of the epoch)."""
    store = store or ResultsStore.open_read(results_path())
    frame = imdb_analysis.load_sweep(profile, store=store)
    if frame.empty:
        return frame
    if "part" in frame:  # the scaling part varies sequence length, threads and n_train: not a convergence curve
        frame = frame[frame.part != "scaling"]
        if frame.empty:
            return frame
    frame = frame.sort_values(["trial_id", "epoch"]).copy()
    frame["wall_s"] = frame.groupby("trial_id")["train_time_s"].cumsum()
    frame["setting"] = [
        setting_label(b, w, s) for b, w, s in zip(frame.batch_size, frame.num_workers, frame.lr_schedule)
    ]
    return frame.reset_index(drop=True)


def curve_settings(frame: pd.DataFrame) -> tuple[list[str], bool]:
    """The settings to draw: the post's convergence settings present in ``frame`` (longest run of each), or, when
    none is, every setting of the profile. Returns (labels, is_convergence)."""
    if frame.empty:
        return [], False
    if "part" in frame and (frame.part == "quality").any():  # the paper profile: its training-quality runs
        return sorted(set(frame.loc[frame.part == "quality", "setting"])), True
    wanted = [setting_label(s["batch_size"], s["num_workers"], s["lr_schedule"]) for s in convergence_settings()]
    long = frame[frame.epochs >= convergence_settings()[0]["epochs"]]
    present = [w for w in wanted if w in set(long.setting)]
    if present:
        return present, True
    order = frame.drop_duplicates("setting").sort_values(["batch_size", "num_workers", "lr_schedule"])
    return list(order.setting), False


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
    out = []
    for s in convergence_settings():
        label = setting_label(s["batch_size"], s["num_workers"], s["lr_schedule"])
        if label not in have:
            out.append({"setting": label, "epochs": s["epochs"], "profiles": makers})
    return out


# ---------------------------------------------------------------------------------------------------- DeepAR
def load_deepar(
    profile: str, store: ResultsStore | None = None, max_datasets: int = DEEPAR_MAX_DATASETS
) -> pd.DataFrame:
    """Per-epoch DeepAR training loss (step >= 0) of the profile's finished main-part trials, for at most
    ``max_datasets`` datasets (those with the most epochs recorded, then by name)."""
    try:
        long = profile_measurements("deepar", profile, store=store)
    except Exception:  # the study's plan needs its data catalogue; without it, all rows
        long = profile_measurements("deepar", None, store=store)
    if long.empty:
        return pd.DataFrame()
    long = long[(long.metric == "train_loss") & (long.step >= 0)]
    if "config.part" in long:  # the main part only: a 1-thread or oneDNN-off rerun of a seed is not another curve
        long = long[long["config.part"].fillna("main") == "main"]
    if long.empty:
        return pd.DataFrame()
    frame = long.rename(
        columns={
            "config.dataset": "dataset",
            "config.arm": "arm",
            "config.seed": "seed",
            "step": "epoch",
            "value": "train_loss",
        }
    )
    frame = frame[["trial_id", "dataset", "arm", "seed", "epoch", "train_loss"]]
    depth = (
        frame.groupby("dataset")["epoch"].max().reset_index().sort_values(["epoch", "dataset"], ascending=[False, True])
    )
    keep = list(depth.dataset[:max_datasets])
    return frame[frame.dataset.isin(keep)].sort_values(["dataset", "arm", "seed", "epoch"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------------- prose
def _final_by_arm(frame: pd.DataFrame, setting: str, metric: str) -> dict:
    sel = frame[(frame.setting == setting) & (frame.epoch == frame.epochs - 1)]
    return sel.groupby("arm")[metric].median().to_dict()


def summary_sentences(
    profile: str,
    store: ResultsStore | None = None,
    imdb: pd.DataFrame | None = None,
    deepar: pd.DataFrame | None = None,
) -> list[str]:
    """What the curves show and what is missing, as sentences computed from the store."""
    store = store or ResultsStore.open_read(results_path())
    imdb = load_imdb(profile, store) if imdb is None else imdb
    deepar = load_deepar(profile, store) if deepar is None else deepar
    lines = []
    if imdb.empty:
        lines.append(
            f"No finished IMDB trials for profile {profile} in the store yet: run the IMDB notebook (or "
            f"`fwbench run imdb --profile {profile}`) first."
        )
    else:
        settings, is_conv = curve_settings(imdb)
        seeds = imdb.groupby("setting")["seed"].nunique()
        n_seeds = sorted(set(int(seeds[s]) for s in settings))
        lines.append(
            f"IMDB curves: {len(settings)} setting(s) of profile {profile} "
            f"({'the 2018 post' + chr(39) + 's convergence runs' if is_conv else 'its sweep settings'}), "
            f"{sorted(set(int(e) for e in imdb[imdb.setting.isin(settings)].epochs))} epochs, "
            f"{' or '.join(map(str, n_seeds))} seed(s) per arm"
            f"{'; with one seed the bands collapse to the line' if n_seeds == [1] else ''}."
        )
        for s in settings[:3]:
            loss = _final_by_arm(imdb, s, "train_loss")
            acc = _final_by_arm(imdb, s, "test_acc")
            if loss:
                arms = arm_order("imdb", loss)
                lines.append(
                    f"{s}: final train loss "
                    + ", ".join(f"{a} {loss[a]:.3f}" for a in arms)
                    + "; final test accuracy "
                    + ", ".join(f"{a} {acc[a]:.3f}" for a in arms if a in acc)
                    + "."
                )
        missing = missing_convergence(profile, imdb)
        if missing:
            makers = missing[0]["profiles"]
            lines.append(
                f"Missing for profile {profile}: the {missing[0]['epochs']}-epoch convergence runs at "
                + "; ".join(m["setting"] for m in missing)
                + (f". Profile {' / '.join(makers)} makes them (IMDB option convergence=True)." if makers else ".")
            )
    if deepar.empty:
        lines.append(
            f"No DeepAR training-loss rows for profile {profile} in the store yet: the DeepAR curves "
            "appear once the DeepAR notebook (study 'deepar') has run."
        )
    else:
        lines.append(
            f"DeepAR curves: {deepar.dataset.nunique()} dataset(s) ({', '.join(sorted(set(deepar.dataset)))}), "
            f"arms {', '.join(sorted(set(deepar.arm)))}, {int(deepar.epoch.max()) + 1} epoch(s), "
            f"{deepar.seed.nunique()} seed(s)."
        )
    return lines


def final_loss_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Final-epoch train/test loss and test accuracy per setting and arm: median and range over seeds."""
    if frame.empty:
        return pd.DataFrame()
    last = frame[frame.epoch == frame.epochs - 1]
    rows = []
    for (setting, arm), g in last.groupby(["setting", "arm"]):
        row = {"setting": setting, "arm": arm, "seeds": g.seed.nunique(), "epochs": int(g.epochs.max())}
        for m in ("train_loss", "test_loss", "test_acc"):
            if m in g:
                row[f"{m}_median"] = float(np.median(g[m]))
                row[f"{m}_range"] = float(g[m].max() - g[m].min())
        row["train_s_total"] = float(
            frame[frame.trial_id.isin(g.trial_id)].groupby("trial_id")["train_time_s"].sum().median()
        )
        rows.append(row)
    return pd.DataFrame(rows)


ACCURACY_BAR = LSTM_TEST_ACCURACY[0]  # the low end of what the Keras IMDB LSTM reaches (issue 14's bar)


def accuracy_bar_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The training-quality part (all 25k reviews in, all 25k scored): per arm, the final test accuracy (median
    and lowest over seeds), the final train loss, whether the arm passes ``ACCURACY_BAR`` (its median over seeds,
    as A8's scale floor reads it: an arm's level, not its unluckiest seed) and the seeds that ended below it."""
    if frame.empty or "part" not in frame:
        return pd.DataFrame()
    q = frame[frame.part == "quality"]
    last = q[q.epoch == q.epochs - 1]
    rows = [
        {
            "arm": arm,
            "seeds": g.seed.nunique(),
            "epochs": int(g.epochs.max()),
            "n_train": int(g.n_train.max()),
            "test_acc_median": float(g.test_acc.median()),
            "test_acc_min": float(g.test_acc.min()),
            "train_loss_median": float(g.train_loss.median()),
            "passes_bar": bool(g.test_acc.median() >= ACCURACY_BAR),
            "seeds_below": [(int(r.seed), float(r.test_acc)) for r in g.itertuples() if not r.test_acc >= ACCURACY_BAR],
        }
        for arm, g in last.groupby("arm")
    ]
    return pd.DataFrame(rows)


def accuracy_quantity(row) -> Quantity:
    """An arm's final test accuracy (a row of ``accuracy_bar_table``: the median over seeds) as the named quantity
    every page quotes."""
    return Quantity(f"imdb.test_accuracy.{row.arm}", row.test_acc_median, n=f"{row.seeds} seed(s)")


def seed_runs(frame: pd.DataFrame) -> list[dict]:
    """How the training-quality trials ran, from their configs and placement records: per (threads, most trials
    that shared the machine) the seeds and the number of trials. An accuracy is not a timing, so seeds may run two
    at once (issue 25); the post says which did."""
    if frame.empty or "part" not in frame:
        return []
    q = frame[frame.part == "quality"].drop_duplicates("trial_id")
    sharing = q.trials_sharing_host if "trials_sharing_host" in q else pd.Series(1, index=q.index)
    return [
        {"threads": int(threads), "sharing": int(shared), "seeds": sorted(set(g.seed)), "trials": len(g)}
        for (threads, shared), g in q.assign(sharing=sharing.fillna(1)).groupby(["threads", "sharing"])
    ]


def seed_runs_sentence(frame: pd.DataFrame) -> str:
    """One sentence from ``seed_runs``, e.g. "seeds 42, 43, 44 ran one trial at a time at 2 threads (12 trials);
    seeds 45, 46 ran up to 2 trials at once at 1 thread each (8 trials)"."""

    def clause(run: dict) -> str:
        seeds = ", ".join(map(str, run["seeds"]))
        plural = "s" if run["threads"] > 1 else ""
        at_once = "one trial at a time" if run["sharing"] <= 1 else f"up to {run['sharing']} trials at once"
        each = " each" if run["sharing"] > 1 else ""
        trials = f"{run['trials']} trial{'s' if run['trials'] != 1 else ''}"
        return f"seed(s) {seeds} ran {at_once} at {run['threads']} thread{plural}{each} ({trials})"

    return "; ".join(clause(run) for run in seed_runs(frame))


def accuracy_bar_markdown(frame: pd.DataFrame) -> str:
    table = accuracy_bar_table(frame)
    if table.empty:
        return "_No training-quality runs (all 25k reviews) in this profile: the `paper` profile makes them._"
    passed = ", ".join(
        f"{r.arm} {accuracy_quantity(r).markup(ci=False)} (lowest {r.test_acc_min:.3f}, {r.seeds} seed(s))"
        for r in table.itertuples()
    )
    verdict = (
        "every arm passes"
        if table.passes_bar.all()
        else "below the bar: " + ", ".join(table.loc[~table.passes_bar, "arm"])
    )
    below = [f"{r.arm} seed {seed} ({acc:.3f})" for r in table.itertuples() for seed, acc in r.seeds_below]
    return (
        f"Training quality on all {table.n_train.max():,} training reviews, scored on all 25,000 test reviews "
        f"after {table.epochs.max()} epochs: {passed}; {ACCURACY_BAR:.0%} bar (median over seeds): {verdict}"
        + (f"; single seeds below it: {', '.join(below)}" if below else "")
        + f". How they ran (an accuracy is not a timing): {seed_runs_sentence(frame)}."
    )
