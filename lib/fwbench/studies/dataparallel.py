"""Claim C2's CPU analogue: data-parallel training, PyTorch's all-reduce against MXNet's parameter server.

C2 (8 GPUs, VGG16: MXNet 15.4 s against PyTorch 21.6 s; "MXNet outperforms PyTorch in distributed training") cannot
be judged here: no GPU, two cores. Its mechanism can be measured: how much it costs each framework to keep
replicas of one model in step. One trial = one arm x world size x repeat block: a group of fresh processes on one
host (``fwbench.dataparallel.group``), ``threads`` each, trains the small VGG-style net of ``fwbench.dataparallel``
(2.2M parameters at ``hidden`` 1024: an 8.8 MB gradient) on synthetic images, the same initial weights and batches
in both frameworks, ``per_rank_batch`` images per worker per step (weak scaling: the global batch grows with the
world), and times the synchronisation alone over a sweep of tensor sizes (``sync_sizes``, float32 values).

Arms (the variant names the sync mechanism; plain SGD, no momentum, in both):

- ``torch-ddp``: ``DistributedDataParallel``, gloo all-reduce of gradient buckets during the backward pass; each
  rank updates its own replica;
- ``mxnet-dist-sync``: Gluon ``Trainer`` on a ``dist_sync`` key-value store: workers push gradients to one server,
  which sums them, updates the weights (``update_on_kvstore``, MXNet's default for a distributed store) and
  returns them on pull. Its scheduler and server are processes beside the workers;
- ``mxnet-dist-sync-local``: the same store with ``update_on_kvstore=False``: the server only sums, the workers
  pull the summed gradients and each updates its replica (as DDP's ranks do). The frameworks' defaults differ in
  where the update runs, so both MXNet settings are timed; C2's analogue uses MXNet's default.

On 2 cores, 2 workers of 1 thread are the most that is not oversubscription; MXNet's server then shares the cores
with its workers (as it would share a GPU host's CPUs): that is part of what a parameter server costs on one host,
and the group's CPU use is recorded to show it. A trial whose ``world_size`` x ``threads`` exceeds the host's cores
fails with a message rather than measure contention. ``full`` asks for world sizes 4 and 8: run it on a host with
8 cores (a Dask worker host: the executor reserves the trial's ``world_size`` slots there).
"""

from __future__ import annotations

from . import options as opt
from .blocks import interleave
from .dataparallel_trial import describe, run_trial
from .registry import Arm, Study, register

ARM_TABLE = (
    Arm("torch-ddp", "torch", "fwbench.dataparallel.torch", "ddp", "PyTorch DDP (gloo all-reduce)", "#1f77b4"),
    Arm(
        "mxnet-dist-sync",
        "mxnet",
        "fwbench.dataparallel.mxnet",
        "dist-sync",
        "MXNet kvstore dist_sync (parameter server)",
        "#d62728",
    ),
    # the same store with the update on the workers (update_on_kvstore=False), as DDP's ranks update: where the
    # frameworks' defaults differ, both settings are timed
    Arm(
        "mxnet-dist-sync-local",
        "mxnet",
        "fwbench.dataparallel.mxnet",
        "dist-sync-local",
        "MXNet kvstore dist_sync, update on workers",
        "#ff7f0e",
    ),
)
ARMS = tuple(a.name for a in ARM_TABLE)
SEED = 0  # the same weights and batches in every trial: the repeats differ only in the process

