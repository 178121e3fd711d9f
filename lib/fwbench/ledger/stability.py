"""The stability check: two independent runs of one profile, side by side (``fwbench ledger --compare A B``).

For every part of every claim (analogues and parts below scale too) it asks whether each run's estimate lies inside
the other run's CI, and for every claim whether the two verdicts agree. With calibrated 95 % intervals an estimate
falls inside the other run's interval about 83 % of the time (two independent estimates differ by up to sqrt(2) x
1.96 standard errors 95 % of the time; 1.96 / sqrt(2) standard errors cover about 83 %): far below that the
intervals describe jitter inside a run, not run-to-run spread; near 100 % they are too wide to say anything.
"""

from __future__ import annotations

import math

import pandas as pd

from ..analysis import Results
from .data import load
from .judge import judge
from .sources import CLAIMS

CALIBRATED_SHARE = 0.83
PART_FIELDS = ("quantity", "estimate", "ci_low", "ci_high", "n")  # each part's, beside its claim, label and verdict


def parts_table(results: Results) -> pd.DataFrame:
    """One row per part of every claim: its estimate and CI, and the claim's verdict."""
    d = load(results)
    rows = []
    for claim in CLAIMS:
        j = judge(claim, d)
        rows += [
            {"claim_id": claim.id, "part": p.label, **{f: getattr(p, f) for f in PART_FIELDS}, "verdict": j["verdict"]}
            for p in j["parts"]
        ]
    return pd.DataFrame(rows)


def _inside(x: float, low: float, high: float) -> float:
    return math.nan if any(math.isnan(v) for v in (x, low, high)) else float(low <= x <= high)


def compare(results_a: Results, results_b: Results) -> tuple[pd.DataFrame, dict]:
    """The parts of both runs matched by claim and part, with 'inside the other's CI' per side, and a summary:
    claims whose verdicts agree, and the share of estimates inside the other run's CI."""
    a, b = parts_table(results_a), parts_table(results_b)
    both = a.merge(b, on=["claim_id", "part", "quantity"], how="outer", suffixes=("_a", "_b"))
    both["a_in_b"] = [_inside(x, lo, hi) for x, lo, hi in zip(both.estimate_a, both.ci_low_b, both.ci_high_b)]
    both["b_in_a"] = [_inside(x, lo, hi) for x, lo, hi in zip(both.estimate_b, both.ci_low_a, both.ci_high_a)]
    verdicts = both.groupby("claim_id")[["verdict_a", "verdict_b"]].first()
    agree = verdicts.verdict_a.eq(verdicts.verdict_b)
    checks = pd.concat([both.a_in_b, both.b_in_a]).dropna()
    summary = {
        "claims": int(len(verdicts)),
        "verdicts_agree": int(agree.sum()),
        "disagreeing_claims": sorted(verdicts.index[~agree]),
        "estimates_compared": int(len(checks)),
        "share_inside_other_ci": float(checks.mean()) if len(checks) else math.nan,
        "calibrated_share": CALIBRATED_SHARE,
    }
    share = summary["share_inside_other_ci"]
    # how the share of estimates inside the other run's CI compares with calibrated intervals' (template
    # ``ledger_stability`` words it)
    summary["calibration"] = (
        "none"
        if math.isnan(share)
        else "calibrated"
        if abs(share - CALIBRATED_SHARE) <= 0.1
        else "narrow"
        if share < CALIBRATED_SHARE
        else "wide"
    )
    return both, summary
