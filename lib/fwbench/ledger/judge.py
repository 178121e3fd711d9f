"""From a claim's parts to its verdict, the same way for every claim:

1. Multi-part claims: when a claim has k > 1 judged parts (at least the ``Claim.tests`` it declares, where
   any is measured), their intervals are recomputed at Bonferroni's confidence 1 - 0.05 / k before any part can
   contradict, and the row says how many parts agree; context parts, never judged, keep the plain 95 %.
2. Matched hardware: a claim that depends on a GPU (``Claim.hardware``) measured on other hardware is "not
   testable here"; its measurement is shown as a labelled analogue ("on this CPU: ..."), never as a verdict.
   GPU rows (the ``device`` option) get verdicts.
3. Scale floors: below the claim's floor (``Claim.floor``, ``floors``) the verdict is "below scale", naming
   what the run would need; the measurement is still shown.
4. Sensitivity: the verdict under the wider band (+-``SENSITIVITY_TOL``), and the smallest effect the
   measurement could have detected (the widest judged part's CI half-width).
"""

from __future__ import annotations

import math

from ..pages import render_markdown
from ..stats import bonferroni, half_width
from .data import Claim, Data
from .rules import (
    BELOW_SCALE,
    CONTEXT,
    NOT_MEASURED,
    NOT_TESTABLE,
    REPRODUCED,
    SENSITIVITY_TOL,
    Part,
    combine,
    settings,
)

UNJUDGED = (CONTEXT, NOT_MEASURED, NOT_TESTABLE)
DEVICE_NAMES = {"cuda": "GPU", "cpu": "CPU", None: "no rows"}


def _judged(parts: list[Part]) -> list[Part]:
    return [p for p in parts if p.verdict not in UNJUDGED and not math.isnan(p.estimate)]


def judge(claim: Claim, d: Data) -> dict:
    """The verdict of one claim and what the ledger row says about it (see the module docstring)."""
    plain = claim.evaluate(d)
    k = len([p for p in _judged(plain) if not math.isnan(p.ci_low)])
    k = max(k, claim.tests) if k else 0  # a declared test not measured on these rows still shares the 95 %
    corrected = bonferroni(k) if k > 1 else None
    parts = plain
    if corrected:
        with settings(confidence=corrected):
            parts = claim.evaluate(d)
        # context parts are not tested: they keep the plain level, so a number quoted by two claims reads the same
        parts = [p if p.verdict != CONTEXT else q for p, q in zip(parts, plain)]
    with settings(confidence=corrected, tol=SENSITIVITY_TOL):
        wide = combine([p.verdict for p in claim.evaluate(d)])
    verdict = combine([p.verdict for p in parts])
    judged = _judged(parts)
    device = d.device_of(claim.study)
    ours = DEVICE_NAMES.get(device, device)
    measured = bool(judged)
    # a claim with measured parts beside unmeasured ones still has its floor checked (an analogue states it)
    floor = claim.floor(d) if verdict != NOT_MEASURED or measured else None
    # a GPU claim on other rows is an analogue as soon as any part is measured (a part the CPU profile does not
    # sweep stays "needs ..." inside it), never "not measured yet" beside numbers that are there
    other_hardware = claim.hardware == "gpu" and device != "cuda" and (verdict != NOT_MEASURED or measured)
    if other_hardware:
        verdict = wide = NOT_TESTABLE
    elif floor and verdict not in (NOT_MEASURED, NOT_TESTABLE):
        verdict = wide = BELOW_SCALE
    widths = [half_width(p.ci_low, p.ci_high) for p in judged]
    widths = [w for w in widths if not math.isnan(w)]
    facts = {
        "parts": parts,
        "verdict": verdict,
        "verdict_band10": wide,
        "analogue": other_hardware and measured,
        "agree": sum(p.verdict == REPRODUCED for p in judged),  # of ``judged`` (template ``ledger_parts_agree``)
        "judged": len(judged),
        "confidence": corrected or parts[0].confidence if parts else None,
        "min_detectable": max(widths) if widths else math.nan,
        "our_hardware": ours,
        "below_floor": floor or "",  # what the run lacks of the claim's floor (also where the verdict is an analogue)
        "other_hardware": other_hardware,
    }
    # why the claim has no verdict of its own (template ``ledger_reason``; empty where it has one)
    return facts | {
        "reason": render_markdown("ledger_reason", source_hardware=claim.source_hardware, scale=claim.scale, **facts)
    }
