"""The static site: the study as a blog post (``index.html``) plus one page per executed notebook, built from the
results store at build time, viewable offline from any static host as it is.

    python -m fwbench.report --executed build/executed --out reports [--profile quick]

- each executed notebook -> ``<name>.html`` (nbconvert, code and prompts hidden, figures inline as base64, the
  ``fwbench`` template: the lab look without require.js/MathJax/mermaid/widgets from CDNs);
- ``index.html`` from ``templates/post.html.j2``: every number computed here from the store;
- ``figures/``: the PNGs the post shows, copied from ``fwbench.paths.figures_dir()`` (only those written by this
  run of the notebooks, so a stale figure from an older run never appears);
- ``ledger.csv``: the claims ledger (``fwbench.ledger``);
- ``data/``: the results store the post was built from, the profile's tables and ``requirements.lock``
  (``fwbench.site_files``).
The post has one section per registered study (``fwbench.studies.all_studies``: its title, the arms that ran and
the figures whose names start with its ``figure_prefix``), plus the convergence curves, the ledger and a glossary.

Decisions:
- **Only what ran.** A study's arm table lists the arms with finished trials of the shown profile's plan in the
  store (``fwbench.analysis.arms_that_ran``, the rows every table reads); one sentence names the declared arms
  that did not run and why (not in the profile's plan, or planned and not stored). The registry's full table is
  documented in docs/methods.md#arms ("Arms as declared").
- **Links.** Every link is relative and points into the site folder, so the site works from any static host: the
  store, the tables and the lock file are copied or exported into ``data/`` at build time (``site_files``:
  the decision is written there). The repository is linked by its address, from ``git remote get-url origin``,
  else ``pyproject.toml``'s ``[project.urls]``; with neither, a sentence names the commit (no made-up address).
- **Glossary.** ``docs/glossary.md`` is the one source of the definitions (``fwbench.glossary``): the post
  renders it as its "Glossary" section, one anchor per entry, and links the first use of each term in the page.
- **One confidence level per table.** The ledger's estimate column says "95 % family-wise CI" in its header and
  the rows print no level of their own (``fwbench.ledger.render.CI_HEADER``, ``CI_NOTE``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import math
import platform
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pandas as pd
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from . import glossary, ledger, site_files
from .analysis import arms_that_ran
from .analysis import deepar as deepar_analysis
from .analysis import imdb as imdb_analysis
from .errors import FwbenchError
from .ledger.render import CI_HEADER, CI_NOTE, host_text
from .ledger.sources.deepar2024 import total_ratio
from .paths import figures_dir, results_path
from .plots import NOT_DRAWN
from .plots.captions import CAPTIONS
from .provenance import git_state
from .published import deepar2024
from .readme import scale_note
from .runner import plan
from .store import ResultsStore
from .studies import all_studies
from .studies import imdb as imdb_study

TEMPLATES = Path(__file__).resolve().parent / "templates"
TITLE = "PyTorch vs MXNet, measured again: two published comparisons rerun from scratch"

CONVERGENCE_PREFIX = "convergence_"  # notebook 03's figures (IMDB and DeepAR curves)


def sections() -> list[tuple[str, str]]:
    """(section, figure-name prefix): one per registered study that names a prefix, then the convergence curves."""
    return [(s.name, s.figure_prefix) for s in all_studies() if s.figure_prefix] + [("convergence", CONVERGENCE_PREFIX)]


# ---------------------------------------------------------------------------------------------------- notebooks
def notebook_meta(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    pm = nb.metadata.get("papermill", {})
    title = path.stem
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                title = m.group(1).strip()
                break
    return {
        "path": path,
        "nb": nb,
        "title": title,
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


# ---------------------------------------------------------------------------------------------------- numbers
def _fmt(x, digits=3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def estimate_text(row) -> str:
    if pd.isna(row.estimate):
        return "-"
    if pd.isna(row.ci_low):
        return f"{_fmt(row.estimate)} [no CI]"
    return f"{_fmt(row.estimate)} [{_fmt(row.ci_low)}, {_fmt(row.ci_high)}]"


def markdown_html(text: str) -> Markup:
    from nbconvert.filters.markdown import markdown2html

    return Markup(markdown2html(text))


def imdb_numbers(profile: str, store: ResultsStore) -> tuple[list, list]:
    """(setup lines, headline lines) of the IMDB study, from the store."""
    full = imdb_analysis.load_sweep(profile, store=store)
    frame = full[full.part != "scaling"] if "part" in full and not full.empty else full
    setup = []
    if frame.empty:
        return setup, []
    setup.append(
        f"IMDB LSTM (study A): arms {', '.join(sorted(set(frame.arm)))}; batch sizes "
        f"{sorted(int(b) for b in set(frame.batch_size))}; data-loader workers "
        f"{sorted(int(w) for w in set(frame.num_workers))}; training reviews per epoch "
        f"{sorted(int(n) for n in set(frame.n_train))}; "
        f"epochs per trial {sorted(int(e) for e in set(frame.epochs))}; {frame.seed.nunique()} seed(s); "
        f"{imdb_study.MODEL['embed_dim']}-d embedding, {imdb_study.MODEL['hidden_size']} LSTM cells, vocabulary "
        f"{imdb_study.MODEL['num_words']}."
    )
    md = imdb_analysis.headline_markdown(full)
    return setup, [markdown_html(md)]


def assumptions() -> list[str]:
    """The study modules' own 'Assumptions' bullets (the code states them once, the post quotes them)."""
    doc = imdb_study.__doc__ or ""
    part = doc.split("Assumptions", 1)[-1] if "Assumptions" in doc else ""
    items = re.split(r"\n- ", "\n" + part.split("\n", 1)[-1])
    return [" ".join(i.split()) for i in items if i.strip()]


