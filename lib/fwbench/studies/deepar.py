"""Study B: GluonTS DeepAR on the Monash archive, MXNet (``gluonts.mx``) vs PyTorch (``gluonts.torch``), on CPU.

After a 2024 post (40 Monash datasets x 5 seeds, PyTorch 4.5x faster, chart only). Protocol in
shared/reference/deepar_protocol_2024.csv: GluonTS defaults (2 layers x 40 cells, batch 32, 50 batches per epoch,
Student-t, 100 sample paths), context = Monash lag, prediction = Monash horizon, lags for the frequency.

Arms: ``torch-eager``; ``mxnet-hybrid-partial`` (the gluonts default: the training network hybridized, the
prediction network that gluonts 0.17 builds afresh runs imperatively); ``mxnet-hybrid-full`` (training hybridized
and the prediction network hybridized before forecasting); ``mxnet-imperative`` (nothing hybridized, to measure
what graph compilation of MXNet's unrolled LSTM cells does). A config says both parts (``hybridize_train``,
``hybridize_predict``; None for PyTorch) and an MXNet trial records whether the prediction network really ran as
a cached graph (``predictor_hybridized``). With ``breakdown`` a trial also records where its time goes:
the data pipeline alone for the same number of batches (``data_time_s``), and the cProfile own-time share of each
phase (``cprofile_train_frac_<phase>``, ``cprofile_predict_frac_<phase>``) in a separate profiled training epoch of
at most 10 batches and in forecasting 32 windows.

Measurements: per epoch (step = epoch) ``train_loss`` and ``epoch_time_s``; per trial (step = -1)
``train_time_s`` (the whole ``estimator.train`` call), ``predict_time_s`` (forecasting every test window; for
``mxnet-hybrid-full`` it includes building the graph on the first batch), ``MASE``, ``sMAPE``, ``mean_wQL`` (and
``ND``, ``RMSE``) over the series where each is finite, ``n_series_dropped`` (series left out of MASE: zero
seasonal-naive scale; ``n_series_dropped_sMAPE``, ``n_series_dropped_wQL`` likewise), ``fit_overhead_s`` (train
time outside the epochs), ``epochs_run``, ``predictor_hybridized`` (1/0, MXNet arms).

Where B's ratio comes from (issue 14): ``variants_part`` (``{"datasets", "seeds", "threads"}``, or False) adds, per
dataset x seed x arm, a trial at ``threads`` threads (oneDNN on; part ``threads``) and one at the profile's
threads with oneDNN off in both frameworks (part ``onednn``): PyTorch ``torch.backends.mkldnn.flags`` around
training and forecasting, MXNet ``MXNET_MKLDNN_ENABLED=0`` and ``MXNET_USE_MKLDNN_RNN=0`` before ``import mxnet``.
Every config says its ``part`` and ``onednn``; the main part's trials are what B, the MASE check and the runtime
tables read (``analysis.deepar.load_trials``), the other parts only ``analysis.deepar_variants``.
"""
from __future__ import annotations

import os
import time

from ..errors import FwbenchError
from ..measure import median
from . import options as opt
from .blocks import interleave
from .registry import Arm, Study, register

_TORCH, _MXNET = "fwbench.forecast.torch", "fwbench.forecast.mxnet"
ARM_TABLE = (
    Arm("torch-eager", "torch", _TORCH, "eager", "PyTorch (gluonts.torch)", "#1f77b4"),
    Arm("mxnet-hybrid-partial", "mxnet", _MXNET, "hybrid-partial",
        "MXNet (gluonts.mx default: training hybridized, forecasting imperative)", "#d62728"),
    Arm("mxnet-hybrid-full", "mxnet", _MXNET, "hybrid-full",
        "MXNet (training and forecasting hybridized)", "#8c564b"),
    Arm("mxnet-imperative", "mxnet", _MXNET, "imperative", "MXNet (gluonts.mx, nothing hybridized)", "#ff7f0e"),
)
# What each MXNet variant hybridizes: (training network, prediction network).
HYBRIDIZE = {"imperative": (False, False), "hybrid-partial": (True, False), "hybrid-full": (True, True)}
ARMS = tuple(a.name for a in ARM_TABLE)
CORE_ARMS = ["torch-eager", "mxnet-hybrid-partial"]
SEEDS = (42, 43, 44, 45, 46)
PROFILE_WINDOWS = 32  # test windows forecast under cProfile
PROFILE_BATCHES = 10  # training batches run under cProfile


