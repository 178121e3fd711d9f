"""This machine's fp32 GEMM throughput through each framework's matmul: the denominators of "achieved fraction
of peak" (``fwbench.analysis.inference.gemm_peak``).

One trial = one framework x matrix size n x thread count in a fresh process: two random n x n float32
matrices, ``warmup`` products (stored, excluded), then ``repeats`` timed products (``torch.matmul`` /
``mx.nd.dot``; MXNet synchronized with ``mx.nd.waitall`` before each clock read). GFLOP/s = 2 n^3 / seconds.
"""
from __future__ import annotations

import importlib
import statistics

from ..vision import check_device_available, device_option, gemm_flops, time_calls
from . import options as opt

ARMS = ("torch", "mxnet")

PROFILES = {
    "smoke": {"arms": list(ARMS), "sizes": [256], "threads": [1], "warmup": 1, "repeats": 3, "device": "cpu"},
    "quick": {"arms": list(ARMS), "sizes": [1024, 2048], "threads": [1, 2], "warmup": 2, "repeats": 5,
              "device": "cpu"},
    "full": {"arms": list(ARMS), "sizes": [512, 1024, 2048, 4096], "threads": [1, 2], "warmup": 3, "repeats": 20,
             "device": "cpu"},
}

OPTIONS = {
    "arms": opt.list_of(opt.string, ARMS),
    "sizes": opt.list_of(opt.int_range(16, 16384)),
    "threads": opt.list_of(opt.int_range(1, 256)),
    "warmup": opt.int_range(0, 100),
    "repeats": opt.int_range(1, 1000),
    "device": device_option,
}

SEED = 0


def resolve(profile: str, overrides: dict | None = None) -> dict:
    return opt.resolve("gemm", PROFILES, OPTIONS, profile, overrides)


def preflight(options: dict) -> None:
    check_device_available(options["device"])


def grid(options: dict) -> list[dict]:
    return [{"arm": arm, "kernel": "gemm", "dtype": "float32", "n": n, "threads": t, "warmup": options["warmup"],
             "repeats": options["repeats"], "device": options["device"], "seed": SEED}
            for arm in options["arms"] for t in options["threads"] for n in options["sizes"]]


def describe(config: dict) -> str:
    return f"gemm {config['arm']:<6} n={config['n']:<5} threads={config['threads']} {config['device']}"


def run_trial(config: dict, report=None) -> dict:
    be = importlib.import_module(f"fwbench.vision.{config['arm']}")
    be.configure_threads(config["threads"])
    device, n = config["device"], config["n"]
    a = be.random_matrix(n, device, seed=config["seed"])
    b = be.random_matrix(n, device, seed=config["seed"] + 1)
    warm, timed = time_calls(lambda: be.matmul(a, b), lambda: be.synchronize(device),
                             config["warmup"], config["repeats"])
    flops = gemm_flops(n)
    gflops = [flops / t / 1e9 for t in timed]
    if report:
        report(f"{describe(config)}: median {statistics.median(gflops):.1f} GFLOP/s")
    return {
        "summary": {"median_gflops": statistics.median(gflops), "max_gflops": max(gflops),
                    "median_s": statistics.median(timed)},
        "measurements": ([(i, "warmup_s", v) for i, v in enumerate(warm)] + [(i, "seconds", v) for i, v in enumerate(timed)]
                         + [(i, "gflops", v) for i, v in enumerate(gflops)]),
        "provenance": be.framework_info(device),
    }
