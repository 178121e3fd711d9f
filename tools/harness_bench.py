"""Benchmarks of the harness itself: its overhead against bare loops, and the data preparation (``make bench``).

    .venv/bin/python tools/harness_bench.py [all|harness|harness-paired|deepar|data]   # make bench [BENCH=...]
    .venv/bin/python tools/harness_bench.py --pages      # only re-render the block `bench` from the results store

A tool of the repository, not part of the package ``fwbench``: it measures the harness, not the frameworks. Results
go to the results store (``FWBENCH_RESULTS``) as study ``bench``, one row per benchmark run with its raw values,
and are printed; the block ``bench`` (docs/benchmarks.md) is rendered from the store's latest rows by ``--pages``
(``bench_lines``), which ``make readme`` runs.

- ``harness``: the runner's measured epoch time vs a bare training loop written from scratch in plain framework
  code (``bare_loop`` of each arm's sentiment backend, e.g. ``fwbench.sentiment.torch.bare_loop``: its own model
  definition, DataLoader, optimizer and loop, no fwbench function anywhere near the clock; only the IMDB arrays
  come from ``fwbench.data.imdb``, before anything is timed), for the IMDB study's reference arms, on epochs of
  ``HARNESS_CONFIG`` (>= 20 batches). Blocks of fresh processes (one per arm and side, in a seeded random order)
  go on until the CI half-width is under 2 % for every arm (at least ``HARNESS_MIN_BLOCKS``; at most
  ``HARNESS_MAX_BLOCKS``, or ``HARNESS_BUDGET_S``); each process is reduced to the median of its timed epochs
  (first excluded) and the ratio harness / bare is taken over processes with ``stats.trial_ratio_ci``.
  Goal: overhead <= 2 %, resolved by a CI half-width under 2 %.
- ``harness-paired`` (not in ``all``: up to 45 minutes of a quiet machine): the same overhead with both loops in
  each fresh process. On this VM two fresh processes running the same loop differ by 10-16 %, so ``harness``'s CI
  stays near +-10 % however the blocks fall. Here each process runs the bare loop and the IMDB study's own
  ``run_trial`` (what a trial process runs, with its epoch timing) on the same arrays, one after the other: what
  makes a process fast or slow (where its memory landed, how its threads were placed) is shared by both loops and
  cancels in the process's ratio (``process_ratio``). The CI is over independent processes, never over epochs. The
  loop that runs second is slower (measured on 2026-11-24: by about 2 % in PyTorch and 4 % in MXNet), so each arm
  alternates the order process by process and the estimate is stratified by order (``order_balanced_ci``), which
  the order effect cannot bias even when the two orders' counts differ (busy processes left out; the first run,
  which balanced orders over processes but not per arm, had 17 and 23). Blocks (one process per arm still running,
  arms in a seeded random order) go on until every arm's half-width is under 2 % (an arm stops once its own is,
  after ``PAIRED_MIN_BLOCKS``), or ``PAIRED_MAX_BLOCKS`` / ``PAIRED_BUDGET_S``: the 40 processes of the first run
  gave half-widths of 2.7 % (PyTorch) and 3.9 % (MXNet), i.e. about 70 and 120 processes for 2 %. A process whose
  machine was busy with other work (other processes above 25 % of the CPUs) is counted and left out.
- ``deepar``: the runner's ``train_time_s`` of one DeepAR fit vs calling the GluonTS estimator directly (same
  hyperparameters, no harness callback, no fwbench trial code around it), each in a fresh process, interleaved,
  for the DeepAR study's reference arms. Goal: overhead <= 2 %.
- ``data``: encoding the 50k IMDB reviews from the archive with a cold cache (goal <= 30 s) and loading the
  cached arrays (goal <= 1 s), each in a fresh process, timing the ``load_imdb`` call only.

The runner's side is the real thing: trials planned by ``fwbench.planning.plan`` (their ids carry the study's code
version) and run by ``fwbench.execute.execute``. The other side runs in a child process of this script
(``--child MODE SPEC``), one framework per process as everywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from fwbench.errors import FwbenchError
from fwbench.execute import PlannedTrial, child_env, execute
from fwbench.generated_blocks import write_block
from fwbench.measure import median
from fwbench.paths import REPO_ROOT, results_path
from fwbench.planning import plan
from fwbench.provenance import host_info
from fwbench.stats import half_width, t_quantile, trial_ratio_ci
from fwbench.store import ResultsStore, trial_id
from fwbench.studies import get_study

README = REPO_ROOT / "README.md"  # the front page: the block is looked for there and on the docs/ pages beside it

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
PAIRED_MIN_BLOCKS, PAIRED_MAX_BLOCKS, PAIRED_BUDGET_S = 6, 200, 2700.0
BUSY_FRAC = 0.25  # as provenance.busy_machine
DEEPAR_OVERRIDES = {"datasets": ["m1_yearly"], "epochs": 2, "num_batches_per_epoch": 25, "breakdown": False}
DEEPAR_ROUNDS = 2


# -- the child processes: the bare loops, and both loops in one process ------------------------------------------


def bare_loop(arm: str):
    """The bare loop of an IMDB arm's framework: ``bare_loop`` of the arm's backend. Call it in a child process
    (it imports the framework)."""
    return get_study("imdb").arm(arm).load_backend().bare_loop


def _imdb_arrays(config: dict):
    """The IMDB arrays of a trial's config, loaded before any framework import and before the clock."""
    from fwbench.data.imdb import Encoding, load_imdb

    return load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])


