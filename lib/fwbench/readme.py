"""The README's generated blocks, from the results store (``make readme``), never typed in.

It replaces the text between ``<!-- headline:start -->`` and ``<!-- headline:end -->`` with the numbers of the
given profile's finished trials and the claims ledger's verdicts, stamped with the git SHA, host CPU and date they
were generated at. The ``<!-- mase:start -->`` block compares the stored DeepAR MASE with the Monash paper's
(``fwbench.analysis.mase_reference``) for the best profile that has trials; ``BLOCKS`` lists the others. The
blocks that measure the repository itself (``timings``, ``reproduce-time``, ``env-build-time``, ``bench``) are not
here: ``tools/reproduce_timing.py`` and ``tools/env_build_timing.py`` write them from their records and
``tools/harness_bench.py`` from the store's ``bench`` rows (``make readme`` runs each with ``--pages`` after this).

A block lives where a reader looks for it: on the README's front page or in one of the ``docs/*.md`` pages it
links to; ``fwbench.generated_blocks`` finds the page that holds it, so moving a block needs no code change.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import answer, prose
from .analysis import (
    Results,
    cpu_models,
    deepar,
    deepar_conditions,
    deepar_coverage,
    deepar_prediction,
    inference,
    mase_reference,
)
from .completeness import paper_progress, paper_progress_by_study, progress_rows
from .generated_blocks import block_pages, find_block, write_block
from .pages import render_markdown
from .paths import REPO_ROOT, results_path
from .provenance import git_state
from .readme_estimates import render_estimate, render_paper_estimate
from .status import _stale_counts
from .store import ResultsStore
from .studies import all_studies, arm_table, get_study

PAPER_STORE = REPO_ROOT / "results" / "paper" / "paper-run.sqlite"  # the committed paper run


def _details(results: Results, a: answer.Answer) -> dict:
    """The studies' detail paragraphs under the answer (study -> function returning Markdown): the numbers behind
    it, each shared one quoted from the answer, never recomputed."""

    def imdb_paragraph() -> str:
        return prose.answer_study(a, "imdb")

    def deepar_paragraph() -> str:
        """The DeepAR totals and accuracy, then where B's ratio comes from when the run measured it: the
        window-length model summed over the post's windows and the variants part's table."""
        main = deepar.load_trials(results)
        text = prose.deepar_headline(main, results.profile)
        if not main.empty and main.arm.nunique() > 1 and main.window.nunique() > 1:
            text += "\n\n**Where the ratio comes from.** " + prose.deepar_window(main)
        variants = deepar_conditions.variants_table(deepar.load_trials(results, parts=None))
        text += f"\n\n{prose.deepar_variants(variants)}" if not variants.empty else ""
        coverage = deepar_coverage.cost_rows(results)
        if not coverage.empty:  # B over the post's datasets: how far the short trials are trusted, the post's machine
            check = deepar_coverage.check_against_main(results)
            merged = deepar_prediction.against_chart(deepar_prediction.comparison(coverage), deepar_prediction.chart())
            text += "\n\n" + render_markdown(
                "deepar_over_posts",
                check=prose.deepar_coverage_check(check, summary_only=True),
                chart=prose.deepar_chart(merged, sentence_only=True),
            )
        return text

    return {"imdb": imdb_paragraph, "deepar": deepar_paragraph}


def arms_markdown(headline: Results | None = None) -> str:
    """Every registered study's declared arm table as one Markdown table (docs/methods.md#arms, headed "Arms as
    declared": what the code declares, not what a profile ran; the post lists the arms that ran)."""
    return render_markdown("readme_arms", arms=[a for study in all_studies() for a in arm_table(study.name)])


def headline_profile(store: ResultsStore | None = None) -> str:
    """``paper`` once its run is complete (``paper_progress``: the answer at the papers' scale), else ``quick``: a
    partial paper run never stands in for the answer."""
    store = store or ResultsStore.open_read(results_path())
    done, needed = paper_progress(store)
    return "paper" if needed and done == needed else "quick"


