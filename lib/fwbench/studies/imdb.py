"""Study A: the Borealis AI (2018) IMDB sentiment sweep, PyTorch vs MXNet, on CPU.

Assumptions where the post is silent (recorded in every trial config):
- embedding 128, LSTM hidden 128, one layer, classifier on the last time step (the Keras IMDB LSTM example);
- Adam, learning rate 1e-3; the factor schedule multiplies it by 0.9 every 10 epochs;
- both frameworks see the same sample order (``EpochPermutationSampler``) and the same initialisation: ``init``
  ``uniform`` (PyTorch's defaults, the same distributions) or ``keras`` (Glorot/orthogonal/forget-gate bias 1,
  the very same arrays in both; ``fwbench.sentiment.INITS``); ``clip_norm`` (default none: the post names no
  clipping) clips the global gradient norm of the batch-mean loss in both;
- epoch time = wall time of the training pass over the DataLoader (MXNet synchronized before the clock is
  read); evaluation on the test split is timed separately; the first epoch is stored but excluded from stats.

Treated alike in every timed region (options recorded in each config):
- ``worker_lifetime`` (data-loader workers, when ``num_workers`` > 0): ``per-epoch`` (the default: what both
  frameworks did in 2018 and PyTorch's default today) starts the workers inside every timed epoch and joins them
  at its end, in both (MXNet builds its DataLoader and worker pool per pass); ``persistent`` starts them once,
  before the timed epochs, in both (MXNet's pool as 1.9.1 builds it; PyTorch ``persistent_workers=True``).
  At 0 workers there are none and the config records the default.
- ``onednn`` (default on): PyTorch ``torch.backends.mkldnn.flags`` around ``prepare`` and the epochs; MXNet
  ``MXNET_MKLDNN_ENABLED`` and ``MXNET_USE_MKLDNN_RNN`` set before ``import mxnet`` (the first alone breaks the
  LSTM's backward in 1.9.1). The ``onednn`` grid part times the reference arms with it on and off (claim C3).
- CPU use (``proc_cpu_pct``, ``worker_cpu_pct``) counts the trial process and every worker, live or reaped, and
  ``peak_rss_mb`` the process plus its live workers (``fwbench.sampling``), for both frameworks.
- Compiled/hybridized arms build their graphs in ``prepare`` (one forward+backward, timed apart). For the MXNet
  hybrid arms the trial stores ``hybridize_ok``/``hybridize_error``: a model that cannot be hybridized is a stored
  result (claim A9 as stated: ``mxnet-hybrid-full`` hybridizes the whole model, ``gluon.rnn.LSTM`` included).
"""

from __future__ import annotations

from ..data import imdb as imdb_data
from ..errors import FwbenchError
from .blocks import distinct, interleave
from .imdb_profiles import ARM_TABLE, MODEL, OPTIONS, PROFILES
from .imdb_trial import DEFAULT_LIFETIME, run_trial
from .registry import Study, register

# How cost grows (beyond the post), and oneDNN on/off: the reference arms at one batch size / 0 workers (the
# cost-growth part crossed over sequence lengths and thread counts); n_test is the profile's.
SCALING_ARMS = ONEDNN_ARMS = ["torch-eager", "mxnet-imperative"]

LR_FACTOR, LR_EVERY = 0.9, 10
BASE_SEED = 42
# The convergence runs of the 2018 post: batch 256 / 0 workers with and without the factor schedule (it saw
# oscillation after ~17 epochs without one), and the post's fastest setting, batch 1024 / 2 workers.
CONVERGENCE_SETTINGS = (
    {"batch_size": 256, "num_workers": 0, "lr_schedule": False},
    {"batch_size": 256, "num_workers": 0, "lr_schedule": True},
    {"batch_size": 1024, "num_workers": 2, "lr_schedule": True},
)
CONVERGENCE_EPOCHS = 30