def bare_child(spec: dict) -> list[float]:
    """The framework's bare loop on the trial's arrays: its epoch times."""
    config = spec["config"]
    data = _imdb_arrays(config)
    return bare_loop(config["arm"])(config, data.x_train, data.y_train)


def paired_child(spec: dict) -> dict:
    """Both loops on the same arrays, in ``spec["order"]``, and how busy the machine was meanwhile."""
    from fwbench.provenance import MachineLoad

    config = spec["config"]
    data = _imdb_arrays(config)
    load = MachineLoad()
    out = {"order": spec["order"]}
    for side in spec["order"]:
        if side == "bare":
            out["bare"] = bare_loop(config["arm"])(config, data.x_train, data.y_train)
        else:
            result = get_study("imdb").run_trial(config)
            out["harness"] = [v for step, k, v in sorted(result["measurements"]) if k == "train_time_s" and step >= 0]
    out.update(load.stop())
    return out


def bare_deepar_child(spec: dict) -> float:
    """One DeepAR fit through the estimator alone: seconds of ``estimator.train``."""
    from fwbench.data import monash
    from fwbench.studies.deepar_trial import estimator_kwargs

    config = spec["config"]
    data = monash.load(config["dataset"])
    be = get_study("deepar").arm_of(config).load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    kwargs = estimator_kwargs(config, data)
    with tempfile.TemporaryDirectory() as root:
        estimator = be.make_estimator(root_dir=root, **kwargs)
        t0 = time.perf_counter()
        estimator.train(data.train)
        be.synchronize()
        return time.perf_counter() - t0


def load_child(spec: dict) -> dict:
    """Seconds of one ``load_imdb`` call (cold or cached, as the cache folder of the environment has it)."""
    from fwbench.data.imdb import load_imdb

    t0 = time.perf_counter()
    arrays = load_imdb()
    return {"seconds": time.perf_counter() - t0, "checksum": arrays.checksum}


CHILDREN = {
    "bare": lambda spec: {"times": bare_child(spec)},
    "paired": paired_child,
    "bare-deepar": lambda spec: {"seconds": bare_deepar_child(spec)},
    "load": load_child,
}


def _run_child(mode: str, payload: dict, env: dict) -> dict:
    """``mode`` of ``CHILDREN`` in a fresh process of this script: its JSON answer."""
    with tempfile.TemporaryDirectory(prefix="fwbench-bench-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(payload))
        out = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(spec)],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"bench child {mode} failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


# -- the overhead, harness and bare loop in separate processes -----------------------------------------------------


def _reference_arms(study: str) -> list[str]:
    """The arm standing for each framework in the study's comparison (its ``reference``), in declared order."""
    return list(get_study(study).reference.values())


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


# -- the overhead, both loops in each process ----------------------------------------------------------------------


def process_ratio(out: dict) -> float:
    """harness / bare of one process: the medians of its timed epochs (first excluded)."""
    return median(out["harness"][1:]) / median(out["bare"][1:])