def _dataset_names() -> list[str]:
    from ..data import monash

    return monash.names()


def _post_datasets() -> list[str]:
    from ..data import monash

    return monash.names(in_2024_post=True)


# Datasets of the quick and smoke profiles: staged (original and rebuilt), few series, short windows (MXNet's cost
# grows with context + prediction length, which it unrolls step by step).
SMOKE_DATASETS = ["m1_yearly"]
QUICK_DATASETS = ["m1_yearly", "m1_quarterly", "cif_2016", "tourism_monthly", "covid_deaths"]
GAP_DATASETS = ["m1_yearly", "cif_2016", "nn5_weekly"]
PAPER_DATASETS = ["m1_yearly", "cif_2016", "m1_monthly", "tourism_monthly", "electricity_weekly"]

PROFILES = {
    # seconds: for tests and CI (one tiny dataset, one epoch of a few batches, one seed, both frameworks)
    "smoke": {"datasets": SMOKE_DATASETS, "arms": CORE_ARMS, "seeds": [42], "epochs": 1,
              "num_batches_per_epoch": 3, "threads": 2, "breakdown": False},
    # about 5 minutes on 2 cores: five small datasets (yearly original, quarterly rebuilt, cif_2016 with its
    # per-series horizons, tourism_monthly, covid_deaths with its zero-scale series), two short epochs, one seed,
    # with the time breakdown. mxnet-hybrid-full is left to `gap`: it repeats the whole MXNet training to change
    # only the forecasting, about a third more time here.
    "quick": {"datasets": QUICK_DATASETS, "arms": CORE_ARMS, "seeds": [42], "epochs": 2,
              "num_batches_per_epoch": 10, "threads": 2, "breakdown": True},
    # where the time goes (over an hour on 2 cores, most of it MXNet on nn5_weekly): three datasets whose
    # unrolled windows grow from 8 to 27 to 73 steps, every arm (MXNet with nothing, training only, and training
    # and forecasting hybridized), 2 epochs of the protocol's 50 batches, with the time breakdown
    "gap": {"datasets": GAP_DATASETS, "arms": list(ARMS), "seeds": [42], "epochs": 2, "num_batches_per_epoch": 50,
            "threads": 2, "breakdown": True},
    # the papers' scale on one machine (issue 14): the protocol's 100 epochs x 50 batches, 2 seeds, both core arms,
    # on every dataset of the Monash paper's DeepAR MASE reference that is staged from an original file (unrolled
    # windows 8, 27, 33, 39 and 73 steps: short to long), so accuracy is checked against a published number and
    # B's ratio is seen against the window length; forecasting timed too
    # The variants part: 1 thread, and oneDNN off, on the shortest and a middle window (8 and 39 steps), one seed.
    "paper": {"datasets": PAPER_DATASETS, "arms": CORE_ARMS, "seeds": [42, 43], "epochs": 100,
              "num_batches_per_epoch": 50, "threads": 2, "breakdown": False,
              "variants_part": {"datasets": ["m1_yearly", "tourism_monthly"], "seeds": [42], "threads": 1}},
    # the post's scale: every dataset of the post (41 catalogue keys; unavailable ones fail at once with the
    # reason), 100 epochs of 50 batches, 5 seeds: days of CPU, meant for a cluster
    "full": {"datasets": None, "arms": CORE_ARMS, "seeds": list(SEEDS), "epochs": 100,
             "num_batches_per_epoch": 50, "threads": 2, "breakdown": False},
}


def _datasets(name, value):
    return opt.list_of(opt.string, _dataset_names())(name, value)


