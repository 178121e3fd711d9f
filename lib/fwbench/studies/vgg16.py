"""Claim C (overview article, Colab, no setup): VGG16 inference 30.4 ms (PyTorch) vs 20.5 ms (MXNet), and
"MXNet has optimized CPU kernels" / "PyTorch's JIT optimizes computations".

One trial = one framework x batch size x image size x oneDNN on/off (x compiled or eager) in a fresh process:
build VGG16 with random weights, compile it where the arm says (timed apart: ``compile_time_s``, the compile
call plus the first forward pass that triggers it), ``warmup`` forward passes (stored, excluded), then ``repeats``
timed passes, each read with ``time.perf_counter`` after the framework's synchronize (``mx.nd.waitall``).

Arms: ``torch-eager`` (``no_grad``), ``torch-script`` (``torch.jit.trace`` + ``freeze``), ``torch-compile``
(``torch.compile`` of the eager model, Inductor, default mode; its cache directory is fresh per trial, so every
trial pays a cold compile), ``mxnet-imperative`` (Gluon), ``mxnet-hybrid-full`` (the whole net
``hybridize(static_alloc, static_shape)``). VGG16 has no data-dependent control flow, so both compilers trace the
whole network (unlike the IMDB LSTM, where ``torch.compile`` breaks the graph).
oneDNN off: PyTorch ``torch.backends.mkldnn.flags(enabled=False)`` around compiling, warm-up and timing; MXNet
``MXNET_MKLDNN_ENABLED=0`` set before ``import mxnet``. On ``cuda`` the oneDNN switch does not apply.

Option ``compiled`` adds a part (``part: "compiled"``) that runs the compiled-vs-eager comparison at its own arms,
batch sizes and image size, oneDNN on only, ``blocks`` independent trials per setting.
"""

from __future__ import annotations

from ..devices import check_device_available, device_option
from ..errors import FwbenchError
from . import options as opt
from .adaptive import adaptive_option
from .blocks import interleave
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

