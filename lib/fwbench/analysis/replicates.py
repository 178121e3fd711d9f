"""Ratios over independent trials: the unit of replication is the trial (one fresh process), never an epoch.

Each trial is first reduced to one statistic (e.g. the median of its timed epochs); a ratio of two arms is then
``exp(mean(log a) - mean(log b))`` over those per-trial statistics, the geometric-mean ratio, with

- a Welch t-interval on the difference of the mean logs when either side has fewer than ``BOOTSTRAP_MIN``
  trials (with so few trials a bootstrap's percentiles are too narrow), and
- a percentile bootstrap of the same statistic when both sides have ``BOOTSTRAP_MIN`` or more.

``confidence`` is 95 % unless a caller corrects for several parts of one claim (``bonferroni``). With fewer than
2 trials on a side there is no interval (NaN): one trial has no spread. ``n_num``/``n_den`` count trials.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
BOOTSTRAP_MIN = 10
N_RESAMPLES = 4000


def _clean(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def trial_ratio_ci(numerator, denominator, confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Geometric-mean ratio numerator / denominator of per-trial statistics, with its CI and method."""
    a, b = np.log(_clean(numerator)), np.log(_clean(denominator))
    out = {"ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_num": int(a.size),
           "n_den": int(b.size), "method": "none", "confidence": confidence}
    if a.size == 0 or b.size == 0:
        return out
    diff = float(a.mean() - b.mean())
    out["ratio"] = math.exp(diff)
    if a.size < 2 or b.size < 2:
        return out
    if a.size >= BOOTSTRAP_MIN and b.size >= BOOTSTRAP_MIN:
        res = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                              vectorized=True, paired=False, confidence_level=confidence, n_resamples=N_RESAMPLES,
                              method="percentile", random_state=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        out["method"] = "bootstrap"
    else:
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = math.sqrt(va + vb)
        if se == 0:
            low = high = diff
        else:
            dof = (va + vb) ** 2 / ((va ** 2 / (a.size - 1) if va else 0) + (vb ** 2 / (b.size - 1) if vb else 0))
            half = stats.t.ppf(0.5 + confidence / 2, dof) * se
            low, high = diff - half, diff + half
        out["method"] = "welch-t on log ratio"
    out["ci_low"], out["ci_high"] = math.exp(low), math.exp(high)
    return out


def bonferroni(parts: int, confidence: float = CONFIDENCE) -> float:
    """The confidence each of ``parts`` intervals needs so that all hold together at ``confidence``."""
    return 1 - (1 - confidence) / max(int(parts), 1)


def half_width(ci_low: float, ci_high: float) -> float:
    """Relative half-width of a ratio's CI on the log scale (0.03 = +-3 %): the smallest effect it resolves."""
    if not (ci_low > 0 and ci_high > 0) or math.isnan(ci_low) or math.isnan(ci_high):
        return math.nan
    return math.expm1((math.log(ci_high) - math.log(ci_low)) / 2)
