"""What the store holds, per study: done, failed, and the rows no plan of this checkout uses (``fwbench status``).

A stored trial is *current* when its ``provenance.code_version`` is the study's ``code_version()`` and its arm is
in the study's arm table. Otherwise it is *stale*, with the reason: measured with other code, measured before code
versions were recorded, an arm the arm table no longer has, or a study this checkout does not declare. Stale rows
stay in the store; the analysis never uses them (they are in no plan), so rerun the profile.

With a profile that uses adaptive repeats, the plan counts every block up to the cap: "missing" then includes
blocks the rule skips, and a line per study says what the rule did (``fwbench.analysis.adaptive``; the
per-setting table with ``fwbench status --profile P --adaptive``).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from . import prose
from .analysis.adaptive import adaptive_report
from .errors import FwbenchError
from .planning import plan
from .store import ResultsStore
from .studies import get_study, study_names
from .studies.adaptive import spec_of


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


def _config_key(row: pd.Series, columns: list[str]) -> str:
    """A trial's config as one comparable value (lists and other unhashable values included; NaN: not set)."""
    values = {c: row[c] for c in columns if not (isinstance(row[c], float) and math.isnan(row[c]))}
    return json.dumps(values, sort_keys=True, default=str)


def stale_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per stored trial this checkout does not use: ``study``, ``trial_id``, ``reason`` and ``superseded``
    (a current trial of the very same config is stored too: a rerun replaced it, so nothing is missing)."""
    config_cols = [c for c in trials.columns if c.startswith("config.")]
    rows = []
    for study_name, group in trials.groupby("study"):
        found = []  # (trial id, config key, reason: None when current)
        for _, row in group.iterrows():
            config = {c[len("config.") :]: row[c] for c in config_cols}
            reason = stale_reason(study_name, config, row.get("provenance.code_version"))
            found.append((row.trial_id, _config_key(row, config_cols), reason))
        current = {key for _, key, reason in found if reason is None}
        rows += [(study_name, i, reason, key in current) for i, key, reason in found if reason]
    return pd.DataFrame(rows, columns=["study", "trial_id", "reason", "superseded"])


def status_lines(
    store: ResultsStore, study: str | None = None, profile: str | None = None, adaptive_table: bool = False
) -> list[str]:
    trials = store.trials(study)
    lines = [f"results store: {store.path}"]
    if trials.empty:
        lines.append("no trials recorded yet")
    else:
        counts = trials.groupby(["study", "status"]).size().unstack(fill_value=0)
        lines.append(counts.to_string())
        stale = stale_trials(trials)
        for (study_name, reason), g in stale.groupby(["study", "reason"]):
            replaced = int(g.superseded.sum())
            lines.append(
                f"stale {study_name}: {len(g)} trial(s) not used by this checkout: {reason}"
                + (f" ({replaced} of them replaced by a rerun of the same config)" if replaced else "")
                + ("; rerun the profile to measure the rest with the current code" if replaced < len(g) else "")
            )
        for _, row in trials[trials.status == "failed"].iterrows():
            lines.append(f"failed {row.study} {row.trial_id}: {row.error}")
    if profile:
        names = [study] if study else study_names()
        for name in [n for n in names if profile in get_study(n).profiles]:
            planned = plan(name, profile)
            status = store.status_of(t.trial_id for t in planned)
            missing = [t for t in planned if status.get(t.trial_id) != "done"]
            lines.append(
                f"{name}/{profile}: {len(planned) - len(missing)} of {len(planned)} done, "
                f"{len(missing)} missing or failed"
            )
            lines += _adaptive_lines(store, name, profile, adaptive_table)
    return lines


def _adaptive_lines(store: ResultsStore, study: str, profile: str, table: bool) -> list[str]:
    """What adaptive repeats did for a profile that uses them (nothing for fixed repeats)."""
    if spec_of(get_study(study).resolve(profile)) is None:
        return []
    frame = adaptive_report(store, study, profile)
    return prose.adaptive_status(frame, study, profile) + ([prose.adaptive_table(frame)] if table else [])
