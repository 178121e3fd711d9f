"""Statistics shared by the studies: medians with IQR, and ratios with bootstrap 95 % confidence intervals."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
N_RESAMPLES = 2000


def median_iqr(values) -> dict:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return {"median": np.nan, "q1": np.nan, "q3": np.nan, "iqr": np.nan, "n": 0}
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"median": med, "q1": q1, "q3": q3, "iqr": q3 - q1, "n": int(v.size)}


def _ratio_of_medians(a, b, axis=-1):
    return np.median(a, axis=axis) / np.median(b, axis=axis)


def ratio_ci(numerator, denominator, seed: int = 0) -> dict:
    """median(numerator) / median(denominator) with a percentile-bootstrap 95 % CI (both samples resampled
    independently). With fewer than 2 values on a side the CI is NaN: one value has no spread to resample."""
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return {"ratio": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_num": int(a.size), "n_den": int(b.size)}
    point = float(np.median(a) / np.median(b))
    low = high = np.nan
    if a.size >= 2 and b.size >= 2:
        res = stats.bootstrap((a, b), _ratio_of_medians, vectorized=True, paired=False,
                              confidence_level=CONFIDENCE, n_resamples=N_RESAMPLES, method="percentile",
                              random_state=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"ratio": point, "ci_low": low, "ci_high": high, "n_num": int(a.size), "n_den": int(b.size)}


def summarize(frame: pd.DataFrame, by: list[str], value: str = "value") -> pd.DataFrame:
    """Median, quartiles, IQR and n of ``value`` per group."""
    rows = []
    for key, group in frame.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **median_iqr(group[value])})
    return pd.DataFrame(rows)
