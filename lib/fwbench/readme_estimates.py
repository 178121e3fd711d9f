"""The README's runtime estimates, computed from the results store by ``fwbench.estimate``: the ``paper`` profile's
wall time per study and part (block ``paper-estimate``, docs/paper-profile.md) and the ``full`` profiles' on 1 to 16
workers (block ``estimate``, docs/cluster.md). ``fwbench.readme`` lists them among its blocks and writes them where
they live. The blocks that measure the repository itself (the wall times of ``make reproduce``, of building an
environment, the harness's overhead) are written by its tools in ``tools/``."""

from __future__ import annotations

from .errors import FwbenchError
from .estimate import _human, estimate_full_runtime, stored_cpu_models
from .pages import render_markdown
from .paths import results_path
from .planning import plan
from .store import ResultsStore
from .studies import all_studies


def render_paper_estimate(store: ResultsStore | None = None) -> str:
    """The ``paper`` profile's wall time on one machine, per study and in total, extrapolated from the stored
    trials (``fwbench estimate``): capped and, for adaptive studies, expected. Each study from the CPU model most
    of its trials ran on (named in its row); a study's other models, where stored, in rows of their own below
    (a prediction for one CPU is made from that CPU's trials only). Words: template ``estimate_paper``."""
    store = store or ResultsStore.open_read(results_path())
    rows, parts, others = [], [], []
    for study in (s.name for s in all_studies() if "paper" in s.profiles):
        try:
            est = estimate_full_runtime(store, study, 1, "paper")
        except FwbenchError as exc:  # the store's own path says nothing to a reader of the README
            rows.append({"study": study, "error": str(exc).replace(str(store.path), "the store")})
            continue
        exp = est.adaptive["expected_s"] if est.adaptive else est.total_s
        kept = set(est.adaptive["expected_ids"]) if est.adaptive else set(est.per_trial)
        by_part: dict = {}
        for t in plan(study, "paper"):
            if t.trial_id in kept and t.trial_id in est.per_trial:
                n, seconds = by_part.get(t.config.get("part", "main"), (0, 0.0))
                by_part[t.config.get("part", "main")] = (n + 1, seconds + est.per_trial[t.trial_id])
        parts += [{"study": study, "part": part, "n": n, "seconds": sec} for part, (n, sec) in by_part.items()]
        rows.append({"study": study, "est": est, "expected": exp, "left": sorted(est.not_estimated.items())})
        for cpu in stored_cpu_models(store, study):
            if cpu == est.cpu:
                continue
            try:
                other = estimate_full_runtime(store, study, 1, "paper", cpu=cpu)
            except FwbenchError:
                continue
            other_exp = other.adaptive["expected_s"] if other.adaptive else other.total_s
            others.append({"study": study, "cpu": cpu, "est": other, "expected": other_exp})
    measured = [r for r in rows if "est" in r]
    return render_markdown(
        "estimate_paper",
        rows=rows,
        parts=parts,
        others=others,
        capped=sum(r["est"].total_s for r in measured),
        expected=sum(r["expected"] for r in measured),
        human=_human,
    )


def render_estimate(store: ResultsStore | None = None, workers=(1, 4, 16)) -> str:
    """How long the ``full`` profiles take, extrapolated by ``fwbench.estimate.estimate_full_runtime`` from the
    trials in the store (every registered study that has a ``full`` profile). Words: template ``estimate_full``."""
    store = store or ResultsStore.open_read(results_path())
    rows = []
    for study in (s.name for s in all_studies() if "full" in s.profiles):
        try:
            rows.append({"study": study, "est": [estimate_full_runtime(store, study, n) for n in workers]})
        except FwbenchError as exc:
            rows.append({"study": study, "error": str(exc)})
    return render_markdown("estimate_full", rows=rows, workers=workers, human=_human)