def headline_source(paper_store: Path = PAPER_STORE) -> tuple[str, ResultsStore]:
    """The headline's profile and store: a complete paper run in the results store; else the committed paper run
    (``paper_store``) when complete, so a checkout's ``make readme`` keeps the answer at the papers' scale (the
    stamp names that store); else the results store's quick profile."""
    local = results_path()
    for path in dict.fromkeys(p.resolve() for p in (local, paper_store) if p.exists()):  # each store once
        store = ResultsStore.open_read(path)
        if headline_profile(store) == "paper":
            return "paper", store
    return "quick", ResultsStore.open_read(local)


def scale_note(profile: str, store: ResultsStore, markdown: bool = True) -> str:
    """What the numbers are: the paper run, or the quick profile's small-scale check; and rows measured with
    other trial code than this checkout's (``fwbench status`` names them), which the numbers leave out. Plain text
    with ``markdown=False`` (the post's banner)."""
    trials = store.trials()
    trials = trials[trials.profile == profile] if not trials.empty and "profile" in trials else trials
    # trials a rerun of the same config replaced are not missing: only the others are "left out"
    stale = sum(sum(c.values()) for c in _stale_counts(trials, superseded=False).values()) if not trials.empty else 0
    return render_markdown("readme_scale_note", profile=profile, stale=stale, markdown=markdown)


_scale_note = scale_note


def _stamp(results: Results) -> str:
    git = git_state()
    path = results.store.path.resolve()
    return render_markdown(
        "readme_stamp",
        where=str(path.relative_to(REPO_ROOT.resolve())) if path.is_relative_to(REPO_ROOT.resolve()) else None,
        date=time.strftime("%Y-%m-%d"),
        profile=results.profile,
        commit=str(git["git_sha"])[:10],
        dirty=bool(git["git_dirty"]),
    )


def render(results: Results, *, nested: bool = False) -> str:
    """The README's headline block for ``results``' profile: the answer (``fwbench.answer``, the same text the
    post opens with), its scale and its stamp; the numbers behind it are the ``details`` block (docs/results.md).
    ``nested``: the same under another block's heading (the paper-sofar block), one heading level down."""
    a = answer.compute(results)
    parts = [] if nested else ["## The answer", ""]
    parts += [_scale_note(results.profile, results.store), "", prose.answer_text(a, heading=None), "", _stamp(results)]
    if nested:
        parts += ["", details(results, a, level="####")]
    return "\n".join(parts)


def details(results: Results, a: answer.Answer | None = None, level: str = "###") -> str:
    """The numbers behind the answer, per study, and the claims ledger with each claim's estimate: the
    ``details`` block (docs/results.md)."""
    a = a or answer.compute(results)
    paragraphs = _details(results, a)
    return render_markdown(
        "readme_details",
        scale_note=_scale_note(results.profile, results.store),
        stamp=_stamp(results),
        level=level,
        studies=[(s.title, paragraphs[s.name]()) for s in all_studies() if s.name in paragraphs],
        verdict_counts=prose.ledger_verdict_counts(a.ledger),
        ledger_table=prose.answer_ledger(a),
        ci_note=prose.ledger_ci(),
    )


def render_paper_sofar(store: ResultsStore | None = None) -> str:
    """What the committed paper run (``results/paper/paper-run.sqlite``) says so far while it is incomplete: its
    progress per study, then the headline and the ledger computed from the trials it has, under a banner that says
    they are partial (a verdict can still change, and a claim whose rows are missing says "not measured yet").
    Once the run is complete, one line: the headline above is then its answer."""
    if store is None and not PAPER_STORE.exists():
        return render_markdown("readme_paper_sofar", stored=False, path=str(PAPER_STORE.relative_to(REPO_ROOT)))
    store = store or ResultsStore.open_read(PAPER_STORE)
    progress = paper_progress_by_study(store)
    done, needed = paper_progress(store, progress)
    complete = bool(needed) and done == needed
    return render_markdown(
        "readme_paper_sofar",
        stored=True,
        complete=complete,
        done=done,
        needed=needed,
        rows=[] if complete else progress_rows(store, progress),
        body="" if complete else render(Results(store, "paper"), nested=True),
    )


