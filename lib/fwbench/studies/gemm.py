"""This machine's fp32 GEMM throughput through each framework's matmul: the denominators of "achieved fraction
of peak" (``fwbench.analysis.inference.gemm_peak``).

One trial = one framework x matrix size n x thread count in a fresh process: two random n x n float32
matrices, ``warmup`` products (stored, excluded), then ``repeats`` timed products (``torch.matmul`` /
``mx.nd.dot``; MXNet synchronized with ``mx.nd.waitall`` before each clock read). GFLOP/s = 2 n^3 / seconds.
"""

from __future__ import annotations

from ..devices import check_device_available, device_option
from . import options as opt
from .gemm_trial import describe, run_trial
from .registry import Arm, Study, register

ARM_TABLE = (
    Arm("torch-eager", "torch", "fwbench.vision.torch", "eager", "PyTorch (torch.matmul)", "#1f77b4"),
    Arm("mxnet-imperative", "mxnet", "fwbench.vision.mxnet", "imperative", "MXNet (mx.nd.dot)", "#d62728"),
    # beyond the sources: JAX in its own environment (numpy 2)
    Arm("jax-jit", "jax", "fwbench.vision.jax", "jit", "JAX (jitted jnp.matmul)", "#e377c2", env="jax"),
)
ARMS = tuple(a.name for a in ARM_TABLE)

_PAPER = {"arms": list(ARMS), "sizes": [1024, 2048], "threads": [1, 2], "warmup": 2, "repeats": 5, "device": "cpu"}
PROFILES = {
    "smoke": {**_PAPER, "sizes": [256], "threads": [1], "warmup": 1, "repeats": 3},
    # one size (the larger: nearer the peak) for the default run's budget
    "quick": {**_PAPER, "sizes": [2048]},
    # the paper profile: context for the other studies (no claim of the posts rests on it), two sizes
    "paper": _PAPER,
    "full": {**_PAPER, "sizes": [512, 1024, 2048, 4096], "warmup": 3, "repeats": 20},
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


def grid(options: dict) -> list[dict]:
    return [
        {
            "arm": arm,
            "kernel": "gemm",
            "dtype": "float32",
            "n": n,
            "threads": t,
            "warmup": options["warmup"],
            "repeats": options["repeats"],
            "device": options["device"],
            "seed": SEED,
        }
        for arm in options["arms"]
        for t in options["threads"]
        for n in options["sizes"]
    ]


STUDY = register(
    Study(
        name="gemm",
        title="fp32 GEMM throughput (the peak behind 'fraction of peak')",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        preflight=lambda options: check_device_available(options["device"]),
        arms=ARM_TABLE,
        reference={"torch": "torch-eager", "mxnet": "mxnet-imperative"},
        code=("fwbench.vision", "fwbench.measure"),
        figure_prefix="gemm_",
    )
)
