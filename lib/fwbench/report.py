"""The static site: the study as a blog post (``index.html``) plus one page per executed notebook, built from the
results store at build time, viewable offline from any static host as it is.

    python -m fwbench.report --executed build/executed --out reports [--profile quick]

- each executed notebook -> ``<name>.html`` (nbconvert, code and prompts hidden, figures inline, the ``fwbench``
  template: the lab look without require.js/MathJax/mermaid/widgets from CDNs);
- ``index.html`` from ``templates/post.html.j2``: every number computed here from the store, one section per
  registered study, the convergence curves, the ledger and a glossary;
- ``figures/``: the PNGs the post shows, only those written by this run of the notebooks (never a stale one);
- ``ledger.csv``: the claims ledger; ``data/``: the store, the profile's tables and the lock file (``site_files``).

Decisions:
- **Only what ran.** A study's arm table lists the arms with finished trials of the shown profile's plan
  (``fwbench.analysis.arms_that_ran``); one sentence names the declared arms that did not run and why. The
  registry's full table is docs/methods.md#arms.
- **Links** are relative and point into the site folder, so the site works from any static host; the repository is
  linked by its address when one is known, else a sentence names the commit (``site_files``).
- **Glossary.** ``docs/glossary.md`` is the one source of the definitions (``fwbench.glossary``): the post renders
  it as its last section and links the first use of each term.
- **One confidence level per table.** The ledger's estimate column states the level in its header; the rows print
  none of their own (template ``ledger_ci``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import re
import shutil
import sys
from pathlib import Path

import nbformat
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from . import answer, glossary, ledger, post_text, prose, site_files
from .analysis import Results, arms_that_ran
from .errors import FwbenchError
from .pages import TEMPLATES, render_markdown
from .paths import figures_dir, results_path
from .plots import NOT_DRAWN, publish
from .plots import answer as plots_answer
from .plots.answer import ANSWER_FIGURE
from .plots.captions import CAPTIONS
from .provenance import git_state
from .store import ResultsStore
from .studies import all_studies

TITLE = "PyTorch vs MXNet, measured again: two published comparisons rerun from scratch"

CONVERGENCE_PREFIX = "convergence_"  # notebook 03's figures (IMDB and DeepAR curves)


def sections() -> list[tuple[str, str]]:
    """(section, figure-name prefix): one per registered study that names a prefix, then the convergence curves."""
    return [(s.name, s.figure_prefix) for s in all_studies() if s.figure_prefix] + [("convergence", CONVERGENCE_PREFIX)]


# ---------------------------------------------------------------------------------------------------- notebooks
def notebook_meta(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    pm = nb.metadata.get("papermill", {})
    headings = (re.search(r"^#\s+(.+)$", c.source, re.M) for c in nb.cells if c.cell_type == "markdown")
    return {
        "path": path,
        "nb": nb,
        "title": next((m.group(1).strip() for m in headings if m), path.stem),
        "parameters": pm.get("parameters", {}),
        "start_time": pm.get("start_time"),
        "source": pm.get("input_path") or path.name,
    }


def render_notebook(meta: dict, out: Path, profile: str) -> Path:
    """One executed notebook as an offline HTML page with the code hidden."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="fwbench",
        extra_template_basedirs=[str(TEMPLATES / "nbconvert")],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
    )
    body, _ = exporter.from_notebook_node(
        meta["nb"],
        resources={
            "metadata": {"name": meta["title"]},
            "fwbench_source": Path(str(meta["source"])).name,
            "fwbench_profile": profile,
        },
    )
    target = out / f"{meta['path'].stem}.html"
    target.write_text(body, encoding="utf-8")
    return target


# ---------------------------------------------------------------------------------------------------- figures
def answer_figure(a: answer.Answer, out: Path) -> dict:
    """The answer's one figure, drawn now from the answer (not by a notebook), into the site's figures/."""
    target = out / "figures"
    written = publish(ANSWER_FIGURE, plots_answer.answer_figure, a, directory=target)
    caption = CAPTIONS[ANSWER_FIGURE]
    if written:
        return {"src": f"figures/{ANSWER_FIGURE}.png", "caption": caption, "name": ANSWER_FIGURE}
    reason = (target / f"{ANSWER_FIGURE}{NOT_DRAWN}").read_text(encoding="utf-8").strip()
    return {"src": None, "caption": caption.split(". ")[0], "name": ANSWER_FIGURE, "reason": reason}


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def collect_figures(source: Path, out: Path, since: float | None) -> dict:
    """Copy this run's PNGs into ``out/figures`` and sort them into the post's sections."""
    known = sections()
    found = {name: [] for name, _ in known} | {"other": []}
    if not source.is_dir():
        return found
    target = out / "figures"
    target.mkdir(parents=True, exist_ok=True)
    for path in [*sorted(source.glob("*.png")), *sorted(source.glob(f"*{NOT_DRAWN}"))]:
        if since is not None and path.stat().st_mtime < since - 5:
            continue  # written before this run of the notebooks: stale
        drawn = path.suffix == ".png"
        name = path.stem if drawn else path.name.removesuffix(NOT_DRAWN)
        section = next((s for s, prefix in known if name.startswith(prefix)), "other")
        caption = CAPTIONS.get(name, name.replace("_", " "))
        if drawn:
            shutil.copy2(path, target / path.name)
            found[section].append({"src": f"figures/{path.name}", "caption": caption, "name": name})
        else:  # a figure with nothing to draw: one sentence saying why
            reason = path.read_text(encoding="utf-8").strip()
            what = caption.split(". ")[0].rstrip(".")
            found[section].append({"src": None, "caption": what, "name": name, "reason": reason})
    order = {name: i for i, name in enumerate(CAPTIONS)}  # the known figures in the post's order, then the rest
    for figs in found.values():
        figs.sort(key=lambda f: (order.get(f["name"], len(order)), f["name"]))
    return found