def deepar_numbers(store: ResultsStore, profile: str) -> tuple[list, list]:
    f = deepar_analysis.load_trials(profile, store=store)
    if f.empty or "train_time_s" not in f:
        return [], []
    setup = [
        f"GluonTS DeepAR (study B): {f.dataset.nunique()} Monash dataset(s) "
        f"({', '.join(sorted(set(f.dataset))[:8])}{'...' if f.dataset.nunique() > 8 else ''}), arms "
        f"{', '.join(sorted(set(f.arm)))}, {f.seed.nunique()} seed(s)."
    ]
    lines = []
    totals = f.groupby("arm")["train_time_s"].sum()
    lines.append("Total training time: " + ", ".join(f"{a} {v:,.1f} s" for a, v in totals.items()) + ".")
    r = total_ratio(f)
    if r:
        ci = (
            f" (paired bootstrap 95 % CI {_fmt(r['ci_low'])}-{_fmt(r['ci_high'])})"
            if not math.isnan(r["ci_low"])
            else " (no CI: one pair)"
        )
        lines.append(
            f"MXNet / PyTorch total training time over {r['n']} dataset x seed pairs: {_fmt(r['ratio'])}{ci}; "
            f"the 2024 post's totals give {deepar2024.post_ratio():.2f} ({deepar2024.CONDITIONS})."
        )
    for metric in ("MASE", "sMAPE", "mean_wQL"):
        if metric in f:
            med = f.groupby("arm")[metric].median()
            lines.append(
                f"Median {metric} over datasets and seeds: " + ", ".join(f"{a} {_fmt(v)}" for a, v in med.items()) + "."
            )
    return setup, lines


def convergence_lines(store: ResultsStore, profile: str) -> list[str]:
    try:
        from .analysis import convergence
    except ImportError:
        return []
    return convergence.summary_sentences(profile, store=store)


def environment(store: ResultsStore, metas: list[dict]) -> list[tuple[str, str]]:
    trials = store.trials()
    env = []
    if not trials.empty:
        done = trials[trials.status == "done"]
        row = done.iloc[-1] if len(done) else trials.iloc[-1]
        if len(done):
            env.append(("CPU and frameworks", host_text(done)))
        for key, label in (
            ("provenance.os", "OS"),
            ("provenance.python", "Python"),
            ("provenance.numpy_version", "NumPy"),
            ("host", "host"),
        ):
            if key in row and pd.notna(row[key]):
                env.append((label, str(row[key])))
        if "provenance.git_sha" in done and len(done):
            env.append(("git SHA of the trials", ", ".join(sorted(set(done["provenance.git_sha"].dropna()))[:3])))
        env.append(("trials in the store", f"{len(done)} done, {int((trials.status == 'failed').sum())} failed"))
    env.append(("results store", str(store.path.name)))
    env.append(("site built with", f"Python {platform.python_version()} on {platform.platform()}"))
    starts = [m["start_time"] for m in metas if m["start_time"]]
    if starts:
        env.append(("notebooks executed", f"{min(starts)[:19]} UTC onwards (papermill)"))
    return env


# ---------------------------------------------------------------------------------------------------- figures
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
    for png in sorted(source.glob("*.png")):
        if since is not None and png.stat().st_mtime < since - 5:
            continue  # written before this run of the notebooks: stale
        shutil.copy2(png, target / png.name)
        caption = CAPTIONS.get(png.stem, png.stem.replace("_", " "))
        section = next((name for name, prefix in known if png.stem.startswith(prefix)), "other")
        found[section].append({"src": f"figures/{png.name}", "caption": caption, "name": png.stem})
    for note in sorted(source.glob(f"*{NOT_DRAWN}")):  # a figure with nothing to draw: one sentence saying why
        if since is not None and note.stat().st_mtime < since - 5:
            continue
        name = note.name.removesuffix(NOT_DRAWN)
        section = next((title for title, prefix in known if name.startswith(prefix)), "other")
        what = CAPTIONS.get(name, name.replace("_", " ")).split(". ")[0].rstrip(".")
        found[section].append(
            {"src": None, "caption": what, "name": name, "reason": note.read_text(encoding="utf-8").strip()}
        )
    order = {name: i for i, name in enumerate(CAPTIONS)}  # the known figures in the post's order, then the rest
    for figs in found.values():
        figs.sort(key=lambda f: (order.get(f["name"], len(order)), f["name"]))
    return found


