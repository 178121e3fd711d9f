"""Study B: GluonTS DeepAR on the Monash archive, MXNet (``gluonts.mx``) vs PyTorch (``gluonts.torch``), on CPU.

After a 2024 post (40 Monash datasets x 5 seeds, PyTorch 4.5x faster, chart only). Protocol in
shared/reference/deepar_protocol_2024.csv: GluonTS defaults (2 layers x 40 cells, batch 32, 50 batches per epoch,
Student-t, 100 sample paths), context = Monash lag, prediction = Monash horizon, lags for the frequency.

Arms (``ARM_TABLE``): ``mxnet-hybrid-partial`` is the gluonts default (gluonts 0.17 builds the prediction network
afresh, unhybridized); ``mxnet-imperative`` shows what graph compilation of the unrolled LSTM cells does. A config
says both parts (``hybridize_train``, ``hybridize_predict``; None for PyTorch) and an MXNet trial records whether its
predictor really ran as a cached graph (``predictor_hybridized``). With ``breakdown`` a trial also records the data
pipeline alone for as many batches (``data_time_s``) and the cProfile own-time share of each phase
(``cprofile_train_frac_<phase>``, ``cprofile_predict_frac_<phase>``) in a separate profiled epoch of at most 10
batches and in forecasting 32 windows.

Measurements: per epoch ``train_loss``, ``epoch_time_s``; per trial ``train_time_s`` (the whole ``estimator.train``),
``predict_time_s`` (every test window; ``mxnet-hybrid-full``'s includes building the graph), ``MASE``, ``sMAPE``,
``mean_wQL``, ``ND``, ``RMSE`` over the series where each is finite (``n_series_dropped*`` count the others: zero
seasonal-naive scale), ``fit_overhead_s`` (train time outside the epochs), ``epochs_run``, the CPU use in training
(``train_cpu_s``, ``train_cpus_busy``) and the background load's (``burner_*``).

Every config says its ``part`` and ``onednn``. The main part is what B, the MASE check and the runtime tables read
(``analysis.deepar.load_trials``); each other part (a profile option: a dict, or False) only the analysis named:

- ``variants_part`` (``deepar_conditions``): per dataset x seed x arm, a trial at ``threads`` threads (part
  ``threads``) and one at the profile's threads with oneDNN off in both frameworks (part ``onednn``).
- ``coverage_part`` (``deepar_coverage``): per dataset x seed x core arm, ``epochs`` epochs of 50 batches that
  train and do not forecast (``forecast`` False): the per-batch cost on every staged dataset of the post's list.
- ``contention_part`` (``deepar_conditions``): training-only trials at each of ``threads`` threads on an idle
  machine and at each of ``loaded_threads`` beside one busy-loop process pinned to one CPU (``background_load`` 1,
  ``fwbench.background_load``); threads above the core count are oversubscription, on purpose.
- ``post_conditions_part`` (``deepar_prediction``): per k of ``trials_at_once``, training-only trials with no
  thread setting (``threads`` None: each library chooses, and the trial records what), run only where k trials
  share a host (the Dask runner's ``--trials-per-host k``; k = 1 locally); above 2 at once ``crowded_datasets``
  only.
- ``versions_part`` (``deepar_conditions``): the main part's configs again in the declared environment ``env``
  (``gluonts-0.13``: the post's gluonts 0.13.3); its configs name the environment and its lock hash.
"""

from __future__ import annotations

import contextlib
import random

from ..data import monash
from ..errors import DataUnavailable, FwbenchError
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
    # runs at once above 2 train these only: with default threads PyTorch took 10-56x its time alone at 2 at once
    # (its OpenMP pool spins on an oversubscribed host), so 4 at once on every dataset would take hours
    "crowded_datasets": ["m1_yearly", "tourism_monthly"],
}

TRAINING_ONLY = {"forecast": False, "breakdown": False}  # the training-only parts' trials: no forecast, no breakdown

CONTENTION_PART = {
    "datasets": ["m1_yearly", "tourism_monthly"],
    "seeds": [42, 43, 44],
    "epochs": 3,
    "threads": [1, 2, 4, 8],
    "loaded_threads": [2],
}

