"""The rule engine: verdicts, tolerance bands, the parts of a claim and how their verdicts combine.

- ``about(claimed)``  "X is about N % faster": reproduced if the CI of the measured ratio lies inside the
  tolerance band ``[claimed / (1 + TOL), claimed * (1 + TOL)]``; contradicted if the CI lies wholly outside it;
  inconclusive if it straddles an edge (``verdict_in_band`` with ``band_about``).
- ``within(lo, hi)``   "N-M %": the same with the band ``[lo / (1 + TOL), hi * (1 + TOL)]`` (``band_within``).
- ``above(1)``        a direction ("PyTorch trains better", "MXNet is faster"): reproduced if the CI lies above
  the threshold, contradicted if it lies wholly at or below it, inconclusive otherwise (``verdict_above``).
- ``at_most(1)``      "more workers don't help": reproduced if the CI's upper end is <= bound * (1 + TOL),
  contradicted if its lower end is above that, inconclusive otherwise (``verdict_at_most``).
- ``fastest_is(v)``   "the best batch size is 1024": reproduced if v has the lowest median and the runner-up /
  v ratio CI lies above 1; contradicted if some other value's time / v's time has a CI wholly below 1.

A rule without a CI (fewer than 2 trials on a side) gives ``insufficient data``. A claim with several parts takes
the first verdict in ``PRECEDENCE`` among its parts (``combine``); ``context`` parts are shown, never judged.

Ratios are over independent trials (``fwbench.stats.trial_ratio_ci``), never over pooled epochs. The interval's
confidence and the tolerance band are context settings (``settings``), so that ``judge`` can correct a multi-part
claim's intervals for their number (Bonferroni) and show how each verdict moves with the band.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

import numpy as np

from .. import stats
from ..stats import CONFIDENCE, trial_ratio_ci

TOL = 0.05  # relative tolerance around a claimed ratio: band = [claimed / 1.05, claimed * 1.05]
SENSITIVITY_TOL = 0.10  # the wider band every verdict is also shown under
_CONFIDENCE: ContextVar[float] = ContextVar("confidence", default=CONFIDENCE)
_TOL: ContextVar[float] = ContextVar("tol", default=TOL)


@contextmanager
def settings(confidence: float | None = None, tol: float | None = None):
    """Evaluate claims with another interval confidence and/or tolerance band."""
    tokens = [(var, var.set(value)) for var, value in ((_CONFIDENCE, confidence), (_TOL, tol)) if value is not None]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def confidence() -> float:
    return _CONFIDENCE.get()


def tolerance() -> float:
    return _TOL.get()


REPRODUCED = "reproduced"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
INSUFFICIENT = "insufficient data"
NOT_MEASURED = "not measured yet"
NOT_TESTABLE = "not testable here"
BELOW_SCALE = "below scale"
CONTEXT = "context"  # a part shown next to the judged ones, never judged (excluded from ``combine``)
# A multi-part claim takes the first of these among its parts' verdicts.
PRECEDENCE = (CONTRADICTED, NOT_TESTABLE, BELOW_SCALE, NOT_MEASURED, INSUFFICIENT, INCONCLUSIVE, REPRODUCED)
NO_CI = "fewer than 2 trials on a side: no CI"


@dataclass
class Part:
    """One measured quantity of a claim and the verdict its rule gives (in words: template ``ledger_measurement``)."""

    label: str
    quantity: str = ""
    estimate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    verdict: str = NOT_MEASURED
    reason: str = ""
    n: str = ""
    sides: tuple = ()  # trials per side of a ratio over trials, the counts ``n`` words
    confidence: float = CONFIDENCE
    beside: bool = False  # a context part the answer quotes beside the claim's estimate (never in its place)

    @property
    def measured(self) -> bool:
        return not math.isnan(self.estimate)

    @property
    def has_ci(self) -> bool:
        return not math.isnan(self.ci_low)


def missing(what: str, have: str) -> Part:
    """The part of a claim whose rows are absent: ``not measured yet``, naming the rows it waits for."""
    return Part("rows", verdict=NOT_MEASURED, reason=f"needs {what}; the store has {have}")


# ---------------------------------------------------------------------------------------------------- bands
def band_within(lo: float, hi: float) -> tuple[float, float]:
    return lo / (1 + tolerance()), hi * (1 + tolerance())


def band_about(claimed: float) -> tuple[float, float]:
    return band_within(claimed, claimed)


# ---------------------------------------------------------------------------------------------------- verdicts
def verdict_in_band(ci_low: float, ci_high: float, band: tuple[float, float]) -> str:
    """Rule for 'about N %' and 'N-M %' claims."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return INSUFFICIENT
    lo, hi = band
    if lo <= ci_low and ci_high <= hi:
        return REPRODUCED
    if ci_high < lo or ci_low > hi:
        return CONTRADICTED
    return INCONCLUSIVE


