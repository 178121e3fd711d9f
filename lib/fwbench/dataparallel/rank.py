"""One process of a data-parallel group: ``python -m fwbench.dataparallel.rank SPEC.json RESULT.json``.

A worker joins the group, times the synchronisation sweep, then trains: every step on its share of the global
batch, timed the same way for every framework (``perf_counter`` around the backend's ``train_step``, which returns
only once the step is complete), and after every step the checksum of its replica's weights, so the trial can check
the replicas stayed equal. A helper role (MXNet's scheduler or server) only imports the backend: importing MXNet with
``DMLC_ROLE`` set runs that role and exits. Exactly one framework is imported here; the result is written atomically.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

import psutil

from ..provenance import imported_frameworks
from . import initial_weights, rank_batch


def run_worker(spec: dict) -> dict:
    be = importlib.import_module(spec["backend"])
    be.configure_threads(spec["threads"])
    group = be.join(spec["rank"], spec["world"], spec["address"], spec["port"], spec["timeout_s"])
    rank, world, per_rank = be.rank_of(group), spec["world"], spec["per_rank_batch"]
    sync = {str(n): be.sync_seconds(group, n, spec["sync_warmup"], spec["sync_repeats"]) for n in spec["sync_sizes"]}
    model = be.build(spec["hidden"], initial_weights(spec["hidden"], spec["seed"]))
    trainer = be.trainer(group, model, spec["lr"], per_rank * world, spec["variant"])
    be.barrier(group)
    me = psutil.Process()
    step_s, losses, checksums, cpu0, t0 = [], [], [], None, None
    for step in range(spec["warmup_steps"] + spec["steps"]):
        if step == spec["warmup_steps"]:  # the timed steps: the CPU they kept busy says whether threads held
            cpu0, t0 = sum(me.cpu_times()[:2]), time.perf_counter()
        images, labels = rank_batch(spec["seed"], step, per_rank, rank, world)
        start = time.perf_counter()
        losses.append(be.train_step(trainer, images, labels))
        step_s.append(time.perf_counter() - start)
        checksums.append(be.checksum(trainer))
    cpus_busy = (sum(me.cpu_times()[:2]) - cpu0) / (time.perf_counter() - t0)
    be.leave(group)
    frameworks = imported_frameworks()
    if len(frameworks) != 1:
        raise RuntimeError(f"isolation broken: a rank imported {frameworks}")
    return {
        "rank": rank,
        "launch_rank": spec["rank"],
        "step_s": step_s,
        "losses": losses,
        "checksums": checksums,
        "sync_s": sync,
        "cpus_busy": cpus_busy,
        "frameworks_imported": frameworks,
        "framework": be.framework_info(),
    }


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    if spec["role"] != "worker":
        importlib.import_module(spec["backend"])  # runs the role inside the framework's import, then exits
        return 0
    result = run_worker(spec)
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
