"""Harness self-test, NOT part of the study: tiny framework-free trials that exercise the runner. A plugin study
(``FWBENCH_STUDIES=selftest_study``, set by ``tests/conftest.py``), so the package holds only the study itself.

Each trial sleeps briefly and writes deterministic measurements (so a test can check a stored row is intact),
or misbehaves on purpose, selected by its config's ``mode``:

- ``ok``: sleep ``sleep_s``, then report ``epochs`` deterministic values per epoch;
- ``raise``: raise an exception (a Python error in the trial);
- ``abort``: ``os.abort()`` (a crash by signal, like a segfault in a framework);
- ``exit``: exit with status 3 without writing a result;
- ``oom``: allocate far more memory than a ``--memory-limit-mb`` cap allows (a MemoryError under the cap);
- ``flaky``: fails while the environment variable ``FWBENCH_SELFTEST_FAIL=1`` is set, succeeds otherwise
  (a transient failure, for the "a rerun retries failed trials" test).

Used by tests (crash isolation, kill-and-resume, the Dask cluster) because each trial takes ~0.1-0.3 s.
"""

from __future__ import annotations

import os
import sys
import time

from fwbench.errors import FwbenchError
from fwbench.studies import options as opt
from fwbench.studies.registry import Arm, Study, register

MODES = ("ok", "raise", "abort", "exit", "oom", "flaky")

PROFILES = {
    "smoke": {"n_trials": 6, "modes": ["ok"], "sleep_s": 0.05, "epochs": 3, "alloc_mb": 0, "slots": 1},
    "faults": {"n_trials": 6, "modes": list(MODES), "sleep_s": 0.05, "epochs": 3, "alloc_mb": 4096, "slots": 1},
    "quick": {"n_trials": 40, "modes": ["ok"], "sleep_s": 0.1, "epochs": 3, "alloc_mb": 0, "slots": 1},
    "full": {"n_trials": 200, "modes": ["ok"], "sleep_s": 0.2, "epochs": 5, "alloc_mb": 0, "slots": 1},
}


def _nonnegative(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise FwbenchError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


OPTIONS = {
    "n_trials": opt.int_range(1, 100_000),
    "modes": opt.list_of(opt.string, MODES),
    "sleep_s": _nonnegative,
    "epochs": opt.int_range(1, 1000),
    "alloc_mb": opt.int_range(0, 1 << 20),
    # executor slots each trial occupies (as a data-parallel trial's world size): tests the Dask reservation
    "slots": opt.int_range(1, 1024),
}


def grid(options: dict) -> list[dict]:
    """Trial i gets mode ``modes[i % len(modes)]``."""
    modes = options["modes"]
    return [
        {
            "index": i,
            "mode": modes[i % len(modes)],
            "sleep_s": options["sleep_s"],
            "epochs": options["epochs"],
            "alloc_mb": options["alloc_mb"],
            "threads": 1,
            **({"slots": options["slots"]} if options["slots"] > 1 else {}),  # ids of 1-slot trials unchanged
        }
        for i in range(options["n_trials"])
    ]


def describe(config: dict) -> str:
    return f"selftest #{config['index']} {config['mode']}"


def expected_value(index: int, epoch: int, metric: str) -> float:
    """The deterministic value a trial ``ok`` stores, for intactness checks."""
    base = {"train_loss": 1.0, "test_acc": 0.5, "train_time_s": 0.01}[metric]
    return base + index * 1e-3 + epoch * 1e-6


METRICS = ("train_loss", "test_acc", "train_time_s")


def run_trial(config: dict, report=None) -> dict:
    mode = config["mode"]
    t_start = time.time()
    time.sleep(config["sleep_s"])
    if mode == "raise":
        raise RuntimeError(f"selftest trial {config['index']} raised on purpose")
    if mode == "abort":
        print("selftest: aborting on purpose", file=sys.stderr, flush=True)
        os.abort()
    if mode == "exit":
        print("selftest: exiting with status 3 on purpose", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(3)
    if mode == "oom":
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:  # never really eat the host's memory: only under a cap
            raise RuntimeError("selftest oom mode refuses to run without --memory-limit-mb")
        block = bytearray(config["alloc_mb"] << 20)  # MemoryError under an address-space cap
        block[::4096] = b"x" * len(block[::4096])
    if mode == "flaky" and os.environ.get("FWBENCH_SELFTEST_FAIL") == "1":
        raise RuntimeError("selftest flaky trial failing because FWBENCH_SELFTEST_FAIL=1")
    measurements = [
        (epoch, metric, expected_value(config["index"], epoch, metric))
        for epoch in range(config["epochs"])
        for metric in METRICS
    ]
    if report:
        report(f"selftest #{config['index']} done")
    return {
        "summary": {"final_train_loss": measurements[-3][2]},
        "measurements": measurements,
        "provenance": {"selftest": True, "t_start": t_start, "t_end": time.time()},
    }


def preflight(options: dict) -> None:
    """Nothing to check: the self-test needs no data."""


# One framework-free arm per mode: the runner and the store treat them like any study's arms.
ARM_TABLE = tuple(Arm(mode, "none", None, mode, f"self-test ({mode})", "#7f7f7f") for mode in MODES)

STUDY = register(
    Study(
        name="selftest",
        title="Harness self-test (not part of the study)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        preflight=preflight,
        arms=ARM_TABLE,
        arm_field="mode",
        hidden=True,
        slots=lambda config: config.get("slots", 1),
    )
)