def log_ratio_ci(ratios: list[float]) -> dict:
    """Geometric mean of the per-process ratios with a 95 % one-sample t-interval on their logs."""
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return {"ratio": math.exp(mean), "ci_low": math.nan, "ci_high": math.nan, "half_width": math.inf, "n": n}
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    h = t_quantile(n - 1) * sd / math.sqrt(n)
    return {
        "ratio": math.exp(mean),
        "ci_low": math.exp(mean - h),
        "ci_high": math.exp(mean + h),
        "half_width": math.expm1(h),
        "n": n,
    }


def order_effect_words(effect: float) -> str:
    """``0.017`` -> "1.7 % slower", ``-0.009`` -> "0.9 % faster" (of the loop that runs second)."""
    return f"{abs(100 * effect):.1f} % {'slower' if effect >= 0 else 'faster'}"


def order_balanced_ci(ratios: list[float], harness_first: list[bool]) -> dict:
    """The per-process ratios stratified by which loop ran first: the geometric mean of the two orders' geometric
    means, with a 95 % Welch t-interval (each order's log ratios a sample); ``order_effect``: how much slower the
    loop that runs second is (from the two orders' means). Falls back to ``log_ratio_ci`` over all processes
    when an order has fewer than 2 processes."""
    groups = [[math.log(r) for r, f in zip(ratios, harness_first) if f == first] for first in (False, True)]
    if min(len(g) for g in groups) < 2:
        return {**log_ratio_ci(ratios), "order_effect": math.nan, "stratified": False}
    means = [sum(g) / len(g) for g in groups]
    var_of_mean = [sum((x - m) ** 2 for x in g) / (len(g) - 1) / len(g) for g, m in zip(groups, means)]
    se = 0.5 * math.sqrt(sum(var_of_mean))
    df = sum(var_of_mean) ** 2 / sum(v**2 / (len(g) - 1) for v, g in zip(var_of_mean, groups))
    mean, h = sum(means) / 2, t_quantile(df) * se
    return {
        "ratio": math.exp(mean),
        "ci_low": math.exp(mean - h),
        "ci_high": math.exp(mean + h),
        "half_width": math.expm1(h),
        "n": len(ratios),
        "order_effect": math.expm1((means[0] - means[1]) / 2),
        "stratified": True,
    }


def harness_overhead_paired(
    arms=None,
    min_blocks: int = PAIRED_MIN_BLOCKS,
    max_blocks: int = PAIRED_MAX_BLOCKS,
    budget_s: float = PAIRED_BUDGET_S,
    seed: int = 0,
    log=print,
) -> list[dict]:
    """One row per arm: per-process ratios, the overhead and its CI (percent), the processes left out as busy."""
    trials = {arm: harness_trial(arm) for arm in arms or _reference_arms("imdb")}
    raw: dict[str, list] = {arm: [] for arm in trials}
    rng, t0, rows, active = random.Random(seed), time.perf_counter(), [], sorted(trials)
    for block in range(max_blocks):
        order = list(active)
        rng.shuffle(order)
        for arm in order:
            config = trials[arm].config
            first = ("bare", "harness") if len(raw[arm]) % 2 == 0 else ("harness", "bare")  # alternates per arm
            raw[arm].append(_run_child("paired", {"config": config, "order": first}, child_env(config["threads"])))
        rows = [_paired_row(arm, trials[arm].config, raw[arm]) for arm in trials]
        log(
            f"[paired block {block + 1}] "
            + "; ".join(
                f"{r['arm']} {r['overhead_pct']:+.1f} % +-{r['half_width_pct']:.1f} % ({r['n']} processes)"
                for r in rows
            )
        )
        # an arm whose CI is resolved (after min_blocks) gets no more processes; the others go on
        active = [
            r["arm"] for r in rows if not (block + 1 >= min_blocks and r["half_width_pct"] < 100 * HARNESS_TARGET)
        ]
        spent = time.perf_counter() - t0
        if not active or (block + 1 >= 2 and spent * (block + 2) / (block + 1) > budget_s):
            break
    return rows


