"""Benchmarks of the harness itself (``fwbench bench`` / ``make bench``); results go to the results store as
study ``bench`` (one row per benchmark run, raw values kept) and are printed.

- ``harness``: the runner's measured epoch time vs a bare training loop written from scratch in plain framework
  code (``bare_loop`` of each arm's sentiment backend, e.g. ``fwbench.sentiment.torch.bare_loop``: its own model
  definition, DataLoader, optimizer and loop, no fwbench function anywhere near the clock; only the IMDB arrays
  come from ``fwbench.data.imdb``, before anything is timed), for the IMDB study's reference arms, on epochs of
  ``HARNESS_CONFIG`` (>= 20 batches). Blocks of fresh processes (one per arm and side, in a seeded random order)
  go on until the CI half-width is under 2 % for every arm (at least ``HARNESS_MIN_BLOCKS``; at most
  ``HARNESS_MAX_BLOCKS``, or ``HARNESS_BUDGET_S``); each process is reduced to the median of its timed epochs
  (first excluded) and the ratio harness / bare is taken over processes with ``stats.trial_ratio_ci``.
  Goal: overhead <= 2 %, resolved by a CI half-width under 2 %.
- ``deepar``: the runner's ``train_time_s`` of one DeepAR fit vs calling the GluonTS estimator directly (same
  hyperparameters, no harness callback, no fwbench trial code around it), each in a fresh process, interleaved,
  for the DeepAR study's reference arms. Goal: overhead <= 2 %.
- ``data``: encoding the 50k IMDB reviews from the archive with a cold cache (goal <= 30 s) and loading the
  cached arrays (goal <= 1 s), each in a fresh process, timing the ``load_imdb`` call only.

The runner's side is the real thing: trials planned by ``fwbench.planning.plan`` (their ids carry the study's code
version) and run by ``fwbench.execute.execute``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from .execute import PlannedTrial, child_env, execute
from .measure import median
from .paths import results_path
from .planning import plan
from .provenance import host_info
from .stats import half_width, trial_ratio_ci
from .store import ResultsStore, trial_id
from .studies import get_study

# 20 batches of 32 reviews of 50 tokens per epoch (the study's architecture and 2 threads; a shorter sequence, so
# that an epoch takes ~0.4-0.8 s on the idle 2-core box and a process ~10 s); 8 epochs, the first excluded, so that
# the median of a process's 7 timed epochs rides out a few disturbed ones.
HARNESS_CONFIG = {
    "batch_size": 32,
    "seq_len": 50,
    "num_workers": 0,
    "epochs": 8,
    "n_train": 640,
    "n_test": 32,
    "threads": 2,
}
# blocks until resolved (at least 4), or until ~10 minutes are spent (at least 2 blocks: a CI needs 2 per side)
HARNESS_MIN_BLOCKS, HARNESS_MAX_BLOCKS, HARNESS_BUDGET_S = 4, 30, 540.0
HARNESS_TARGET = 0.02  # the CI half-width (on the ratio) that resolves a 2 % overhead
ROUNDS = 2


def bare_loop(arm: str):
    """The bare loop of an IMDB arm's framework: ``bare_loop`` of the arm's backend. Call it in a child process
    (it imports the framework)."""
    return get_study("imdb").arm(arm).load_backend().bare_loop


def _bare_loop(spec: dict) -> list[float]:
    """Runs in a child process: the IMDB arrays of the trial's config (loaded before any framework import and
    before the clock), then the framework's bare loop."""
    from .data.imdb import Encoding, load_imdb

    config = spec["config"]
    data = load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])
    return bare_loop(config["arm"])(config, data.x_train, data.y_train)


DEEPAR_OVERRIDES = {"datasets": ["m1_yearly"], "epochs": 2, "num_batches_per_epoch": 25, "breakdown": False}


def _bare_deepar_fit(spec: dict) -> float:
    """One DeepAR fit through the estimator alone (runs in a child process): seconds of ``estimator.train``."""
    import tempfile as _tempfile

    from .data import monash
    from .studies.deepar_trial import estimator_kwargs

    config = spec["config"]
    data = monash.load(config["dataset"])
    be = get_study("deepar").arm_of(config).load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    kwargs = estimator_kwargs(config, data)
    with _tempfile.TemporaryDirectory() as root:
        estimator = be.make_estimator(root_dir=root, **kwargs)
        t0 = time.perf_counter()
        estimator.train(data.train)
        be.synchronize()
        return time.perf_counter() - t0


def _reference_arms(study: str) -> list[str]:
    """The arm standing for each framework in the study's comparison (its ``reference``), in declared order."""
    return list(get_study(study).reference.values())


