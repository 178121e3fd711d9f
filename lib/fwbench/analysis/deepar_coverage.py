"""What DeepAR training costs per batch on every staged dataset of the 2024 post's list (the ``coverage`` part of
``studies.deepar``), and whether that cost predicts the protocol-scale trials: ``cost_rows`` (one row per trial,
split by ``batch_cost``, the model ``fwbench.estimate`` uses too), ``cost_table`` (per dataset x arm, the median
over independent trials), ``protocol_train_s`` and ``check_against_main``. The coverage trials never see the main
part's times: nothing is fitted to what they are checked against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..machines import MACHINE, cpu_model_of, machine_of, one_cpu_model
from . import Results
from .deepar import STUDY, load_trials, reference_arms, unrolled_window

COVERAGE = "coverage"
COST_COLUMNS = ["trial_id", "dataset", "arm", "seed", "window", "epochs", "num_batches_per_epoch", "c_batch",
                "warmup", "fit_fixed", "train_time_s", "threads", "background_load", "cpus_busy",
                "burner_cpu_frac", "c_batch_worst", "cpu", MACHINE, "trials_at_once", "trials_sharing_host",
                "omp_max_threads"]  # fmt: skip
DEFAULT_THREADS = 0  # ``threads`` of a trial with no thread setting (the libraries chose: ``omp_max_threads``)
TOLERANCE = 0.10  # the bar: the coverage cost predicts a protocol trial's training time within 10 %


def cost_rows(results: Results, part: str = COVERAGE) -> pd.DataFrame:
    """One row per finished trial of a training-only ``part`` (``COST_COLUMNS``): its cost split, threads, background
    load, the CPUs its training kept busy (NaN where not recorded) and the share of its CPU the burner got."""
    return results.frame((STUDY, "cost_rows", part), lambda: _cost_rows(results.values(STUDY), part))


def trial_epochs(g: pd.DataFrame) -> tuple[pd.Series, np.ndarray]:
    """One trial's measurements as (its whole-trial values by metric, its epoch times in order)."""
    whole = g[g.step == -1].set_index("metric").value
    return whole, g[(g.metric == "epoch_time_s") & (g.step >= 0)].sort_values("step").value.to_numpy(float)


def batch_cost(epochs: np.ndarray, train_s: float, batches: float) -> dict:
    """A trial's training split: ``c_batch`` (the median later epoch / the batches per epoch: the first epoch is
    warm-up), ``warmup`` (the first epoch's excess over that median), ``fit_fixed`` (outside the epochs)."""
    steady = float(np.median(epochs[1:])) if len(epochs) > 1 else float(epochs[0])
    fit_fixed = max(train_s - float(epochs.sum()), 0.0)
    return {"c_batch": steady / batches, "warmup": float(epochs[0]) - steady, "fit_fixed": fit_fixed}


def _cost_rows(long: pd.DataFrame, part: str) -> pd.DataFrame:
    if long.empty or "config.part" not in long:
        return pd.DataFrame(columns=COST_COLUMNS)
    long = long[long["config.part"] == part]
    rows = []
    for tid, g in long.groupby("trial_id"):
        first = g.iloc[0]
        whole, epochs = trial_epochs(g)
        if len(epochs) < 2 or "train_time_s" not in whole:
            continue
        nb = float(first["config.num_batches_per_epoch"])
        rows.append(
            {
                "trial_id": tid,
                "dataset": first["config.dataset"],
                "arm": first["config.arm"],
                "seed": int(first["config.seed"]),
                "window": unrolled_window(int(first["config.context_length"]), int(first["config.prediction_length"])),
                "epochs": int(first["config.epochs"]),
                "num_batches_per_epoch": int(nb),
                **batch_cost(epochs, float(whole["train_time_s"]), nb),
                "train_time_s": float(whole["train_time_s"]),
                "threads": int(or_zero(first.get("config.threads"))),  # None (no setting): DEFAULT_THREADS
                "background_load": int(or_zero(first.get("config.background_load"))),
                "cpus_busy": float(whole.get("train_cpus_busy", np.nan)),
                "burner_cpu_frac": float(whole.get("burner_cpu_frac", 0.0)),
                "c_batch_worst": float(epochs[1:].max()) / nb,  # the slowest later epoch: a stall shows here
                "cpu": cpu_model_of(first.get("provenance.cpu_id")),
                MACHINE: machine_of(first.get("provenance.boot_id")),
                "trials_at_once": int(or_zero(first.get("config.trials_at_once")) or 1),
                "trials_sharing_host": int(or_zero(first.get("provenance.trials_sharing_host")) or 1),
                "omp_max_threads": float(whole.get("omp_max_threads", np.nan)),
            }
        )
    out, _ = one_cpu_model(pd.DataFrame(rows, columns=COST_COLUMNS).assign(part=part))  # never pooled across models
    return out.drop(columns="part").reset_index(drop=True)


