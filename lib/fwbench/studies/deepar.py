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
time outside the epochs), ``epochs_run``, ``predictor_hybridized`` (1/0, MXNet arms), ``train_cpu_s`` and
``train_cpus_busy`` (the trial process's CPU time in training, and over the training wall time), ``burners``,
``burner_cpu_s``, ``burner_wall_s``, ``burner_cpu_frac`` (the background load; zero without one).

Where B's ratio comes from: ``variants_part`` (``{"datasets", "seeds", "threads"}``, or False) adds, per
dataset x seed x arm, a trial at ``threads`` threads (oneDNN on; part ``threads``) and one at the profile's
threads with oneDNN off in both frameworks (part ``onednn``): PyTorch ``torch.backends.mkldnn.flags`` around
training and forecasting, MXNet ``MXNET_MKLDNN_ENABLED=0`` and ``MXNET_USE_MKLDNN_RNN=0`` before ``import mxnet``.
Every config says its ``part`` and ``onednn``; the main part's trials are what B, the MASE check and the runtime
tables read (``analysis.deepar.load_trials``), the other parts only ``analysis.deepar_conditions``.

Per-batch training cost over the post's datasets: ``coverage_part`` (``{"datasets", "seeds",
"epochs"}``, or False) adds, per dataset x seed x core arm, a trial of ``epochs`` epochs of the protocol's 50
batches at the profile's threads that trains and does not forecast (``forecast`` False in its config; part
``coverage``): what each framework costs per batch on every staged dataset of the post's list
(``COVERAGE_DATASETS``), read by ``analysis.deepar_coverage`` only.

Threads and a busy machine: ``contention_part`` (``{"datasets", "seeds", "epochs", "threads",
"loaded_threads"}``, or False) adds, per dataset x seed x core arm, a training-only trial (as the coverage part's)
at each of ``threads`` threads with the machine otherwise idle, and at each of ``loaded_threads`` threads with a
controlled background load (``background_load`` 1 in the config: one busy-loop process pinned to one CPU,
``fwbench.background_load``), as part ``contention``. Threads above the core count are oversubscription, on
purpose. These trials measure contention: they are read by ``analysis.deepar_conditions`` only, never beside
another part's trials. Every trial records the CPUs its training kept busy (``train_cpus_busy``: its process CPU
time over the training wall time) and, under a load, what the burner got (``burner_cpu_frac``).

