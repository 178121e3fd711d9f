"""The README's generated blocks, from the results store (``make readme``), never typed in.

It replaces the text between ``<!-- headline:start -->`` and ``<!-- headline:end -->`` with the numbers of the
given profile's finished trials and the claims ledger's verdicts, stamped with the git SHA, host CPU and date they
were generated at. The ``<!-- mase:start -->`` block compares the stored DeepAR MASE with the Monash paper's
(``fwbench.analysis.mase_reference``) for the best profile that has trials; ``BLOCKS`` lists the others. The
blocks that state the repository's own wall times (``timings``, ``reproduce-time``, ``env-build-time``) are not
here: ``tools/reproduce_timing.py`` and ``tools/env_build_timing.py`` write them from their records (``make readme``
runs both with ``--pages`` after this).

A block lives where a reader looks for it: on the README's front page or in one of the ``docs/*.md`` pages it
links to; ``fwbench.generated_blocks`` finds the page that holds it, so moving a block needs no code change.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from . import answer, ledger, prose
from .analysis import (
    cpu_models,
    deepar,
    deepar_conditions,
    deepar_coverage,
    deepar_prediction,
    inference,
    mase_reference,
)
from .generated_blocks import block_pages, find_block, write_block
from .pages import render_markdown
from .paper_progress import paper_progress, paper_progress_by_study, progress_table
from .paths import REPO_ROOT, results_path
from .provenance import git_state
from .readme_timings import bench_lines, render_bench, render_estimate, render_paper_estimate
from .status import _stale_counts
from .store import ResultsStore
from .studies import all_studies, arm_table, get_study

PAPER_STORE = REPO_ROOT / "results" / "paper" / "paper-run.sqlite"  # the committed paper run


def _details(profile: str, store: ResultsStore, a: answer.Answer) -> dict:
    """The studies' detail paragraphs under the answer (study -> function returning Markdown): the numbers behind
    it, each shared one quoted from the answer, never recomputed."""

    def imdb_paragraph() -> str:
        return answer.study_markdown(a, "imdb")

    def deepar_paragraph() -> str:
        """The DeepAR totals and accuracy, then where B's ratio comes from when the run measured it: the
        window-length model summed over the post's windows and the variants part's table."""
        main = deepar.load_trials(profile, store=store)
        text = prose.deepar_headline(main, profile)
        if not main.empty and main.arm.nunique() > 1 and main.window.nunique() > 1:
            text += "\n\n**Where the ratio comes from.** " + prose.deepar_window(main)
        variants = deepar_conditions.variants_table(deepar.load_trials(profile, store=store, parts=None))
        text += f"\n\n{prose.deepar_variants(variants)}" if not variants.empty else ""
        coverage = deepar_coverage.cost_rows(profile, None, store)
        if not coverage.empty:  # B over the post's datasets: how far the short trials are trusted, the post's machine
            check = deepar_coverage.check_against_main(profile, None, store)
            merged = deepar_prediction.against_chart(deepar_prediction.comparison(coverage), deepar_prediction.chart())
            text += "\n\n" + render_markdown(
                "deepar_over_posts",
                check=prose.deepar_coverage_check(check, summary_only=True),
                chart=prose.deepar_chart(merged, sentence_only=True),
            )
        return text

    return {"imdb": imdb_paragraph, "deepar": deepar_paragraph}


def arms_markdown() -> str:
    """Every registered study's declared arm table as one Markdown table (docs/methods.md#arms, headed "Arms as
    declared": what the code declares, not what a profile ran; the post lists the arms that ran)."""
    lines = ["| study | arm | framework | variant | what it runs |", "|---|---|---|---|---|"]
    for study in all_studies():
        lines += [
            f"| {a['study']} | `{a['arm']}` | {a['framework']} | {a['variant']} | {a['label']} |"
            for a in arm_table(study.name)
        ]
    return "\n".join(lines)


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

    def bold(text: str) -> str:
        return f"**{text}**" if markdown else text

    def code(text: str) -> str:
        return f"`{text}`" if markdown else text

    trials = store.trials()
    trials = trials[trials.profile == profile] if not trials.empty and "profile" in trials else trials
    # trials a rerun of the same config replaced are not missing: only the others are "left out"
    stale = sum(sum(c.values()) for c in _stale_counts(trials, superseded=False).values()) if not trials.empty else 0
    papers_scale = "The papers' scale"
    what = (
        f"{bold(papers_scale)} (profile {code('paper')}: every CPU-testable claim at its scale floor)."
        if profile == "paper"
        else f"{bold('Small-scale check')} (profile {code(profile)}), not the papers' scale: most verdicts say "
        '"below scale" and name what is needed.'
    )
    if stale:
        what += (
            f" {stale} stored trial(s) of this profile were measured with older trial code than this checkout's "
            f"and are left out ({code('fwbench status')} lists them); rerun the profile to measure them again."
        )
    return what


