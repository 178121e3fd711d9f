"""The deepar study's trial: what one trial process runs (``run_trial``), apart from the study's declarations
(``fwbench.studies.deepar``: arm table, profiles, options, grid).

This module, the arms' backends and the study's ``code`` modules make the code fingerprint of every trial
(``Study.code_version``); the declarations do not, so editing a profile leaves stored trials of unchanged configs
current. It never imports the declarations: what a trial does follows from its config, its arm's row of the arm
table (hashed too) and the code hashed here.
"""

from __future__ import annotations

import ctypes
import os
import time

import psutil

from ..background_load import BackgroundLoad
from ..measure import median
from .registry import get_study

STUDY_NAME = "deepar"

# What each MXNet variant hybridizes: (training network, prediction network).
HYBRIDIZE = {"imperative": (False, False), "hybrid-partial": (True, False), "hybrid-full": (True, True)}


PROFILE_WINDOWS = 32  # test windows forecast under cProfile


PROFILE_BATCHES = 10  # training batches run under cProfile

# OpenMP runtimes: GNU's (PyTorch's own copy, and the system's that MXNet loads), Intel's, LLVM's
OPENMP_LIBRARIES = ("libgomp", "libiomp", "libomp")


def hybridization(arm: str) -> dict:
    """``{"hybridize_train", "hybridize_predict"}`` of an arm: booleans for MXNet, None for PyTorch."""
    a = get_study(STUDY_NAME).arm(arm)
    train, predict = HYBRIDIZE.get(a.variant, (None, None))  # MXNet's variants; a PyTorch arm has neither
    return {"hybridize_train": train, "hybridize_predict": predict}


def estimator_kwargs(config: dict, data) -> dict:
    """The backend's ``make_estimator``/``train`` arguments for a trial config on loaded Monash data."""
    from .. import forecast as fc

    kwargs = {
        "freq": data.freq,
        "prediction_length": data.prediction_length,
        "context_length": data.context_length,
        "lags_seq": fc.lags_for(data.freq),
        "epochs": config["epochs"],
        "num_batches_per_epoch": config["num_batches_per_epoch"],
    }
    if config["hybridize_train"] is not None:  # MXNet arms only
        kwargs["hybridize"] = bool(config["hybridize_train"])
    return kwargs


def run_trial(config: dict, report=None) -> dict:
    """Load the data (failing before any framework import if it is unavailable or broken), train, forecast the
    test windows, score them; returns summary, measurements and provenance. A config with ``forecast`` False (the
    coverage part: training cost only) stops after training: no forecast, no accuracy."""
    os.environ.setdefault("TQDM_DISABLE", "1")
    from .. import forecast as fc
    from ..data import monash

    say = report or (lambda msg: None)
    data = monash.load(config["dataset"])
    if data.prediction_length != config["prediction_length"]:  # cif_2016: max of the per-series horizons
        say(f"prediction length {data.prediction_length} (max per-series horizon)")
    onednn = config.get("onednn", True)
    os.environ.update(get_study(STUDY_NAME).arm_of(config).onednn_env(onednn))  # MXNet reads these at import only
    be = get_study(STUDY_NAME).arm_of(config).load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    kwargs = estimator_kwargs(config, data)

    me = psutil.Process()
    with be.onednn(onednn), BackgroundLoad(config.get("background_load", 0)) as load:
        onednn_active = be.onednn_enabled()
        cpu0, t0 = sum(me.cpu_times()[:2]), time.perf_counter()
        predictor, epochs = be.train(data.train, **kwargs)
        be.synchronize()
        train_time = time.perf_counter() - t0
        train_cpu = sum(me.cpu_times()[:2]) - cpu0  # this process's threads only: the burners are children
    say(f"trained {len(epochs)} epochs in {train_time:.1f} s, {train_cpu / train_time:.2f} CPUs busy")
    if load.burners:
        say(f"background load: {load.burners} burner(s) got {load.record['burner_cpu_frac']:.2f} of their CPU")
    usage = {"train_cpu_s": train_cpu, "train_cpus_busy": train_cpu / train_time, **load.record,
             **threads_in_use(me)}  # fmt: skip
    if len(epochs) < config["epochs"]:
        say(f"WARNING: stopped early after {len(epochs)} of {config['epochs']} epochs (learning-rate floor)")
    if not config.get("forecast", True):
        return _training_only(config, epochs, train_time, onednn_active, be, data, kwargs, usage)
    with be.onednn(onednn):
        t1 = time.perf_counter()
        forecasts = be.predict(predictor, data.train, hybridize=bool(config["hybridize_predict"]))
        be.synchronize()
        predict_time = time.perf_counter() - t1
    hybridized = be.predictor_hybridized(predictor) if config["hybridize_predict"] is not None else None
    scores = fc.evaluate(forecasts, data.full, data.horizons, data.seasonality)
    say(
        f"predicted {len(forecasts)} windows in {predict_time:.1f} s; MASE={scores['MASE']:.3f} over "
        f"{scores['n_series_scored'] - scores['n_series_dropped']} series ({scores['n_series_dropped']} dropped)"
    )

    measurements = epoch_measurements(epochs)
    whole = {
        "train_time_s": train_time,
        "predict_time_s": predict_time,
        **scores,
        "fit_overhead_s": train_time - sum(r.time_s for r in epochs),
        "n_series": len(data.train),
        "epochs_run": len(epochs),
        **usage,
    }
    if hybridized is not None:
        whole["predictor_hybridized"] = float(hybridized)
    if config["breakdown"]:
        whole.update(_breakdown(be, data, kwargs, config, predictor))
        say("breakdown recorded")
    measurements += [(-1, k, v) for k, v in whole.items()]
    timed = [r.time_s for r in epochs[1:]] or [r.time_s for r in epochs]
    return {
        "summary": {
            "train_time_s": train_time,
            "predict_time_s": predict_time,
            "MASE": scores["MASE"],
            "sMAPE": scores["sMAPE"],
            "mean_wQL": scores["mean_wQL"],
            "n_series_dropped": scores["n_series_dropped"],
            "predictor_hybridized": hybridized,
            "median_epoch_s": median(timed),
            **epochs_run(len(epochs), config["epochs"]),
            "final_train_loss": epochs[-1].loss if epochs else None,
            "onednn_active": onednn_active,
        },
        "measurements": measurements,
        "provenance": {**be.framework_info(), **data.provenance(), "lags_seq": kwargs["lags_seq"]},
    }


