"""The vgg16 study's trial: what one trial process runs (``run_trial``), apart from the study's declarations
(``fwbench.studies.vgg16``: arm table, profiles, options, grid).

This module, the arms' backends and the study's ``code`` modules make the code fingerprint of every trial
(``Study.code_version``); the declarations do not, so editing a profile leaves stored trials of unchanged configs
current. It never imports the declarations: what a trial does follows from its config, its arm's row of the arm
table (hashed too) and the code hashed here.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time

from ..measure import time_calls
from ..vision import vgg16_flops
from .registry import get_study

STUDY_NAME = "vgg16"

COMPILED_VARIANTS = ("script", "compile", "hybrid-full", "jit")


def describe(config: dict) -> str:
    return (
        f"vgg16 {config['arm']:<17} batch={config['batch_size']:<3} {config['image_size']}px "
        f"oneDNN={'on' if config['onednn'] else 'off'} {config['device']}"
    )


def run_trial(config: dict, report=None) -> dict:
    arm = get_study(STUDY_NAME).arm_of(config)
    os.environ.update(arm.onednn_env(config["onednn"]))  # read by MXNet at import: before the backend import
    cache = None
    if arm.variant == "compile":  # a cold Inductor cache in every trial: each one pays the whole compile
        cache = tempfile.mkdtemp(prefix="fwbench-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    try:
        return _measure(arm, config, report)
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)


def _measure(arm, config: dict, report) -> dict:
    be = arm.load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    device = config["device"]
    model = be.build_vgg16(device)
    n_parameters = be.count_parameters(model)  # before compiling (a frozen TorchScript module has none left)
    x = be.make_images(config["batch_size"], config["image_size"], device, seed=config["seed"])
    compile_s = None
    with be.onednn(config["onednn"]):
        active = be.onednn_enabled()
        if arm.variant in COMPILED_VARIANTS:
            be.synchronize(device)
            t0 = time.perf_counter()
            model = be.compile_for_inference(model, x, arm.variant)
            be.synchronize(device)
            compile_s = time.perf_counter() - t0
        out = be.to_numpy(be.infer(model, x))
        warm, timed = time_calls(
            lambda: be.infer(model, x), lambda: be.synchronize(device), config["warmup"], config["repeats"]
        )
    if report:
        report(
            f"{describe(config)}: median {1e3 * statistics.median(timed):.1f} ms"
            + ("" if compile_s is None else f", compile {compile_s:.1f} s")
        )
    batch = config["batch_size"]
    median = statistics.median(timed)
    measurements = [(i, "warmup_latency_s", v) for i, v in enumerate(warm)] + [
        (i, "latency_s", v) for i, v in enumerate(timed)
    ]
    if compile_s is not None:
        measurements.append((-1, "compile_time_s", compile_s))
    return {
        "summary": {
            "n_parameters": n_parameters,
            "median_latency_ms": 1e3 * median,
            "mean_latency_ms": 1e3 * statistics.fmean(timed),
            "median_ms_per_image": 1e3 * median / batch,
            "images_per_s": batch / median,
            "achieved_gflops": vgg16_flops(config["image_size"]) * batch / median / 1e9,
            "onednn_active": active,
            "output_shape": list(out.shape),
            "output_finite": bool((out == out).all()),
            "compile_time_s": compile_s,
            **be.compile_report(),
        },
        "measurements": measurements,
        "provenance": be.framework_info(device),
    }
