"""The prose of the pages: each section's facts (``fwbench.analysis``, ``fwbench.ledger``) rendered by its template
(``pages.render_markdown``). The README, the notebooks, the post and the command line (``fwbench status``,
``fwbench estimate --check``) call these, so one section reads the same everywhere."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from . import answer, ledger
from .analysis import (
    Results,
    adaptive,
    convergence,
    dataparallel,
    deepar,
    deepar_conditions,
    deepar_coverage,
    deepar_prediction,
    framework_comparison,
    imdb_jax,
    inference,
    mase_reference,
)
from .analysis import imdb as imdb_analysis
from .ledger import render as ledger_render
from .ledger import validity
from .pages import render_markdown
from .published import deepar2024


def _section(template: str, facts: Callable[..., dict]) -> Callable[..., str]:
    """A section that is only its facts in its words: ``template`` rendered with ``facts``' result."""

    def render(*args, **kwargs) -> str:
        return render_markdown(template, **facts(*args, **kwargs))

    return render


# ---------------------------------------------------------------------------------------------------- the answer
def answer_text(a: answer.Answer, heading: str | None = "## The answer") -> str:
    """The answer with quantity spans: the README's front page, the post's first screen."""
    gap = a.gap if a.gap is not None and not a.gap["factors"].empty else None
    post = gap.get("post") if gap else None
    return render_markdown(
        "answer",
        a=a,
        heading=heading,
        label=answer.label,
        reading_of=answer.reading,
        gpu_verdict=answer.GPU_VERDICT,
        full_hybrid_arm=answer.FULL_HYBRID_ARM,
        pt=answer.PT,
        cpu=a.limits.get("cpu"),
        verdict_counts=ledger_verdicts(a.ledger, ledger.PRECEDENCE),
        post_ratio=deepar2024.post_ratio(),
        post_stated=deepar2024.CLAIMED_SPEEDUP,
        factors=deepar_factors(gap) if gap else "",
        post_conditions=post_conditions(post, answer=True) if post and post["chosen"] is not None else "",
    )


def answer_study(a: answer.Answer, study: str) -> str:
    """What a study's notebook closes with: the ledger's claims on its rows (for IMDB, the best settings and the
    accuracy first), quoted from the answer, never recomputed."""
    return render_markdown("answer_study", a=a, study=study, pt=answer.PT, claims=answer.claims(a, study))


def answer_ledger(a: answer.Answer) -> str:
    """The claims ledger as one Markdown table, each claim's deciding estimate as its quantity span."""
    rows = [(row, answer.claim_quantity(row)) for row in a.ledger.itertuples()]
    return render_markdown("answer_ledger", rows=rows, ci_header=ledger_ci("header"), below_scale=ledger.BELOW_SCALE)


# ---------------------------------------------------------------------------------------------------- DeepAR
deepar_headline = _section("deepar_headline", deepar.headline_facts)  # totals, per-dataset spread, accuracy
deepar_window = _section("deepar_window", deepar_conditions.window_facts)  # what the window explains of B
deepar_variants = _section("deepar_variants", deepar_conditions.variants_facts)  # 1 thread, oneDNN off
deepar_gap = _section("deepar_gap", deepar.gap_facts)  # the breakdown, steps by window, cProfile, hybridizing
mase_report = _section("mase_reference", mase_reference.report_facts)  # our MASE against the Monash paper's
deepar_versions = _section("deepar_versions", lambda table: {"table": table})  # the post's versions beside main
# each framework's training cost per batch on every dataset the coverage part ran (``cost_rows``)
deepar_costs = _section("deepar_costs", lambda rows: deepar_coverage.cost_facts(deepar_coverage.cost_table(rows)))


def deepar_stopped_early(trials: pd.DataFrame) -> str:
    """Which trials stopped early (GluonTS' learning-rate floor), or that none did."""
    return render_markdown("deepar_headline", **{**deepar.headline_facts(trials, ""), "early_only": True})


def deepar_coverage_check(check: pd.DataFrame, summary_only: bool = False) -> str:
    """How well the coverage cost predicts each protocol-scale trial (``check_against_main``)."""
    return render_markdown("deepar_coverage_check", summary_only=summary_only, **deepar_coverage.check_facts(check))