def prepare(options: dict) -> dict:
    for key in ("seq_len", "threads"):  # a profile may give one value or a list; the grid takes lists
        if not isinstance(options[key], list):
            options[key] = [options[key]]
    quality = options.get("quality_part")
    if quality:  # blocks (seeds): one count for every arm, or one per arm; threads: one per block
        blocks = quality["blocks"]
        blocks = dict.fromkeys(quality["arms"], blocks) if isinstance(blocks, int) else blocks
        missing = [arm for arm in quality["arms"] if arm not in blocks]
        if missing:
            raise FwbenchError(f"quality_part.blocks gives no number of seeds for {missing}")
        most = max(blocks[arm] for arm in quality["arms"])
        if len(quality["threads"]) != most:
            raise FwbenchError(
                f"quality_part.threads must give one thread count per block: {most} block(s), "
                f"got {quality['threads']!r}"
            )
        options["quality_part"] = {**quality, "blocks": blocks}
    return options


def grid(options: dict) -> list[dict]:
    """One config per (arm, batch size, workers, worker lifetime, oneDNN, sequence length, threads, repeat), the
    arms of each setting back to back in a seeded random order per repeat block (``blocks.interleave``), odd blocks
    in reverse order (settings compared across, such as worker lifetime, alternate). ``extra_arms`` run at the
    largest batch size with the fewest workers (a cheap look in small profiles); ``beside_part``'s arms are trials of
    their own (``beside: True``: a JAX comparison stands on one machine's blocks, whatever machine ran the main
    grid); ``batches_per_epoch`` sizes main, beside and extra epochs (n_train = batches x batch size, at most 25k).
    Parts other than main take the first listed lifetime and oneDNN value; a setting in two parts is one trial."""
    schedule = {"factor": LR_FACTOR, "every_epochs": LR_EVERY}

    def setting(batch_size, num_workers, **given):
        """A setting: the profile's schedule and epochs, part main, the first lifetime and oneDNN value unless given."""
        s = {
            "batch_size": batch_size,
            "num_workers": num_workers,
            "lr_schedule": options["lr_schedule"],
            "epochs": options["epochs"],
            "part": "main",
            "worker_lifetime": options["worker_lifetime"][0],
            "onednn": options["onednn"][0],
            **given,
        }
        return {**s, "worker_lifetime": s["worker_lifetime"] if num_workers else DEFAULT_LIFETIME}

    main = distinct(  # 0 workers have one lifetime
        [
            setting(b, w, worker_lifetime=life, onednn=flag)
            for b in options["batch_sizes"]
            for w in options["workers"]
            for life in options["worker_lifetime"]
            for flag in options["onednn"]
        ]
    )
    if options.get("convergence"):
        epochs = max(options["epochs"], CONVERGENCE_EPOCHS)
        main += [
            setting(**s, epochs=epochs, part="convergence", worker_lifetime=DEFAULT_LIFETIME)
            for s in CONVERGENCE_SETTINGS
        ]
    plan = [(arm, s) for arm in options["arms"] for s in main]
    plan += [
        (arm, setting(max(options["batch_sizes"]), min(options["workers"]), part="extra"))
        for arm in options.get("extra_arms", [])
    ]
    beside = options.get("beside_part")
    if beside:  # its own trials (``beside`` in the config): every arm of it on one machine, in its own blocks
        plan += [
            (arm, setting(b, w, part="beside"))
            for arm in beside["arms"]
            for b in beside["batch_sizes"]
            for w in beside["workers"]
        ]
    per_batch = options.get("batches_per_epoch")

    def n_train(batch_size):
        return min(imdb_data.REVIEWS_PER_SPLIT, per_batch * batch_size) if per_batch else options["n_train"]

    runs = [
        (arm, s, seq_len, threads, n_train(s["batch_size"]), options["n_test"])
        for seq_len in options["seq_len"]
        for threads in options["threads"]
        for arm, s in plan
    ]
    first = (options["seq_len"][0], options["threads"][0])  # the one sequence length and thread count of a part
    scaling = options.get("scaling")
    if scaling:
        s = setting(scaling["batch_size"], 0, epochs=scaling["epochs"], part="scaling")
        runs += [
            (arm, s, seq_len, threads, scaling["n_train"], options["n_test"])
            for arm in SCALING_ARMS
            for seq_len in scaling["seq_lens"]
            for threads in scaling["threads"]
        ]
    part = options.get("onednn_part")
    if part:
        on, off = (
            setting(part["batch_size"], 0, epochs=part["epochs"], part="onednn", onednn=f) for f in (True, False)
        )
        runs += [(arm, s, *first, part["n_train"], options["n_test"]) for arm in ONEDNN_ARMS for s in (on, off)]
    quality = options.get("quality_part")
    if quality:  # training quality: every review in, every review scored; its own number of blocks (seeds)
        s = setting(quality["batch_size"], 0, epochs=quality["epochs"], part="quality")
        every = imdb_data.REVIEWS_PER_SPLIT
        runs += [(arm, s, *first, every, every) for arm in quality["arms"]]
    configs = []
    for repeat in range(options["repeats"]):
        block = []
        for arm, s, seq_len, threads, n_train, n_test in runs:
            if s["part"] == "scaling" and repeat:  # the cost-growth curves feed no verdict: one block
                continue
            if s["part"] == "quality":
                if repeat >= quality["blocks"][arm]:
                    continue
                threads = quality["threads"][repeat]
            if s["part"] == "beside" and repeat >= beside["blocks"]:
                continue
            block.append(
                {
                    "arm": arm,
                    "batch_size": s["batch_size"],
                    "num_workers": s["num_workers"],
                    "epochs": s["epochs"],
                    "n_train": n_train,
                    "n_test": n_test,
                    "threads": threads,
                    "lr": options["lr"],
                    "lr_schedule": dict(schedule) if s["lr_schedule"] else None,
                    "seed": BASE_SEED + repeat,
                    "repeat": repeat,
                    "model": dict(MODEL),
                    "encoding": vars(imdb_data.Encoding(num_words=MODEL["num_words"], maxlen=seq_len)).copy(),
                    "device": options["device"],
                    "part": s["part"],
                    "worker_lifetime": s["worker_lifetime"],
                    "onednn": s["onednn"] if options["device"] == "cpu" else True,
                    "init": options["init"],
                    "clip_norm": options["clip_norm"],
                    **({"beside": True} if s["part"] == "beside" else {}),
                }
            )
        # settings contiguous, so that reversing reverses their order
        block = interleave(distinct(block), seed=BASE_SEED)
        configs += block[::-1] if repeat % 2 else block  # A-B, B-A: a drift in machine load favours no setting
    return interleave(configs, seed=BASE_SEED)


