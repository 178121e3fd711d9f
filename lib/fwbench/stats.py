"""The statistics every layer shares: one confidence level, intervals over independent trials, their widths. A
leaf (it imports nothing of fwbench), so the adaptive rule, the analysis and the ledger read the same numbers.

The unit of replication is the trial (one fresh process), never an epoch: each trial is first reduced to one
statistic (e.g. the median of its timed epochs), and a ratio of two arms is the geometric-mean ratio
``exp(mean(log a) - mean(log b))`` of those, with a Welch t-interval on the difference of the mean logs when either
side has fewer than ``BOOTSTRAP_MIN`` trials (with so few, a bootstrap's percentiles are too narrow), else a
percentile bootstrap. With fewer than 2 trials on a side there is no interval (NaN): one trial has no spread.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import special

CONFIDENCE = 0.95  # of every interval: the verdicts', the figures' and the adaptive stopping rule's
BOOTSTRAP_MIN = 10
N_RESAMPLES = 4000  # trial-level ratio bootstrap
SUM_RESAMPLES = 2000  # paired-sum bootstrap (``sum_ratio_ci``)


def _clean(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def trial_ratio_ci(numerator, denominator, confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """Geometric-mean ratio numerator / denominator of per-trial statistics, with its CI and method."""
    a, b = np.log(_clean(numerator)), np.log(_clean(denominator))
    out = {
        "ratio": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "n_num": int(a.size),
        "n_den": int(b.size),
        "method": "none",
        "confidence": confidence,
    }
    if a.size == 0 or b.size == 0:
        return out
    diff = float(a.mean() - b.mean())
    out["ratio"] = math.exp(diff)
    if a.size < 2 or b.size < 2:
        return out
    if a.size >= BOOTSTRAP_MIN and b.size >= BOOTSTRAP_MIN:
        statistic = lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis)  # noqa: E731
        low, high = _percentile_bootstrap((a, b), statistic, False, N_RESAMPLES, confidence, seed)
        out["method"] = "bootstrap"
    else:
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = math.sqrt(va + vb)
        if se == 0:
            low = high = diff
        else:
            dof = (va + vb) ** 2 / ((va**2 / (a.size - 1) if va else 0) + (vb**2 / (b.size - 1) if vb else 0))
            half = t_quantile(dof, confidence) * se
            low, high = diff - half, diff + half
        out["method"] = "welch-t on log ratio"
    out["ci_low"], out["ci_high"] = math.exp(low), math.exp(high)
    return out


def _percentile_bootstrap(data, statistic, paired: bool, n_resamples: int, confidence: float, seed: int):
    """(low, high) of scipy's percentile bootstrap of ``statistic`` over ``data``, seeded."""
    from scipy import stats  # here: scipy.stats takes a second to import, in every process that reads this leaf

    res = stats.bootstrap(
        data,
        statistic,
        vectorized=True,
        paired=paired,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def sum_ratio_ci(num, den, confidence: float = CONFIDENCE, seed: int = 0) -> dict:
    """sum(num) / sum(den) over paired values (e.g. per dataset x seed trial) with a paired percentile-bootstrap
    CI: each pair is one independent trial of each side."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    point = float(a.sum() / b.sum()) if a.size and b.sum() else math.nan
    low = high = math.nan
    if a.size >= 2:
        statistic = lambda x, y, axis=-1: x.sum(axis=axis) / y.sum(axis=axis)  # noqa: E731
        low, high = _percentile_bootstrap((a, b), statistic, True, SUM_RESAMPLES, confidence, seed)
    return {"ratio": point, "ci_low": low, "ci_high": high, "n": int(a.size)}


def sum_of_means_ratio_ci(num_groups, den_groups, confidence: float = CONFIDENCE) -> dict:
    """Σ over groups of the mean of each group's trials, numerator / denominator (e.g. per dataset: the trials of
    each framework, each trial reduced to one total), with a t-interval on the log ratio: each total's variance
    is Σ var(group) / n(group) over its groups (independent trials, ddof 1), carried to the log by the delta
    method, with Welch-Satterthwaite degrees of freedom (few trials per group: no bootstrap). No interval when
    a group of either side has fewer than 2 trials."""
    sides = []
    for groups in (num_groups, den_groups):
        arrays = [_clean(g) for g in groups]
        total = float(sum(a.mean() for a in arrays if a.size))
        if any(a.size < 2 for a in arrays):
            sides.append((total, math.nan, []))
            continue
        parts = [a.var(ddof=1) / a.size for a in arrays]
        sides.append((total, float(sum(parts)), [(p, a.size - 1) for p, a in zip(parts, arrays)]))
    (t_num, v_num, d_num), (t_den, v_den, d_den) = sides
    out = {"ratio": t_num / t_den if t_den > 0 else math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "n_groups": len(num_groups), "confidence": confidence}  # fmt: skip
    if math.isnan(v_num) or math.isnan(v_den) or not (t_num > 0 and t_den > 0):
        return out
    v_log = v_num / t_num**2 + v_den / t_den**2
    if v_log == 0:
        out["ci_low"] = out["ci_high"] = out["ratio"]
        return out
    terms = [(p / t_num**2) ** 2 / dof for p, dof in d_num] + [(p / t_den**2) ** 2 / dof for p, dof in d_den]
    dof = v_log**2 / sum(terms) if sum(terms) else math.inf
    half = t_quantile(dof, confidence) * math.sqrt(v_log)
    out["ci_low"], out["ci_high"] = out["ratio"] * math.exp(-half), out["ratio"] * math.exp(half)
    return out


def log_contrast_ci(terms, confidence: float = CONFIDENCE) -> dict:
    """``exp(Σ w · mean(log x))`` over ``terms`` = [(w, x), ...], each ``x`` the per-trial statistics of one group
    of independent trials, with a Welch-Satterthwaite t-interval (variance Σ w² var(log x) / n). With weights
    (1, a), (-1, b) it is ``trial_ratio_ci``'s Welch ratio; with (1, a), (-1, b), (-1, c), (1, d) the ratio of two
    ratios (how much a condition moves one framework's time against the other's: (a / b) / (c / d)); weights 1/k
    average k such contrasts. No interval when a group has fewer than 2 trials."""
    groups = [(float(w), np.log(_clean(x))) for w, x in terms]
    out = {"ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_min": min((g.size for _, g in groups),
           default=0), "confidence": confidence}  # fmt: skip
    if not groups or any(g.size == 0 for _, g in groups):
        return out
    estimate = sum(w * g.mean() for w, g in groups)
    out["ratio"] = math.exp(estimate)
    if any(g.size < 2 for _, g in groups):
        return out
    parts = [(w * w * g.var(ddof=1) / g.size, g.size - 1) for w, g in groups]
    var = sum(p for p, _ in parts)
    if var == 0:
        out["ci_low"] = out["ci_high"] = out["ratio"]
        return out
    dof = var**2 / sum(p * p / d for p, d in parts if p)
    half = t_quantile(dof, confidence) * math.sqrt(var)
    out["ci_low"], out["ci_high"] = math.exp(estimate - half), math.exp(estimate + half)
    return out


def bonferroni(parts: int, confidence: float = CONFIDENCE) -> float:
    """The confidence each of ``parts`` intervals needs so that all hold together at ``confidence``."""
    return 1 - (1 - confidence) / max(int(parts), 1)


def half_width(ci_low: float, ci_high: float) -> float:
    """Relative half-width of a ratio's CI on the log scale (0.03 = +-3 %): the smallest effect it resolves."""
    if not (ci_low > 0 and ci_high > 0) or math.isnan(ci_low) or math.isnan(ci_high):
        return math.nan
    return math.expm1((math.log(ci_high) - math.log(ci_low)) / 2)


