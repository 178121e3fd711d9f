"""Whether the ``paper`` profile's run is complete: per study, the trials it needs (adaptive studies: their minimum
blocks) and how many are stored with this checkout's code, the wall time of the finished ones and the machines
(boots) they ran on. Read by ``make readme`` (the headline waits for a complete run; the paper-sofar block)."""

from __future__ import annotations

import pandas as pd

from .planning import plan
from .store import ResultsStore
from .studies import adaptive, all_studies


def required_trials(study) -> list:
    """The trials ``study``'s ``paper`` profile needs: every planned trial, but for adaptive studies only the
    blocks every setting runs (below ``min_blocks``, and every block of a part that declares its own,
    ``Study.fixed_block_parts``); later blocks are optional, and so are the parts measured as pieces per CPU model
    (``Study.piece_parts``: a named CPU's trials, not the unnamed plan's)."""
    spec = adaptive.spec_of(study.resolve("paper", None))
    return [
        t
        for t in plan(study.name, "paper")
        if t.config.get("part") not in study.piece_parts
        and (
            spec is None
            or adaptive.block_of(study, t.config) < spec.min_blocks
            or adaptive.in_fixed_part(study, t.config)
        )
    ]


def paper_progress_by_study(store: ResultsStore) -> dict[str, tuple[int, int]]:
    """Per study, (done, needed) trials of its ``paper`` profile with this checkout's code (``required_trials``)."""
    progress = {}
    for study in (s for s in all_studies() if "paper" in s.profiles):
        trials = required_trials(study)
        status = store.status_of(t.trial_id for t in trials)
        progress[study.name] = (sum(status.get(t.trial_id) == "done" for t in trials), len(trials))
    return progress


def paper_progress(store: ResultsStore, progress: dict | None = None) -> tuple[int, int]:
    """(done, needed) trials of every study's ``paper`` profile: ``progress`` (``paper_progress_by_study``'s
    answer, computed here when not given), summed."""
    counts = (progress if progress is not None else paper_progress_by_study(store)).values()
    return sum(d for d, _ in counts), sum(n for _, n in counts)


def progress_rows(store: ResultsStore, progress: dict) -> list[dict]:
    """Per study (``paper_progress_by_study``'s ``progress``): required trials ``done`` of ``needed``, the wall time
    of its finished paper trials (``seconds``, None without any) and the ``machines`` (boots) they ran on (template
    ``readme_paper_sofar``)."""
    trials = store.trials()
    trials = trials[(trials.profile == "paper") & (trials.status == "done")] if not trials.empty else trials
    rows = []
    for study, (d, n) in progress.items():
        mine = trials[trials.study == study] if not trials.empty else trials
        rows.append({"study": study, "done": d, "needed": n, "seconds": _wall_s(mine), "machines": _machines(mine)})
    return rows


def _wall_s(trials) -> float | None:
    if trials.empty:
        return None
    start, end = (pd.to_datetime(trials[c], utc=True, format="ISO8601") for c in ("started_at", "ended_at"))
    return float((end - start).dt.total_seconds().sum())


def _machines(trials) -> str:
    column = "provenance.boot_id"
    if trials.empty or column not in trials:
        return "-"
    unrecorded = int(trials[column].isna().sum())
    return str(trials[column].nunique()) + (f" (+{unrecorded} trials unrecorded)" if unrecorded else "")