def deepar_overhead(arms=None) -> list[dict]:
    """``arms``: default the DeepAR study's reference arms (PyTorch, MXNet)."""
    rows = []
    for trial in plan("deepar", "smoke", {**DEEPAR_OVERRIDES, "arms": list(arms or _reference_arms("deepar"))}):
        config = trial.config
        runner_times, bare_times = [], []
        for _ in range(ROUNDS + 1):
            outcome = execute(trial)
            if outcome["status"] != "done":
                raise RuntimeError(f"DeepAR benchmark trial failed: {outcome['error']}")
            runner_times += [v for step, k, v in outcome["measurements"] if k == "train_time_s" and step == -1]
            bare_times.append(_run_child("bare-deepar", {"config": config}, child_env(config["threads"]))["seconds"])
        r = trial_ratio_ci(runner_times, bare_times)  # one value per process
        rows.append(
            {
                "arm": config["arm"],
                "runner_times": runner_times,
                "bare_times": bare_times,
                "overhead_pct": 100 * (r["ratio"] - 1),
                "ci_low_pct": 100 * (r["ci_low"] - 1),
                "ci_high_pct": 100 * (r["ci_high"] - 1),
                "config": config,
            }
        )
    return rows


def _run_child(mode: str, payload: dict, env: dict, module: str = "fwbench.bench") -> dict:
    with tempfile.TemporaryDirectory(prefix="fwbench-bench-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(payload))
        out = subprocess.run(
            [sys.executable, "-m", module, mode, str(spec)],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"bench child {mode} failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def harness_trial(arm: str) -> PlannedTrial:
    """The quick profile's trial of ``arm`` at ``HARNESS_CONFIG`` (first repeat block, main grid)."""
    c = HARNESS_CONFIG
    trials = plan(
        "imdb",
        "quick",
        {
            "arms": [arm],
            "extra_arms": [],
            "scaling": False,
            "onednn_part": False,
            "repeats": 1,
            "batch_sizes": [c["batch_size"]],
            "seq_len": [c["seq_len"]],
            "workers": [c["num_workers"]],
            "epochs": c["epochs"],
            "n_train": c["n_train"],
            "n_test": c["n_test"],
            "threads": [c["threads"]],
        },
    )
    return next(t for t in trials if t.config["arm"] == arm and t.config["part"] == "main")


def _median_timed(times: list[float]) -> float:
    return median(times[1:])


def harness_overhead(
    arms=None,
    min_blocks: int = HARNESS_MIN_BLOCKS,
    max_blocks: int = HARNESS_MAX_BLOCKS,
    budget_s: float = HARNESS_BUDGET_S,
    seed: int = 0,
    log=print,
) -> list[dict]:
    """``arms``: default the IMDB study's reference arms (PyTorch, MXNet). Each block runs one fresh process per arm
    and side (harness, bare) in a seeded random order; blocks go on until every arm's CI half-width is under
    ``HARNESS_TARGET`` (after ``min_blocks``), or ``max_blocks`` are run, or ``budget_s`` seconds are spent (after
    2 blocks; the rows then show an unresolved, wide CI)."""
    trials = {arm: harness_trial(arm) for arm in arms or _reference_arms("imdb")}
    raw = {(arm, side): [] for arm in trials for side in ("harness", "bare")}
    rng, t0, rows = random.Random(seed), time.perf_counter(), []
    for block in range(max_blocks):
        order = sorted(raw)
        rng.shuffle(order)
        for arm, side in order:
            config = trials[arm].config
            if side == "harness":
                outcome = execute(trials[arm])
                if outcome["status"] != "done":
                    raise RuntimeError(f"harness benchmark trial failed: {outcome['error']}")
                times = [v for step, k, v in sorted(outcome["measurements"]) if k == "train_time_s" and step >= 0]
            else:
                times = _run_child("bare", {"config": config}, child_env(config["threads"]))["times"]
            raw[arm, side].append(times)
        rows = [_overhead_row(arm, t.config, raw[arm, "harness"], raw[arm, "bare"]) for arm, t in trials.items()]
        log(
            f"[bench block {block + 1}] "
            + "; ".join(f"{r['arm']} {r['overhead_pct']:+.1f} % +-{r['half_width_pct']:.1f} %" for r in rows)
        )
        resolved, spent = all(r["half_width_pct"] < 100 * HARNESS_TARGET for r in rows), time.perf_counter() - t0
        if (block + 1 >= min_blocks and resolved) or (block + 1 >= 2 and spent * (block + 2) / (block + 1) > budget_s):
            break  # resolved, or one more block (at the mean block time so far) would overrun the budget
    return rows


def _overhead_row(arm: str, config: dict, runner_raw: list, bare_raw: list) -> dict:
    """Each process reduced to the median of its timed epochs; harness / bare over processes with its CI."""
    runner, bare = [_median_timed(t) for t in runner_raw], [_median_timed(t) for t in bare_raw]
    r = trial_ratio_ci(runner, bare)
    width = 100 * half_width(r["ci_low"], r["ci_high"])
    return {
        "arm": arm,
        "runner_times": runner,
        "bare_times": bare,
        "runner_raw": runner_raw,
        "bare_raw": bare_raw,
        "overhead_pct": 100 * (r["ratio"] - 1),
        "ci_low_pct": 100 * (r["ci_low"] - 1),
        "ci_high_pct": 100 * (r["ci_high"] - 1),
        "half_width_pct": width if width == width else float("inf"),
        "method": r["method"],
        "config": config,
    }


def data_prep() -> dict:
    with tempfile.TemporaryDirectory(prefix="fwbench-cold-cache-") as cache:
        env = dict(os.environ, FWBENCH_CACHE_DIR=cache)
        cold = _run_child("load", {}, env)
        warm = [_run_child("load", {}, env)["seconds"] for _ in range(3)]
    return {"cold_s": cold["seconds"], "cached_s": warm, "checksum": cold["checksum"]}


def _code_version() -> str:
    """Fingerprint of this module (the bench rows' trial ids carry it, as a study's trials carry its code's)."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def _record(store: ResultsStore, name: str, config: dict, values: dict[str, list[float] | float]) -> None:
    measurements = []
    for metric, v in values.items():
        for i, x in enumerate(v if isinstance(v, list) else [v]):
            measurements.append((i, metric, x))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    store.record(
        trial_id=trial_id("bench", {"name": name, "run": uuid.uuid4().hex}, _code_version()),
        study="bench",
        status="done",
        config={"benchmark": name, **config},
        provenance=host_info(),
        summary={k: v for k, v in values.items() if not isinstance(v, list)},
        measurements=measurements,
        started_at=stamp,
        ended_at=stamp,
    )


def _print_overhead(what: str, row: dict) -> None:
    resolved = f"; CI half-width {row['half_width_pct']:.1f} %" if "half_width_pct" in row else ""
    print(
        f"harness overhead, {what}, {row['arm']}: {row['overhead_pct']:+.1f} % (95 % CI "
        f"{row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f} %{resolved}; goal <= 2 %) over "
        f"{len(row['runner_times'])} vs {len(row['bare_times'])} measurements"
    )


def main(what: str = "all") -> int:
    store = ResultsStore(results_path())
    if what in ("all", "data"):
        d = data_prep()
        _record(store, "data_prep", {}, {"cold_s": d["cold_s"], "cached_s": d["cached_s"]})
        print(
            f"data prep: encode 50k reviews cold {d['cold_s']:.1f} s (goal <= 30 s); cached load "
            f"median {median(d['cached_s']):.2f} s (goal <= 1 s)"
        )
    if what in ("all", "harness"):
        load = os.getloadavg()[0]
        for row in harness_overhead():
            flat = {
                f"{side}_epochs_s": [t for times in row[f"{side}_raw"] for t in times] for side in ("runner", "bare")
            }
            _record(
                store,
                "harness_overhead",
                {
                    "arm": row["arm"],
                    "blocks": len(row["runner_times"]),
                    "target_half_width_pct": 100 * HARNESS_TARGET,
                    "trial_config": row["config"],
                    **HARNESS_CONFIG,
                },
                {
                    "runner_epoch_s": row["runner_times"],
                    "bare_epoch_s": row["bare_times"],
                    **flat,
                    "overhead_pct": row["overhead_pct"],
                    "ci_low_pct": row["ci_low_pct"],
                    "ci_high_pct": row["ci_high_pct"],
                    "half_width_pct": row["half_width_pct"],
                    "loadavg_1m_start": load,
                    "loadavg_1m_end": os.getloadavg()[0],
                },
            )
            _print_overhead("IMDB epoch", row)
    if what in ("all", "deepar"):
        for row in deepar_overhead():
            _record(
                store,
                "deepar_overhead",
                {"arm": row["arm"], **DEEPAR_OVERRIDES},
                {
                    "runner_fit_s": row["runner_times"],
                    "bare_fit_s": row["bare_times"],
                    "overhead_pct": row["overhead_pct"],
                },
            )
            _print_overhead("DeepAR fit", row)
    return 0


if __name__ == "__main__":
    mode, spec_path = sys.argv[1], sys.argv[2]
    spec = json.loads(Path(spec_path).read_text())
    if mode == "bare":
        print(json.dumps({"times": _bare_loop(spec)}))
    elif mode == "bare-deepar":
        print(json.dumps({"seconds": _bare_deepar_fit(spec)}))
    elif mode == "load":
        from .data.imdb import load_imdb

        t0 = time.perf_counter()
        arrays = load_imdb()
        print(json.dumps({"seconds": time.perf_counter() - t0, "checksum": arrays.checksum}))
