"""The claims ledger: every claim of the reproduced sources (shared/reference/PROTOCOLS.md: A1-A10, B, C) as one
row, with our measurement, its 95 % CI and conditions, and a verdict computed by an explicit rule.

No verdict is typed in. A claim names the rows it needs (study, arm, setting, metric); a rule turns the measured
values into a verdict. The package is in four parts:

- ``rules``: the rule engine (tolerance bands, verdicts and their order, ``Part``, ``combine``, ratios with CIs);
- ``data``: what the claims read, through the analysis loaders the notebooks use (one way to select a profile's
  rows), and the arms by the registry (reference arms, claim-specific arms from the studies' arm tables);
- ``sources``: one module per source with its numbers, stated once, and its claims;
- ``render``: the ledger's rows, our conditions, the host text and the facts of the rules and verdict counts (the
  templates word them: ``fwbench.prose``); ``validity``: the facts of the threats to validity.

Before a rule runs, its data must be there: a claim whose rows are absent is ``not measured yet`` (with the rows
it waits for, so it flips by itself once they exist), one that needs hardware this store has never seen (a GPU,
8 GPUs) is ``not testable here``, and one with a point estimate but no CI (fewer than 2 values per side) is
``insufficient data``. A claim with several parts (one per batch size, per arm, ...) takes the first verdict in
``PRECEDENCE`` among its parts. Ratios are over independent trials (``fwbench.stats``); ``judge``
applies the rules every claim shares: Bonferroni-corrected parts, matched hardware (else a labelled analogue),
scale floors ("below scale"), and the verdict under a wider band. ``stability`` compares two runs.
"""

from __future__ import annotations

import pandas as pd

from ..analysis import Results, cpu_models
from ..errors import FwbenchError
from . import render
from .data import IMDB_PARTS, Claim, Data, load
from .judge import judge as judge_claim
from .render import COLUMNS, conditions, host_text
from .rules import (
    BELOW_SCALE,
    CONTEXT,
    CONTRADICTED,
    INCONCLUSIVE,
    INSUFFICIENT,
    NOT_MEASURED,
    NOT_TESTABLE,
    PRECEDENCE,
    REPRODUCED,
    TOL,
    VERDICTS,
    Part,
    band_about,
    band_within,
    combine,
    fastest_is,
    ratio_part,
    sum_ratio_ci,
    verdict_above,
    verdict_at_most,
    verdict_in_band,
)
from .sources import CLAIMS, SOURCES

# the study whose rows a claim's conditions describe
STUDY_OF = {c.id: c.study for c in CLAIMS}
# the studies whose timings are measured per CPU model and fp mode (``build_by_condition``)
CONDITION_STUDIES = (cpu_models.IMDB, cpu_models.DEEPAR, cpu_models.VGG16)


def evaluate(claim: Claim, d: Data) -> dict:
    """One claim judged on the loaded rows (``judge``): its ledger row (``COLUMNS``)."""
    return render.row(claim, d)


def build(results: Results) -> pd.DataFrame:
    """The ledger: one row per claim (``COLUMNS``), every verdict computed from ``results`` (profile None: every
    row of the store), once: kept in ``results``."""
    d = load(results)
    return d.frame(("ledger", "table"), lambda: pd.DataFrame([evaluate(c, d) for c in CLAIMS], columns=COLUMNS))


def build_by_condition(results: Results) -> pd.DataFrame:
    """The ledger once per stored condition (CPU model and fp mode, ``analysis.cpu_models``) of the timed
    studies: each condition's claims judged on that condition's trials alone, never pooled with another's. Rows
    carry ``cpu`` and ``fp_mode``; a condition keeps the claims of the studies it has trials of. A claim read on a
    part that spans CPU models (the training-quality part: an accuracy) names them in ``cpu``."""
    if results.profile is None:  # without a profile's plan there are no ids to select a condition by
        raise FwbenchError("the ledger per CPU judges one profile's plan: name it (e.g. --profile paper), not 'all'")
    tables = []
    for study in CONDITION_STUDIES:
        for c in cpu_models.stored_conditions(results, study):
            chosen = results.with_overrides(study, c.overrides() or None)
            table = build(chosen)
            table = table[table.claim_id.map(STUDY_OF).eq(study)].assign(cpu=c.cpu, fp_mode=c.fp_mode)
            for claim in (claim for claim in CLAIMS if claim.part and claim.study == study):
                # a part that is not timed (training quality) keeps every CPU model that ran it: the row says so
                models = render.conditions_facts(load(chosen), study, claim.part)["cpus"]
                if len(models) > 1:
                    pooled = "pooled (accuracy)" if claim.hardware == "none" else "pooled"
                    table.loc[table.claim_id == claim.id, "cpu"] = f"{pooled}: {', '.join(models)}"
            tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=[*COLUMNS, "cpu", "fp_mode"])


def judged_parts(d: Data) -> dict[str, list[Part]]:
    """Every claim's parts as ``judge`` leaves them (Bonferroni-widened where a claim has several): the numbers
    behind each row's measurement, for the pages that quote a part rather than the deciding one."""
    return {c.id: judge_claim(c, d)["parts"] for c in CLAIMS}


def rules_facts() -> dict:
    """The facts of the rules and tolerance (``render.rules_facts`` of every claim; template ``ledger_rules``)."""
    return render.rules_facts(CLAIMS)


__all__ = [
    "BELOW_SCALE",
    "CLAIMS",
    "COLUMNS",
    "CONTEXT",
    "CONTRADICTED",
    "Claim",
    "Data",
    "IMDB_PARTS",
    "INCONCLUSIVE",
    "INSUFFICIENT",
    "NOT_MEASURED",
    "NOT_TESTABLE",
    "PRECEDENCE",
    "REPRODUCED",
    "SOURCES",
    "STUDY_OF",
    "TOL",
    "VERDICTS",
    "Part",
    "band_about",
    "band_within",
    "build",
    "combine",
    "conditions",
    "evaluate",
    "fastest_is",
    "judged_parts",
    "host_text",
    "load",
    "ratio_part",
    "rules_facts",
    "sum_ratio_ci",
    "verdict_above",
    "verdict_at_most",
    "verdict_in_band",
]