PROFILES = {
    # seconds: a 32x32 input exercises every path (the classifier still sees 512x7x7 via the adaptive pool)
    "smoke": {
        "arms": ["torch-eager", "mxnet-imperative"],
        "batch_sizes": [1],
        "image_size": 32,
        "onednn": [True, False],
        "warmup": 1,
        "repeats": 2,
        "threads": 2,
        "device": "cpu",
        "blocks": 1,
        # the JAX arm: compiled by nature, so in the compiled part (oneDNN on only: XLA has none)
        "compiled": {"arms": ["jax-jit"], "batch_sizes": [1], "image_size": 32, "blocks": 1},
        "beside": None,
        "adaptive": False,
    },
    # about 2 min on an idle 2-core CPU: the claim's setting (batch 1, 224x224), oneDNN on and off, 2 blocks (the
    # least a CI needs; the compiled part's single block keeps C1, C3 and C4 below the latency floor here anyway);
    # plus the compiled part at 112x112: eager, TorchScript and torch.compile at batch 1, oneDNN on, one block. At
    # 224x224 that part took 5.6 min on the shared 2-core host (each cold torch.compile is 35-55 s), over the quick
    # budget; 112x112 keeps every layer and the whole graph, at a quarter of the FLOPs. Batch 8 (3 trials, one more
    # cold compile) and a third block are left to `paper` (10-minute budget).
    "quick": {
        "arms": ["torch-eager", "mxnet-imperative"],
        "batch_sizes": [1],
        "image_size": 224,
        "onednn": [True, False],
        "warmup": 1,
        "repeats": 3,
        "threads": 2,
        "device": "cpu",
        "blocks": 2,
        "compiled": {"arms": TORCH_COMPILED, "batch_sizes": [1], "image_size": 112, "blocks": 1},
        "beside": None,
        "adaptive": False,
    },
    # the paper profile (~25 min here): C1's setting and batch 8, oneDNN on and off (C3), 3 to 5 adaptive blocks
    # while the PyTorch / MXNet latency CI is wider than +-3 %; the compiled part (C4) at 224x224, batch 1 and 8,
    # 3 blocks
    "paper": {
        "arms": ["torch-eager", "mxnet-imperative"],
        "batch_sizes": [1, 8],
        "image_size": 224,
        "onednn": [True, False],
        "warmup": 1,
        "repeats": 5,
        "threads": 2,
        "device": "cpu",
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
    # hours on 2 cores (batch 32 at 224x224 is ~1 TFLOP a pass): batch 1, 8 and 32, every arm, oneDNN on and
    # off, enough repeats for tight CIs
    "full": {
        "arms": list(ARMS),
        "batch_sizes": [1, 8, 32],
        "image_size": 224,
        "onednn": [True, False],
        "warmup": 2,
        "repeats": 10,
        "threads": 2,
        "device": "cpu",
        "blocks": 5,
        "compiled": None,
        "beside": None,
        "adaptive": False,
    },
}


def _arm_part(name, value):
    """``None`` or ``{"arms": [...], "batch_sizes": [...], "image_size": n, "blocks": n}``."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"arms", "batch_sizes", "image_size", "blocks"}:
        raise FwbenchError(
            f"{name} must be None or a dict with keys arms, batch_sizes, image_size, blocks; got {value!r}"
        )
    return {
        "arms": opt.list_of(opt.string, ARMS)(f"{name}.arms", value["arms"]),
        "batch_sizes": opt.list_of(opt.int_range(1, 256))(f"{name}.batch_sizes", value["batch_sizes"]),
        "image_size": opt.int_range(32, 1024)(f"{name}.image_size", value["image_size"]),
        "blocks": opt.int_range(1, 100)(f"{name}.blocks", value["blocks"]),
    }


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
    "adaptive": adaptive_option,
}

SEED = 0


def describe_trial(config: dict) -> str:
    """The trial module's label, marked ``beside`` for the beside part's trials (the same setting otherwise)."""
    return describe(config) + (" beside" if config.get("beside") else "")


def preflight(options: dict) -> None:
    check_device_available(options["device"])


def grid(options: dict) -> list[dict]:
    """``blocks`` independent trials (fresh processes) per setting; in each block the arms of a setting run back
    to back in a seeded random order (``blocks.interleave``). ``repeats`` are timed calls inside one trial. The
    ``compiled`` part adds its settings (oneDNN on); a setting already in the main part is not run twice. The
    ``beside`` part (oneDNN on) runs its arms as trials of their own (``beside: True`` in the config), so that a
    comparison with JAX stands on trials of one machine's blocks."""
    onednn = options["onednn"] if options["device"] == "cpu" else [True]  # a CPU library: no GPU arm
    parts = [("main", options["arms"], options["batch_sizes"], options["image_size"], onednn, options["blocks"])]
    if options["compiled"]:
        c = options["compiled"]
        parts.append(("compiled", c["arms"], c["batch_sizes"], c["image_size"], [True], c["blocks"]))
    if options.get("beside"):
        b = options["beside"]
        parts.append(("beside", b["arms"], b["batch_sizes"], b["image_size"], [True], b["blocks"]))
    configs, seen = [], set()
    for part, arms, batch_sizes, image_size, flags, blocks in parts:
        for block in range(blocks):
            for batch in batch_sizes:
                for flag in flags:
                    for arm in arms:
                        config = {
                            "arm": arm,
                            "model": "vgg16",
                            "batch_size": batch,
                            "image_size": image_size,
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
                        key = repr(sorted((k, v) for k, v in config.items() if k != "part"))
                        if key not in seen:
                            seen.add(key)
                            configs.append(config)
    return interleave(configs, seed=SEED)


STUDY = register(
    Study(
        name="vgg16",
        title="VGG16 inference latency (overview articles' claim C)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        describe=describe_trial,
        preflight=preflight,
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
