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
from .ledger.render import cpu_names
from .pages import render_markdown
from .planning import plan
from .readme import scale_note
from .studies import all_studies
from .studies.imdb import LR_EVERY, LR_FACTOR
from .studies.imdb_profiles import MODEL, PROFILES


def ledger_estimate(row) -> Markup:
    """A ledger row's estimate as the quantity span the answer and the README quote (``answer.claim_quantity``)."""
    if pd.isna(row.estimate):
        return Markup("-")
    return Markup(answer.claim_quantity(row).markup())


def markdown_html(text: str) -> Markup:
    return Markup(markdown2html(text))


def setup(results: Results) -> list[str]:
    """One line per part of each study the profile ran, in the registry's order (template ``post_setup``): each
    config key's values where every trial has one (``fp_mode`` absent: the libraries' default; the gluonts version
    from provenance), the trials per CPU model as ``answer.hardware`` counts them, each with its keys' values where
    they differ from the part's and its trials per fp mode."""
    done = results.finished(drop="stale")  # the trials the first screen counts
    rank = {m["name"]: k for k, m in enumerate(answer.compute(results).hardware["models"])}  # the most trials first
    done = done.assign(cpu=cpu_names(done), part=done.get("config.part", pd.Series("", done.index)).fillna(""))
    done["config.fp_mode"] = done.get("config.fp_mode", pd.Series(None, done.index, object)).fillna("default")
    parts = []
    for study in (s.name for s in all_studies()):
        groups = done[done.study.eq(study)].groupby("part")
        for part, rows in sorted(groups, key=lambda g: (g[0] not in ("", "main"), g[0])):
            v, by_cpu = setting_values(rows), sorted(rows.groupby("cpu"), key=lambda g: rank.get(g[0], len(rank)))
            cpus = [(cpu, len(c), setting_values(c), c["config.fp_mode"].value_counts().to_dict()) for cpu, c in by_cpu]
            parts.append({"study": study, "part": part, "cpus": cpus, "values": v})
    return render_markdown("post_setup", parts=parts, model=MODEL).splitlines()


def setting_values(rows: pd.DataFrame) -> dict:
    """Each config key's sorted values where every one of ``rows`` has one, and the gluonts version they ran."""
    config = rows.filter(regex=r"^config\.|^provenance\.gluonts_version$").dropna(axis=1).convert_dtypes()
    return {c.split(".", 1)[1]: sorted(set(v)) for c, v in config.items() if v.map(pd.api.types.is_scalar).all()}


def assumptions() -> list[str]:
    """What the IMDB study chose where the sources are silent, a line each (template ``post_assumptions``)."""
    lrs = sorted({f"{p['lr']:g}" for p in PROFILES.values()})
    return render_markdown("post_assumptions", model=MODEL, lrs=lrs, factor=LR_FACTOR, every=LR_EVERY).splitlines()


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
    the first screen counts them (``answer.hardware``); each OS, Python, NumPy, host, git SHA and gluonts version
    those trials record, with how many trials recorded it (the machines were not one); the store's superseded."""
    trials = results.every_row().trials()
    done, ours = (trials[trials.status == "done"] if not trials.empty else trials), results.finished(drop="stale")
    starts = [m["start_time"] for m in metas if m["start_time"]]
    keys = {"os": "provenance.os", "python": "provenance.python", "numpy": "provenance.numpy_version", "host": "host"}
    keys |= {"sha": "provenance.git_sha", "gluonts": "provenance.gluonts_version"}
    return {
        "hardware": answer.compute(results).hardware,
        "values": {k: list(ours[c].dropna().astype(str).value_counts().items()) for k, c in keys.items() if c in ours},
        "counts": {"done": len(done), "failed": int(trials.status.eq("failed").sum())} if len(trials) else None,
        "superseded": int(done.trial_id.isin(results.stale().query("superseded").trial_id).sum()) if len(done) else 0,
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
