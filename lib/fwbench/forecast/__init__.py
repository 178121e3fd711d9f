"""GluonTS DeepAR in twin backends (d2l style): ``fwbench.forecast.torch`` and ``fwbench.forecast.mxnet`` expose the
same public names, so a trial swaps frameworks by one import.

Each twin's public names are its ``__all__`` (the same list in both; ``tests/test_twins.py`` checks it), among them
``train`` (-> predictor, per-epoch records) and ``predict`` (-> forecasts, synchronized). The arm table of the
``deepar`` study names the twin an arm loads (``Arm.load_backend``).

Only framework-free pieces live here (importing this package imports neither framework): the hyperparameters both
backends share, the accuracy evaluation with gluonts' ``Evaluator``, and the cProfile breakdown by phase.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

# The 2024 protocol (shared/reference/deepar_protocol_2024.csv): GluonTS defaults, written out so both backends
# receive the same values from one place.
HYPERPARAMETERS = {
    "num_layers": 2,
    "hidden_size": 40,
    "dropout_rate": 0.1,
    "batch_size": 32,
    "num_batches_per_epoch": 50,
    "learning_rate": 1e-3,
    "weight_decay": 1e-8,
    "gradient_clip": 10.0,
    "num_parallel_samples": 100,
    "distr_output": "StudentTOutput",
    "scaling": True,
}
QUANTILES = (0.1, 0.5, 0.9)


@dataclass
class EpochRecord:
    epoch: int
    loss: float
    time_s: float


def lags_for(freq: str) -> list[int]:
    from gluonts.time_feature import get_lags_for_frequency

    return [int(x) for x in get_lags_for_frequency(freq)]


def truncate(forecasts: list, horizons: list[int]) -> list:
    """Forecasts cut to each series' own horizon (cif_2016: the model forecasts 12 steps, some series score 6)."""
    from gluonts.model.forecast import SampleForecast

    out = []
    for f, h in zip(forecasts, horizons):
        if f.samples.shape[1] == h:
            out.append(f)
        else:
            out.append(SampleForecast(samples=f.samples[:, :h], start_date=f.start_date, item_id=f.item_id))
    return out


# Per-series metrics behind each aggregate; a series whose value is NaN or infinite (MASE of a series whose
# seasonal-naive scale is 0: constant or all-zero history, as in covid_deaths, car_parts, vehicle_trips) is left
# out of that metric's aggregate, as the Monash evaluation does (gluonts' ``aggregate_valid``), and counted.
DROP_COUNTED = {
    "MASE": "n_series_dropped",
    "sMAPE": "n_series_dropped_sMAPE",
    "QuantileLoss[0.5]": "n_series_dropped_wQL",
}


def evaluate(forecasts: list, full: list[dict], horizons: list[int], seasonality: int) -> dict:
    """MASE and sMAPE of the median forecast (seasonal-naive scaling on the training part) and mean weighted
    quantile loss over ``QUANTILES``, aggregated over series by gluonts' ``Evaluator`` with
    ``aggregate_valid``: each metric over the series where it is finite. ``n_series_dropped`` counts the series
    left out of MASE (zero seasonal-naive scale); ``n_series_dropped_sMAPE`` and ``n_series_dropped_wQL`` the
    series left out of those metrics; ``n_series_scored`` the series evaluated. A metric with no finite series
    at all is NaN."""
    from gluonts.evaluation import Evaluator, aggregate_valid

    forecasts = truncate(forecasts, horizons)
    series = [
        pd.Series(s["target"], index=pd.period_range(s["start"], periods=len(s["target"]), freq=s["start"].freq))
        for s in full
    ]
    evaluator = Evaluator(
        quantiles=QUANTILES, seasonality=seasonality, num_workers=0, aggregation_strategy=aggregate_valid
    )
    agg, per_series = evaluator(iter(series), iter(forecasts), num_series=len(series))
    out = {
        "MASE": _float(agg["MASE"]),
        "sMAPE": _float(agg["sMAPE"]),
        "mean_wQL": _float(agg["mean_wQuantileLoss"]),
        "ND": _float(agg["ND"]),
        "RMSE": _float(agg["RMSE"]),
        "n_series_scored": len(per_series),
    }
    for column, key in DROP_COUNTED.items():
        out[key] = int((~np.isfinite(per_series[column].to_numpy(float))).sum())
    return out


def _float(value) -> float:
    """An aggregate as a float; ``aggregate_valid`` gives ``np.ma.masked`` when no series is finite (NaN here;
    ``float(np.ma.masked)`` would be 0.0)."""
    return float("nan") if value is np.ma.masked or np.ma.is_masked(value) else float(value)


# -- where the time goes -------------------------------------------------------------------------------------------
# cProfile's own time (tottime) of each function, summed by the module that defines it. Categories are checked in
# order; the first match wins. Native functions (no Python file) count as "framework"; "other" is the rest of the
# Python code (standard library, tqdm, ...).
PHASES = (
    (
        "data_pipeline",
        (
            "gluonts/transform",
            "gluonts/dataset",
            "gluonts/itertools",
            "gluonts/zebras",
            "gluonts/time_feature",
            "gluonts/mx/batchify",
            "gluonts/torch/batchify",
            "pandas/",
            "/torch/utils/data",
        ),
    ),
    (
        "trainer_loop",
        ("gluonts/mx/trainer", "lightning", "gluonts/torch/model/estimator", "gluonts/mx/model/estimator"),
    ),
    (
        "model_code",
        (
            "gluonts/mx/model",
            "gluonts/torch/model",
            "gluonts/mx/distribution",
            "gluonts/torch/distributions",
            "gluonts/mx/block",
            "gluonts/torch/modules",
            "gluonts/torch/scaler",
            "gluonts/mx/util",
            "gluonts/torch/util",
        ),
    ),
    ("framework", ("/mxnet/", "/torch/", "numpy/")),
)


def profile_call(fn, *args, **kwargs):
    """Run ``fn`` under cProfile; returns (result, {phase: seconds}) with the seconds of each phase's own code."""
    prof = cProfile.Profile()
    result = prof.runcall(fn, *args, **kwargs)
    stats = pstats.Stats(prof)
    totals = {name: 0.0 for name, _ in PHASES} | {"other": 0.0}
    for (filename, _line, _func), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        if filename == "~":  # native (C/C++) functions and methods: framework kernels, mostly
            totals["framework"] += tottime
            continue
        for name, patterns in PHASES:
            if any(p in filename for p in patterns):
                totals[name] += tottime
                break
        else:
            totals["other"] += tottime
    return result, totals


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0


def as_arrays(records: list[EpochRecord]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([r.loss for r in records], dtype=float), np.array([r.time_s for r in records], dtype=float))