def study_sections(prose: dict, figures: dict, store: ResultsStore, profile: str) -> list[dict]:
    """One post section per registered study: title, the arms that ran (``arms_that_ran``), prose lines where the
    post has them (``prose``: study -> lines), figures."""
    sections = []
    for s in all_studies():
        arms, not_run = arms_that_ran(s.name, profile, store)
        sections.append(
            {
                "name": s.name,
                "title": s.title,
                "arms": arms,
                "arms_not_run": not_run,
                "has_prose": s.name in prose,
                "lines": prose.get(s.name, []),
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


def profile_note(profile: str, store: ResultsStore) -> str:
    """The post's banner: the profile's scale (``readme.scale_note``), and for a small profile what it runs."""
    if profile == "full":
        return ""
    note = scale_note(profile, store, markdown=False)
    if profile == "paper":
        return (
            note + " IMDB timing on epochs of 20 batches (640 to 10,240 reviews, compared per 25,000-review "
            "epoch), training quality on all 25,000 reviews; DeepAR at the protocol's 100 x 50 batches."
        )
    planned = plan("imdb", profile)
    c = planned[0].config if planned else {}
    return (
        f"{note} Profile {profile}: {c.get('n_train')} of the 25,000 training reviews per epoch and "
        f"{c.get('epochs')} epochs per trial (the 2018 post used all 25,000 and averaged 20 timed epochs); "
        f"make reproduce PROFILE=paper runs the papers' scale on one machine."
    )


def build(
    executed: Path,
    out: Path,
    profile: str | None = None,
    store: ResultsStore | None = None,
    figures: Path | None = None,
) -> Path:
    store = store or ResultsStore.open_read(results_path())
    out.mkdir(parents=True, exist_ok=True)
    metas = [notebook_meta(p) for p in sorted(Path(executed).glob("*.ipynb"))] if Path(executed).is_dir() else []
    profile = profile_of(metas, profile)
    pages = []
    for meta in metas:
        page = render_notebook(meta, out, profile)
        pages.append({"href": page.name, "title": meta["title"], "source": Path(str(meta["source"])).name})

    table = ledger.build(store, profile=profile)
    table.to_csv(out / "ledger.csv", index=False)
    rows = [dict(r._asdict(), estimate_text=estimate_text(r)) for r in table.itertuples(index=False)]

    imdb_setup, headline = imdb_numbers(profile, store)
    deepar_setup, deepar = deepar_numbers(store, profile)
    starts = [t for t in (_parse_time(m["start_time"]) for m in metas) if t]
    figs = collect_figures(Path(figures) if figures else figures_dir(), out, min(starts) if starts else None)

    trials = store.trials()
    git = git_state()
    context = {
        "title": TITLE,
        "profile": profile,
        "built_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "n_trials_done": int((trials.status == "done").sum()) if not trials.empty else 0,
        "n_trials_failed": int((trials.status == "failed").sum()) if not trials.empty else 0,
        "git_sha": git.get("git_sha"),
        "git_dirty": git.get("git_dirty"),
        "profile_note": profile_note(profile, store),
        "setup": imdb_setup + deepar_setup + [f"Timing: {ledger.conditions(ledger.load(store, profile))}."],
        "assumptions": assumptions(),
        "studies": study_sections({"imdb": headline, "deepar": deepar}, figs, store, profile),
        "convergence": convergence_lines(store, profile),
        "figures": figs,
        "ledger": rows,
        "ledger_summary": ledger.render.summary(table, ledger.PRECEDENCE),
        "ledger_ci_header": CI_HEADER,
        "ledger_ci_note": CI_NOTE,
        "ledger_tolerance": (
            f"A claimed ratio r counts as matched when the 95 % CI lies inside "
            f"[r / {1 + ledger.TOL:g}, r x {1 + ledger.TOL:g}]."
        ),
        "pages": pages,
        "environment": environment(store, metas),
    }
    # the files and links of the site (see "Links" above) and the glossary: apart from the numbers
    repo = site_files.repository(git)
    terms = glossary.entries()
    context |= {
        "repository": repo,
        "data": site_files.publish(store, profile, out),
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