def _paired_row(arm: str, config: dict, outs: list[dict]) -> dict:
    clean = [o for o in outs if not o.get("other_busy_frac", 0.0) > BUSY_FRAC]
    ratios = [process_ratio(o) for o in clean]
    harness_first = [o["order"][0] == "harness" for o in clean]
    ci = (
        order_balanced_ci(ratios, harness_first)
        if ratios
        else {
            "ratio": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "half_width": math.inf,
            "n": 0,
            "order_effect": math.nan,
        }
    )
    return {
        "arm": arm,
        "ratios": ratios,
        "harness_first": harness_first,
        "n": ci["n"],
        "order_effect_pct": 100 * ci["order_effect"],
        "busy_left_out": len(outs) - len(clean),
        "overhead_pct": 100 * (ci["ratio"] - 1),
        "ci_low_pct": 100 * (ci["ci_low"] - 1),
        "ci_high_pct": 100 * (ci["ci_high"] - 1),
        "half_width_pct": 100 * ci["half_width"],
        "config": config,
        "harness_raw": [o["harness"] for o in clean],
        "bare_raw": [o["bare"] for o in clean],
    }


# -- the DeepAR fit, and the data preparation ----------------------------------------------------------------------


def deepar_overhead(arms=None) -> list[dict]:
    """``arms``: default the DeepAR study's reference arms (PyTorch, MXNet)."""
    rows = []
    for trial in plan("deepar", "smoke", {**DEEPAR_OVERRIDES, "arms": list(arms or _reference_arms("deepar"))}):
        config = trial.config
        runner_times, bare_times = [], []
        for _ in range(DEEPAR_ROUNDS + 1):
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


def data_prep() -> dict:
    with tempfile.TemporaryDirectory(prefix="fwbench-cold-cache-") as cache:
        env = dict(os.environ, FWBENCH_CACHE_DIR=cache)
        cold = _run_child("load", {}, env)
        warm = [_run_child("load", {}, env)["seconds"] for _ in range(3)]
    return {"cold_s": cold["seconds"], "cached_s": warm, "checksum": cold["checksum"]}


# -- the results store -----------------------------------------------------------------------------------------------


def _code_version() -> str:
    """Fingerprint of this script (the bench rows' trial ids carry it, as a study's trials carry its code's)."""
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


def measure(what: str = "all") -> int:
    """Run the benchmark(s) ``what`` names, record each row in the results store, print it."""
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
    if what == "harness-paired":
        for row in harness_overhead_paired():
            _record(
                store,
                "harness_overhead_paired",
                {
                    "arm": row["arm"],
                    "processes": row["n"],
                    "target_half_width_pct": 100 * HARNESS_TARGET,
                    **HARNESS_CONFIG,
                },
                {
                    "process_ratio": row["ratios"],
                    "harness_first": [float(f) for f in row["harness_first"]],
                    "overhead_pct": row["overhead_pct"],
                    "order_effect_pct": row["order_effect_pct"],
                    "ci_low_pct": row["ci_low_pct"],
                    "ci_high_pct": row["ci_high_pct"],
                    "half_width_pct": row["half_width_pct"],
                    "busy_left_out": row["busy_left_out"],
                },
            )
            print(
                f"harness overhead, IMDB epoch, both loops in each process, {row['arm']}: "
                f"{row['overhead_pct']:+.1f} % (95 % CI {row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f} %; "
                f"goal <= 2 %) over {row['n']} processes ({row['busy_left_out']} busy, left out); the loop run "
                f"second is {order_effect_words(row['order_effect_pct'] / 100)}"
            )
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
    print("the block `bench` (docs/benchmarks.md) renders the latest rows: make readme, or this tool with --pages")
    return 0


# -- the pages: the latest benchmark rows of the store -------------------------------------------------------------


