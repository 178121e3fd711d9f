"""What DeepAR training costs per batch on every staged dataset of the 2024 post's list (the ``coverage`` part of
``studies.deepar``), and whether that cost predicts the protocol-scale trials.

- ``cost_rows``: one row per finished coverage trial: ``c_batch`` (the median of its later epochs' times / the
  batches per epoch: the first epoch is excluded as warm-up), ``warmup`` (the first epoch's excess over the
  steady one), ``fit_fixed`` (train time outside the epochs), the window (context + prediction steps).
- ``cost_table``: per dataset x arm the median of those over the coverage trials (independent processes), with
  the trial count and the spread (max / min of ``c_batch``).
- ``protocol_train_s``: the training time a dataset x arm costs at ``epochs x batches`` from its coverage cost:
  ``fit_fixed + warmup + epochs * batches * c_batch`` (the model ``fwbench.estimate`` uses for whole trials).
- ``check_against_main``: that prediction beside every main-part trial of the same profile (the protocol's
  100 x 50), with the relative error per trial. The coverage trials never see the main part's times: nothing is
  fitted to what they are checked against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..machines import cpu_model_of, one_cpu_model
from . import Results
from .deepar import STUDY, load_trials, reference_arms

COVERAGE = "coverage"
COST_COLUMNS = ["trial_id", "dataset", "arm", "seed", "window", "epochs", "num_batches_per_epoch", "c_batch",
                "warmup", "fit_fixed", "train_time_s", "threads", "background_load", "cpus_busy",
                "burner_cpu_frac", "c_batch_worst", "cpu", "trials_at_once", "trials_sharing_host",
                "omp_max_threads"]  # fmt: skip
DEFAULT_THREADS = 0  # ``threads`` of a trial with no thread setting (the libraries chose: ``omp_max_threads``)
TOLERANCE = 0.10  # the bar: the coverage cost predicts a protocol trial's training time within 10 %


def cost_rows(results: Results, part: str = COVERAGE) -> pd.DataFrame:
    """One row per finished trial of a training-only ``part`` of the profile (the coverage part by default; the
    contention part's too), columns ``COST_COLUMNS``: with the trial's threads and background load, the CPUs
    its training kept busy (``cpus_busy``, NaN where not recorded) and the share of its CPU the burner got."""
    return results.frame((STUDY, "cost_rows", part), lambda: _cost_rows(results.values(STUDY), part))


def _cost_rows(long: pd.DataFrame, part: str) -> pd.DataFrame:
    if long.empty or "config.part" not in long:
        return pd.DataFrame(columns=COST_COLUMNS)
    long = long[long["config.part"] == part]
    rows = []
    for tid, g in long.groupby("trial_id"):
        first = g.iloc[0]
        epochs = g[(g.metric == "epoch_time_s") & (g.step >= 0)].sort_values("step").value.to_numpy(float)
        whole = g[g.step == -1].set_index("metric").value
        if len(epochs) < 2 or "train_time_s" not in whole:
            continue
        steady = float(np.median(epochs[1:]))
        nb = float(first["config.num_batches_per_epoch"])
        rows.append(
            {
                "trial_id": tid,
                "dataset": first["config.dataset"],
                "arm": first["config.arm"],
                "seed": int(first["config.seed"]),
                "window": int(first["config.context_length"]) + int(first["config.prediction_length"]),
                "epochs": int(first["config.epochs"]),
                "num_batches_per_epoch": int(nb),
                "c_batch": steady / nb,
                "warmup": float(epochs[0]) - steady,
                "fit_fixed": max(float(whole["train_time_s"]) - float(epochs.sum()), 0.0),
                "train_time_s": float(whole["train_time_s"]),
                "threads": int(_or_zero(first.get("config.threads"))),  # None (no setting): DEFAULT_THREADS
                "background_load": int(_or_zero(first.get("config.background_load"))),
                "cpus_busy": float(whole.get("train_cpus_busy", np.nan)),
                "burner_cpu_frac": float(whole.get("burner_cpu_frac", 0.0)),
                "c_batch_worst": float(epochs[1:].max()) / nb,  # the slowest later epoch: a stall shows here
                "cpu": cpu_model_of(first.get("provenance.cpu_id")),
                "trials_at_once": int(_or_zero(first.get("config.trials_at_once")) or 1),
                "trials_sharing_host": int(_or_zero(first.get("provenance.trials_sharing_host")) or 1),
                "omp_max_threads": float(whole.get("omp_max_threads", np.nan)),
            }
        )
    out, _ = one_cpu_model(pd.DataFrame(rows, columns=COST_COLUMNS).assign(part=part))  # never pooled across models
    return out.drop(columns="part").reset_index(drop=True)


def _or_zero(value) -> float:
    """A config value absent from older configs (NaN in the wide frame) as 0."""
    return 0.0 if value is None or value != value else float(value)


def cost_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x arm: median ``c_batch``, ``warmup``, ``fit_fixed`` over the coverage trials, their count and
    the spread of ``c_batch`` (max / min), ordered by window."""
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


def protocol_train_s(cost: pd.Series | dict, epochs: int, batches: int) -> float:
    """Training seconds at ``epochs x batches`` from one dataset x arm's coverage cost."""
    return float(cost["fit_fixed"] + cost["warmup"] + epochs * batches * cost["c_batch"])


def check_against_main(results: Results) -> pd.DataFrame:
    """Every main-part trial of the profile whose dataset x arm has coverage trials: its measured training time,
    the coverage prediction at its epochs x batches, and ``error`` (predicted / measured - 1)."""
    cols = ["dataset", "arm", "seed", "window", "epochs", "measured_train_s", "predicted_train_s", "error"]
    cost = cost_table(cost_rows(results)).set_index(["dataset", "arm"])
    main = load_trials(results)
    if cost.empty or main.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for _, t in main.iterrows():
        key = (t.dataset, t.arm)
        if key not in cost.index:
            continue
        predicted = protocol_train_s(cost.loc[key], int(t.epochs), int(t.num_batches_per_epoch))
        rows.append(
            {
                "dataset": t.dataset,
                "arm": t.arm,
                "seed": int(t.seed),
                "window": int(t.window),
                "epochs": int(t.epochs),
                "measured_train_s": float(t.train_time_s),
                "predicted_train_s": predicted,
                "error": predicted / float(t.train_time_s) - 1.0,
            }
        )
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(["window", "dataset", "arm", "seed"], kind="stable").reset_index(drop=True)


def check_facts(check: pd.DataFrame) -> dict:
    """What the page shows of the coverage cost's prediction of the protocol trials (template
    ``deepar_coverage_check``): the check, how many fall within ``TOLERANCE`` and the largest error."""
    return {
        "check": check,
        "within": int((check.error.abs() <= TOLERANCE).sum()) if len(check) else 0,
        "largest": float(check.error.abs().max()) if len(check) else float("nan"),
        "tolerance": TOLERANCE,
    }


def cost_facts(table: pd.DataFrame) -> dict:
    """``cost_table`` one row per dataset (template ``deepar_costs``): both frameworks' cost per batch, their
    ratio (NaN where a side is missing) and trial counts, by window."""
    mx, pt = reference_arms()
    cols = ["dataset", "window", "mxnet_s", "pytorch_s", "ratio", "mxnet_trials", "pytorch_trials"]
    if table.empty:
        return {"costs": pd.DataFrame(columns=cols)}
    wide = table.pivot_table(index=["dataset", "window"], columns="arm", values=["c_batch", "n_trials"])
    rows = []
    for (dataset, window), r in wide.sort_index(level=["window", "dataset"]).iterrows():
        c_mx, c_pt = r.get(("c_batch", mx), np.nan), r.get(("c_batch", pt), np.nan)
        ratio = c_mx / c_pt if np.isfinite(c_mx) and np.isfinite(c_pt) and c_pt > 0 else np.nan
        n = [int(np.nan_to_num(r.get(("n_trials", arm), 0))) for arm in (mx, pt)]
        rows.append(dict(zip(cols, [dataset, window, c_mx, c_pt, ratio, *n])))
    return {"costs": pd.DataFrame(rows, columns=cols)}
