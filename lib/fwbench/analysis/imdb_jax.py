"""JAX beside PyTorch and MXNet on the IMDB sweep's core settings: context for a reader leaving MXNet, never a
verdict on a claim (no source measured JAX).

Every number comes from the beside part: JAX and the two reference arms timed back to back in each of its repeat
blocks on one machine, never against the main grid's trials (other boots of the VM, other speeds). JAX compiles in
``prepare`` (``prepare_time_s``): the wait before the first batch, reported apart, never inside an epoch time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..quantity import Quantity
from ..stats import trial_medians, trial_ratio_ci
from ..studies import get_study
from .imdb import part, timed_epochs

BESIDE = "beside"
SETTING = ["batch_size", "num_workers"]
COLUMNS = [*SETTING, "arm", "reference", "arm_s", "reference_s", "ratio", "ci_low", "ci_high", "n_arm", "n_reference"]


def newcomers() -> list[str]:
    """The study's arms of a framework without a reference arm (JAX): what the beside part sets beside them."""
    study = get_study("imdb")
    return [a.name for a in study.arms if a.framework not in study.reference]


def beside_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per setting of the beside part and per reference arm (PyTorch's, MXNet's): the newcomer's and the
    reference's median epoch time (seconds per 25k-review epoch, the median over trials of each trial's median
    timed epoch) and ``ratio`` = newcomer / reference (>1: the newcomer is slower) with its CI over trials."""
    timed = timed_epochs(part(frame, BESIDE))
    if timed.empty:
        return pd.DataFrame(columns=COLUMNS)
    study = get_study("imdb")
    rows = []
    for key, group in timed.groupby(SETTING):
        for arm in newcomers():
            mine = trial_medians(group[group.arm == arm], "epoch_25k_s").to_numpy(float)
            for fw in study.reference:
                ref = study.reference_arm(fw)
                theirs = trial_medians(group[group.arm == ref], "epoch_25k_s").to_numpy(float)
                if not (len(mine) and len(theirs)):
                    continue
                r = trial_ratio_ci(mine, theirs)
                rows.append(
                    {
                        **dict(zip(SETTING, key)),
                        "arm": arm,
                        "reference": ref,
                        "arm_s": float(np.median(mine)),
                        "reference_s": float(np.median(theirs)),
                        **r,
                        "n_arm": r["n_num"],
                        "n_reference": r["n_den"],
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)  # drops the ratio's other fields


def prepare_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per arm of the beside part: the median and largest ``prepare_time_s`` over its trials (JAX's jit compilation
    of its training and evaluation steps; the eager arms prepare nothing: 0)."""
    rows = part(frame, BESIDE)
    if rows.empty or "prepare_time_s" not in rows:
        return pd.DataFrame(columns=["arm", "prepare_s_median", "prepare_s_max", "n"])
    per_trial = rows.groupby(["arm", "trial_id"])["prepare_time_s"].first().reset_index()
    waits = per_trial.groupby("arm")["prepare_time_s"]
    return waits.agg(prepare_s_median="median", prepare_s_max="max", n="count").reset_index()


def ratio_quantity(row) -> Quantity:
    """A row of ``beside_table`` as the named quantity every page quotes."""
    name = f"imdb.beside.{row.arm}.{row.reference}.b{int(row.batch_size)}w{int(row.num_workers)}"
    n = f"{int(row.n_arm)} + {int(row.n_reference)} trials"
    return Quantity(name, row.ratio, ci_low=row.ci_low, ci_high=row.ci_high, n=n)


def beside_facts(frame: pd.DataFrame) -> dict:
    """What the beside part's page shows (template ``imdb_beside``): ``beside_table`` with each ratio as a
    ``Quantity`` (``quantity``; an empty table when the profile has no beside part) and the arms' labels."""
    table = beside_table(frame)
    if len(table):
        table = table.assign(quantity=[ratio_quantity(r) for r in table.itertuples()])
    return {"table": table, "labels": get_study("imdb").labels()}
