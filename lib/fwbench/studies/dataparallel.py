"""Claim C2's CPU analogue: data-parallel training, PyTorch's all-reduce against MXNet's parameter server.

C2 (8 GPUs, VGG16) cannot be judged here; its mechanism can: what it costs each framework to keep replicas of one
model in step (docs/methods.md, "Data-parallel training": the model, the processes, the checks). One trial = one
arm x world size x repeat block: a group of fresh processes on one host (``fwbench.dataparallel.group``),
``threads`` each, trains the same small net on the same synthetic batches in both frameworks (``per_rank_batch``
per worker per step: weak scaling) and times the synchronisation alone over ``sync_sizes`` (float32 values).

Arms (the variant names the sync mechanism; plain SGD in both): ``torch-ddp`` (gloo all-reduce, each rank
updating its replica); ``mxnet-dist-sync`` (a ``dist_sync`` store whose server sums the gradients and updates the
weights: ``update_on_kvstore``, MXNet's default for a distributed store, and C2's analogue);
``mxnet-dist-sync-local`` (the same store, the workers updating, as DDP's ranks do): the defaults differ in where
the update runs, so both are timed. A trial whose ``world_size`` x ``threads`` exceeds the host's cores fails
rather than measure contention (MXNet's server shares the cores, and the group's CPU use is recorded); ``full``'s
world sizes 4 and 8 need an 8-core host (a Dask worker host: the executor reserves the trial's slots there).
"""

from __future__ import annotations

from . import options as opt
from .blocks import interleave
from .dataparallel_trial import describe, run_trial
from .registry import Arm, Study, register

_MXNET = "fwbench.dataparallel.mxnet"
ARM_TABLE = (
    Arm("torch-ddp", "torch", "fwbench.dataparallel.torch", "ddp", "PyTorch DDP (gloo all-reduce)", "#1f77b4"),
    Arm("mxnet-dist-sync", "mxnet", _MXNET, "dist-sync", "MXNet kvstore dist_sync (parameter server)", "#d62728"),
    Arm(
        "mxnet-dist-sync-local",
        "mxnet",
        _MXNET,
        "dist-sync-local",
        "MXNet kvstore dist_sync, update on workers",
        "#ff7f0e",
    ),
)
ARMS = tuple(a.name for a in ARM_TABLE)
SEED = 0  # the same weights and batches in every trial: the repeats differ only in the process

# 5 independent trials per arm and world size (the CI of C2's analogue is over them); the sweep brackets the
# model's own gradient (2.2M values, between 2^21 and 2^22)
_PAPER = {
    "arms": list(ARMS),
    "threads": 1,
    "lr": 0.01,
    "device": "cpu",
    "group_timeout_s": 600,
    "world_sizes": [1, 2],
    "hidden": 1024,
    "per_rank_batch": 32,
    "steps": 20,
    "warmup_steps": 3,
    "repeats": 5,
    "sync_sizes": [2**10, 2**14, 2**18, 2**20, 2**21, 2**22, 2**23],
    "sync_warmup": 3,
    "sync_repeats": 20,
}
PROFILES = {
    # seconds: a narrow net, 3 steps; both world sizes and both mechanisms start, agree and stop
    "smoke": {
        **_PAPER,
        "hidden": 256,
        "per_rank_batch": 8,
        "steps": 3,
        "warmup_steps": 1,
        "repeats": 2,  # two trials a side: the least C2's interval is over (the tests read the notebooks' run)
        "sync_sizes": [1024, 65536],
        "sync_warmup": 1,
        "sync_repeats": 3,
    },
    "quick": {
        **_PAPER,
        "steps": 10,
        "warmup_steps": 2,
        "repeats": 2,
        "sync_sizes": [2**10, 2**16, 2**20, 2**22],
        "sync_warmup": 2,
        "sync_repeats": 10,
    },
    "paper": _PAPER,
    "full": {
        **_PAPER,
        "world_sizes": [1, 2, 4, 8],
        "steps": 40,
        "warmup_steps": 5,
        "repeats": 10,
        "sync_sizes": [2**10, 2**12, 2**14, 2**16, 2**18, 2**20, 2**21, 2**22, 2**23, 2**24],
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
        slots=lambda config: config["world_size"] * config["threads"],  # its workers' cores, reserved by the executor
    )
)
