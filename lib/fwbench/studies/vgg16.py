"""Claim C (overview article, Colab, no setup): VGG16 inference 30.4 ms (PyTorch) vs 20.5 ms (MXNet), and
"MXNet has optimized CPU kernels" / "PyTorch's JIT optimizes computations".

One trial = one framework x batch size x image size x oneDNN on/off (x compiled or eager) in a fresh process:
build VGG16 with random weights, ``warmup`` forward passes (stored, excluded), then ``repeats`` timed passes,
each read with ``time.perf_counter`` after the framework's synchronize (``mx.nd.waitall``).

Arms: ``torch-eager`` (``no_grad``), ``torch-script`` (``torch.jit.trace`` + ``freeze``), ``mxnet-imperative``
(Gluon), ``mxnet-hybrid-full`` (the whole net ``hybridize(static_alloc, static_shape)``).
oneDNN off: PyTorch ``torch.backends.mkldnn.flags(enabled=False)`` around warm-up and timing; MXNet
``MXNET_MKLDNN_ENABLED=0`` set before ``import mxnet``. On ``cuda`` the oneDNN switch does not apply.
"""
from __future__ import annotations

import os
import statistics

from ..devices import check_device_available, device_option
from ..measure import time_calls
from ..vision import vgg16_flops
from . import options as opt
from .blocks import interleave
from .registry import Arm, Study, register

_TORCH, _MXNET = "fwbench.vision.torch", "fwbench.vision.mxnet"
ARM_TABLE = (
    Arm("torch-eager", "torch", _TORCH, "eager", "PyTorch (eager)", "#1f77b4"),
    Arm("torch-script", "torch", _TORCH, "script", "PyTorch (TorchScript, frozen)", "#9467bd"),
    Arm("mxnet-imperative", "mxnet", _MXNET, "imperative", "MXNet Gluon (imperative)", "#d62728"),
    Arm("mxnet-hybrid-full", "mxnet", _MXNET, "hybrid-full", "MXNet (hybridized)", "#ff7f0e"),
)
ARMS = tuple(a.name for a in ARM_TABLE)
COMPILED_VARIANTS = ("script", "hybrid-full")

PROFILES = {
    # seconds: a 32x32 input exercises every path (the classifier still sees 512x7x7 via the adaptive pool)
    "smoke": {"arms": ["torch-eager", "mxnet-imperative"], "batch_sizes": [1], "image_size": 32,
              "onednn": [True, False], "warmup": 1, "repeats": 2, "threads": 2, "device": "cpu", "blocks": 1},
    # ~2 min on an idle 2-core CPU: the claim's setting (batch 1, 224x224), oneDNN on and off, 3 blocks
    "quick": {"arms": ["torch-eager", "mxnet-imperative"], "batch_sizes": [1], "image_size": 224,
              "onednn": [True, False], "warmup": 1, "repeats": 3, "threads": 2, "device": "cpu", "blocks": 3},
    # tens of minutes: batch 1 and 8, compiled arms, enough repeats for tight CIs
    "full": {"arms": list(ARMS), "batch_sizes": [1, 8], "image_size": 224, "onednn": [True, False],
             "warmup": 2, "repeats": 10, "threads": 2, "device": "cpu", "blocks": 5},
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
}

SEED = 0


def preflight(options: dict) -> None:
    check_device_available(options["device"])


def grid(options: dict) -> list[dict]:
    """``blocks`` independent trials (fresh processes) per setting; in each block the arms of a setting run back
    to back in a seeded random order (``blocks.interleave``). ``repeats`` are timed calls inside one trial."""
    configs = []
    onednn = options["onednn"] if options["device"] == "cpu" else [True]  # a CPU library: no GPU arm
    for block in range(options["blocks"]):
        for batch in options["batch_sizes"]:
            for flag in onednn:
                for arm in options["arms"]:
                    configs.append({"arm": arm, "model": "vgg16", "batch_size": batch,
                                    "image_size": options["image_size"], "onednn": flag,
                                    "warmup": options["warmup"], "repeats": options["repeats"],
                                    "threads": options["threads"], "device": options["device"], "seed": SEED,
                                    "block": block})
    return interleave(configs, seed=SEED)


def describe(config: dict) -> str:
    return (f"vgg16 {config['arm']:<17} batch={config['batch_size']:<3} {config['image_size']}px "
            f"oneDNN={'on' if config['onednn'] else 'off'} {config['device']}")


def run_trial(config: dict, report=None) -> dict:
    arm = STUDY.arm_of(config)
    if arm.framework == "mxnet":  # read by MXNet at import: must be set before the backend module is imported
        os.environ["MXNET_MKLDNN_ENABLED"] = "1" if config["onednn"] else "0"
    be = arm.load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    device = config["device"]
    model = be.build_vgg16(device)
    n_parameters = be.count_parameters(model)  # before compiling (a frozen TorchScript module has none left)
    x = be.make_images(config["batch_size"], config["image_size"], device, seed=config["seed"])
    with be.onednn(config["onednn"]):
        active = be.onednn_enabled()
        if arm.variant in COMPILED_VARIANTS:
            model = be.compile_for_inference(model, x)
        out = be.to_numpy(be.infer(model, x))
        warm, timed = time_calls(lambda: be.infer(model, x), lambda: be.synchronize(device),
                                 config["warmup"], config["repeats"])
    if report:
        report(f"{describe(config)}: median {1e3 * statistics.median(timed):.1f} ms")
    batch = config["batch_size"]
    median = statistics.median(timed)
    measurements = ([(i, "warmup_latency_s", v) for i, v in enumerate(warm)]
                    + [(i, "latency_s", v) for i, v in enumerate(timed)])
    return {
        "summary": {
            "n_parameters": n_parameters,
            "median_latency_ms": 1e3 * median, "mean_latency_ms": 1e3 * statistics.fmean(timed),
            "median_ms_per_image": 1e3 * median / batch, "images_per_s": batch / median,
            "achieved_gflops": vgg16_flops(config["image_size"]) * batch / median / 1e9,
            "onednn_active": active, "output_shape": list(out.shape), "output_finite": bool((out == out).all()),
        },
        "measurements": measurements,
        "provenance": be.framework_info(device),
    }


STUDY = register(Study(
    name="vgg16", title="VGG16 inference latency (overview articles' claim C)", module=__name__, profiles=PROFILES,
    options=OPTIONS, grid=grid, run_trial=run_trial, describe=describe, preflight=preflight, arms=ARM_TABLE,
    reference={"torch": "torch-eager", "mxnet": "mxnet-imperative"}, code=("fwbench.vision",),
    figure_prefix="vgg16_"))