OPTIONS = {
    "datasets": _datasets,
    "arms": opt.list_of(opt.string, ARMS),
    "seeds": opt.list_of(opt.int_range(0, 2**31 - 1)),
    "epochs": opt.int_range(1, 10000),
    "num_batches_per_epoch": opt.int_range(1, 100000),
    "threads": opt.int_range(1, 256),
    "breakdown": opt.boolean,
    "variants_part": opt.part_spec(datasets=_datasets, seeds=opt.list_of(opt.int_range(0, 2**31 - 1)),
                                   threads=opt.int_range(1, 256)),
}


def prepare(options: dict) -> dict:
    options.setdefault("variants_part", False)
    if options["datasets"] is None:
        options["datasets"] = _post_datasets()
    from ..data import monash

    for name in options["datasets"]:
        if monash.info(name).context_length is None:
            raise FwbenchError(f"dataset {name!r} has no Monash lag (context length) in the catalogue; "
                                   "it cannot be run under the protocol")
    return options


def preflight(options: dict) -> None:
    """In the parent, before any trial: every dataset of the profile is located (downloaded where it is missing
    and the network allows), parsed and split, so a corrupt or truncated file, or one whose series are all too
    short for the horizon, is a one-line error before any training. An *unavailable* dataset is not an error here:
    its trials stay in the plan and fail at once with ``DataUnavailable`` and the reason, so the store (and
    ``fwbench status``, and the notebook) say which datasets are missing; they are retried on the next run."""
    from ..data import monash
    from ..errors import DataUnavailable

    for name in options["datasets"]:
        try:
            monash.load(name)
        except DataUnavailable:
            continue


def grid(options: dict) -> list[dict]:
    """One config per (seed, dataset, arm), the arms of a (seed, dataset) back to back in a seeded random order
    (``blocks.interleave``); every dataset of the profile, available or not (an unavailable one
    becomes a failed trial that says why, retried on the next run)."""
    from ..data import monash
    from ..forecast import HYPERPARAMETERS

    def configs_of(datasets, seeds, part, threads, onednn):
        out = []
        for seed in seeds:
            for name in datasets:
                meta = monash.info(name)
                for name_of_arm in options["arms"]:
                    arm = STUDY.arm(name_of_arm)
                    out.append({
                        "dataset": name, "arm": arm.name,
                        **hybridization(arm.name),
                        "seed": seed, "epochs": options["epochs"],
                        "num_batches_per_epoch": options["num_batches_per_epoch"], "threads": threads,
                        "breakdown": options["breakdown"], "freq": meta.freq, "prediction_length": meta.horizon,
                        "context_length": meta.context_length, "seasonality": meta.seasonality,
                        "hyperparameters": {k: v for k, v in HYPERPARAMETERS.items()
                                            if k != "num_batches_per_epoch"},
                        "part": part, "onednn": onednn,
                    })
        return out

    configs = interleave(configs_of(options["datasets"], options["seeds"], "main", options["threads"], True), seed=0)
    variants = options.get("variants_part")
    if variants:
        configs += interleave(configs_of(variants["datasets"], variants["seeds"], "threads", variants["threads"], True)
                              + configs_of(variants["datasets"], variants["seeds"], "onednn", options["threads"],
                                           False), seed=1)
    return configs


def hybridization(arm: str) -> dict:
    """``{"hybridize_train", "hybridize_predict"}`` of an arm: booleans for MXNet, None for PyTorch."""
    a = STUDY.arm(arm)
    train, predict = HYBRIDIZE.get(a.variant, (None, None))  # MXNet's variants; a PyTorch arm has neither
    return {"hybridize_train": train, "hybridize_predict": predict}


def describe(config: dict) -> str:
    extra = f" threads={config['threads']}" if config.get("part") == "threads" else ""
    extra += "" if config.get("onednn", True) else " oneDNN=off"
    return f"deepar {config['dataset']:<18} {config['arm']:<20} seed={config['seed']}{extra}"


