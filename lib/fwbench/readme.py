"""The README's generated blocks, from the results store (``make readme``), never typed in.

It replaces the text between ``<!-- headline:start -->`` and ``<!-- headline:end -->`` with the numbers of the
given profile's finished trials and the claims ledger's verdicts, stamped with the git SHA, host CPU and date they
were generated at. The ``<!-- mase:start -->`` block compares the stored DeepAR MASE with the Monash paper's
(``fwbench.analysis.mase_reference``) for the best profile that has trials; ``BLOCKS`` lists the others.

A block lives where a reader looks for it: on the README's front page or in one of the ``docs/*.md`` pages it
links to; ``fwbench.generated_blocks`` finds the page that holds it, so moving a block needs no code change.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .generated_blocks import block_pages, find_block, write_block
from .paper_progress import paper_progress, paper_progress_by_study, progress_table
from .paths import REPO_ROOT, results_path
from .provenance import git_state
from .readme_timings import (
    bench_lines,
    render_bench,
    render_estimate,
    render_paper_estimate,
    render_reproduce_phrase,
    render_reproduce_timings,
)
from .store import ResultsStore
from .studies import all_studies, arm_table

PAPER_STORE = REPO_ROOT / "results" / "paper" / "paper-run.sqlite"  # the committed paper run (issue 14)


def _headlines(profile: str, store: ResultsStore) -> dict:
    """The studies with a headline paragraph (study -> function returning Markdown)."""
    from .analysis import convergence, deepar, imdb

    def imdb_paragraph() -> str:
        frame = imdb.load_sweep(profile, store=store)
        quality = (
            convergence.accuracy_bar_markdown(frame) if "part" in frame and (frame.part == "quality").any() else ""
        )
        return imdb.headline_markdown(frame) + (f"\n\n{quality}" if quality else "")

    def deepar_paragraph() -> str:
        """B's headline, then where its ratio comes from when the run measured it: the window-length model
        summed over the post's windows (two or more windows with both arms) and the variants part's table."""
        from .analysis import deepar_variants

        main = deepar.load_trials(profile, store=store)
        text = deepar.headline_markdown(main, profile)
        if not main.empty and main.arm.nunique() > 1 and main.window.nunique() > 1:
            text += "\n\n**Where the ratio comes from.** " + deepar_variants.window_explanation(main)
        variants = deepar_variants.variants_table(deepar.load_trials(profile, store=store, parts=None))
        return text + (f"\n\n{deepar_variants.variants_markdown(variants)}" if not variants.empty else "")

    return {"imdb": imdb_paragraph, "deepar": deepar_paragraph}


def arms_markdown() -> str:
    """Every registered study's arm table as one Markdown table."""
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
    from .status import _stale_counts

    def bold(text: str) -> str:
        return f"**{text}**" if markdown else text

    def code(text: str) -> str:
        return f"`{text}`" if markdown else text

    trials = store.trials()
    trials = trials[trials.profile == profile] if not trials.empty and "profile" in trials else trials
    stale = sum(sum(c.values()) for c in _stale_counts(trials).values()) if not trials.empty else 0
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


def render(profile: str = "quick", store: ResultsStore | None = None, *, nested: bool = False) -> str:
    """The README's headline block for ``profile``: the answer, so the arm table and the harness benchmarks have
    blocks of their own (``arms``, ``bench``). ``nested``: the same numbers under another block's heading (the
    paper-sofar block): no title or banner, every heading one level down, and the benchmarks of that store."""
    from . import ledger

    store = store or ResultsStore.open_read(results_path())
    git = git_state()
    trials = store.trials()
    path = store.path.resolve()
    where = f" `{path.relative_to(REPO_ROOT.resolve())}`" if path.is_relative_to(REPO_ROOT.resolve()) else ""
    stamp = (
        f"_Generated by `make readme` from the results store{where} on {time.strftime('%Y-%m-%d')}, profile "
        f"`{profile}`, commit {str(git['git_sha'])[:10]}{' (dirty)' if git['git_dirty'] else ''}, "
        f"on {ledger.host_text(trials)}. Rerun `make reproduce` then `make readme` to refresh._"
    )
    h3 = "####" if nested else "###"
    parts = [stamp] if nested else ["## Headline numbers", "", _scale_note(profile, store), "", stamp]
    headlines = _headlines(profile, store)
    for study in all_studies():
        if study.name in headlines:
            parts += ["", f"{h3} {study.title}", headlines[study.name]()]
    parts += ["", f"{h3} Claims ledger", ""]
    table = ledger.build(store, profile)
    parts.append(
        f"Verdicts: {ledger.render.verdict_counts(table)}. The full ledger with "
        "measurements and reasons is `reports/ledger.csv` and the post's last section "
        "(`notebooks/05_claims_ledger.ipynb` shows it too)."
    )
    parts += [
        "",
        "| claim | verdict | source hardware | ours | scale floor | n | our measurement |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples():
        measurement = str(row.measurement).replace("|", "/").replace("\n", " ")
        floor = "met" if row.verdict != ledger.BELOW_SCALE else "below: " + str(row.reason).split("needs ", 1)[-1]
        parts.append(
            f"| {row.claim_id} | {row.verdict} | {row.source_hardware} | {row.our_hardware} | "
            f"{floor if row.scale else '-'} | {row.n or '-'} | {measurement[:160]} |"
        )
    if nested:  # the front page's answer leaves the benchmarks to their own block (docs/benchmarks.md)
        parts += ["", f"{h3} Harness benchmarks", *bench_lines(store)]
    return "\n".join(parts)


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
    from .analysis import deepar, mase_reference
    from .studies import get_study

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
        f"{mase_reference.PROTOCOL_EPOCHS} x {mase_reference.PROTOCOL_BATCHES}):\n\n" + mase_reference.report(trials)
    )


def rules_block() -> str:
    """The ledger's rules, per claim with its source's hardware, what it depends on and its scale floor."""
    from . import ledger

    return ledger.rules_markdown()


BLOCKS = {
    "estimate": render_estimate,
    "paper-estimate": render_paper_estimate,
    "paper-sofar": render_paper_sofar,
    "rules": rules_block,
    "mase": render_mase,
    "bench": render_bench,
    "arms": arms_markdown,
    "timings": render_reproduce_timings,  # docs/benchmarks.md: `make reproduce` wall times (fwbench time-reproduce)
    "reproduce-time": render_reproduce_phrase,  # README: how long each profile takes, from the same record
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