def bench_lines(store: ResultsStore) -> list[str]:
    """Every stored run of each benchmark (and arm) in ``store``, oldest first, one Markdown list item each, led by
    when it ran and at which commit: a run that disagrees with a later one stays on the page beside it."""
    trials = store.trials("bench")
    if trials.empty:
        return ["- no benchmark rows yet (`make bench`)"]
    keys = ["config.benchmark"] + (["config.arm"] if "config.arm" in trials else [])
    runs = trials.sort_values(keys + ["started_at"], kind="stable")
    m = store.measurements("bench")
    lines = []
    for _, row in runs.iterrows():
        sha = row.get("provenance.git_sha")
        when = f"{str(row.started_at)[:16].replace('T', ' ')}, commit {sha[:7] if isinstance(sha, str) else '?'}"
        values = m[m.trial_id == row.trial_id]

        def metric(name, values=values):
            return values[values.metric == name].value

        if row["config.benchmark"] == "data_prep":
            lines.append(
                f"- {when}: IMDB preparation: encoding all 50k reviews from the archive took "
                f"{metric('cold_s').median():.1f} s cold (goal <= 30 s); the cached load "
                f"{metric('cached_s').median():.2f} s (median of {len(metric('cached_s'))}; goal <= 1 s)"
            )
        elif row["config.benchmark"] in ("harness_overhead", "deepar_overhead"):
            imdb = row["config.benchmark"] == "harness_overhead"
            runner, bare = ("runner_epoch_s", "bare_epoch_s") if imdb else ("runner_fit_s", "bare_fit_s")
            r = trial_ratio_ci(metric(runner), metric(bare))  # one value per process
            what = (
                "IMDB epoch time vs a bare training loop"
                if imdb
                else "one DeepAR fit vs calling the GluonTS estimator directly"
            )
            lines.append(
                f"- {when}: harness overhead, {row['config.arm']}, {what}: "
                f"{100 * (r['ratio'] - 1):+.1f} % (95 % CI {100 * (r['ci_low'] - 1):+.1f} to "
                f"{100 * (r['ci_high'] - 1):+.1f} %; goal <= 2 %), {r['n_num']} vs {r['n_den']} "
                + ("fresh processes" if imdb else "fits")
            )
        elif row["config.benchmark"] == "harness_overhead_paired":
            ratios, first = list(metric("process_ratio")), [bool(f) for f in metric("harness_first")]
            r = order_balanced_ci(ratios, first) if len(first) == len(ratios) else log_ratio_ci(ratios)
            lines.append(
                f"- {when}: harness overhead, {row['config.arm']}, IMDB epoch time vs a bare training loop, both "
                f"in each fresh process: {100 * (r['ratio'] - 1):+.1f} % (95 % CI "
                f"{100 * (r['ci_low'] - 1):+.1f} to {100 * (r['ci_high'] - 1):+.1f} %; goal <= 2 %), "
                f"{r['n']} processes"
                + (
                    f", stratified by loop order (the loop run second is {order_effect_words(r['order_effect'])})"
                    if r.get("stratified")
                    else ""
                )
            )
    return lines


def render_bench(store: ResultsStore | None = None) -> str:
    """The latest harness benchmarks of the store (study ``bench``), one line each."""
    return "\n".join(bench_lines(store or ResultsStore.open_read(results_path())))


# the generated blocks this tool writes (``make readme`` leaves them to ``--pages``): name -> render(store)
BLOCKS = {"bench": render_bench}  # docs/benchmarks.md: the harness's overhead and the data preparation


def write_pages(store: ResultsStore | None = None, readme: Path | None = None) -> list[Path]:
    """Render ``BLOCKS`` from ``store`` (default: the results store, read-only) onto the page beside ``readme``
    (default ``README``) that holds each; returns the pages written."""
    store = store or ResultsStore.open_read(results_path())
    pages = []
    for name, render in BLOCKS.items():
        pages.append(write_block(name, render(store), Path(readme or README)))
        print(f"harness-bench: refreshed the {name} block in {pages[-1]}")
    return pages


# -- the command ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/harness_bench.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "what",
        nargs="?",
        default="all",
        choices=["all", "harness", "harness-paired", "deepar", "data"],
        help="the benchmark(s) to run (default all: every one but harness-paired)",
    )
    parser.add_argument(
        "--pages",
        action="store_true",
        help="measure nothing: only re-render the block from the results store (make readme)",
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "SPEC"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # a child process of a measurement: one JSON line on stdout
        mode, spec = args.child
        print(json.dumps(CHILDREN[mode](json.loads(Path(spec).read_text()))))
        return 0
    if args.pages and args.what != "all":
        parser.error("--pages renders the stored rows; it runs no benchmark")
    try:
        if args.pages:
            write_pages()
            return 0
        return measure(args.what)
    except FwbenchError as exc:
        print(f"harness_bench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
