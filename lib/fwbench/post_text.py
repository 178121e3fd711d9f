"""The post's words and numbers, from the results store: the setup lines (what ran), each study's prose (quoted
from ``fwbench.answer``, never recomputed), the convergence sentences, the environment table, the banner and the
assumptions the code states. ``fwbench.report`` assembles them into the page."""

from __future__ import annotations

import platform
import re

import pandas as pd
from markupsafe import Markup
from nbconvert.filters.markdown import markdown2html

from . import answer, ledger, prose
from .analysis import Results, dataparallel
from .analysis import deepar as deepar_analysis
from .analysis import imdb as imdb_analysis
from .ledger.render import host_text
from .pages import render_markdown
from .planning import plan
from .readme import scale_note
from .studies import imdb as imdb_study


def ledger_estimate(row) -> Markup:
    """A ledger row's estimate as the quantity span the answer and the README quote (``answer.claim_quantity``)."""
    if pd.isna(row.estimate):
        return Markup("-")
    return Markup(answer.claim_quantity(row).markup())


def markdown_html(text: str) -> Markup:
    return Markup(markdown2html(text))


def imdb_setup(results: Results) -> list[str]:
    """The IMDB study's setup line: what ran, from the store."""
    full = imdb_analysis.load_sweep(results)
    frame = full[full.part != "scaling"] if "part" in full and not full.empty else full
    if frame.empty:
        return []
    lists = {k: sorted(int(v) for v in set(frame[k])) for k in ("batch_size", "num_workers", "n_train", "epochs")}
    facts = {"arms": sorted(set(frame.arm)), "seeds": frame.seed.nunique(), "model": imdb_study.MODEL}
    return [render_markdown("post_imdb_setup", **facts, **lists)]


def assumptions() -> list[str]:
    """The study modules' own 'Assumptions' bullets (the code states them once, the post quotes them)."""
    doc = imdb_study.__doc__ or ""
    part = doc.split("Assumptions", 1)[-1] if "Assumptions" in doc else ""
    items = re.split(r"\n- ", "\n" + part.split("\n", 1)[-1])
    return [" ".join(i.split()) for i in items if i.strip()]


def deepar_setup(results: Results) -> list[str]:
    """The DeepAR study's setup line: what ran, from the store."""
    f = deepar_analysis.load_trials(results)
    if f.empty or "train_time_s" not in f:
        return []
    facts = {"datasets": sorted(set(f.dataset)), "arms": sorted(set(f.arm)), "seeds": f.seed.nunique()}
    return [render_markdown("post_deepar_setup", **facts)]


def study_prose(a: answer.Answer, results: Results) -> dict:
    """Each study's lines in the post: the ledger's claims on its rows quoted from the answer (for DeepAR after
    the totals and accuracy), never recomputed here."""
    texts = {}
    for study in set(ledger.STUDY_OF.values()):
        text = prose.answer_study(a, study)
        if study == "deepar":
            trials = deepar_analysis.load_trials(results)
            text = prose.deepar_headline(trials, results.profile) + ("\n\n" + text)
        if study == dataparallel.STUDY:  # its tables and what two cores can show, before the ledger's C2
            text = prose.dataparallel_section(results) + "\n\n" + text
        texts[study] = [markdown_html(text)]
    return texts


def environment(results: Results, metas: list[dict]) -> list[tuple[str, str]]:
    trials = results.every_row().trials()
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
        failed = sum(trials.status == "failed")
        counts = render_markdown("post_environment", row="trials", done=len(done), failed=failed)
        env.append(("trials in the store file (every profile, the harness benchmarks included)", counts))
    env.append(("results store", str(results.store.path.name)))
    built = {"python": platform.python_version(), "platform": platform.platform()}
    env.append(("site built with", render_markdown("post_environment", row="built", **built)))
    starts = [m["start_time"] for m in metas if m["start_time"]]
    if starts:
        env.append(("notebooks executed", render_markdown("post_environment", row="executed", start=min(starts))))
    return env


def profile_note(results: Results) -> str:
    """The post's banner: the profile's scale (``readme.scale_note``), and for a small profile what it runs."""
    profile = results.profile
    if profile == "full":
        return ""
    note = scale_note(profile, results.store, markdown=False)
    if profile == "paper":  # what it ran is in the answer's limits and the setup lines, computed from the store
        return note
    planned = plan("imdb", profile)
    return render_markdown("post_profile_note", note=note, profile=profile, config=planned[0].config if planned else {})
