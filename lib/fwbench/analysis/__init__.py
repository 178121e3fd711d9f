"""Tables computed from the results store (never typed in): one module per study, shared statistics in
``stats``, and here the one way every table selects its rows (the trials of a profile's plan) and orders its arms
(the study's arm table)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..errors import FwbenchError
from ..paths import results_path
from ..planning import plan
from ..stale import stale_trials
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


@dataclass
class Results:
    """One store read for one profile, loaded once per page or notebook: each study's trials (any status) and raw
    values of its finished trials, read on first use and kept with the frames built from them (``frame``). Every
    analysis function takes one; none reads the store. ``profile`` None takes every stored row (no plan selects
    them); ``overrides`` maps a study to its profile overrides (a notebook's parameters). The frames are shared,
    not copied: a caller that changes one copies it first."""

    store: ResultsStore
    profile: str | None = None
    overrides: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, profile: str | None = None, overrides: dict | None = None, path=None) -> Results:
        """The results store at ``path`` (default: ``results_path()``), read-only; ``profile`` "all" is None."""
        profile = None if profile == "all" else profile
        return cls(ResultsStore.open_read(path or results_path()), profile, dict(overrides or {}))

    def frame(self, key, make):
        """``make()``'s result, computed once per key (a study's loader and its arguments) and kept."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def overrides_of(self, study: str) -> dict | None:
        return self.overrides.get(study) or None

    def with_overrides(self, study: str, overrides: dict | None) -> Results:
        """The same store and profile with ``study``'s overrides replaced (its own cache, kept here)."""
        if (overrides or None) == self.overrides_of(study):
            return self
        key = ("with_overrides", study, repr(sorted((overrides or {}).items())))
        return self.frame(key, lambda: self._view({**self.overrides, study: overrides}))

    def whole_profile(self) -> Results:
        """The same store and profile without overrides (a notebook's parameters narrow its tables; the ledger and
        the answer judge the whole profile); ``self`` where every override is None."""
        if not any(v is not None for o in self.overrides.values() for v in (o or {}).values()):
            return self
        return self.frame("whole_profile", lambda: self._view({}))

    def _view(self, overrides: dict) -> Results:  # shares every_row: the rows are read and judged stale once
        return Results(self.store, self.profile, overrides, {"every_row": self.every_row()})

    def every_row(self) -> Results:
        """The same store without a profile: every stored row (the GEMM peak, a fallback to any profile)."""
        return self if self.profile is None else self.frame("every_row", lambda: Results(self.store))

    def stale(self) -> pd.DataFrame:
        """``stale.stale_trials`` of every stored row, worked out once per store (a superseded trial is one whatever
        profile or part reads it)."""
        every = self.every_row()
        return every.frame("stale", lambda: stale_trials(every.trials()))

    def finished(self, study: str | None = None, drop: str | None = "superseded") -> pd.DataFrame:
        """The profile's finished trials (every profile's without one) of ``study`` (None: every study), any plan, part
        or CPU model, less those a rerun of the same config replaced (``drop`` "stale": every stale one; None: none)."""
        every = self.every_row()
        t = every.trials(study)
        if t.empty:
            return t
        stale = every.stale()
        dropped = stale.trial_id if drop == "stale" else stale.trial_id[stale.superseded.astype(bool)] if drop else ()
        t = t[(t.status == "done") & ~t.trial_id.isin(set(dropped))]
        return t if self.profile is None or "profile" not in t else t[t.profile == self.profile]

    def has(self, study: str) -> bool:
        """Whether the study defines the profile (a study without it contributes no rows)."""
        return self.profile is None or self.profile in get_study(study).profiles

    def planned_ids(self, study: str | None) -> set | None:
        """Trial ids of the profile's grid (None without a profile or a study: every stored trial)."""
        if self.profile is None or study is None:
            return None
        return self.frame(
            ("planned", study),
            lambda: (
                {t.trial_id for t in plan(study, self.profile, self.overrides_of(study))} if self.has(study) else set()
            ),
        )

    def trials(self, study: str | None = None) -> pd.DataFrame:
        """The stored trials (any status) of the profile's grid (``study`` None: of every study, every trial)."""
        return self.frame(("trials", study), lambda: self.store.trials(study, self.planned_ids(study)))

    def values(self, study: str) -> pd.DataFrame:
        """The raw values of the profile's finished (``done``) trials, long format."""

        def make() -> pd.DataFrame:
            long = self.store.measurements(study, self.planned_ids(study))
            return long[long.status == "done"] if not long.empty else long

        return self.frame(("values", study), make)


def arms_that_ran(study: str, results: Results) -> tuple[list[dict], dict]:
    """(the rows of the study's arm table with finished trials of the profile's plan; the declared arms that did
    not run: ``unplanned`` (not in the plan), ``waiting`` (planned, no finished trial stored) and ``any_ran``)."""
    s = get_study(study)
    try:
        in_plan = {t.config.get(s.arm_field) for t in plan(study, results.profile)}
    except FwbenchError:  # the study has no such profile
        in_plan = set()
    field = f"config.{s.arm_field}"
    stored = results.trials(study) if in_plan else pd.DataFrame()
    ran = set(stored.loc[stored.status == "done", field]) if not stored.empty and field in stored else set()
    declared = arm_table(study)
    missing = [a["arm"] for a in declared if a["arm"] not in ran]
    not_run = {
        "unplanned": [a for a in missing if a not in in_plan],
        "waiting": [a for a in missing if a in in_plan],
        "any_ran": bool(ran),
    }
    return [a for a in declared if a["arm"] in ran], not_run
