"""The prose of the pages: each section's facts (``fwbench.analysis``, ``fwbench.ledger``) rendered by its template
(``pages.render_markdown``). The analysis and the ledger return facts and never words; the README, the notebooks, the
post and the command line (``fwbench status``, ``fwbench estimate --check``) call these, so one section reads the same
everywhere."""

from __future__ import annotations

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
    estimate_accuracy,
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
        verdict_counts=ledger_verdict_counts(a.ledger, ledger.PRECEDENCE),
        post_ratio=deepar2024.post_ratio(),
        post_stated=deepar2024.CLAIMED_SPEEDUP,
        factors=deepar_factors(gap) if gap else "",
        post_conditions=post_conditions(post, answer=True) if post and post["chosen"] is not None else "",
    )


def answer_cpu_limit(cpus: dict) -> str:
    """Which CPU the timings are of, and the IMDB setting's ratio on every other CPU measured."""
    return render_markdown("answer_cpu_limit", cpu=answer.cpu_limit(cpus))


def answer_study(a: answer.Answer, study: str) -> str:
    """What a study's notebook closes with: the ledger's claims on its rows (for IMDB, the best settings and the
    accuracy first), quoted from the answer, never recomputed."""
    return render_markdown("answer_study", a=a, study=study, claims=answer.claims(a, study))


def answer_ledger(a: answer.Answer) -> str:
    """The claims ledger as one Markdown table, each claim's deciding estimate as its quantity span."""
    rows = [(row, answer.claim_quantity(row)) for row in a.ledger.itertuples()]
    return render_markdown("answer_ledger", rows=rows, ci_header=ledger_ci("header"), below_scale=ledger.BELOW_SCALE)


def deepar_headline(trials: pd.DataFrame, profile: str) -> str:
    """DeepAR's totals against the post's, the per-dataset spread and the accuracy."""
    return render_markdown("deepar_headline", **deepar.headline_facts(trials, profile))


def deepar_stopped_early(trials: pd.DataFrame) -> str:
    """Which trials stopped early (GluonTS' learning-rate floor), or that none did."""
    return render_markdown("deepar_headline", **{**deepar.headline_facts(trials, ""), "early_only": True})


def deepar_window(trials: pd.DataFrame) -> str:
    """What the window length explains of the post's ratio, from the main part's trials."""
    return render_markdown("deepar_window", **deepar_conditions.window_facts(trials))


def deepar_variants(table: pd.DataFrame) -> str:
    """The variants part (1 thread, oneDNN off) beside the main part."""
    return render_markdown("deepar_variants", **deepar_conditions.variants_facts(table))


def deepar_versions(table: pd.DataFrame) -> str:
    """The post's library versions beside the main part, each ratio within one environment."""
    return render_markdown("deepar_versions", table=table)


def deepar_gap(trials: pd.DataFrame) -> str:
    """Where the DeepAR time goes: the breakdown, the network steps by window, forecasting, cProfile, hybridizing."""
    return render_markdown("deepar_gap", **deepar.gap_facts(trials))


def mase_report(trials: pd.DataFrame | None, table: pd.DataFrame | None = None) -> str:
    """Our MASE against the Monash paper's per dataset and arm, with the goal's verdict."""
    return render_markdown("mase_reference", **mase_reference.report_facts(trials, table))


def deepar_costs(rows: pd.DataFrame) -> str:
    """Each framework's training cost per batch on every dataset the coverage part ran (``cost_rows``)."""
    return render_markdown("deepar_costs", **deepar_coverage.cost_facts(deepar_coverage.cost_table(rows)))


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
    """B under the post's own conditions (``deepar_prediction.predictions``): the page's section, or the answer's
    paragraph."""
    name = "post_conditions_answer" if answer else "post_conditions"
    return render_markdown(name, **deepar_prediction.facts(post))


def deepar_contention(result: dict) -> str:
    """The contention part per dataset and condition (``deepar_conditions.load``'s result)."""
    facts = deepar_conditions.contention_facts(result["conditions"], result["rows"])
    return render_markdown("deepar_contention", **facts)


def deepar_factors(result: dict) -> str:
    """B's factor table and its reading (``deepar_conditions.load``'s result)."""
    return render_markdown("deepar_factors", **deepar_conditions.factor_facts(result["factors"], result["total"]))


# ---------------------------------------------------------------------------------------------------- IMDB
def imdb_beside(frame: pd.DataFrame) -> str:
    """JAX beside the reference arms (the beside part), or a line saying the profile has none."""
    return render_markdown("imdb_beside", **imdb_jax.beside_facts(frame))


def imdb_absent(kind: str, results: Results) -> str:
    """The line shown where an IMDB table of ``kind`` has no rows: the profile plans none, or the run is not done."""
    return render_markdown("imdb_absent", profile=results.profile, **imdb_analysis.absent_facts(kind, results))