_scale_note = scale_note


def _stamp(profile: str, store: ResultsStore) -> str:
    git = git_state()
    path = store.path.resolve()
    where = f" `{path.relative_to(REPO_ROOT.resolve())}`" if path.is_relative_to(REPO_ROOT.resolve()) else ""
    return (
        f"_Generated by `make readme` from the results store{where} on {time.strftime('%Y-%m-%d')}, profile "
        f"`{profile}`, commit {str(git['git_sha'])[:10]}{' (dirty)' if git['git_dirty'] else ''}. Rerun "
        "`make reproduce` then `make readme` to refresh._"
    )


def render(profile: str = "quick", store: ResultsStore | None = None, *, nested: bool = False) -> str:
    """The README's headline block for ``profile``: the answer (``fwbench.answer``, the same text the post opens
    with), its scale and its stamp; the numbers behind it are the ``details`` block (docs/results.md).
    ``nested``: the same under another block's heading (the paper-sofar block), one heading level down."""
    store = store or ResultsStore.open_read(results_path())
    a = answer.compute(store, profile)
    parts = [] if nested else ["## The answer", ""]
    parts += [_scale_note(profile, store), "", answer.markdown(a, heading=None), "", _stamp(profile, store)]
    if nested:
        parts += ["", details(profile, store, a, level="####")]
    return "\n".join(parts)


def details(profile: str, store: ResultsStore, a: answer.Answer | None = None, level: str = "###") -> str:
    """The numbers behind the answer, per study, and the claims ledger with each claim's estimate: the
    ``details`` block (docs/results.md)."""
    a = a or answer.compute(store, profile)
    parts = [_scale_note(profile, store), "", _stamp(profile, store)]
    paragraphs = _details(profile, store, a)
    for study in all_studies():
        if study.name in paragraphs:
            parts += ["", f"{level} {study.title}", paragraphs[study.name]()]
    parts += ["", f"{level} Claims ledger", ""]
    table = a.ledger
    parts.append(
        f"Verdicts: {prose.ledger_verdict_counts(table)}. The full ledger with every part's measurement and "
        "the reasons is `reports/ledger.csv` and the post's last section (`notebooks/05_claims_ledger.ipynb` shows "
        "it too)."
    )
    parts += ["", answer.ledger_markdown(a), "", ledger.render.CI_NOTE]
    parts += ["", f"{level} Harness benchmarks", *bench_lines(store)]
    return "\n".join(parts)


def render_details() -> str:
    """The ``details`` block for the headline's profile and store (``headline_source``)."""
    profile, store = headline_source()
    return details(profile, store)


def render_paper_sofar(store: ResultsStore | None = None) -> str:
    """What the committed paper run (``results/paper/paper-run.sqlite``) says so far while it is incomplete: its
    progress per study, then the headline and the ledger computed from the trials it has, under a banner that says
    they are partial (a verdict can still change, and a claim whose rows are missing says "not measured yet").
    Once the run is complete, one line: the headline above is then its answer."""
    if store is None:
        if not PAPER_STORE.exists():
            return f"No paper run is stored (`{PAPER_STORE.relative_to(REPO_ROOT)}`)."
        store = ResultsStore.open_read(PAPER_STORE)
    progress = paper_progress_by_study(store)
    done, needed = paper_progress(store, progress)
    if needed and done == needed:
        return (
            "The paper run is complete: the README's headline numbers are its answer (`make readme` takes "
            "them from this store unless `FWBENCH_RESULTS` holds a complete paper run of its own)."
        )
    rows = progress_table(store, progress)
    body = render("paper", store, nested=True)
    return (
        f"**In progress, partial: {done} of the {needed} trials the paper profile needs are stored** (adaptive "
        "studies: their minimum blocks). The numbers below are computed from those trials alone, by the same "
        'code as the headline; a verdict can still change, and a claim whose trials have not run says "not '
        "measured yet\". The README's headline stays the quick profile's until the run is complete.\n\n"
        + "\n".join(rows)
        + "\n\n"
        + body
    )