def estimator_kwargs(config: dict, data) -> dict:
    """The backend's ``make_estimator``/``train`` arguments for a trial config on loaded Monash data."""
    from .. import forecast as fc

    kwargs = {"freq": data.freq, "prediction_length": data.prediction_length, "context_length": data.context_length,
              "lags_seq": fc.lags_for(data.freq), "epochs": config["epochs"],
              "num_batches_per_epoch": config["num_batches_per_epoch"]}
    if config["hybridize_train"] is not None:  # MXNet arms only
        kwargs["hybridize"] = bool(config["hybridize_train"])
    return kwargs


def run_trial(config: dict, report=None) -> dict:
    """Load the data (failing before any framework import if it is unavailable or broken), train, forecast the
    test windows, score them; returns summary, measurements and provenance."""
    os.environ.setdefault("TQDM_DISABLE", "1")
    from .. import forecast as fc
    from ..data import monash

    say = report or (lambda msg: None)
    data = monash.load(config["dataset"])
    if data.prediction_length != config["prediction_length"]:  # cif_2016: max of the per-series horizons
        say(f"prediction length {data.prediction_length} (max per-series horizon)")
    onednn = config.get("onednn", True)
    os.environ.update(STUDY.arm_of(config).onednn_env(onednn))  # MXNet reads these at import only
    be = STUDY.arm_of(config).load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    kwargs = estimator_kwargs(config, data)

    with be.onednn(onednn):
        onednn_active = be.onednn_enabled()
        t0 = time.perf_counter()
        predictor, epochs = be.train(data.train, **kwargs)
        be.synchronize()
        train_time = time.perf_counter() - t0
    say(f"trained {len(epochs)} epochs in {train_time:.1f} s")
    if len(epochs) < config["epochs"]:
        say(f"WARNING: stopped early after {len(epochs)} of {config['epochs']} epochs (learning-rate floor)")
    with be.onednn(onednn):
        t1 = time.perf_counter()
        forecasts = be.predict(predictor, data.train, hybridize=bool(config["hybridize_predict"]))
        be.synchronize()
        predict_time = time.perf_counter() - t1
    hybridized = be.predictor_hybridized(predictor) if config["hybridize_predict"] is not None else None
    scores = fc.evaluate(forecasts, data.full, data.horizons, data.seasonality)
    say(f"predicted {len(forecasts)} windows in {predict_time:.1f} s; MASE={scores['MASE']:.3f} over "
        f"{scores['n_series_scored'] - scores['n_series_dropped']} series ({scores['n_series_dropped']} dropped)")

    measurements = []
    for rec in epochs:
        measurements += [(rec.epoch, "train_loss", rec.loss), (rec.epoch, "epoch_time_s", rec.time_s)]
    whole = {"train_time_s": train_time, "predict_time_s": predict_time, **scores,
             "fit_overhead_s": train_time - sum(r.time_s for r in epochs),
             "n_series": len(data.train), "epochs_run": len(epochs)}
    if hybridized is not None:
        whole["predictor_hybridized"] = float(hybridized)
    if config["breakdown"]:
        whole.update(_breakdown(be, data, kwargs, config, predictor))
        say("breakdown recorded")
    measurements += [(-1, k, v) for k, v in whole.items()]
    timed = [r.time_s for r in epochs[1:]] or [r.time_s for r in epochs]
    return {
        "summary": {"train_time_s": train_time, "predict_time_s": predict_time, "MASE": scores["MASE"],
                    "sMAPE": scores["sMAPE"], "mean_wQL": scores["mean_wQL"],
                    "n_series_dropped": scores["n_series_dropped"], "predictor_hybridized": hybridized,
                    "median_epoch_s": median(timed), **epochs_run(len(epochs), config["epochs"]),
                    "final_train_loss": epochs[-1].loss if epochs else None, "onednn_active": onednn_active},
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


STUDY = register(Study(
    name="deepar", title="GluonTS DeepAR on the Monash archive (after a 2024 post)", module=__name__,
    profiles=PROFILES, options=OPTIONS, prepare=prepare, grid=grid, run_trial=run_trial, describe=describe,
    preflight=preflight, arms=ARM_TABLE, reference={"torch": "torch-eager", "mxnet": "mxnet-hybrid-partial"},
    code=("fwbench.forecast", "fwbench.data.monash"), figure_prefix="deepar_"))
