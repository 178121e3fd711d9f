"""What the store holds, per study: done, failed, and the rows no plan of this checkout uses (``fwbench status``;
which those are and why: ``fwbench.stale``). The analysis never uses them (they are in no plan), so rerun the profile.

With a profile that uses adaptive repeats, the plan counts every block up to the cap: "missing" then includes
blocks the rule skips, and a line per study says what the rule did (``fwbench.analysis.adaptive``; the
per-setting table with ``fwbench status --profile P --adaptive``).
"""

from __future__ import annotations

from . import prose
from .analysis.adaptive import adaptive_report
from .pages import render_markdown
from .planning import plan
from .stale import stale_trials
from .store import ResultsStore
from .studies import get_study, study_names
from .studies.adaptive import spec_of


def status_lines(
    store: ResultsStore, study: str | None = None, profile: str | None = None, adaptive_table: bool = False
) -> list[str]:
    """``fwbench status`` (template ``status``): the stored trials per study and status, the stale ones by reason, the
    failed ones, and per study of ``profile`` its plan's trials done and what adaptive repeats did."""
    trials = store.trials(study)
    stale = stale_trials(trials).groupby(["study", "reason"]) if not trials.empty else []
    progress = []
    for name in [n for n in ([study] if study else study_names()) if profile in get_study(n).profiles]:
        planned = plan(name, profile)
        status = store.status_of(t.trial_id for t in planned)
        done = sum(status.get(t.trial_id) == "done" for t in planned)
        adaptive = _adaptive_lines(store, name, profile, adaptive_table)
        progress.append({"study": name, "done": done, "planned": len(planned), "adaptive": adaptive})
    facts = {
        "path": store.path,
        "counts": None if trials.empty else trials.groupby(["study", "status"]).size().unstack(fill_value=0),
        "stale": [(*k, len(g), int(g.superseded.sum())) for k, g in stale],
        "failed": trials[trials.status == "failed"] if not trials.empty else trials,
    }
    return render_markdown("status", **facts, profile=profile, progress=progress).split("\n")


def _adaptive_lines(store: ResultsStore, study: str, profile: str, table: bool) -> list[str]:
    """What adaptive repeats did for a profile that uses them (nothing for fixed repeats)."""
    if spec_of(get_study(study).resolve(profile)) is None:
        return []
    frame = adaptive_report(store, study, profile)
    return prose.adaptive_status(frame, study, profile) + ([prose.adaptive_table(frame)] if table else [])
