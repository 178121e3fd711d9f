"""The data-parallel study's trial (claim C2's CPU analogue): what one trial process runs, apart from the study's
declarations (``fwbench.studies.dataparallel``).

The trial process imports no framework: it starts the arm's group of processes (``fwbench.dataparallel.group``:
``world`` workers and, for MXNet's parameter server, its scheduler and server), each in one framework, and reads
their results. Then it checks that every worker's replica held the same weights after every step (the checksums
agree to ``RANK_TOLERANCE``, relative) and fails the trial when they do not, so a rate is never reported for
replicas that drifted apart.

Stored per trial (raw): every timed step's seconds on the slowest worker (``step_s``: the group moves at its
pace; the warm-up steps apart as ``warmup_step_s``), each worker's (``step_s.rank<r>``), the loss at every step,
the synchronisation sweep (``sync_s.n<floats>``, per repeat, the slowest worker's), and each process's CPU
seconds. Summary: ``samples_per_s`` = world x per-rank batch / median
step, ``median_step_s``, the median sync time per size, ``max_rank_rel_diff``, the workers' CPU during the timed
steps (``cpus_busy_max``: one worker's, which must stay near its threads) and the whole group's CPU per second of
wall time (helpers included).
"""

from __future__ import annotations

import os
import statistics

from ..dataparallel import parameter_count
from ..dataparallel.group import run_group
from .registry import get_study

STUDY_NAME = "dataparallel"
RANK_TOLERANCE = 1e-9  # relative: the replicas are copies of one update, not approximations of each other


def describe(config: dict) -> str:
    return (
        f"dataparallel {config['arm']:<16} world={config['world_size']} threads/rank={config['threads']} "
        f"batch/rank={config['per_rank_batch']} repeat={config['repeat']}"
    )


def rank_divergence(workers: list[dict]) -> float:
    """The largest relative difference between any worker's weight checksum and worker 0's, over all steps."""
    worst = 0.0
    reference = workers[0]["checksums"]
    for other in workers[1:]:
        if len(other["checksums"]) != len(reference):
            raise RuntimeError("the workers ran different numbers of steps")
        for a, b in zip(reference, other["checksums"], strict=True):
            for x, y in zip(a, b, strict=True):
                worst = max(worst, abs(x - y) / max(abs(x), abs(y), 1e-30))
    return worst


def run_trial(config: dict, report=None) -> dict:
    arm = get_study(STUDY_NAME).arm_of(config)
    spec = {
        "backend": arm.backend,
        "threads": config["threads"],
        "hidden": config["hidden"],
        "per_rank_batch": config["per_rank_batch"],
        "steps": config["steps"],
        "warmup_steps": config["warmup_steps"],
        "lr": config["lr"],
        "seed": config["seed"],
        "sync_sizes": config["sync_sizes"],
        "sync_warmup": config["sync_warmup"],
        "sync_repeats": config["sync_repeats"],
    }
    world = config["world_size"]
    cores = len(os.sched_getaffinity(0))
    if world * config["threads"] > cores:
        raise RuntimeError(
            f"world size {world} x {config['threads']} thread(s) needs {world * config['threads']} cores; this host "
            f"lets the trial use {cores}: run it on a larger host (a Dask worker host) rather than time contention"
        )
    group = run_group(arm.variant, spec, world, config["group_timeout_s"], report)
    workers = sorted(group["workers"], key=lambda w: w["rank"])
    if sorted(w["rank"] for w in workers) != list(range(world)):
        raise RuntimeError(f"the group's ranks are {[w['rank'] for w in workers]}, not 0..{world - 1}")
    divergence = rank_divergence(workers)
    if divergence > RANK_TOLERANCE:
        raise RuntimeError(
            f"the replicas diverged: weight checksums differ by {divergence:.3g} (relative) across ranks"
        )
    warm = config["warmup_steps"]
    slowest = [max(w["step_s"][i] for w in workers) for i in range(len(workers[0]["step_s"]))]
    timed = slowest[warm:]
    median_step = statistics.median(timed)
    sync = {
        n: [max(w["sync_s"][str(n)][i] for w in workers) for i in range(config["sync_repeats"])]
        for n in config["sync_sizes"]
    }
    wall = group["wall_s"]
    summary = {
        "samples_per_s": world * config["per_rank_batch"] / median_step,
        "median_step_s": median_step,
        "final_loss": workers[0]["losses"][-1],
        "max_rank_rel_diff": divergence,
        "cpus_busy_max": max(w["cpus_busy"] for w in workers),
        "group_cpus_per_wall_s": sum(group["cpu_s"].values()) / wall,
        "group_wall_s": wall,
        "n_parameters": parameter_count(config["hidden"]),
        **{f"sync_s.n{n}": statistics.median(v) for n, v in sync.items()},
    }
    if report:
        report(f"{describe(config)}: {summary['samples_per_s']:.1f} samples/s, ranks equal ({divergence:.1g})")
    measurements = [(i, "warmup_step_s", v) for i, v in enumerate(slowest[:warm])]
    measurements += [(i, "step_s", v) for i, v in enumerate(timed)]
    measurements += [(i, f"step_s.rank{w['rank']}", v) for w in workers for i, v in enumerate(w["step_s"][warm:])]
    measurements += [(i, "loss", v) for i, v in enumerate(workers[0]["losses"])]  # every step, warm-up included
    measurements += [(i, f"sync_s.n{n}", v) for n, values in sync.items() for i, v in enumerate(values)]
    measurements += [(-1, f"cpu_s.{name.replace(' ', '')}", v) for name, v in group["cpu_s"].items()]
    measurements += [(-1, "cpus_busy_max", summary["cpus_busy_max"])]
    return {
        "summary": summary,
        "measurements": measurements,
        "provenance": {**workers[0]["framework"], "rank_frameworks": [w["frameworks_imported"] for w in workers]},
    }