The post's own conditions: ``post_conditions_part`` (``{"datasets", "seeds", "epochs", "trials_at_once",
"crowded_datasets"}``, or False) adds, per k of ``trials_at_once``, dataset (above 2 at once: of
``crowded_datasets`` only) x core arm x seed, a training-only trial (as the coverage part's)
with no thread setting (``threads`` None: the thread variables are unset and PyTorch is not told; each library
chooses, and the trial records what it chose: ``omp_max_threads``, ``process_threads``) and ``trials_at_once`` k in
its config, as part ``post_conditions``. A trial of k runs only in a run that puts k trials on a host at once (the
Dask runner's ``--trials-per-host k``; k = 1 the local runner), which records ``trials_sharing_host``. Its trials
are read by the post comparison's conditions only (``analysis.deepar_prediction``), never beside another part's.

The post's library versions: ``versions_part`` (``{"env": NAME}``, or False) runs the main part's
configs (same datasets, seeds, threads, arms) again in the declared environment NAME (``gluonts-0.13``: the post's
gluonts 0.13.3; ``fwbench.environments``), as part ``versions``; its configs name the environment (and its lock
hash), so they are trials of their own, compared only with each other (``analysis.deepar_conditions``).
"""

from __future__ import annotations

import random

from ..errors import FwbenchError
from . import options as opt
from .blocks import interleave
from .deepar_trial import hybridization, run_trial
from .registry import Arm, Study, register

_TORCH, _MXNET = "fwbench.forecast.torch", "fwbench.forecast.mxnet"
ARM_TABLE = (
    Arm("torch-eager", "torch", _TORCH, "eager", "PyTorch (gluonts.torch)", "#1f77b4"),
    Arm(
        "mxnet-hybrid-partial",
        "mxnet",
        _MXNET,
        "hybrid-partial",
        "MXNet (gluonts.mx default: training hybridized, forecasting imperative)",
        "#d62728",
    ),
    Arm("mxnet-hybrid-full", "mxnet", _MXNET, "hybrid-full", "MXNet (training and forecasting hybridized)", "#8c564b"),
    Arm("mxnet-imperative", "mxnet", _MXNET, "imperative", "MXNet (gluonts.mx, nothing hybridized)", "#ff7f0e"),
)
ARMS = tuple(a.name for a in ARM_TABLE)
CORE_ARMS = ["torch-eager", "mxnet-hybrid-partial"]
SEEDS = (42, 43, 44, 45, 46)


def _dataset_names() -> list[str]:
    from ..data import monash

    return monash.names()


def _post_datasets() -> list[str]:
    from ..data import monash

    return monash.names(in_2024_post=True)


# Datasets of the quick and smoke profiles: staged (original and rebuilt), few series, short windows (MXNet's cost
# grows with context + prediction length, which it unrolls step by step).
SMOKE_DATASETS = ["m1_yearly"]
QUICK_DATASETS = ["m1_yearly", "m1_quarterly", "cif_2016", "covid_deaths"]
GAP_DATASETS = ["m1_yearly", "cif_2016", "nn5_weekly"]
PAPER_DATASETS = ["m1_yearly", "cif_2016", "m1_monthly", "tourism_monthly", "electricity_weekly"]
# Every dataset of the post's list staged in the shared data (original or rebuilt; MANIFEST.csv), for the coverage
# part. Declared, not discovered, so a plan does not depend on the machine; a test holds it against the
# manifest. Windows (context + prediction) 6 to 258 steps.
COVERAGE_DATASETS = [
    "m1_yearly", "m1_quarterly", "m1_monthly", "m3_yearly", "m3_quarterly", "m3_monthly", "m4_weekly", "m4_hourly",
    "tourism_yearly", "tourism_quarterly", "tourism_monthly", "cif_2016", "bitcoin", "vehicle_trips", "nn5_daily",
    "nn5_weekly", "kaggle_web_traffic", "solar_weekly", "electricity_weekly", "car_parts", "fred_md",
    "traffic_weekly", "hospital", "covid_deaths", "sunspot", "saugeen_river_flow", "us_births",
]  # fmt: skip

# The post's own conditions: k runs at once on one host, each with the libraries' default threads. Eight staged
# datasets whose windows span 8 to 258 steps: the five paper datasets, m4_hourly, and two the post's chart gives
# (nn5_daily, m4_weekly), so the choice among conditions is made on charted windows of every length.
POST_CONDITION_DATASETS = ["m1_yearly", "cif_2016", "m1_monthly", "tourism_monthly", "nn5_daily", "electricity_weekly",
                           "m4_weekly", "m4_hourly"]  # fmt: skip
POST_CONDITIONS_PART = {
    "datasets": POST_CONDITION_DATASETS,
    "seeds": [42, 43, 44, 45],
    "epochs": 3,
    "trials_at_once": [1, 2, 4],
    # runs at once above 2 train these only: with default threads PyTorch took 5-27x its time alone at 2 at once
    # (its OpenMP pool spins on an oversubscribed host), so 4 at once on every dataset would take hours
    "crowded_datasets": ["m1_yearly", "tourism_monthly"],
}

CONTENTION_PART = {
    "datasets": ["m1_yearly", "tourism_monthly"],
    "seeds": [42, 43, 44],
    "epochs": 3,
    "threads": [1, 2, 4, 8],
    "loaded_threads": [2],
}

PROFILES = {
    # seconds: for tests and CI (one tiny dataset, one epoch of a few batches, one seed, both frameworks)
    "smoke": {
        "datasets": SMOKE_DATASETS,
        "arms": CORE_ARMS,
        "seeds": [42],
        "epochs": 1,
        "num_batches_per_epoch": 3,
        "threads": 2,
        "breakdown": False,
        "versions_part": {"env": "gluonts-0.13"},
    },
    # under 2 minutes on 2 cores (measured: 116 s with five datasets): four small datasets, each showing
    # something (yearly original, quarterly rebuilt, cif_2016 with its per-series horizons, covid_deaths with its
    # zero-scale series; windows 8, 13, 27, 39: the window figure needs three), two short epochs, one seed, with
    # the time breakdown. tourism_monthly (window 39 too) is left to `paper`; mxnet-hybrid-full to `gap`: it
    # repeats the whole MXNet training to change only the forecasting.
    "quick": {
        "datasets": QUICK_DATASETS,
        "arms": CORE_ARMS,
        "seeds": [42],
        "epochs": 2,
        "num_batches_per_epoch": 10,
        "threads": 2,
        "breakdown": True,
    },
    # where the time goes (over an hour on 2 cores, most of it MXNet on nn5_weekly): three datasets whose
    # unrolled windows grow from 8 to 27 to 73 steps, every arm (MXNet with nothing, training only, and training
    # and forecasting hybridized), 2 epochs of the protocol's 50 batches, with the time breakdown
    "gap": {
        "datasets": GAP_DATASETS,
        "arms": list(ARMS),
        "seeds": [42],
        "epochs": 2,
        "num_batches_per_epoch": 50,
        "threads": 2,
        "breakdown": True,
    },
    # the papers' scale on one machine: the protocol's 100 epochs x 50 batches, 2 seeds, both core arms,
    # on every dataset of the Monash paper's DeepAR MASE reference that is staged from an original file (unrolled
    # windows 8, 27, 33, 39 and 73 steps: short to long), so accuracy is checked against a published number and
    # B's ratio is seen against the window length; forecasting timed too
    # The variants part: 1 thread, and oneDNN off, on the shortest and a middle window (8 and 39 steps), one seed.
    "paper": {
        "datasets": PAPER_DATASETS,
        "arms": CORE_ARMS,
        "seeds": [42, 43],
        "epochs": 100,
        "num_batches_per_epoch": 50,
        "threads": 2,
        "breakdown": False,
        "variants_part": {"datasets": ["m1_yearly", "tourism_monthly"], "seeds": [42], "threads": 1},
        # the main part again under the post's gluonts 0.13.3: the paper run's next piece, 20 trials
        "versions_part": {"env": "gluonts-0.13"},
        # per-batch training cost on every staged dataset of the post's list: 4 epochs of 50 batches
        # (the first excluded), no forecasting, 2 seeds, both core arms
        "coverage_part": {"datasets": COVERAGE_DATASETS, "seeds": [42, 43], "epochs": 4},
        # threads and a busy machine: 1 and 2 threads, oversubscribed 4 and 8, and 2 threads beside one
        # burner, on the variants part's short and middle window, 3 seeds, 3 epochs of 50 batches, training only
        "contention_part": CONTENTION_PART,
        # the post's conditions: 1, 2 and 4 runs at once, no thread setting (runs at once need the Dask runner's
        # --trials-per-host; ``fwbench.runner`` runs each k only there), training only, 3 x 50 batches
        "post_conditions_part": POST_CONDITIONS_PART,
    },
    # the post's scale: every dataset of the post (41 catalogue keys; unavailable ones fail at once with the
    # reason), 100 epochs of 50 batches, 5 seeds: days of CPU, meant for a cluster
    "full": {
        "datasets": None,
        "arms": CORE_ARMS,
        "seeds": list(SEEDS),
        "epochs": 100,
        "num_batches_per_epoch": 50,
        "threads": 2,
        "breakdown": False,
    },
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
    "variants_part": opt.part_spec(
        datasets=_datasets, seeds=opt.list_of(opt.int_range(0, 2**31 - 1)), threads=opt.int_range(1, 256)
    ),
    "versions_part": opt.part_spec(env=opt.string),
    "coverage_part": opt.part_spec(
        datasets=_datasets, seeds=opt.list_of(opt.int_range(0, 2**31 - 1)), epochs=opt.int_range(2, 10000)
    ),
    "contention_part": opt.part_spec(
        datasets=_datasets,
        seeds=opt.list_of(opt.int_range(0, 2**31 - 1)),
        epochs=opt.int_range(2, 10000),
        threads=opt.list_of(opt.int_range(1, 256)),
        loaded_threads=opt.list_of(opt.int_range(1, 256)),
    ),
    "post_conditions_part": opt.part_spec(
        datasets=_datasets,
        seeds=opt.list_of(opt.int_range(0, 2**31 - 1)),
        epochs=opt.int_range(2, 10000),
        trials_at_once=opt.list_of(opt.int_range(1, 64)),
        crowded_datasets=_datasets,
    ),
}


def prepare(options: dict) -> dict:
    options.setdefault("variants_part", False)
    options.setdefault("versions_part", False)
    options.setdefault("coverage_part", False)
    options.setdefault("contention_part", False)
    options.setdefault("post_conditions_part", False)
    post = options["post_conditions_part"]
    if post:
        stray = sorted(set(post["crowded_datasets"]) - set(post["datasets"]))
        if stray:
            raise FwbenchError(f"post_conditions_part.crowded_datasets {stray} are not among its datasets")
        short = [k for k in post["trials_at_once"] if len(post["seeds"]) % k]
        if short:
            raise FwbenchError(
                f"post_conditions_part: {len(post['seeds'])} seeds do not split into groups of {short} trials at once; "
                "give a number of seeds that each trials_at_once divides"
            )
    if options["datasets"] is None:
        options["datasets"] = _post_datasets()
    from ..data import monash

    for name in all_datasets(options):
        if monash.info(name).context_length is None:
            raise FwbenchError(
                f"dataset {name!r} has no Monash lag (context length) in the catalogue; "
                "it cannot be run under the protocol"
            )
    return options


def all_datasets(options: dict) -> list[str]:
    """The main part's datasets, then those only a training-only part trains on."""
    parts = ("coverage_part", "contention_part", "post_conditions_part")
    extra = [d for part in parts for d in (options.get(part) or {}).get("datasets", [])]
    return list(dict.fromkeys(list(options["datasets"]) + extra))


def preflight(options: dict) -> None:
    """In the parent, before any trial: every dataset of the profile is located (downloaded where it is missing
    and the network allows), parsed and split, so a corrupt or truncated file, or one whose series are all too
    short for the horizon, is a one-line error before any training. An *unavailable* dataset is not an error here:
    its trials stay in the plan and fail at once with ``DataUnavailable`` and the reason, so the store (and
    ``fwbench status``, and the notebook) say which datasets are missing; they are retried on the next run."""
    from ..data import monash
    from ..errors import DataUnavailable

    for name in all_datasets(options):
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

    def configs_of(datasets, seeds, part, threads, onednn, epochs=None):
        out = []
        for seed in seeds:
            for name in datasets:
                meta = monash.info(name)
                for name_of_arm in options["arms"]:
                    arm = STUDY.arm(name_of_arm)
                    out.append(
                        {
                            "dataset": name,
                            "arm": arm.name,
                            **hybridization(arm.name),
                            "seed": seed,
                            "epochs": epochs or options["epochs"],
                            "num_batches_per_epoch": options["num_batches_per_epoch"],
                            "threads": threads,
                            "breakdown": options["breakdown"],
                            "freq": meta.freq,
                            "prediction_length": meta.horizon,
                            "context_length": meta.context_length,
                            "seasonality": meta.seasonality,
                            "hyperparameters": {
                                k: v for k, v in HYPERPARAMETERS.items() if k != "num_batches_per_epoch"
                            },
                            "part": part,
                            "onednn": onednn,
                        }
                    )
        return out

    configs = interleave(configs_of(options["datasets"], options["seeds"], "main", options["threads"], True), seed=0)
    variants = options.get("variants_part")
    if variants:
        configs += interleave(
            configs_of(variants["datasets"], variants["seeds"], "threads", variants["threads"], True)
            + configs_of(variants["datasets"], variants["seeds"], "onednn", options["threads"], False),
            seed=1,
        )
    versions = options.get("versions_part")
    if versions:  # the main part's configs, in another environment
        configs += [{**c, "part": "versions", "env": versions["env"]} for c in configs if c["part"] == "main"]
    coverage = options.get("coverage_part")
    if coverage:  # training cost only: few epochs, no forecast
        configs += interleave(
            [
                {**c, "forecast": False, "breakdown": False}
                for c in configs_of(
                    coverage["datasets"], coverage["seeds"], "coverage", options["threads"], True, coverage["epochs"]
                )
            ],
            seed=2,
        )
    contention = options.get("contention_part")
    if contention:  # training cost only, at each thread count idle and beside the background load
        conditions = [(t, 0) for t in contention["threads"]] + [(t, 1) for t in contention["loaded_threads"]]
        blocks = []
        # seed by seed and dataset by dataset, every condition in a seeded random order, so a drift of the
        # machine over the part's half hour falls on all conditions alike
        for seed in contention["seeds"]:
            for name in contention["datasets"]:
                order = random.Random(f"contention:{seed}:{name}").sample(conditions, len(conditions))
                blocks += [
                    {**c, "forecast": False, "breakdown": False, "background_load": load}
                    for threads, load in order
                    for c in configs_of([name], [seed], "contention", threads, True, contention["epochs"])
                ]
        configs += interleave(blocks, seed=3)
    post = options.get("post_conditions_part")
    if post:
        configs += post_condition_configs(post, configs_of)
    return configs


def post_condition_configs(post: dict, configs_of) -> list[dict]:
    """The post's conditions: for each k of ``trials_at_once``, every dataset x arm (above 2 at once, those of
    ``crowded_datasets`` only) as groups of k seeds back to back, so the k trials a Dask worker with k slots takes
    at once are one dataset and one framework (alike in length: they start and end together). Decision: runs at once
    are of one framework, as the post ran each version on its own ("a weekend to run the MXNet version"). No thread
    setting (``threads`` None): each framework chooses its own, and the trial records what it chose. The groups'
    order is seeded and random."""
    out = []
    for k in post["trials_at_once"]:
        groups = [
            post["seeds"][i : i + k] for i in range(0, len(post["seeds"]), k)
        ]  # seeds 42-45 at k=2: (42, 43), (44, 45)
        names = post["datasets"] if k <= 2 else [d for d in post["datasets"] if d in post["crowded_datasets"]]
        units = [(tuple(seeds), name) for seeds in groups for name in names]
        for seeds, name in random.Random(f"post_conditions:{k}").sample(units, len(units)):
            by_arm: dict[str, list[dict]] = {}
            for c in configs_of([name], list(seeds), "post_conditions", None, True, post["epochs"]):
                by_arm.setdefault(c["arm"], []).append(
                    {**c, "forecast": False, "breakdown": False, "trials_at_once": k}
                )
            for arm in random.Random(f"post_conditions:{k}:{seeds}:{name}").sample(sorted(by_arm), len(by_arm)):
                out += by_arm[arm]
    return out


def describe(config: dict) -> str:
    extra = f" threads={config['threads']}" if config.get("part") in ("threads", "contention") else ""
    extra += f" +{config['background_load']} burner" if config.get("background_load") else ""
    extra += "" if config.get("onednn", True) else " oneDNN=off"
    extra += f" env={config['env']}" if config.get("env") else ""
    if config.get("trials_at_once"):
        extra += f" threads=default, {config['trials_at_once']} at once"
    if config.get("part") in ("coverage", "contention", "post_conditions"):
        extra += f" {config['part']} ({config['epochs']} epochs, no forecast)"
    return f"deepar {config['dataset']:<18} {config['arm']:<20} seed={config['seed']}{extra}"


STUDY = register(
    Study(
        name="deepar",
        title="GluonTS DeepAR on the Monash archive (after a 2024 post)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        prepare=prepare,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        preflight=preflight,
        arms=ARM_TABLE,
        reference={"torch": "torch-eager", "mxnet": "mxnet-hybrid-partial"},
        code=("fwbench.forecast", "fwbench.data.monash", "fwbench.measure", "fwbench.background_load"),
        figure_prefix="deepar_",
        piece_parts=("post_conditions",),
    )
)