def deepar_total(rows: pd.DataFrame, prediction: pd.DataFrame | None) -> str:
    """B summed as the post summed it over the datasets measured here, and the whole list's estimate beside it."""
    archive = deepar_prediction.archive_estimate(prediction) if prediction is not None else None
    return render_markdown("deepar_post_total", total=deepar_prediction.weighted_total(rows), archive=archive)


def deepar_chart(merged: pd.DataFrame, sentence_only: bool = False) -> str:
    """The prediction beside the post's chart, per dataset, and what it says of the post's machine."""
    return render_markdown("deepar_chart", sentence_only=sentence_only, **deepar_prediction.chart_facts(merged))


def post_conditions(post: dict, answer: bool = False) -> str:
    """B under the post's own conditions (``deepar_prediction.predictions``): the section, or the answer's part."""
    return render_markdown("post_conditions_answer" if answer else "post_conditions", **deepar_prediction.facts(post))


# ``deepar_conditions.load``'s result in words: the contention part per dataset and condition; B's factor table
deepar_contention = _section(
    "deepar_contention", lambda r: deepar_conditions.contention_facts(r["conditions"], r["rows"])
)
deepar_factors = _section("deepar_factors", lambda r: deepar_conditions.factor_facts(r["factors"], r["total"]))


# ---------------------------------------------------------------------------------------------------- IMDB
imdb_beside = _section("imdb_beside", imdb_jax.beside_facts)  # JAX beside the reference arms, or that none ran
convergence_accuracy = _section("convergence_accuracy", convergence.accuracy_facts)  # the quality part vs the bar
# the line shown where an IMDB table of ``kind`` has no rows: the profile plans none, or the run is not done
imdb_absent = _section("imdb_absent", imdb_analysis.absent_facts)


def convergence_summary(
    results: Results, imdb: pd.DataFrame | None = None, deepar: pd.DataFrame | None = None
) -> list[str]:
    """What the convergence curves show and what is missing, one paragraph a sentence."""
    facts = convergence.summary_facts(results, imdb=imdb, deepar=deepar)
    return render_markdown("convergence_summary", **facts).split("\n\n")


# ---------------------------------------------------------------------------------------------------- beyond the posts
inference_summary = _section("inference_summary", inference.summary_facts)  # notebook 04's close: VGG16, GEMM, ONNX
onnx_errors = _section("onnx_errors", inference.onnx_error_facts)  # each failed ONNX step: its error, where, why
thread_check = _section("thread_check", lambda table: {"table": table})  # whether each thread setting held
dataparallel_section = _section("dataparallel", dataparallel.section_facts)  # the tables, what two cores can show
framework_comparison_section = _section("framework_comparison", framework_comparison.facts)  # leaving MXNet today

# ---------------------------------------------------------------------------------------------------- the harness
# the per-setting table (half-widths in %, seconds rounded) and its totals
adaptive_table = _section("adaptive_table", lambda frame: {"table": frame, **adaptive.status_facts(frame)})
# a saved prediction against the trials run since (``estimate_accuracy.check_prediction``): errors in %, minutes
estimate_accuracy_table = _section("estimate_accuracy", lambda check: {"check": check})


def adaptive_status(frame: pd.DataFrame, study: str, profile: str) -> list[str]:
    """What adaptive repeats did, as ``fwbench status`` says it (``adaptive.adaptive_report``'s frame)."""
    return [render_markdown("adaptive_status", study=study, profile=profile, **adaptive.status_facts(frame))]


# ---------------------------------------------------------------------------------------------------- the ledger
ledger_rules = _section("ledger_rules", ledger.rules_facts)  # the rules and tolerance, as the README and post say


def ledger_verdicts(table: pd.DataFrame, order=None, summary: bool = False) -> str:
    """'n1 verdict1, n2 verdict2, ...' (verdicts in ``order``, default most frequent first); ``summary``: led by
    'N claims: '."""
    return render_markdown("ledger_verdicts", summary=summary, **ledger_render.verdict_facts(table, order))


# the ledger's one interval level: ``level``, a column ``header`` or the tables' ``note``
ledger_ci = _section("ledger_ci", lambda part="note": {"part": part})


# two runs' ledgers side by side (``ledger.stability.compare``'s summary): ``fwbench ledger --compare``
ledger_stability = _section("ledger_stability", lambda summary: {"s": summary})
# the post's closing section, "What could make this answer wrong", from the store
threats = _section("threats", lambda results: validity.threats_facts(ledger.load(results)))
