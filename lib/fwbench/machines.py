"""Trials of one comparison that ran on different machines: the machine's speed taken out, setting by setting.

A run made in pieces lands on VMs that share a name, a CPU name and a core count but not a speed (the same IMDB
trials once ran 1.6x faster than a day before), so the repeat blocks of one setting can sit on different machines.
Every arm of a setting runs in each block, back to back on one machine, so within a (setting, machine) cell the
arms are balanced. ``machine_factors`` gives each complete cell a factor: the mean over the setting's arms of each
arm's mean log time in the cell, against the same averaged over the setting's complete cells. Dividing a trial's
times by it takes the machine out (log time = arm + machine + noise) while the arms' ratios stay those measured
within machines, so an interval over the adjusted trials is not widened by machine speed. Decisions:

- With one machine in a setting nothing changes (factor exactly 1).
- A cell that lacks one of the setting's arms (a block split across machines: ``fwbench run --stop-file`` avoids
  it) cannot be adjusted; its trials are dropped from the comparison and counted, never pooled unadjusted.
- A trial's machine is its ``provenance.boot_id``; trials stored without it are one machine, ``not recorded``.
- The adjustment applies within one CPU model only (``one_cpu_model`` first): across models the arms do not move
  together (on an Intel Xeon MXNet slows more than PyTorch, and subnormal floats slow the IMDB LSTM 5-13x where an
  AMD EPYC barely notices), so a factor common to all arms would be false there.
- It spends degrees of freedom the Welch interval does not know of (one per extra machine): with several blocks
  per machine the interval is a little optimistic, which docs/paper-profile.md says.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from .provenance import cpu_key

MACHINE = "machine"
CPU = "cpu"
NOT_RECORDED = "not recorded"
VENDOR_NAMES = {"AuthenticAMD": "AMD EPYC", "GenuineIntel": "Intel Xeon"}
SCALED, INVERSE = ("train_time_s", "epoch_25k_s"), ("samples_per_s",)  # epoch columns: times, and rates


def machine_of(boot_id) -> str:
    return boot_id if isinstance(boot_id, str) and boot_id else NOT_RECORDED


def cpu_model_of(cpu_id) -> str:
    """The CPU model (``provenance.cpu_key``) of a recorded ``provenance.cpu_id``; ``not recorded`` before it was."""
    return cpu_key(cpu_id) or NOT_RECORDED


def cpu_name(model: str) -> str:
    """'Intel Xeon 6/207' for 'GenuineIntel/6/207': the vendor's server line and the family/model that tell its
    generations apart."""
    vendor, _, rest = model.partition("/")
    return f"{VENDOR_NAMES.get(vendor, vendor)} {rest}".strip()


def one_cpu_model(frame: pd.DataFrame, part: str = "part", exempt: tuple[str, ...] = ()) -> tuple[pd.DataFrame, dict]:
    """Rows of ``frame`` (with a ``cpu`` column) whose comparisons stay within one CPU model: per ``part``, the
    trials of the model that ran most of the part's trials (ties: the first model by name); the others are dropped,
    never pooled, and counted per (part, model) in the second value. Parts in ``exempt`` (an accuracy, not a
    timing) keep every model. A trial that names its CPU in its config (``fwbench.conditions``) is its own condition
    and is selected by it, so this only guards the trials that name none."""
    if frame.empty or CPU not in frame or frame[CPU].nunique() <= 1:
        return frame, {}
    keep, dropped = [], {}
    for name, group in frame.groupby(part, dropna=False, sort=False):
        if name in exempt or group[CPU].nunique() == 1:
            keep.append(group)
            continue
        counts = group.groupby(CPU).trial_id.nunique()
        chosen = sorted(counts.index, key=lambda m: (-counts[m], m))[0]
        keep.append(group[group[CPU] == chosen])
        for model in counts.index.drop(chosen):
            dropped[(name, model)] = int(counts[model])
    return pd.concat(keep).sort_index(), dropped


def models_by_own_run(trials: pd.DataFrame) -> list[str]:
    """The CPU models finished ``trials`` (a store's trial rows) ran on: the profile's own run's first (most trials
    whose config names no CPU; a piece run for a CPU, ``--set cpu=this``, is a condition of its own), then by trials,
    then by name. What the estimate extrapolates from and the first line names first, whichever has more trials."""
    if trials.empty or "provenance.cpu_id" not in trials:
        return []
    models = trials["provenance.cpu_id"].map(cpu_model_of)
    own = trials["config.cpu"].isna() if "config.cpu" in trials else pd.Series(True, index=trials.index)
    return sorted(set(models), key=lambda m: (-(own & (models == m)).sum(), -(models == m).sum(), m))


def machine_factors(cells: dict, arms) -> dict:
    """``cells``: machine -> arm -> positive values. The factor of each machine whose cell holds every arm of
    ``arms``; machines missing from the result are incomplete cells. One complete machine: factor 1."""
    arms = set(arms)
    levels = {
        m: float(np.mean([np.mean(np.log(np.asarray(v, dtype=float))) for v in by_arm.values()]))
        for m, by_arm in cells.items()
        if set(by_arm) >= arms and all(len(v) for v in by_arm.values())
    }
    if len(levels) <= 1:
        return {m: 1.0 for m in levels}
    overall = sum(levels.values()) / len(levels)
    return {m: math.exp(level - overall) for m, level in levels.items()}


def centre_by_machine(frame: pd.DataFrame, setting: list[str]) -> tuple[pd.DataFrame, list]:
    """Epoch rows (``frame`` with ``machine`` and ``arm`` columns) with the machine's speed divided out per
    ``setting``: the factor is taken from ``train_time_s``, the ``SCALED`` columns are divided by it, the
    ``INVERSE`` ones multiplied. Returns the frame and the ids of the trials dropped for an incomplete cell. Frames
    with one machine come back as they are."""
    if frame.empty or MACHINE not in frame or frame[MACHINE].nunique() <= 1:
        return frame, []
    parts, dropped = [], []
    for _, group in frame.groupby(setting, dropna=False, observed=True, sort=False):
        if group[MACHINE].nunique() == 1:
            parts.append(group)
            continue
        basis = group[group.epoch > 0] if "epoch" in group else group  # timed epochs: not the warm-up's JIT
        cells = {
            m: {a: g["train_time_s"].to_numpy() for a, g in c.groupby("arm", observed=True)}
            for m, c in basis.groupby(MACHINE)
        }
        factors = machine_factors(cells, set(group["arm"]))
        for m, cell in group.groupby(MACHINE):
            if m not in factors:
                dropped += sorted(set(cell.trial_id))
                continue
            cell = cell.copy()
            for column in SCALED:
                if column in cell:
                    cell[column] = cell[column] / factors[m]
            for column in INVERSE:
                if column in cell:
                    cell[column] = cell[column] * factors[m]
            parts.append(cell)
    out = pd.concat(parts) if parts else frame.iloc[:0]
    return out.sort_index(), dropped


def adjust_records(records: list, arms_by_setting: dict) -> list:
    """The adaptive rule's per-trial records (``studies.adaptive.TrialRecord``) with each done value divided by
    its (setting, machine) factor, as ``centre_by_machine`` does for ``analysis.imdb``; NaN in an incomplete cell."""
    cells: dict = {}
    for r in records:
        if r.status == "done" and not math.isnan(r.value):
            cells.setdefault(r.setting, {}).setdefault(r.machine, {}).setdefault(r.arm, []).append(r.value)
    factors = {s: machine_factors(c, arms_by_setting.get(s, ())) for s, c in cells.items() if len(c) > 1}
    return [
        r
        if r.setting not in factors or r.status != "done" or math.isnan(r.value)
        else replace(r, value=r.value / factors[r.setting][r.machine] if r.machine in factors[r.setting] else math.nan)
        for r in records
    ]
