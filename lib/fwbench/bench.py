"""Benchmarks of the harness itself (``fwbench bench`` / ``make bench``); results go to the results store as
study ``bench`` (one row per benchmark run, raw values kept) and are printed.

- ``harness``: the runner's measured epoch time vs a bare training loop over the same batches, each in a fresh
  process of the same kind (``python -m fwbench...``), interleaved, for the IMDB study's reference arms (one
  PyTorch, one MXNet). Goal: overhead <= 2 %.
- ``deepar``: the runner's ``train_time_s`` of one DeepAR fit vs calling the GluonTS estimator directly (same
  hyperparameters, no harness callback, no fwbench trial code around it), each in a fresh process, interleaved,
  for the DeepAR study's reference arms. Goal: overhead <= 2 %.
- ``data``: encoding the 50k IMDB reviews from the archive with a cold cache (goal <= 30 s) and loading the
  cached arrays (goal <= 1 s), each in a fresh process, timing the ``load_imdb`` call only.

The runner's side is the real thing: trials planned by ``fwbench.runner.plan`` (their ids carry the study's code
version) and run by ``fwbench.execute.execute``; the bare side loads the arm's backend through the registry.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from .analysis.stats import ratio_ci
from .execute import PlannedTrial, child_env, execute
from .measure import median
from .paths import results_path
from .provenance import host_info
from .runner import plan
from .store import ResultsStore, trial_id
from .studies import get_study

HARNESS_CONFIG = {"batch_size": 256, "num_workers": 0, "epochs": 4, "n_train": 512, "n_test": 64}
ROUNDS = 2


def _bare_loop(spec: dict) -> list[float]:
    """The minimal loop: same model, loader and optimizer, no harness around it. Runs in a child process."""
    from .data.imdb import Encoding, load_imdb
    from .studies.imdb import MODEL_VARIANT

    config = spec["config"]
    arm = get_study("imdb").arm_of(config)
    be = arm.load_backend()
    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    data = load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])
    m = config["model"]
    variant, sparse = MODEL_VARIANT[arm.variant]
    model = be.build_model(m["num_words"], m["embed_dim"], m["hidden_size"], m["num_classes"], sparse=sparse,
                           variant=variant, device=config.get("device", "cpu"))
    trainer = be.make_trainer(model, config["lr"])
    loader = be.make_loader(data.x_train, data.y_train, config["batch_size"], config["num_workers"], True,
                            config["seed"])
    times = []
    for _ in range(config["epochs"]):
        t0 = time.perf_counter()
        be.train_one_epoch(model, trainer, loader)
        be.synchronize()
        times.append(time.perf_counter() - t0)
    return times


DEEPAR_OVERRIDES = {"datasets": ["m1_yearly"], "epochs": 2, "num_batches_per_epoch": 25, "breakdown": False}


def _bare_deepar_fit(spec: dict) -> float:
    """One DeepAR fit through the estimator alone (runs in a child process): seconds of ``estimator.train``."""
    import tempfile as _tempfile

    from .data import monash
    from .studies.deepar import estimator_kwargs

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
    s = get_study(study)
    return [s.reference_arm("torch"), s.reference_arm("mxnet")]


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
            bare_times.append(_run_child("bare-deepar", {"config": config},
                                         child_env(config["threads"]))["seconds"])
        r = ratio_ci(runner_times, bare_times)
        rows.append({"arm": config["arm"], "runner_times": runner_times, "bare_times": bare_times,
                     "overhead_pct": 100 * (r["ratio"] - 1), "ci_low_pct": 100 * (r["ci_low"] - 1),
                     "ci_high_pct": 100 * (r["ci_high"] - 1), "config": config})
    return rows


def _run_child(mode: str, payload: dict, env: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="fwbench-bench-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(payload))
        out = subprocess.run([sys.executable, "-m", "fwbench.bench", mode, str(spec)], env=env, cwd=tmp,
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"bench child {mode} failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def harness_trial(arm: str) -> PlannedTrial:
    """The quick profile's trial of ``arm`` at ``HARNESS_CONFIG`` (first repeat block, main grid)."""
    trials = plan("imdb", "quick", {"arms": [arm], "extra_arms": [], "scaling": False, "repeats": 1,
                                    "batch_sizes": [HARNESS_CONFIG["batch_size"]],
                                    "workers": [HARNESS_CONFIG["num_workers"]], "epochs": HARNESS_CONFIG["epochs"],
                                    "n_train": HARNESS_CONFIG["n_train"], "n_test": HARNESS_CONFIG["n_test"]})
    return next(t for t in trials if t.config["arm"] == arm and t.config["part"] == "main")


def harness_overhead(arms=None) -> list[dict]:
    """``arms``: default the IMDB study's reference arms (PyTorch, MXNet)."""
    rows = []
    for arm in arms or _reference_arms("imdb"):
        trial = harness_trial(arm)
        config = trial.config
        runner_times, bare_times = [], []
        for _ in range(ROUNDS):
            outcome = execute(trial)
            if outcome["status"] != "done":
                raise RuntimeError(f"harness benchmark trial failed: {outcome['error']}")
            runner_times += [v for step, k, v in outcome["measurements"] if k == "train_time_s" and step > 0]
            bare = _run_child("bare", {"config": config}, child_env(config["threads"]))["times"]
            bare_times += bare[1:]
        r = ratio_ci(runner_times, bare_times)
        rows.append({"arm": arm, "runner_times": runner_times, "bare_times": bare_times,
                     "overhead_pct": 100 * (r["ratio"] - 1), "ci_low_pct": 100 * (r["ci_low"] - 1),
                     "ci_high_pct": 100 * (r["ci_high"] - 1), "config": config})
    return rows


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
    store.record(trial_id=trial_id("bench", {"name": name, "run": uuid.uuid4().hex}, _code_version()), study="bench",
                 status="done", config={"benchmark": name, **config}, provenance=host_info(),
                 summary={k: v for k, v in values.items() if not isinstance(v, list)}, measurements=measurements,
                 started_at=stamp, ended_at=stamp)


def _print_overhead(what: str, row: dict) -> None:
    print(f"harness overhead, {what}, {row['arm']}: {row['overhead_pct']:+.1f} % (95 % CI "
          f"{row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f} %; goal <= 2 %) over "
          f"{len(row['runner_times'])} vs {len(row['bare_times'])} measurements")


def main(what: str = "all") -> int:
    store = ResultsStore(results_path())
    if what in ("all", "data"):
        d = data_prep()
        _record(store, "data_prep", {}, {"cold_s": d["cold_s"], "cached_s": d["cached_s"]})
        print(f"data prep: encode 50k reviews cold {d['cold_s']:.1f} s (goal <= 30 s); cached load "
              f"median {median(d['cached_s']):.2f} s (goal <= 1 s)")
    if what in ("all", "harness"):
        for row in harness_overhead():
            _record(store, "harness_overhead", {"arm": row["arm"], **HARNESS_CONFIG},
                    {"runner_epoch_s": row["runner_times"], "bare_epoch_s": row["bare_times"],
                     "overhead_pct": row["overhead_pct"]})
            _print_overhead("IMDB epoch", row)
    if what in ("all", "deepar"):
        for row in deepar_overhead():
            _record(store, "deepar_overhead", {"arm": row["arm"], **DEEPAR_OVERRIDES},
                    {"runner_fit_s": row["runner_times"], "bare_fit_s": row["bare_times"],
                     "overhead_pct": row["overhead_pct"]})
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
