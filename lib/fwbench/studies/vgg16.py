"""Claim C (overview article, Colab, no setup): VGG16 inference 30.4 ms (PyTorch) vs 20.5 ms (MXNet), and
"MXNet has optimized CPU kernels" / "PyTorch's JIT optimizes computations".

One trial = one arm x batch size x image size x oneDNN on/off in a fresh process: VGG16 with random weights,
compiled where the arm says (timed apart: ``compile_time_s``, the compile call plus the first forward pass),
``warmup`` forward passes (stored, excluded), then ``repeats`` timed passes, each read after the framework's
synchronize. ``torch-compile`` uses a fresh cache per trial, so every trial pays a cold compile;
``mxnet-hybrid-full`` is ``hybridize(static_alloc, static_shape)``. VGG16 has no data-dependent control flow, so
both compilers trace the whole network (unlike the IMDB LSTM).
oneDNN off: as in docs/methods.md; on ``cuda`` the switch does not apply.

Option ``compiled`` adds a part (``part: "compiled"``) that runs the compiled-vs-eager comparison at its own arms,
batch sizes and image size, oneDNN on only, ``blocks`` independent trials per setting; ``beside`` likewise (see
``grid``).
"""

from __future__ import annotations

from ..devices import check_device_available, device_option
from ..errors import FwbenchError
from . import options as opt
from .blocks import distinct, interleave
from .registry import Arm, Study, register
from .vgg16_trial import describe, run_trial

_TORCH, _MXNET = "fwbench.vision.torch", "fwbench.vision.mxnet"
ARM_TABLE = (
    Arm("torch-eager", "torch", _TORCH, "eager", "PyTorch (eager)", "#1f77b4"),
    Arm("torch-script", "torch", _TORCH, "script", "PyTorch (TorchScript, frozen)", "#9467bd"),
    Arm("torch-compile", "torch", _TORCH, "compile", "PyTorch (torch.compile, Inductor)", "#17becf"),
    Arm("mxnet-imperative", "mxnet", _MXNET, "imperative", "MXNet Gluon (imperative)", "#d62728"),
    Arm("mxnet-hybrid-full", "mxnet", _MXNET, "hybrid-full", "MXNet (hybridized)", "#ff7f0e"),
    # beyond the sources: JAX, every call jit-compiled, in its own environment (numpy 2)
    Arm("jax-jit", "jax", "fwbench.vision.jax", "jit", "JAX (Flax, jit-compiled forward pass)", "#e377c2", env="jax"),
)
ARMS = tuple(a.name for a in ARM_TABLE)
TORCH_COMPILED = ["torch-eager", "torch-script", "torch-compile"]

_COMMON = {
    "arms": ["torch-eager", "mxnet-imperative"],
    "batch_sizes": [1],
    "image_size": 224,
    "onednn": [True, False],
    "warmup": 1,
    "repeats": 3,
    "threads": 2,
    "device": "cpu",
    "blocks": 2,
}
PROFILES = {
    # seconds: a 32x32 input exercises every path (the classifier still sees 512x7x7 via the adaptive pool)
    "smoke": {
        **_COMMON,
        "image_size": 32,
        "repeats": 2,
        "blocks": 1,
        # the JAX arm: compiled by nature, so in the compiled part (oneDNN on only: XLA has none)
        "compiled": {"arms": ["jax-jit"], "batch_sizes": [1], "image_size": 32, "blocks": 1},
        "beside": None,
        "adaptive": False,
    },
    # about 2 min on an idle 2-core CPU: 2 blocks (the least a CI needs); the compiled part at 112x112, which keeps
    # every layer and the whole graph at a quarter of the FLOPs (at 224x224 it took 5.6 min on the shared 2-core host,
    # each cold torch.compile 35-55 s). Batch 8 (one more cold compile) and a third block are left to `paper`.
    "quick": {
        **_COMMON,
        "compiled": {"arms": TORCH_COMPILED, "batch_sizes": [1], "image_size": 112, "blocks": 1},
        "beside": None,
        "adaptive": False,
    },
    # the paper profile (~25 min here)
    "paper": {
        **_COMMON,
        "batch_sizes": [1, 8],
        "repeats": 5,
        "blocks": 3,
        # with JAX's jitted forward pass beside them (it enters no claim of the sources)
        "compiled": {"arms": TORCH_COMPILED + ["jax-jit"], "batch_sizes": [1, 8], "image_size": 224, "blocks": 3},
        "adaptive": {"min_blocks": 3, "max_blocks": 5, "target": 0.03},
        # JAX beside the eager reference arms, its own trials in the same blocks on one machine (the compiled
        # part's JAX trials ran on another boot of the VM than PyTorch's and MXNet's): what "leaving MXNet" reads
        "beside": {
            "arms": ["jax-jit", "torch-eager", "mxnet-imperative"],
            "batch_sizes": [1, 8],
            "image_size": 224,
            "blocks": 3,
        },
    },
    # hours on 2 cores (batch 32 at 224x224 is ~1 TFLOP a pass)
    "full": {
        **_COMMON,
        "arms": list(ARMS),
        "batch_sizes": [1, 8, 32],
        "warmup": 2,
        "repeats": 10,
        "blocks": 5,
        "compiled": None,
        "beside": None,
        "adaptive": False,
    },
}