def convergence_summary(
    results: Results, imdb: pd.DataFrame | None = None, deepar: pd.DataFrame | None = None
) -> list[str]:
    """What the convergence curves show and what is missing, one paragraph a sentence."""
    facts = convergence.summary_facts(results, imdb=imdb, deepar=deepar)
    return render_markdown("convergence_summary", **facts).split("\n\n")


def convergence_seed_runs(frame: pd.DataFrame) -> str:
    """How the training-quality seeds ran (threads, trials at once), as one sentence."""
    return render_markdown("convergence_seed_runs", runs=convergence.seed_runs(frame))


def convergence_accuracy(frame: pd.DataFrame) -> str:
    """The training-quality part against the accuracy bar, and how its seeds ran."""
    return render_markdown("convergence_accuracy", **convergence.accuracy_facts(frame))


# ---------------------------------------------------------------------------------------------------- beyond the posts
def inference_summary(results: Results) -> str:
    """The closing summary of notebook 04: VGG16, the GEMM peak and ONNX, every number from the store."""
    return render_markdown("inference_summary", **inference.summary_facts(results))


def onnx_errors(results: Results) -> str:
    """Each ONNX step that did not work: the exact error, where it was raised, and why."""
    return render_markdown("onnx_errors", **inference.onnx_error_facts(results))


def thread_check(table: pd.DataFrame) -> str:
    """Whether each framework's thread setting held (``inference.thread_check``'s table)."""
    return render_markdown("thread_check", **inference.thread_check_facts(table))


def dataparallel_section(results: Results) -> str:
    """Data-parallel training: the tables and what two cores can and cannot show."""
    return render_markdown("dataparallel", **dataparallel.section_facts(results))


def framework_comparison_section(results: Results) -> str:
    """If you are leaving MXNet today: per workload, the frameworks side by side, and the reading notes."""
    return render_markdown("framework_comparison", **framework_comparison.facts(results))


# ---------------------------------------------------------------------------------------------------- the harness
def adaptive_status(frame: pd.DataFrame, study: str, profile: str) -> list[str]:
    """What adaptive repeats did, as ``fwbench status`` says it (``adaptive.adaptive_report``'s frame)."""
    return [render_markdown("adaptive_status", study=study, profile=profile, **adaptive.status_facts(frame))]


def adaptive_table(frame: pd.DataFrame) -> str:
    """``adaptive.adaptive_report`` as a table (half-widths in %, seconds rounded), with a totals line."""
    return render_markdown("adaptive_table", **adaptive.table_facts(frame))


def estimate_accuracy_table(frame: pd.DataFrame) -> str:
    """``estimate_accuracy.check_prediction`` as a table (errors in %, times in minutes)."""
    return render_markdown("estimate_accuracy", **estimate_accuracy.check_facts(frame))


# ---------------------------------------------------------------------------------------------------- the ledger
def ledger_rules() -> str:
    """The ledger's rules and tolerance, as the README and the post state them."""
    return render_markdown("ledger_rules", **ledger.rules_facts())


def ledger_verdict_counts(table: pd.DataFrame, order=None) -> str:
    """'n1 verdict1, n2 verdict2, ...' (verdicts in ``order``, default most frequent first)."""
    return render_markdown("ledger_verdicts", summary=False, **ledger_render.verdict_facts(table, order))


def ledger_ci(part: str = "note") -> str:
    """The ledger's one interval level: ``level``, a column ``header`` or the tables' ``note``."""
    return render_markdown("ledger_ci", part=part)


def ledger_styled(table: pd.DataFrame):
    """The ledger as the notebook shows it (``ledger_render.SHOWN``, 3 significant digits), its intervals' one
    level in the headers of the estimate and CI columns and the level's note as its caption."""
    level = ledger_ci("level")
    names = {"estimate": ledger_ci("header"), "ci_low": f"{level}: low", "ci_high": f"{level}: high"}
    shown = table[ledger_render.SHOWN].rename(columns=names)
    return shown.style.format(precision=3, na_rep="-").hide(axis="index").set_caption(ledger_ci())


def ledger_stability(summary: dict) -> str:
    """Two runs' ledgers side by side (``ledger.stability.compare``'s summary), as ``fwbench ledger --compare``
    prints it."""
    return render_markdown("ledger_stability", s=summary)


def ledger_summary(table: pd.DataFrame, order=None) -> str:
    """'N claims: n1 verdict1, n2 verdict2, ...'."""
    return render_markdown("ledger_verdicts", summary=True, **ledger_render.verdict_facts(table, order))


def threats(results: Results) -> str:
    """The post's closing section, "What could make this answer wrong", from the store."""
    return render_markdown("threats", **validity.threats_facts(ledger.load(results)))
