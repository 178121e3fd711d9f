"""Tables computed from the results store (never typed in): one module per study, shared statistics in
``stats``, and here the one way every table selects its rows (the trials of a profile's plan) and orders its arms
(the study's arm table)."""

from __future__ import annotations

import pandas as pd

from ..errors import FwbenchError
from ..paths import results_path
from ..planning import plan
from ..store import ResultsStore
from ..studies import arm_table, get_study


def arm_order(study: str, arms=None) -> list[str]:
    """The study's arms in its arm-table order (only those in ``arms`` when given); an arm the table does not
    declare is an error (``FwbenchError``), never dropped."""
    s = get_study(study)
    if arms is None:
        return list(s.arm_names)
    present = set(arms)
    for arm in present:
        s.arm(arm)
    return [a for a in s.arm_names if a in present]


def planned_ids(study: str, profile: str | None, overrides: dict | None = None) -> set | None:
    """Trial ids of a profile's grid (None for ``profile=None``: every stored trial of the study)."""
    if profile is None:
        return None
    return {t.trial_id for t in plan(study, profile, overrides)}


def profile_trials(
    study: str, profile: str | None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """The stored trials (any status) of the profile's grid."""
    return (store or ResultsStore.open_read(results_path())).trials(study, planned_ids(study, profile, overrides))


def profile_measurements(
    study: str, profile: str | None, overrides: dict | None = None, store: ResultsStore | None = None
) -> pd.DataFrame:
    """The raw values of the profile's finished (``done``) trials, long format."""
    long = (store or ResultsStore.open_read(results_path())).measurements(study, planned_ids(study, profile, overrides))
    return long[long.status == "done"] if not long.empty else long


def arms_that_ran(study: str, profile: str, store: ResultsStore | None = None) -> tuple[list[dict], str]:
    """(the rows of the study's arm table with finished trials of the profile's plan in the store: the rows every
    table reads; one sentence naming the declared arms that did not run, not in the profile's plan or planned and
    not stored, "" when every declared arm ran)."""
    s = get_study(study)
    try:
        planned = plan(study, profile)
    except FwbenchError:  # the study has no such profile
        planned = []
    field = f"config.{s.arm_field}"
    stored = (store or ResultsStore.open_read(results_path())).trials(study, {t.trial_id for t in planned})
    ran = set(stored.loc[stored.status == "done", field]) if planned and not stored.empty and field in stored else set()
    declared = arm_table(study)
    missing = [a["arm"] for a in declared if a["arm"] not in ran]
    if not missing:
        return declared, ""
    in_plan = {t.config.get(s.arm_field) for t in planned}
    unplanned, waiting = [a for a in missing if a not in in_plan], [a for a in missing if a in in_plan]
    parts = [f"{', '.join(unplanned)} (not in profile {profile}'s plan)"] if unplanned else []
    if waiting:
        parts.append(f"{', '.join(waiting)} (planned, with no finished trial in this store: the run is incomplete)")
    head = "Declared arms that did not run" if ran else "No arm of this study ran"
    return [a for a in declared if a["arm"] in ran], f"{head} in profile {profile}: {'; '.join(parts)}."
