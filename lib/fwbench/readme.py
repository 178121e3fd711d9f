"""The generated blocks of the README and the docs/*.md pages, from the results store (``make readme``).

``BLOCKS`` maps each block to its writer; the ``headline`` block is the answer of the given profile's finished
trials, stamped with the store, date, profile and git commit it was generated from. The blocks that measure the
repository itself are written by the ``tools/`` timing scripts (``make readme`` runs each with ``--pages``).
``fwbench.generated_blocks`` finds a block's page, so moving a block needs no code change.
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
from .stale import stale_trials
from .store import ResultsStore
from .studies import all_studies, arm_table, get_study

PAPER_STORE = REPO_ROOT / "results" / "paper" / "paper-run.sqlite"  # the committed paper run


def _deepar_paragraph(results: Results) -> str:
    """The DeepAR totals and accuracy, then where B's ratio comes from when the run measured it: the window-length
    model summed over the post's windows, the variants part's table and B over the post's datasets."""
    main = deepar.load_trials(results)
    text = prose.deepar_headline(main, results.profile)
    if not main.empty and main.arm.nunique() > 1 and main.window.nunique() > 1:
        text += "\n\n**Where the ratio comes from.** " + prose.deepar_window(main)
    variants = deepar_conditions.variants_table(deepar.load_trials(results, parts=None))
    text += f"\n\n{prose.deepar_variants(variants)}" if not variants.empty else ""
    coverage = deepar_coverage.cost_rows(results)
    if not coverage.empty:  # B over the post's datasets: how far the short trials are trusted, the post's machine
        check = deepar_coverage.check_against_main(results)
        table = deepar_conditions.load(results)["base_table"]  # the comparison the post and the answer read
        merged = deepar_prediction.against_chart(table, deepar_prediction.chart())
        text += "\n\n" + render_markdown(
            "deepar_over_posts",
            check=prose.deepar_coverage_check(check, summary_only=True),
            chart=prose.deepar_chart(merged, sentence_only=True),
        )
    return text


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
    """What the numbers are (the paper run or a small-scale check) and how many stored rows they leave out as
    measured with other trial code; plain text with ``markdown=False`` (the post's banner)."""
    trials = store.trials()
    trials = trials[trials.profile == profile] if not trials.empty and "profile" in trials else trials
    # trials a rerun of the same config replaced are not missing: only the others are "left out"
    stale = int((~stale_trials(trials).superseded.astype(bool)).sum()) if not trials.empty else 0
    return render_markdown("readme_scale_note", profile=profile, stale=stale, markdown=markdown)


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
    """The headline block: the answer (the text the post opens with), its scale and its stamp; ``nested``: with the
    ``details`` one heading level down, under another block's heading (the paper-sofar block)."""
    a = answer.compute(results)
    parts = [] if nested else ["## The answer", ""]
    parts += [scale_note(results.profile, results.store), "", prose.answer_text(a, heading=None), "", _stamp(results)]
    if nested:
        parts += ["", details(results, a, level="####")]
    return "\n".join(parts)


def details(results: Results, a: answer.Answer | None = None, level: str = "###") -> str:
    """The numbers behind the answer, per study, and the claims ledger with each claim's estimate: the
    ``details`` block (docs/results.md)."""
    a = a or answer.compute(results)
    paragraphs = {"imdb": lambda: prose.answer_study(a, "imdb"), "deepar": lambda: _deepar_paragraph(results)}
    return render_markdown(
        "readme_details",
        scale_note=scale_note(results.profile, results.store),
        stamp=_stamp(results),
        level=level,
        profile=results.profile,
        studies=[(s.title, paragraphs[s.name]()) for s in all_studies() if s.name in paragraphs],
        verdict_counts=prose.ledger_verdicts(a.ledger),
        ledger_table=prose.answer_ledger(a),
        ci_note=prose.ledger_ci(),
    )


def render_paper_sofar(store: ResultsStore | None = None) -> str:
    """While the committed paper run is incomplete, its progress per study and the headline and ledger of the trials
    it has, under a banner saying they are partial; once it is complete, one line."""
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
    loaded = ((p, deepar.load_trials(Results(store, p))) for p in profiles)
    profile, trials = next(((p, t) for p, t in loaded if not t.empty), (None, None))
    if trials is None:
        return render_markdown("readme_mase", profiles=profiles, report="")
    scales = sorted(set(zip(trials.epochs.astype(int), trials.num_batches_per_epoch.astype(int))))
    return render_markdown(
        "readme_mase",
        profiles=profiles,
        profile=profile,
        n_trials=len(trials),
        scales=scales,
        protocol=(mase_reference.PROTOCOL_EPOCHS, mase_reference.PROTOCOL_BATCHES),
        report=prose.mase_report(trials),
    )


def render_options(headline: Results) -> str:
    """What the options and variants buy (docs/methods.md): the ledger's parts of claims C3, A9 and C4, quoted."""
    a = answer.compute(headline)
    claims = {c["row"].claim_id: c for study in all_studies() for c in answer.claims(a, study.name)}
    return render_markdown("options", claims=claims, cpus=a.cpus.get("conditions", {}), profile=a.profile)


# block -> its Markdown from the headline's results (profile and store: ``headline_source``, read once per run)
BLOCKS = {
    "headline": render,
    "details": details,
    "estimate": lambda headline: render_estimate(),
    "paper-estimate": lambda headline: render_paper_estimate(),
    "paper-sofar": lambda headline: render_paper_sofar(),
    "rules": lambda headline: prose.ledger_rules(),
    "mase": lambda headline: render_mase(),
    # docs/methods.md#arms: every study's declared arms, what the code declares (the post lists the arms that ran)
    "arms": lambda headline: render_markdown("readme_arms", arms=[a for s in all_studies() for a in arm_table(s.name)]),
    # README: the CPUs each framework's trials kept busy against their thread setting (the GEMM trials' measured CPU)
    "threads": lambda headline: render_markdown(
        "readme_threads", profile=headline.profile, check=prose.thread_check(inference.thread_check(headline))
    ),
    "options": render_options,
    # README: the timings per CPU model and fp mode, each condition on its own trials
    "cpus": lambda headline: render_markdown("cpu_models", profile=headline.profile, **cpu_models.facts(headline)),
    # docs/results.md: B predicted under each condition of the post's runs
    "post-conditions": lambda headline: prose.post_conditions(deepar_conditions.load(headline)["post"]),
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
        choices=list(BLOCKS),
        help="refresh only this block (repeatable; default: all), e.g. --block estimate",
    )
    args = parser.parse_args()
    readme, names = Path(args.readme), args.block or list(BLOCKS)
    for name in names:
        find_block(name, block_pages(readme))  # fail before any rendering, which can take a while
    profile, store = headline_source()
    headline = Results(store, profile) if args.profile is None else Results.open(args.profile)
    written = []
    for name in names:
        page = write_block(name, BLOCKS[name](headline), readme)
        written.append(f"{name} ({page.relative_to(readme.parent) if page.is_relative_to(readme.parent) else page})")
    print(f"updated the block(s) {', '.join(written)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
