"""The post's words and numbers, from the results store: the setup lines (each part that ran, on which CPU models),
each study's prose (quoted from ``fwbench.answer``, never recomputed), the convergence sentences, the environment
table, the banner and the assumptions (template ``post_assumptions``). ``fwbench.report`` assembles them."""

from __future__ import annotations

import platform

import pandas as pd
from markupsafe import Markup
from nbconvert.filters.markdown import markdown2html

from . import answer, ledger, prose
from .analysis import Results, dataparallel
from .analysis import deepar as deepar_analysis
from .pages import render_markdown
from .planning import plan
from .readme import scale_note
from .studies import all_studies
from .studies.imdb_profiles import MODEL


def ledger_estimate(row) -> Markup:
    """A ledger row's estimate as the quantity span the answer and the README quote (``answer.claim_quantity``)."""
    if pd.isna(row.estimate):
        return Markup("-")
    return Markup(answer.claim_quantity(row).markup())


def markdown_html(text: str) -> Markup:
    return Markup(markdown2html(text))


def setup(results: Results) -> list[str]:
    """One line per part of each study the profile ran, in the registry's order (template ``post_setup``): each
    config key's values where every trial has one, and the trials per CPU model as ``answer.hardware`` counts them."""
    cpus: dict = {}
    for model in answer.compute(results).hardware["models"]:
        for study, part, n, _ in model["parts"]:
            cpus.setdefault((study, part), []).append((model["name"], n))
    done = results.every_row().trials()
    if cpus:  # the profile's finished trials, those ``answer.hardware`` counts
        done = done[done.status.eq("done") & (done.profile.eq(results.profile) if results.profile else True)]
    parts = []
    for study in (s.name for s in all_studies()):
        for part in sorted((p for s, p in cpus if s == study), key=lambda p: (p not in ("", "main"), p)):
            rows = done[done.study.eq(study) & done.get("config.part", pd.Series("", done.index)).fillna("").eq(part)]
            config = rows.filter(regex=r"^config\.").dropna(axis=1).convert_dtypes()  # the keys every trial has
            values = {c[7:]: sorted(set(v)) for c, v in config.items() if v.map(pd.api.types.is_scalar).all()}
            parts.append({"study": study, "part": part, "cpus": cpus[study, part], "values": values})
    return render_markdown("post_setup", parts=parts, model=MODEL).splitlines()


def assumptions() -> list[str]:
    """What the IMDB study chose where the sources are silent, one line each (template ``post_assumptions``)."""
    return render_markdown("post_assumptions", model=MODEL).splitlines()


def study_prose(a: answer.Answer, results: Results) -> dict:
    """Each study's lines in the post: the ledger's claims on its rows quoted from the answer (for DeepAR after
    the totals and accuracy), never recomputed here."""
    texts = {}
    for study in set(ledger.STUDY_OF.values()):
        text = prose.answer_study(a, study)
        if study == "deepar":
            text = prose.deepar_headline(deepar_analysis.load_trials(results), results.profile) + "\n\n" + text
        if study == dataparallel.STUDY:  # its tables and what two cores can show, before the ledger's C2
            text = prose.dataparallel_section(results) + "\n\n" + text
        texts[study] = [markdown_html(text)]
    return texts


def environment(results: Results, metas: list[dict]) -> dict:
    """The facts of the post's environment table (``post.html.j2`` words its rows); the CPU models and versions as
    the first screen counts them (``answer.hardware``); each OS, Python, NumPy, host and git SHA the profile's
    finished trials record, with how many trials recorded it (the machines were not one)."""
    trials = results.every_row().trials()
    done = trials[trials.status == "done"] if not trials.empty else trials
    ours = done[done.profile.eq(results.profile)] if results.profile and len(done) else done
    starts = [m["start_time"] for m in metas if m["start_time"]]
    keys = {"os": "provenance.os", "python": "provenance.python", "numpy": "provenance.numpy_version", "host": "host"}
    keys["sha"] = "provenance.git_sha"
    return {
        "hardware": answer.compute(results).hardware,
        "values": {k: list(ours[c].dropna().astype(str).value_counts().items()) for k, c in keys.items() if c in ours},
        "counts": {"done": len(done), "failed": int(trials.status.eq("failed").sum())} if len(trials) else None,
        "store": results.store.path.name,
        "built": {"python": platform.python_version(), "platform": platform.platform()},
        "start": min(starts) if starts else None,
    }


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