def _arm_part(name, value):
    """``None`` or a dict of the options ``arms``, ``batch_sizes``, ``image_size`` and ``blocks`` for the part."""
    keys = ("arms", "batch_sizes", "image_size", "blocks")
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != set(keys):
        raise FwbenchError(f"{name} must be None or a dict with keys {', '.join(keys)}; got {value!r}")
    return {k: OPTIONS[k](f"{name}.{k}", value[k]) for k in keys}


OPTIONS = {
    "arms": opt.list_of(opt.string, ARMS),
    "batch_sizes": opt.list_of(opt.int_range(1, 256)),
    "image_size": opt.int_range(32, 1024),
    "onednn": opt.list_of(opt.boolean),
    "warmup": opt.int_range(0, 100),
    "repeats": opt.int_range(1, 1000),
    "threads": opt.int_range(1, 256),
    "device": device_option,
    "blocks": opt.int_range(1, 100),
    "compiled": _arm_part,
    "beside": _arm_part,
    "adaptive": opt.adaptive_option,
}

SEED = 0


def grid(options: dict) -> list[dict]:
    """``blocks`` independent trials (fresh processes) per setting, the arms of a setting back to back in a seeded
    random order (``blocks.interleave``); ``repeats`` are timed calls inside one trial. The ``compiled`` part adds
    its settings (oneDNN on; one the main part has is not run twice); the ``beside`` part (oneDNN on) runs its arms
    as trials of their own (``beside: True``), so a comparison with JAX stands on trials of one machine's blocks."""
    onednn = options["onednn"] if options["device"] == "cpu" else [True]  # a CPU library: no GPU arm
    # each part's arms, batch_sizes, image_size and blocks: the main options' or its own
    parts = [("main", options, onednn)] + [(n, options[n], [True]) for n in ("compiled", "beside") if options.get(n)]
    configs = []
    for part, spec, flags in parts:
        configs += [
            {
                "arm": arm,
                "model": "vgg16",
                "batch_size": batch,
                "image_size": spec["image_size"],
                "onednn": flag,
                "warmup": options["warmup"],
                "repeats": options["repeats"],
                "threads": options["threads"],
                "device": options["device"],
                "seed": SEED,
                "block": block,
                "part": part,
                **({"beside": True} if part == "beside" else {}),
            }
            for block in range(spec["blocks"])
            for batch in spec["batch_sizes"]
            for flag in flags
            for arm in spec["arms"]
        ]
    return interleave(distinct(configs), seed=SEED)


STUDY = register(
    Study(
        name="vgg16",
        title="VGG16 inference latency (overview articles' claim C)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        # the trial module's label, marked ``beside`` for the beside part's trials (the same setting otherwise)
        describe=lambda config: describe(config) + (" beside" if config.get("beside") else ""),
        preflight=lambda options: check_device_available(options["device"]),
        arms=ARM_TABLE,
        reference={"torch": "torch-eager", "mxnet": "mxnet-imperative"},
        code=("fwbench.vision", "fwbench.measure"),
        figure_prefix="vgg16_",
        block_field="block",
        block_option="blocks",
        # adaptive repeats (``blocks`` up to max_blocks; the compiled part keeps its own count): claim C1's latency
        # ratio of the reference arms, each trial reduced to the median of its timed calls (the ledger's number)
        adaptive_pairs=(("torch-eager", "mxnet-imperative"),),
        adaptive_metric=lambda summary: summary.get("median_latency_ms"),
    )
)