# the main part unless a profile says otherwise: the protocol's 100 epochs x 50 batches at 2 threads, both core arms
_MAIN = {
    "datasets": PAPER_DATASETS,
    "arms": CORE_ARMS,
    "seeds": [42],
    "epochs": 100,
    "num_batches_per_epoch": 50,
    "threads": 2,
    "breakdown": False,
}
PROFILES = {
    # seconds: for tests and CI
    "smoke": {
        **_MAIN,
        "datasets": SMOKE_DATASETS,
        "epochs": 1,
        "num_batches_per_epoch": 3,
        "versions_part": {"env": "gluonts-0.13"},
    },
    # under 2 minutes on 2 cores; each dataset shows something (yearly original, quarterly rebuilt, cif_2016's
    # per-series horizons, covid_deaths' zero-scale series; windows 8 to 39: the window figure needs three).
    # tourism_monthly is left to `paper`; mxnet-hybrid-full to `gap` (it repeats the whole MXNet training).
    "quick": {**_MAIN, "datasets": QUICK_DATASETS, "epochs": 2, "num_batches_per_epoch": 10, "breakdown": True},
    # where the time goes (over an hour on 2 cores, most of it MXNet on nn5_weekly): windows of 8, 27 and 73 steps
    "gap": {**_MAIN, "datasets": GAP_DATASETS, "arms": list(ARMS), "epochs": 2, "breakdown": True},
    # the papers' scale on one machine: every dataset of the Monash paper's DeepAR MASE reference staged from an
    # original file (windows 8 to 73 steps), so accuracy is checked against a published number and B's ratio is
    # seen against the window length
    "paper": {
        **_MAIN,
        "seeds": [42, 43],
        # the shortest and a middle window (8 and 39 steps)
        "variants_part": {"datasets": ["m1_yearly", "tourism_monthly"], "seeds": [42], "threads": 1},
        # the main part again under the post's gluonts 0.13.3: the paper run's next piece, 20 trials
        "versions_part": {"env": "gluonts-0.13"},
        # per-batch training cost on every staged dataset of the post's list (the first epoch excluded)
        "coverage_part": {"datasets": COVERAGE_DATASETS, "seeds": [42, 43], "epochs": 4},
        # threads (4 and 8 oversubscribed) and a busy machine, on the variants part's short and middle window
        "contention_part": CONTENTION_PART,
        # the post's conditions (runs at once need the Dask runner's --trials-per-host; the runner runs each k
        # only there)
        "post_conditions_part": POST_CONDITIONS_PART,
    },
    # the post's scale (41 catalogue keys; unavailable ones fail at once with the reason): days of CPU, for a cluster
    "full": {**_MAIN, "datasets": None, "seeds": list(SEEDS)},
}


def _datasets(name, value):
    return opt.list_of(opt.string, monash.names())(name, value)


_SEEDS = opt.list_of(opt.int_range(0, 2**31 - 1))
_THREADS = opt.list_of(opt.int_range(1, 256))
_PART_EPOCHS = opt.int_range(2, 10000)  # a training-only part times epochs after the first
OPTIONS = {
    "datasets": _datasets,
    "arms": opt.list_of(opt.string, ARMS),
    "seeds": _SEEDS,
    "epochs": opt.int_range(1, 10000),
    "num_batches_per_epoch": opt.int_range(1, 100000),
    "threads": opt.int_range(1, 256),
    "breakdown": opt.boolean,
    "variants_part": opt.part_spec(datasets=_datasets, seeds=_SEEDS, threads=opt.int_range(1, 256)),
    "versions_part": opt.part_spec(env=opt.string),
    "coverage_part": opt.part_spec(datasets=_datasets, seeds=_SEEDS, epochs=_PART_EPOCHS),
    "contention_part": opt.part_spec(
        datasets=_datasets, seeds=_SEEDS, epochs=_PART_EPOCHS, threads=_THREADS, loaded_threads=_THREADS
    ),
    "post_conditions_part": opt.part_spec(
        datasets=_datasets,
        seeds=_SEEDS,
        epochs=_PART_EPOCHS,
        trials_at_once=opt.list_of(opt.int_range(1, 64)),
        crowded_datasets=_datasets,
    ),
}


def prepare(options: dict) -> dict:
    for part in ("variants_part", "versions_part", "coverage_part", "contention_part", "post_conditions_part"):
        options.setdefault(part, False)
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
        options["datasets"] = monash.names(in_2024_post=True)
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
    """In the parent, before any trial: every dataset of the profile is located (downloaded where missing and
    allowed), parsed and split, so a corrupt or truncated file, or one whose series are all too short for the
    horizon, is a one-line error before any training. An *unavailable* dataset is not: its trials fail at once
    with ``DataUnavailable`` and the reason, so the store says which datasets are missing (retried on each run)."""
    for name in all_datasets(options):
        with contextlib.suppress(DataUnavailable):
            monash.load(name)


