"""Which stored trials this checkout uses: *current* ones, whose ``provenance.code_version`` is their study's and whose
arm its arm table has; the others are *stale* (they stay in the store, in no plan), and *superseded* where a current
trial of the very same config is stored too (a rerun replaced it: nothing is missing, and it would count twice)."""

from __future__ import annotations

import json

import pandas as pd

from .errors import FwbenchError
from .studies import get_study


def stale_reason(study_name: str, config: dict, code_version) -> str | None:
    """Why a stored trial is not used by this checkout (None when it is current)."""
    try:
        study = get_study(study_name)
    except FwbenchError:
        return "study not declared in this checkout"
    arm = config.get(study.arm_field)
    if arm not in study.arm_names:
        return f"arm {arm!r} is not in the arm table (renamed or removed)"
    if not isinstance(code_version, str):
        return "measured before code versions were recorded"
    if code_version != study.code_version():
        return "measured with other trial code"
    return None


def stale_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per stored trial this checkout does not use: ``study``, ``trial_id``, ``reason`` and ``superseded``."""
    config_cols = [c for c in trials.columns if c.startswith("config.")]
    rows = []
    if trials.empty:  # an empty store's frame has no columns to group by
        return pd.DataFrame(rows, columns=["study", "trial_id", "reason", "superseded"])
    for study_name, group in trials.groupby("study"):
        found = []  # (trial id, config key, reason: None when current)
        for _, row in group.iterrows():
            config = row[config_cols].dropna().rename(lambda c: c[len("config.") :]).to_dict()  # NaN: not set
            reason = stale_reason(study_name, config, row.get("provenance.code_version"))
            found.append((row.trial_id, json.dumps(config, sort_keys=True, default=str), reason))
        current = {key for _, key, reason in found if reason is None}
        rows += [(study_name, i, reason, key in current) for i, key, reason in found if reason]
    return pd.DataFrame(rows, columns=["study", "trial_id", "reason", "superseded"])


def without_superseded(trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` less those a rerun of the same config replaced (other stale ones kept)."""
    if trials.empty:
        return trials
    stale = stale_trials(trials)
    return trials[~trials.trial_id.isin(set(stale.trial_id[stale.superseded.astype(bool)]))]