def t_quantile(dof: float, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student-t critical value for ``confidence`` (e.g. 2.78 at 95 % with 4 degrees of freedom)."""
    return float(special.stdtrit(dof, 0.5 + confidence / 2))  # scipy.stats.t.ppf


def half_width_at(var_a: float, var_b: float, n: int, confidence: float = CONFIDENCE) -> float:
    """The relative half-width (as ``half_width``) of the Welch t-interval on the log ratio with ``n`` trials a
    side whose log values have variances ``var_a`` and ``var_b``."""
    if n < 2 or not var_a + var_b > 0:
        return 0.0 if n >= 2 else math.nan
    dof = (var_a + var_b) ** 2 * (n - 1) / max(var_a**2 + var_b**2, 1e-300)
    return math.expm1(t_quantile(dof, confidence) * math.sqrt((var_a + var_b) / n))


def log_variance(values: list) -> float:
    """Sample variance (ddof 1) of the logs of ``values``: the spread ``half_width_at`` projects from."""
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    return sum((x - mean) ** 2 for x in logs) / (len(logs) - 1)


def median_iqr(values) -> dict:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return {"median": np.nan, "q1": np.nan, "q3": np.nan, "iqr": np.nan, "n": 0}
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"median": med, "q1": q1, "q3": q3, "iqr": q3 - q1, "n": int(v.size)}


def summarize(frame: pd.DataFrame, by: list[str], value: str = "value") -> pd.DataFrame:
    """Median, quartiles, IQR and n of ``value`` per group."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **median_iqr(group[value])})
    return pd.DataFrame(rows)


def trial_medians(frame: pd.DataFrame, value: str) -> pd.Series:
    """Each trial (``trial_id``) of ``frame`` reduced to the median of its repeated ``value``: the per-trial
    statistic ``trial_ratio_ci`` takes (repeats within one process are not independent)."""
    return frame.groupby("trial_id")[value].median()