def study_sections(lines: dict, figures: dict, results: Results) -> list[dict]:
    """One post section per registered study: title, the arms that ran (``arms_that_ran``), its lines where the
    post has them (``lines``: study -> lines), figures."""
    sections = []
    for s in all_studies():
        arms, not_run = arms_that_ran(s.name, results)
        sections.append(
            {
                "name": s.name,
                "title": s.title,
                "arms": arms,
                "arms_not_run": not_run,
                "lines": lines.get(s.name, []),
                "figures": figures.get(s.name, []),
            }
        )
    return sections


# ---------------------------------------------------------------------------------------------------- the post
def profile_of(metas: list[dict], default: str | None) -> str:
    found = {m["parameters"].get("profile") for m in metas if m["parameters"].get("profile")}
    if default:
        return default
    if len(found) > 1:
        raise FwbenchError(f"the executed notebooks ran under different profiles {sorted(found)}; pass --profile")
    return found.pop() if found else "quick"


def build(
    executed: Path,
    out: Path,
    profile: str | None = None,
    figures: Path | None = None,
    results: Results | None = None,  # the store read for ``profile`` (default: results_path()'s, read here)
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    metas = [notebook_meta(p) for p in sorted(Path(executed).glob("*.ipynb"))] if Path(executed).is_dir() else []
    profile = profile_of(metas, profile)
    results = results or Results(ResultsStore.open_read(results_path()), None if profile == "all" else profile)
    pages = []
    for meta in metas:
        page = render_notebook(meta, out, profile)
        pages.append({"href": page.name, "title": meta["title"], "source": Path(str(meta["source"])).name})

    table = ledger.build(results)
    table.to_csv(out / "ledger.csv", index=False)
    by_cpu = results.profile is not None  # every timing claim judged per CPU model and fp mode, on its own trials
    if by_cpu:
        ledger.build_by_condition(results).to_csv(out / "ledger_by_cpu.csv", index=False)
    rows = [dict(r._asdict(), estimate_text=post_text.ledger_estimate(r)) for r in table.itertuples(index=False)]

    a = answer.compute(results)
    starts = [t for t in (_parse_time(m["start_time"]) for m in metas) if t]
    figs = collect_figures(Path(figures) if figures else figures_dir(), out, min(starts) if starts else None)

    context = {
        "title": TITLE,
        "profile": profile,
        "built_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "n_trials_done": Markup(a.trials.markup(ci=False)),
        "answer": post_text.markdown_html(prose.answer_text(a, heading=None)),
        "answer_figure": answer_figure(a, out),
        "profile_note": post_text.profile_note(results),
        "setup": post_text.setup(results),
        "assumptions": post_text.assumptions(),
        "studies": study_sections(post_text.study_prose(a, results), figs, results),
        "convergence": prose.convergence_summary(results),
        "figures": figs,
        "ledger": rows,
        "ledger_by_cpu": by_cpu,
        "ledger_summary": prose.ledger_verdicts(table, ledger.PRECEDENCE, summary=True),
        "ledger_ci_header": prose.ledger_ci("header"),
        "ledger_ci_note": prose.ledger_ci(),
        "ledger_tolerance": render_markdown("post_ledger_tolerance", tol=1 + ledger.TOL),
        "framework_comparison": post_text.markdown_html(prose.framework_comparison_section(results)),
        "pages": pages,
        "environment": post_text.environment(results, metas),
    }
    # the files and links of the site (see "Links" above) and the glossary: apart from the numbers
    repo = site_files.repository(git_state())
    terms = glossary.entries()
    context |= {
        "repository": repo,
        "data": site_files.publish(results.store, profile, out),
        "glossary": Markup(glossary.section_html(terms, repo["url"], repo["commit"])) if terms else None,
    }
    jenv = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    index = out / "index.html"
    page = jenv.get_template("post.html.j2").render(**context)
    index.write_text(glossary.link_first_uses(page, terms), encoding="utf-8")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fwbench.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--executed", default="build/executed", help="folder of papermill-executed notebooks")
    parser.add_argument("--out", default="reports", help="site folder to write")
    parser.add_argument("--profile", default=None, help="default: the profile the notebooks were executed with")
    parser.add_argument("--figures", default=None, help="default: FWBENCH_FIGURES or figures/")
    args = parser.parse_args(argv)
    try:
        index = build(Path(args.executed), Path(args.out), args.profile, figures=args.figures)
    except FwbenchError as exc:
        print(f"fwbench.report: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {index} ({html.escape(str(index.parent))}/ is the site)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
