"""The gemm study's trial: what one trial process runs (``run_trial``), apart from the study's declarations
(``fwbench.studies.gemm``: arm table, profiles, options, grid).

This module, the arms' backends and the study's ``code`` modules make the code fingerprint of every trial
(``Study.code_version``); the declarations do not, so editing a profile leaves stored trials of unchanged configs
current. It never imports the declarations: what a trial does follows from its config, its arm's row of the arm
table (hashed too) and the code hashed here.
"""

from __future__ import annotations

import time

import psutil

from ..measure import median, time_calls
from ..vision import gemm_flops
from .registry import get_study

STUDY_NAME = "gemm"


def describe(config: dict) -> str:
    return f"gemm {config['arm']:<16} n={config['n']:<5} threads={config['threads']} {config['device']}"


def run_trial(config: dict, report=None) -> dict:
    be = get_study(STUDY_NAME).arm_of(config).load_backend()
    be.configure_threads(config["threads"])
    device, n = config["device"], config["n"]
    a = be.random_matrix(n, device, seed=config["seed"])
    b = be.random_matrix(n, device, seed=config["seed"] + 1)
    warm, _ = time_calls(lambda: be.matmul(a, b), lambda: be.synchronize(device), config["warmup"], 0)
    me = psutil.Process()
    cpu0, t0 = sum(me.cpu_times()[:2]), time.perf_counter()
    _, timed = time_calls(lambda: be.matmul(a, b), lambda: be.synchronize(device), 0, config["repeats"])
    # the CPUs the timed products kept busy (this process): whether the thread setting held, since a framework
    # using more cores than set would win by it
    cpus_busy = (sum(me.cpu_times()[:2]) - cpu0) / (time.perf_counter() - t0)
    flops = gemm_flops(n)
    gflops = [flops / t / 1e9 for t in timed]
    if report:
        report(f"{describe(config)}: median {median(gflops):.1f} GFLOP/s")
    return {
        "summary": {
            "median_gflops": median(gflops),
            "max_gflops": max(gflops),
            "median_s": median(timed),
            "cpus_busy": cpus_busy,
        },
        "measurements": (
            [(-1, "cpus_busy", cpus_busy)]
            + [(i, "warmup_s", v) for i, v in enumerate(warm)]
            + [(i, "seconds", v) for i, v in enumerate(timed)]
            + [(i, "gflops", v) for i, v in enumerate(gflops)]
        ),
        "provenance": be.framework_info(device),
    }