def or_zero(value) -> float:
    """A config value absent from older configs (None, or NaN in the wide frame) as 0."""
    return 0.0 if value is None or value != value else float(value)


def cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x arm, by window: the median cost split over its trials, their count and the spread of
    ``c_batch`` (max / min)."""
    cols = ["dataset", "arm", "window", "n_trials", "c_batch", "c_batch_spread", "warmup", "fit_fixed"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    out = (
        rows.groupby(["dataset", "arm"])
        .agg(
            window=("window", "first"),
            n_trials=("trial_id", "count"),
            c_batch=("c_batch", "median"),
            c_batch_spread=("c_batch", lambda v: float(v.max() / v.min()) if v.min() > 0 else np.nan),
            warmup=("warmup", "median"),
            fit_fixed=("fit_fixed", "median"),
        )
        .reset_index()
    )
    return out.sort_values(["window", "dataset", "arm"], kind="stable").reset_index(drop=True)[cols]


def protocol_train_s(cost, epochs, batches):
    """Training seconds at ``epochs x batches`` from a dataset x arm's coverage cost (a row, or columns):
    ``fit_fixed + warmup + epochs * batches * c_batch``."""
    return cost["fit_fixed"] + cost["warmup"] + epochs * batches * cost["c_batch"]


def check_against_main(results: Results) -> pd.DataFrame:
    """Every main-part trial whose dataset x arm has coverage trials: its measured training time, the coverage
    prediction at its epochs x batches, ``error`` (predicted / measured - 1) and ``other_boot`` (it ran on a machine
    no coverage trial ran on: a boot's speed is in its error too)."""
    cols = ["dataset", "arm", "seed", "window", "epochs", "measured_train_s", "predicted_train_s", "error",
            "other_boot"]  # fmt: skip
    rows = cost_rows(results)
    cost, main = cost_table(rows), load_trials(results)
    if cost.empty or main.empty:
        return pd.DataFrame(columns=cols)
    main = main.assign(other_boot=~main[MACHINE].isin(set(rows[MACHINE])))
    t = main.merge(cost.drop(columns="window"), on=["dataset", "arm"])
    t = t.astype({"seed": int, "window": int, "epochs": int, "num_batches_per_epoch": int})
    t["predicted_train_s"] = protocol_train_s(t, t.epochs, t.num_batches_per_epoch)
    t = t.assign(measured_train_s=t.train_time_s, error=t.predicted_train_s / t.train_time_s - 1.0)
    return t[cols].sort_values(["window", "dataset", "arm", "seed"], kind="stable").reset_index(drop=True)


def check_facts(check: pd.DataFrame) -> dict:
    """The check (template ``deepar_coverage_check``), how many fall within ``TOLERANCE`` and the largest error."""
    within = int((check.error.abs() <= TOLERANCE).sum()) if len(check) else 0
    largest = float(check.error.abs().max()) if len(check) else float("nan")
    other_boot = int(check.other_boot.sum()) if len(check) else 0
    return {"check": check, "within": within, "largest": largest, "tolerance": TOLERANCE, "other_boot": other_boot}


def cost_facts(table: pd.DataFrame) -> dict:
    """``cost_table`` one row per dataset (template ``deepar_costs``): both frameworks' cost per batch, their ratio
    and trial counts."""
    arms = list(reference_arms())
    cols = ["dataset", "window", "mxnet_s", "pytorch_s", "ratio", "mxnet_trials", "pytorch_trials"]
    if table.empty:
        return {"costs": pd.DataFrame(columns=cols)}
    wide = table.pivot_table(index=["dataset", "window"], columns="arm", values=["c_batch", "n_trials"])
    wide = wide.sort_index(level=["window", "dataset"])
    c, n = wide["c_batch"].reindex(columns=arms), wide["n_trials"].reindex(columns=arms).fillna(0).astype(int)
    ratio = (c[arms[0]] / c[arms[1]]).where(c[arms[1]] > 0)
    costs = pd.concat([c, ratio, n], axis=1).reset_index()
    return {"costs": costs.set_axis(cols, axis=1)}
