"""Which stored trials this checkout uses: *current* ones, whose ``provenance.code_version`` is their study's and whose
arm its arm table has; the others are *stale* (they stay in the store, in no plan), and *superseded* where a current
trial of the very same config is stored too (a rerun replaced it: nothing is missing, and it would count twice)."""

from __future__ import annotations

import json

import pandas as pd

from .errors import FwbenchError
from .studies import get_study, study_names


def stale_reason(study_name: str, config: dict, code_version, current: str | None = None) -> str | None:
    """Why a stored trial is not used by this checkout (None when it is current). ``current`` is the study's code
    fingerprint where the caller judges many rows against it (computing it reads every fingerprinted source)."""
    try:
        study = get_study(study_name)
    except FwbenchError:
        return "study not declared in this checkout"
    arm = config.get(study.arm_field)
    if arm not in study.arm_names:
        return f"arm {arm!r} is not in the arm table (renamed or removed)"
    if not isinstance(code_version, str):
        return "measured before code versions were recorded"
    return "measured with other trial code" if code_version != (current or study.code_version()) else None


def stale_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per stored trial this checkout does not use: ``study``, ``trial_id``, ``reason`` and ``superseded``."""
    config_cols = [c for c in trials.columns if c.startswith("config.")]
    rows = []
    if trials.empty:  # an empty store's frame has no columns to group by
        return pd.DataFrame(rows, columns=["study", "trial_id", "reason", "superseded"])
    for study_name, group in trials.groupby("study"):
        current = get_study(study_name).code_version() if study_name in study_names(hidden=True) else None
        found = []  # (trial id, config key, reason: None when current)
        versions = group.get("provenance.code_version", pd.Series(None, index=group.index))
        for trial_id, cells, code_version in zip(group.trial_id, group[config_cols].to_dict("records"), versions):
            # NaN where the trial's config lacks the key (v != v), as dropna would drop it
            config = {c[len("config.") :]: v for c, v in cells.items() if v is not None and v == v}
            reason = stale_reason(study_name, config, code_version, current)
            found.append((trial_id, json.dumps(config, sort_keys=True, default=str), reason))
        current_keys = {key for _, key, reason in found if reason is None}
        rows += [(study_name, i, reason, key in current_keys) for i, key, reason in found if reason]
    return pd.DataFrame(rows, columns=["study", "trial_id", "reason", "superseded"])


def without_superseded(trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` less those a rerun of the same config replaced (other stale ones kept)."""
    if trials.empty:
        return trials
    stale = stale_trials(trials)
    return trials[~trials.trial_id.isin(set(stale.trial_id[stale.superseded.astype(bool)]))]