def in_band(band: tuple[float, float]) -> Callable[[float, float], str]:
    """``verdict_in_band`` for a fixed band, as a rule of ``ratio_part``."""
    return lambda lo, hi: verdict_in_band(lo, hi, band)


def verdict_above(ci_low: float, ci_high: float, threshold: float = 1.0) -> str:
    """Rule for direction claims: the ratio is above ``threshold``."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return INSUFFICIENT
    if ci_low > threshold:
        return REPRODUCED
    if ci_high <= threshold:
        return CONTRADICTED
    return INCONCLUSIVE


def verdict_at_most(ci_low: float, ci_high: float, bound: float = 1.0) -> str:
    """Rule for 'does not help' claims: the speed-up is at most ``bound`` (within the tolerance): a band without a
    lower edge."""
    return verdict_in_band(ci_low, ci_high, (-math.inf, bound * (1 + tolerance())))


def combine(verdicts: list[str]) -> str:
    """The verdict of a multi-part claim: the first of ``PRECEDENCE`` present among its parts."""
    verdicts = [v for v in verdicts if v != CONTEXT]
    if not verdicts:
        return NOT_MEASURED
    for v in PRECEDENCE:
        if v in verdicts:
            return v
    raise ValueError(f"unknown verdicts {verdicts}")


# ---------------------------------------------------------------------------------------------------- ratios
def ratio_ci(num, den) -> dict:
    """The trial-level ratio and CI at the current confidence (``settings``)."""
    return trial_ratio_ci(num, den, confidence=confidence())


def ci_part(label: str, quantity: str, r: dict, verdict: str, reason: str = "", **fields) -> Part:
    """A part from a ratio and its CI (``r``: ``ratio``, ``ci_low``, ``ci_high``), computed at the ledger's current
    confidence unless ``confidence`` says otherwise (a Bonferroni-widened interval must not be labelled 95 %)."""
    fields = {"confidence": confidence(), **fields}
    return Part(label, quantity, r["ratio"], r["ci_low"], r["ci_high"], verdict, reason, **fields)


def _trial_part(label: str, quantity: str, r: dict, verdict: str) -> Part:
    """A part from a ratio over independent trials (``ratio_ci``); ``n`` counts trials per side."""
    sides = (r["n_num"], r["n_den"])
    fields = {"n": "n={}/{} trials".format(*sides), "sides": sides, "confidence": r["confidence"]}
    return ci_part(label, quantity, r, verdict, NO_CI if verdict == INSUFFICIENT else "", **fields)


def ratio_part(label: str, quantity: str, num, den, rule: Callable[[float, float], str]) -> Part:
    """A ratio of two arms over their per-trial statistics (``num``, ``den``: one value per independent trial),
    with its CI, judged by ``rule(ci_low, ci_high)``."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.size == 0 or den.size == 0:
        return Part(label, quantity, verdict=NOT_MEASURED, reason="no rows for one side of the ratio")
    r = ratio_ci(num, den)
    return _trial_part(label, quantity, r, rule(r["ci_low"], r["ci_high"]))


def context_part(label: str, quantity: str, num, den) -> Part:
    """``ratio_part`` shown beside the judged parts, never judged (also where a side has no rows)."""
    return replace(ratio_part(label, quantity, num, den, lambda lo, hi: CONTEXT), verdict=CONTEXT, reason="")


def sum_ratio_ci(num, den, seed: int = 0) -> dict:
    """``stats.sum_ratio_ci`` at the ledger's current confidence."""
    return stats.sum_ratio_ci(num, den, confidence(), seed)


def fastest_is(samples: dict, claimed) -> Part:
    """Rule ``fastest_is``: ``samples`` maps a candidate (e.g. batch size) to its per-trial epoch times."""
    label = f"is {claimed} fastest?"
    if claimed not in samples:
        return Part(label, verdict=NOT_MEASURED, reason=f"needs trials at {claimed}; swept: {sorted(samples)}")
    medians = {k: float(np.median(v)) for k, v in samples.items() if len(v)}
    best = min(medians, key=medians.get)
    others = [k for k in medians if k != claimed]
    if not others:
        return Part(label, verdict=INSUFFICIENT, reason="only one candidate swept")
    if best == claimed:
        runner_up = min(others, key=medians.get)
        r = ratio_ci(samples[runner_up], samples[claimed])
        v = verdict_above(r["ci_low"], r["ci_high"])
        return _trial_part(
            label, f"time at {runner_up} / time at {claimed}", r, INCONCLUSIVE if v == CONTRADICTED else v
        )
    r = ratio_ci(samples[claimed], samples[best])
    v = verdict_above(r["ci_low"], r["ci_high"])  # claimed slower than the measured best: contradicted
    v = {REPRODUCED: CONTRADICTED, CONTRADICTED: INCONCLUSIVE}.get(v, v)
    return _trial_part(label, f"time at {claimed} / time at {best} (measured fastest)", r, v)