def threads_in_use(process: psutil.Process) -> dict:
    """What the process runs with after training, the same reading for every framework: ``process_threads`` (its
    OS threads: the OpenMP pool, MXNet's engine workers, loaders) and ``omp_max_threads`` (``omp_get_max_threads``
    of each OpenMP runtime it has loaded, the largest: the intra-op pool a framework chose, or was told by
    ``OMP_NUM_THREADS``; NaN when none is loaded). With no thread setting (the post's conditions) this is what
    the library chose by itself: MXNet 1.9 takes half the logical CPUs when ``OMP_NUM_THREADS`` is unset (it
    assumes two hyperthreads per core), so 1 of 2 here, where PyTorch takes 2."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if line.rsplit("/", 1)[-1].startswith(OPENMP_LIBRARIES)}
    except OSError:
        paths = set()
    for path in sorted(paths):
        try:
            found.append(int(ctypes.CDLL(path).omp_get_max_threads()))
        except (OSError, AttributeError):
            continue
    return {"process_threads": float(process.num_threads()), "omp_max_threads": float(max(found, default=float("nan")))}


def epoch_measurements(epochs: list) -> list[tuple]:
    """Per epoch (step = epoch): ``train_loss`` and ``epoch_time_s``."""
    out = []
    for rec in epochs:
        out += [(rec.epoch, "train_loss", rec.loss), (rec.epoch, "epoch_time_s", rec.time_s)]
    return out


def _training_only(
    config: dict, epochs: list, train_time: float, onednn_active, be, data, kwargs: dict, usage: dict
) -> dict:
    """The record of a trial that measures training cost only (``forecast`` False)."""
    measurements = epoch_measurements(epochs)
    whole = {
        "train_time_s": train_time,
        "fit_overhead_s": train_time - sum(r.time_s for r in epochs),
        "n_series": len(data.train),
        "epochs_run": len(epochs),
        **usage,
    }
    measurements += [(-1, k, v) for k, v in whole.items()]
    timed = [r.time_s for r in epochs[1:]] or [r.time_s for r in epochs]
    return {
        "summary": {
            "train_time_s": train_time,
            "median_epoch_s": median(timed),
            **epochs_run(len(epochs), config["epochs"]),
            "final_train_loss": epochs[-1].loss if epochs else None,
            "onednn_active": onednn_active,
        },
        "measurements": measurements,
        "provenance": {**be.framework_info(), **data.provenance(), "lags_seq": kwargs["lags_seq"]},
    }


def epochs_run(run: int, set_epochs: int) -> dict:
    """GluonTS' MXNet trainer stops when its learning-rate schedule falls below its floor: such a trial trained
    fewer epochs than set, so its times and accuracy describe less work. Flagged, never hidden."""
    return {"epochs_run": run, "epochs_set": set_epochs, "stopped_early": run < set_epochs}


def _breakdown(be, data, kwargs: dict, config: dict, predictor) -> dict:
    """Data pipeline alone for the trial's batches, and cProfile shares of one profiled training epoch."""
    from .. import forecast as fc

    n_batches = config["epochs"] * config["num_batches_per_epoch"]
    out = {"data_time_s": be.time_data_pipeline(data.train, n_batches, **kwargs)}
    profiled = {**kwargs, "epochs": 1, "num_batches_per_epoch": min(config["num_batches_per_epoch"], PROFILE_BATCHES)}
    be.set_seed(config["seed"])
    t0 = time.perf_counter()
    _, phases = fc.profile_call(be.train, data.train, **profiled)
    wall = time.perf_counter() - t0
    total = sum(phases.values()) or 1.0
    out["cprofile_train_wall_s"] = wall
    out.update({f"cprofile_train_frac_{name}": seconds / total for name, seconds in phases.items()})
    # forecasting, profiled on the first PROFILE_WINDOWS test windows with the trained predictor
    _, phases = fc.profile_call(be.predict, predictor, data.train[:PROFILE_WINDOWS])
    total = sum(phases.values()) or 1.0
    out.update({f"cprofile_predict_frac_{name}": seconds / total for name, seconds in phases.items()})
    return out