MASE_PROFILES = ("paper", "full", "gap", "quick")  # best first: the first with stored DeepAR trials is shown


def render_mase(store: ResultsStore | None = None) -> str:
    """Our DeepAR MASE against the Monash paper's, for the best profile (``MASE_PROFILES``) with finished trials,
    or a line saying none are stored."""
    store = store or ResultsStore.open_read(results_path())
    profiles = [p for p in MASE_PROFILES if p in get_study("deepar").profiles]
    trials = None
    for profile in profiles:
        trials = deepar.load_trials(Results(store, profile))
        if not trials.empty:
            break
    found = trials is not None and not trials.empty
    scales = (
        {f"{int(e)} epochs x {int(b)} batches" for e, b in zip(trials.epochs, trials.num_batches_per_epoch)}
        if found
        else set()
    )
    return render_markdown(
        "readme_mase",
        profiles=profiles,
        profile=profile,
        n_trials=len(trials) if found else 0,
        scales=sorted(scales),
        protocol=(mase_reference.PROTOCOL_EPOCHS, mase_reference.PROTOCOL_BATCHES),
        report=prose.mase_report(trials) if found else "",
    )


def render_threads(headline: Results) -> str:
    """Whether the thread settings held, from the GEMM trials' measured CPU (the headline's store and profile)."""
    table = inference.thread_check(headline)
    return render_markdown("readme_threads", profile=headline.profile, check=prose.thread_check(table))


def render_cpu_models(headline: Results) -> str:
    """The study per CPU model and fp mode (``analysis.cpu_models``), in the words of its template."""
    return render_markdown("cpu_models", profile=headline.profile, **cpu_models.facts(headline))


def render_post_conditions(headline: Results) -> str:
    """B under the post's own conditions (``analysis.deepar_prediction``), in the words of its template."""
    return prose.post_conditions(deepar_prediction.predictions(headline))


# block -> its Markdown from the headline's results (profile and store: ``headline_source``, read once per run)
BLOCKS = {
    "details": details,
    "estimate": lambda headline: render_estimate(),
    "paper-estimate": lambda headline: render_paper_estimate(),
    "paper-sofar": lambda headline: render_paper_sofar(),
    "rules": lambda headline: prose.ledger_rules(),
    "mase": lambda headline: render_mase(),
    "arms": arms_markdown,
    "threads": render_threads,  # README: the CPUs each framework's trials kept busy against their thread setting
    "cpus": render_cpu_models,  # README: the timings per CPU model and fp mode, each condition on its own trials
    "post-conditions": render_post_conditions,  # docs/results.md: B predicted under each condition of the post's runs
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=None, help="default: paper when its trials are stored, else quick")
    parser.add_argument(
        "--readme",
        default=str(REPO_ROOT / "README.md"),
        help="the front page; blocks are also looked for in the docs/*.md pages beside it",
    )
    parser.add_argument(
        "--block",
        action="append",
        choices=["headline", *BLOCKS],
        default=None,
        help="refresh only this block (repeatable; default: all), e.g. --block estimate",
    )
    args = parser.parse_args()
    readme = Path(args.readme)
    for name in args.block or ["headline", *BLOCKS]:
        find_block(name, block_pages(readme))  # fail before any rendering, which can take a while
    profile, store = headline_source()
    headline = Results(store, profile) if args.profile is None else Results.open(args.profile)
    written = []
    for name in args.block or ["headline", *BLOCKS]:
        text = render(headline) if name == "headline" else BLOCKS[name](headline)
        page = write_block(name, text, readme)
        written.append(f"{name} ({page.relative_to(readme.parent) if page.is_relative_to(readme.parent) else page})")
    print(f"updated the block(s) {', '.join(written)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