_COMMON = {"arms": list(ARMS), "threads": 1, "lr": 0.01, "device": "cpu", "group_timeout_s": 600}
PROFILES = {
    # seconds: a narrow net, 3 steps; both world sizes and both mechanisms start, agree and stop
    "smoke": {
        **_COMMON,
        "world_sizes": [1, 2],
        "hidden": 256,
        "per_rank_batch": 8,
        "steps": 3,
        "warmup_steps": 1,
        "repeats": 1,
        "sync_sizes": [1024, 65536],
        "sync_warmup": 1,
        "sync_repeats": 3,
    },
    "quick": {
        **_COMMON,
        "world_sizes": [1, 2],
        "hidden": 1024,
        "per_rank_batch": 32,
        "steps": 10,
        "warmup_steps": 2,
        "repeats": 2,
        "sync_sizes": [2**10, 2**16, 2**20, 2**22],
        "sync_warmup": 2,
        "sync_repeats": 10,
    },
    # 5 independent trials per arm and world size (the CI of C2's analogue is over them); the sweep
    # brackets the model's own gradient (2.2M values, between 2^21 and 2^22)
    "paper": {
        **_COMMON,
        "world_sizes": [1, 2],
        "hidden": 1024,
        "per_rank_batch": 32,
        "steps": 20,
        "warmup_steps": 3,
        "repeats": 5,
        "sync_sizes": [2**10, 2**14, 2**18, 2**20, 2**21, 2**22, 2**23],
        "sync_warmup": 3,
        "sync_repeats": 20,
    },
    "full": {
        **_COMMON,
        "world_sizes": [1, 2, 4, 8],
        "hidden": 1024,
        "per_rank_batch": 32,
        "steps": 40,
        "warmup_steps": 5,
        "repeats": 10,
        "sync_sizes": [2**10, 2**12, 2**14, 2**16, 2**18, 2**20, 2**21, 2**22, 2**23, 2**24],
        "sync_warmup": 3,
        "sync_repeats": 30,
    },
}

OPTIONS = {
    "arms": opt.list_of(opt.string, ARMS),
    "world_sizes": opt.list_of(opt.int_range(1, 1024)),
    "threads": opt.int_range(1, 256),
    "hidden": opt.int_range(1, 65536),
    "per_rank_batch": opt.int_range(1, 65536),
    "steps": opt.int_range(1, 100000),
    "warmup_steps": opt.int_range(0, 1000),
    "lr": opt.positive_float,
    "repeats": opt.int_range(1, 1000),
    "sync_sizes": opt.list_of(opt.int_range(1, 2**28)),
    "sync_warmup": opt.int_range(0, 1000),
    "sync_repeats": opt.int_range(1, 10000),
    "group_timeout_s": opt.int_range(10, 86400),
    "device": opt.choice(["cpu"]),
}


def grid(options: dict) -> list[dict]:
    """``repeats`` blocks; in each, every world size with both arms back to back in a seeded random order."""
    configs = []
    for repeat in range(options["repeats"]):
        block = [
            {
                "arm": arm,
                "world_size": world,
                "threads": options["threads"],
                "hidden": options["hidden"],
                "per_rank_batch": options["per_rank_batch"],
                "steps": options["steps"],
                "warmup_steps": options["warmup_steps"],
                "lr": options["lr"],
                "seed": SEED,
                "repeat": repeat,
                "sync_sizes": list(options["sync_sizes"]),
                "sync_warmup": options["sync_warmup"],
                "sync_repeats": options["sync_repeats"],
                "group_timeout_s": options["group_timeout_s"],
                "device": options["device"],
            }
            for world in options["world_sizes"]
            for arm in options["arms"]
        ]
        configs += interleave(block, seed=SEED)
    return configs


def slots(config: dict) -> int:
    """The cores' worth of processes a trial occupies: its workers x their threads (the executor reserves them)."""
    return config["world_size"] * config["threads"]


STUDY = register(
    Study(
        name="dataparallel",
        title="Data-parallel training on CPUs (C2's mechanism: all-reduce vs parameter server)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        arms=ARM_TABLE,
        reference={"torch": "torch-ddp", "mxnet": "mxnet-dist-sync"},
        code=("fwbench.dataparallel", "fwbench.dataparallel.group", "fwbench.dataparallel.rank"),
        figure_prefix="dataparallel_",
        slots=slots,
    )
)
