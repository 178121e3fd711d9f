"""The static site: the study as a blog post (``index.html``) plus one page per executed notebook, built from the
results store at build time, viewable offline from any static host as it is.

    python -m fwbench.report --executed build/executed --out reports [--profile quick]

- each executed notebook -> ``<name>.html`` (nbconvert, code and prompts hidden, figures inline as base64, the
  ``fwbench`` template: the lab look without require.js/MathJax/mermaid/widgets from CDNs);
- ``index.html`` from ``templates/post.html.j2``: every number computed here from the store;
- ``figures/``: the PNGs the post shows, copied from ``fwbench.paths.figures_dir()`` (only those written by this
  run of the notebooks, so a stale figure from an older run never appears);
- ``ledger.csv``: the claims ledger (``fwbench.ledger``).
The post has one section per registered study (``fwbench.studies.all_studies``: its title, arm table and the
figures whose names start with its ``figure_prefix``), plus the convergence curves and the ledger.
All links are relative.
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

from . import answer, ledger
from .analysis import deepar as deepar_analysis
from .analysis import imdb as imdb_analysis
from .errors import FwbenchError
from .ledger.render import host_text
from .paths import figures_dir, results_path
from .plots import NOT_DRAWN, publish
from .plots import answer as plots_answer
from .plots.answer import ANSWER_FIGURE
from .plots.captions import CAPTIONS
from .provenance import git_state
from .readme import scale_note
from .runner import plan
from .store import ResultsStore
from .studies import all_studies, arm_table
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


def ledger_estimate(row) -> Markup:
    """A ledger row's estimate as the quantity span the answer and the README quote (``answer.claim_quantity``)."""
    if pd.isna(row.estimate):
        return Markup("-")
    return Markup(answer.claim_quantity(row).markup())


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
        f"{sorted(int(w) for w in set(frame.num_workers))}; {int(frame.n_train.iloc[0])} training reviews per epoch; "
        f"epochs per trial {sorted(int(e) for e in set(frame.epochs))}; {frame.seed.nunique()} seed(s); "
        f"{imdb_study.MODEL['embed_dim']}-d embedding, {imdb_study.MODEL['hidden_size']} LSTM cells, vocabulary "
        f"{imdb_study.MODEL['num_words']}."
    )
    return setup, []


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
    return setup, lines


def study_prose(a: answer.Answer, store: ResultsStore, profile: str) -> dict:
    """Each study's lines in the post: the ledger's claims on its rows quoted from the answer (for DeepAR after
    the totals and accuracy), never recomputed here."""
    prose = {}
    for study in {s for s in ledger.STUDY_OF.values()}:
        text = answer.study_markdown(a, study)
        if study == "deepar":
            text = deepar_analysis.headline_markdown(deepar_analysis.load_trials(profile, store=store), profile) + (
                "\n\n" + text
            )
        prose[study] = [markdown_html(text)]
    return prose


def answer_figure(a: answer.Answer, out: Path) -> dict:
    """The answer's one figure, drawn now from the answer (not by a notebook), into the site's figures/."""
    target = out / "figures"
    written = publish(ANSWER_FIGURE, plots_answer.answer_figure, a, directory=target)
    caption = CAPTIONS[ANSWER_FIGURE]
    if written:
        return {"src": f"figures/{ANSWER_FIGURE}.png", "caption": caption, "name": ANSWER_FIGURE}
    reason = (target / f"{ANSWER_FIGURE}{NOT_DRAWN}").read_text(encoding="utf-8").strip()
    return {"src": None, "caption": caption.split(". ")[0], "name": ANSWER_FIGURE, "reason": reason}


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
        env.append(
            (
                "trials in the store file (every profile, the harness benchmarks included)",
                f"{len(done)} done, {int((trials.status == 'failed').sum())} failed",
            )
        )
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


def study_sections(prose: dict, figures: dict) -> list[dict]:
    """One post section per registered study: title, arm table, prose lines where the post has them (``prose``:
    study -> lines), figures."""
    return [
        {
            "name": s.name,
            "title": s.title,
            "arms": arm_table(s.name),
            "has_prose": s.name in prose,
            "lines": prose.get(s.name, []),
            "figures": figures.get(s.name, []),
        }
        for s in all_studies()
    ]


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
    rows = [dict(r._asdict(), estimate_text=ledger_estimate(r)) for r in table.itertuples(index=False)]

    a = answer.compute(store, profile)
    imdb_setup, _ = imdb_numbers(profile, store)
    deepar_setup, _ = deepar_numbers(store, profile)
    starts = [t for t in (_parse_time(m["start_time"]) for m in metas) if t]
    figs = collect_figures(Path(figures) if figures else figures_dir(), out, min(starts) if starts else None)

    trials = store.trials()
    git = git_state()
    context = {
        "title": TITLE,
        "profile": profile,
        "built_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "n_trials_done": Markup(a.trials.markup(ci=False)),
        "answer": markdown_html(answer.markdown(a, heading=None)),
        "answer_figure": answer_figure(a, out),
        "n_trials_failed": int((trials.status == "failed").sum()) if not trials.empty else 0,
        "git_sha": git.get("git_sha"),
        "git_dirty": git.get("git_dirty"),
        "profile_note": profile_note(profile, store),
        "setup": imdb_setup + deepar_setup + [f"Timing: {ledger.conditions(ledger.load(store, profile))}."],
        "assumptions": assumptions(),
        "studies": study_sections(study_prose(a, store, profile), figs),
        "convergence": convergence_lines(store, profile),
        "figures": figs,
        "ledger": rows,
        "ledger_summary": ledger.render.summary(table, ledger.PRECEDENCE),
        "ledger_tolerance": (
            f"A claimed ratio r counts as matched when the 95 % CI lies inside "
            f"[r / {1 + ledger.TOL:g}, r x {1 + ledger.TOL:g}]."
        ),
        "pages": pages,
        "environment": environment(store, metas),
    }
    jenv = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]))
    index = out / "index.html"
    index.write_text(jenv.get_template("post.html.j2").render(**context), encoding="utf-8")
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