def grid(options: dict) -> list[dict]:
    """One config per (seed, dataset, arm), the arms of a (seed, dataset) back to back in a seeded random order
    (``blocks.interleave``); every dataset, available or not (an unavailable one is a failed trial that says why)."""
    from ..forecast import HYPERPARAMETERS

    hyperparameters = {k: v for k, v in HYPERPARAMETERS.items() if k != "num_batches_per_epoch"}

    def configs_of(spec, part, threads, onednn=True, **extra):
        """Per seed, dataset and arm of ``spec`` (``datasets``, ``seeds``, ``epochs`` if given); ``extra`` ends each."""
        meta = {name: monash.info(name) for name in spec["datasets"]}
        return [
            {
                "dataset": name,
                "arm": arm,
                **hybridization(arm),
                "seed": seed,
                "epochs": spec.get("epochs", options["epochs"]),
                "num_batches_per_epoch": options["num_batches_per_epoch"],
                "threads": threads,
                "breakdown": options["breakdown"],
                "freq": meta[name].freq,
                "prediction_length": meta[name].horizon,
                "context_length": meta[name].context_length,
                "seasonality": meta[name].seasonality,
                "hyperparameters": dict(hyperparameters),
                "part": part,
                "onednn": onednn,
                **extra,
            }
            for seed in spec["seeds"]
            for name in spec["datasets"]
            for arm in options["arms"]
        ]

    configs = interleave(configs_of(options, "main", options["threads"]), seed=0)
    variants = options.get("variants_part")
    if variants:
        configs += interleave(
            configs_of(variants, "threads", variants["threads"])
            + configs_of(variants, "onednn", options["threads"], onednn=False),
            seed=1,
        )
    versions = options.get("versions_part")
    if versions:  # the main part's configs, in another environment
        configs += [{**c, "part": "versions", "env": versions["env"]} for c in configs if c["part"] == "main"]
    coverage = options.get("coverage_part")
    if coverage:  # training cost only: few epochs, no forecast
        configs += interleave(configs_of(coverage, "coverage", options["threads"], **TRAINING_ONLY), seed=2)
    contention = options.get("contention_part")
    if contention:  # training cost only, at each thread count idle and beside the background load
        conditions = [(t, 0) for t in contention["threads"]] + [(t, 1) for t in contention["loaded_threads"]]
        blocks = []
        # seed by seed and dataset by dataset, every condition in a seeded random order, so a drift of the
        # machine over the part's half hour falls on all conditions alike
        for seed in contention["seeds"]:
            for name in contention["datasets"]:
                order = random.Random(f"contention:{seed}:{name}").sample(conditions, len(conditions))
                one = {**contention, "datasets": [name], "seeds": [seed]}
                for threads, load in order:
                    blocks += configs_of(one, "contention", threads, **TRAINING_ONLY, background_load=load)
        configs += interleave(blocks, seed=3)
    post = options.get("post_conditions_part")
    if post:
        configs += post_condition_configs(post, configs_of)
    return configs


def post_condition_configs(post: dict, configs_of) -> list[dict]:
    """The post's conditions: for each k of ``trials_at_once``, every dataset x arm (above 2 at once, those of
    ``crowded_datasets`` only) as groups of k seeds back to back, so the k trials a Dask worker with k slots takes
    at once are one dataset and one framework (alike in length: they start and end together), as the post ran each
    version on its own ("a weekend to run the MXNet version"). No thread setting. The groups' order is seeded."""
    out = []
    for k in post["trials_at_once"]:
        # seeds 42-45 at k=2: (42, 43), (44, 45)
        groups = [tuple(post["seeds"][i : i + k]) for i in range(0, len(post["seeds"]), k)]
        names = post["datasets"] if k <= 2 else [d for d in post["datasets"] if d in post["crowded_datasets"]]
        units = [(seeds, name) for seeds in groups for name in names]
        for seeds, name in random.Random(f"post_conditions:{k}").sample(units, len(units)):
            by_arm: dict[str, list[dict]] = {}
            one = {**post, "datasets": [name], "seeds": list(seeds)}
            for c in configs_of(one, "post_conditions", None, **TRAINING_ONLY, trials_at_once=k):
                by_arm.setdefault(c["arm"], []).append(c)
            for arm in random.Random(f"post_conditions:{k}:{seeds}:{name}").sample(sorted(by_arm), len(by_arm)):
                out += by_arm[arm]
    return out


def describe(config: dict) -> str:
    extra = f" threads={config['threads']}" if config.get("part") in ("threads", "contention") else ""
    extra += f" +{config['background_load']} burner" if config.get("background_load") else ""
    extra += "" if config.get("onednn", True) else " oneDNN=off"
    extra += f" env={config['env']}" if config.get("env") else ""
    extra += f" threads=default, {config['trials_at_once']} at once" if config.get("trials_at_once") else ""
    training_only = config.get("part") in ("coverage", "contention", "post_conditions")
    extra += f" {config['part']} ({config['epochs']} epochs, no forecast)" if training_only else ""
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
