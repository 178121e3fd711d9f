"""The README's runtime estimates, computed from the results store by ``fwbench.estimate``: the ``paper`` profile's
wall time per study and part (block ``paper-estimate``, docs/paper-profile.md) and the ``full`` profiles' on 1 to 16
workers (block ``estimate``, docs/cluster.md). ``fwbench.readme`` lists them among its blocks; the blocks that
measure the repository itself are written by its tools in ``tools/``."""

from __future__ import annotations

from .errors import FwbenchError
from .estimate import estimate_full_runtime, stored_cpu_models
from .pages import render_markdown
from .paths import results_path
from .planning import plan
from .store import ResultsStore
from .studies import all_studies


def render_paper_estimate(store: ResultsStore | None = None) -> str:
    """The ``paper`` profile's wall time on one machine, per study and in total (template ``estimate_paper``), from
    the CPU model most of its trials naming no CPU ran on; each other stored model in a row of its own."""
    store = store or ResultsStore.open_read(results_path())
    rows, parts, others = [], [], []
    for study in (s.name for s in all_studies() if "paper" in s.profiles):
        try:
            est = estimate_full_runtime(store, study, 1, "paper")
        except FwbenchError as exc:  # the store's own path says nothing to a reader of the README
            rows.append({"study": study, "error": str(exc).replace(str(store.path), "the store")})
            continue
        rows.append({"study": study, "est": est})
        kept = set(est.adaptive["expected_ids"]) if est.adaptive else set(est.per_trial)
        by_part: dict = {}  # part -> its kept trials' predicted seconds
        for t in plan(study, "paper"):
            if t.trial_id in kept and t.trial_id in est.per_trial:
                by_part.setdefault(t.config.get("part", "main"), []).append(est.per_trial[t.trial_id])
        parts += [{"study": study, "part": part, "n": len(s), "seconds": sum(s)} for part, s in by_part.items()]
        for cpu in (m for m in stored_cpu_models(store, study) if m != est.cpu):
            try:
                others.append(
                    {"study": study, "cpu": cpu, "est": estimate_full_runtime(store, study, 1, "paper", cpu=cpu)}
                )
            except FwbenchError:
                continue
    measured = [r["est"] for r in rows if "est" in r]
    capped, expected = sum(e.total_s for e in measured), sum(e.expected_s for e in measured)
    return render_markdown("estimate_paper", rows=rows, parts=parts, others=others, capped=capped, expected=expected)


def render_estimate(store: ResultsStore | None = None, workers=(1, 4, 16)) -> str:
    """How long the ``full`` profiles take on each count of ``workers``, extrapolated from the trials in the store
    (every registered study that has a ``full`` profile; template ``estimate_full``)."""
    store = store or ResultsStore.open_read(results_path())
    rows = []
    for study in (s.name for s in all_studies() if "full" in s.profiles):
        try:
            rows.append({"study": study, "est": [estimate_full_runtime(store, study, n) for n in workers]})
        except FwbenchError as exc:
            rows.append({"study": study, "error": str(exc)})
    return render_markdown("estimate_full", rows=rows, workers=workers)