def describe(config: dict) -> str:
    schedule = "" if config["lr_schedule"] else " no-lr-schedule"
    seq_len = config["encoding"]["maxlen"]
    extra = "" if seq_len == 500 else f" seq_len={seq_len}"
    extra += "" if config["threads"] == 2 else f" threads={config['threads']}"
    extra += "" if config.get("device", "cpu") == "cpu" else f" device={config['device']}"
    extra += f" {config.get('worker_lifetime', DEFAULT_LIFETIME)}" if config["num_workers"] else ""
    extra += "" if config.get("onednn", True) else " oneDNN=off"
    extra += "" if config.get("init", "uniform") == "uniform" else f" init={config['init']}"
    extra += "" if config.get("clip_norm") is None else f" clip_norm={config['clip_norm']}"
    extra += " beside" if config.get("beside") else ""
    return (
        f"imdb {config['arm']:<20} batch={config['batch_size']:<5} workers={config['num_workers']} "
        f"epochs={config['epochs']} seed={config['seed']}{schedule}{extra}"
    )


STUDY = register(
    Study(
        name="imdb",
        title="IMDB sentiment LSTM sweep (after Borealis AI, 2018)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        prepare=prepare,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        # a missing or broken IMDB source is one error line instead of one failed trial per config
        preflight=lambda options: imdb_data.check_source(),
        arms=ARM_TABLE,
        reference={"torch": "torch-eager", "mxnet": "mxnet-imperative"},
        figure_prefix="imdb_",
        code=("fwbench.sentiment", "fwbench.data.imdb", "fwbench.sampling", "fwbench.measure"),
        adaptive_metric=lambda s: s["median_epoch_s"],
        adaptive_pairs=(("torch-eager", "mxnet-imperative"), ("torch-sparse", "mxnet-imperative")),
        fixed_block_parts=("quality", "beside"),
    )
)
