"""The claims ledger: every claim of the reproduced sources (shared/reference/PROTOCOLS.md: A1-A10, B, C) as one
row, with our measurement, its CI and conditions, and a verdict computed by an explicit rule: no verdict is
typed in. A claim names the rows it needs (study, arm, setting, metric); a rule turns them into a verdict.

- ``rules``: the rule engine (tolerance bands, verdicts and their order, ``Part``, ``combine``, ratios with CIs);
- ``data``: what the claims read, through the analysis loaders the notebooks use, and the arms by the registry;
- ``sources``: one module per source with its numbers, stated once, and its claims (``floors``: their scale floors);
- ``judge``: the rules every claim shares (Bonferroni-corrected parts, matched hardware, scale floors, a wider band);
- ``render``: the ledger's rows and the facts the templates word; ``validity``: the threats to validity;
  ``stability``: two runs compared.

A claim whose rows are absent is ``not measured yet``, naming the rows it waits for: it flips once they exist.
"""

from __future__ import annotations

import pandas as pd

from ..analysis import Results, cpu_models
from ..errors import FwbenchError
from ..pages import render_markdown
from . import render
from .data import Data, load
from .judge import judge as judge_claim
from .render import COLUMNS, rules_facts
from .rules import BELOW_SCALE, NOT_TESTABLE, PRECEDENCE, TOL, Part
from .sources import CLAIMS

# the study whose rows a claim's conditions describe
STUDY_OF = {c.id: c.study for c in CLAIMS}
# the studies whose timings are measured per CPU model and fp mode (``build_by_condition``)
CONDITION_STUDIES = (cpu_models.IMDB, cpu_models.DEEPAR, cpu_models.VGG16)


def build(results: Results) -> pd.DataFrame:
    """The ledger: one row per claim (``COLUMNS``), every verdict computed from ``results`` (profile None: every
    row of the store), once: kept in ``results``."""
    d = load(results)
    return d.frame(("ledger", "table"), lambda: pd.DataFrame([render.row(c, d) for c in CLAIMS], columns=COLUMNS))


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
            chosen = results
            for other in CONDITION_STUDIES:  # a claim's context on another study (C3's LSTM) is of the same condition
                chosen = c.select(chosen, other)
            table = build(chosen)
            table = table[table.claim_id.map(STUDY_OF).eq(study)].assign(cpu=c.cpu, fp_mode=c.fp_mode)
            for claim in (claim for claim in CLAIMS if claim.part and claim.study == study):
                # a part that is not timed (training quality) keeps every CPU model that ran it: the row says so
                models = render.conditions_facts(load(chosen), study, claim.part)["cpus"]
                if len(models) > 1:
                    pooled = render_markdown("ledger_pooled_cpu", models=models, accuracy=claim.hardware == "none")
                    table.loc[table.claim_id == claim.id, "cpu"] = pooled
            tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=[*COLUMNS, "cpu", "fp_mode"])


def judged_parts(d: Data) -> dict[str, list[Part]]:
    """Every claim's parts as ``judge`` leaves them (Bonferroni-widened where a claim has several): the numbers
    behind each row's measurement, for the pages that quote a part rather than the deciding one."""
    return {c.id: judge_claim(c, d)["parts"] for c in CLAIMS}


__all__ = [
    "BELOW_SCALE",
    "CLAIMS",
    "COLUMNS",
    "Data",
    "NOT_TESTABLE",
    "PRECEDENCE",
    "STUDY_OF",
    "TOL",
    "build",
    "build_by_condition",
    "judged_parts",
    "load",
    "rules_facts",
]