MASE_PROFILES = ("paper", "full", "gap", "quick")  # best first: the first with stored DeepAR trials is shown


def render_mase(store: ResultsStore | None = None) -> str:
    """Our DeepAR MASE against the Monash paper's, for the best profile (``MASE_PROFILES``) with finished trials,
    or a line saying none are stored."""

    store = store or ResultsStore.open_read(results_path())
    profiles = [p for p in MASE_PROFILES if p in get_study("deepar").profiles]
    for profile in profiles:
        trials = deepar.load_trials(profile, store=store)
        if not trials.empty:
            break
    else:
        return (
            f"No DeepAR trials of profile {', '.join(f'`{p}`' for p in profiles)} are stored yet, so there is "
            "no MASE to compare with the Monash paper's."
        )
    scales = sorted(
        {f"{int(e)} epochs x {int(b)} batches" for e, b in zip(trials.epochs, trials.num_batches_per_epoch)}
    )
    return (
        f"Profile `{profile}` ({len(trials)} finished trials; {', '.join(scales)}; the protocol's scale is "
        f"{mase_reference.PROTOCOL_EPOCHS} x {mase_reference.PROTOCOL_BATCHES}):\n\n" + prose.mase_report(trials)
    )


def render_threads() -> str:
    """Whether the thread settings held, from the GEMM trials' measured CPU (the headline's store and profile)."""
    profile, store = headline_source()
    table = inference.thread_check(profile, store=store)
    return (
        f"Measured in the GEMM trials of profile `{profile}` (dense fp32 products, the timed repeats): the CPUs "
        "each trial process kept busy against the threads it was set to. PyTorch and MXNet take "
        "`OMP_NUM_THREADS`/`MKL_NUM_THREADS` before import (and `torch.set_num_threads`); JAX reads neither, so a "
        "JAX trial pins itself to that many CPUs before its first computation.\n\n" + prose.thread_check(table)
    )


def render_cpu_models() -> str:
    """The study per CPU model and fp mode (``analysis.cpu_models``), in the words of its template."""
    profile, store = headline_source()
    return render_markdown("cpu_models", profile=profile, **cpu_models.facts(store, profile))


def render_post_conditions() -> str:
    """B under the post's own conditions (``analysis.deepar_prediction``), in the words of its template."""
    profile, store = headline_source()
    return prose.post_conditions(deepar_prediction.predictions(profile, store=store))


def rules_block() -> str:
    """The ledger's rules, per claim with its source's hardware, what it depends on and its scale floor."""
    return prose.ledger_rules()


BLOCKS = {
    "details": render_details,
    "estimate": render_estimate,
    "paper-estimate": render_paper_estimate,
    "paper-sofar": render_paper_sofar,
    "rules": rules_block,
    "mase": render_mase,
    "bench": render_bench,
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
        help="refresh only this block (repeatable; default: all), e.g. --block bench after "
        "`fwbench bench` with a store that holds no study rows",
    )
    args = parser.parse_args()
    readme = Path(args.readme)
    for name in args.block or ["headline", *BLOCKS]:
        find_block(name, block_pages(readme))  # fail before any rendering, which can take a while
    written = []
    for name in args.block or ["headline", *BLOCKS]:
        text = (
            render(*((args.profile, None) if args.profile else headline_source()))
            if name == "headline"
            else BLOCKS[name]()
        )
        page = write_block(name, text, readme)
        written.append(f"{name} ({page.relative_to(readme.parent) if page.is_relative_to(readme.parent) else page})")
    print(f"updated the block(s) {', '.join(written)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
