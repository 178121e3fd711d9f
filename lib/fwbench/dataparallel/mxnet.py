"""MXNet backend of the data-parallel trials (same public names as ``fwbench.dataparallel.torch``).

A ``dist_sync`` key-value store (ps-lite parameter server): every worker pushes its gradients to the server, which
sums them, applies the SGD step (``update_on_kvstore``, the default for a distributed store) and returns the new
weights on pull; variant ``dist-sync-local`` returns the summed gradients instead and each worker updates. The
server and scheduler are processes of their own (``fwbench.dataparallel.group``); importing MXNet with
``DMLC_ROLE=server`` or ``scheduler`` runs that role and exits, so the same entry point starts them.
Threads: the OpenMP pool is sized by ``OMP_NUM_THREADS`` at import (set by the launcher). MXNet is asynchronous:
every step and every timed push + pull ends with a wait.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from time import perf_counter

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

from ..frameworks import mxnet as mxnet_facts
from . import CHANNELS, IN_CHANNELS, NUM_CLASSES, flat_features

FRAMEWORK = "mxnet"
__all__ = [
    "FRAMEWORK",
    "framework_info",
    "configure_threads",
    "Group",
    "SmallVGG",
    "Trainer",
    "join",
    "rank_of",
    "barrier",
    "sync_seconds",
    "build",
    "trainer",
    "train_step",
    "checksum",
    "leave",
]


UPDATE_ON_SERVER = {"dist-sync": True, "dist-sync-local": False}  # variant -> Trainer's update_on_kvstore
SYNC_KEY_BASE = 1_000_000_000  # above any parameter index the trainer uses as a key


@dataclass
class Group:
    store: object


def framework_info() -> dict:
    return {**mxnet_facts.info(), "device": "cpu", "sync": "kvstore dist_sync, parameter server (update on server)"}


def configure_threads(n: int) -> None:
    if os.environ.get("OMP_NUM_THREADS") != str(n):
        raise RuntimeError(f"MXNet reads OMP_NUM_THREADS at import; set it to {n} before importing mxnet")


def join(rank: int, world: int, address: str, port: int, timeout_s: float) -> Group:
    """The worker's store; ps-lite reads the scheduler's address from the DMLC_* variables the launcher set
    (``rank``, ``address`` and ``port`` are the same values), and numbers the workers itself (``rank_of``)."""
    return Group(mx.kv.create("dist_sync"))


def rank_of(group: Group) -> int:
    return group.store.rank


def barrier(group: Group) -> None:
    group.store._barrier()  # noqa: SLF001 - MXNet's only barrier across workers


def sync_seconds(group: Group, n_floats: int, warmup: int, repeats: int) -> list[float]:
    """Seconds of each timed push + pull of ``n_floats`` float32 values (summed on the server), every worker
    starting together."""
    key = SYNC_KEY_BASE + n_floats  # int keys, as the trainer's (a store refuses mixed key types)
    value, out = mx.nd.ones(n_floats), mx.nd.zeros(n_floats)
    group.store.init(key, value)
    seconds = []
    for i in range(warmup + repeats):
        group.store._barrier()  # noqa: SLF001
        t0 = perf_counter()
        group.store.push(key, value)
        group.store.pull(key, out=out)
        out.wait_to_read()
        if i >= warmup:
            seconds.append(perf_counter() - t0)
    return seconds


class SmallVGG(nn.Block):
    def __init__(self, hidden: int):
        super().__init__()
        with self.name_scope():
            self.features, c_in = nn.Sequential(), IN_CHANNELS
            for c_out in CHANNELS:
                self.features.add(nn.Conv2D(c_out, 3, padding=1, in_channels=c_in, activation="relu"))
                self.features.add(nn.MaxPool2D(2))
                c_in = c_out
            self.fc0 = nn.Dense(hidden, in_units=flat_features(), activation="relu")
            self.fc1 = nn.Dense(NUM_CLASSES, in_units=hidden)

    def forward(self, x):
        return self.fc1(self.fc0(self.features(x)))


def build(hidden: int, weights: list[np.ndarray]) -> SmallVGG:
    model = SmallVGG(hidden)
    model.initialize()
    params = list(model.collect_params().values())
    if len(params) != len(weights):
        raise ValueError(f"{len(weights)} initial arrays for {len(params)} parameters")
    for p, w in zip(params, weights, strict=True):
        p.set_data(mx.nd.array(w))
    return model


@dataclass
class Trainer:
    model: SmallVGG
    trainer: gluon.Trainer
    global_batch: int
    loss: gluon.loss.Loss


def trainer(group: Group, model: SmallVGG, lr: float, global_batch: int, variant: str) -> Trainer:
    """The server sums the workers' gradients; ``step(global_batch)`` rescales each by 1 / global batch, so the sum
    is the global mean (the same step as DDP's average of per-rank means). ``dist-sync``: the server also applies
    the update and the workers pull the new weights (MXNet's default for a distributed store; the first ``step``
    sets the factor before it sends the optimizer to the server, which keeps it: the batch must not change).
    ``dist-sync-local``: the workers pull the summed gradients and each updates its replica, as DDP's ranks do."""
    if variant not in UPDATE_ON_SERVER:
        raise ValueError(f"no MXNet trainer for variant {variant!r}; known: {', '.join(UPDATE_ON_SERVER)}")
    opt = {"learning_rate": lr}
    sgd = gluon.Trainer(
        model.collect_params(), "sgd", opt, kvstore=group.store, update_on_kvstore=UPDATE_ON_SERVER[variant]
    )
    # Gluon's first ``step`` pulls the initial weights and pushes the first gradients on the same keys with nothing
    # ordering the two: with the update on the workers, a worker can pull the first summed gradient as its weights
    # (seen here: the replicas diverged at step 0 in 1 of 4 groups; the per-step check failed the trial). So the
    # store is set up and the weights pulled now, before any gradient exists, outside the timed steps (the
    # rescale factor first: a distributed store keeps the optimizer it is sent first). Private calls of Gluon
    # 1.9.1's Trainer (MXNet is retired: its API no longer moves).
    sgd._optimizer.rescale_grad = sgd._scale / global_batch  # noqa: SLF001
    sgd._init_kvstore()  # noqa: SLF001
    sgd._init_params()  # noqa: SLF001
    mx.nd.waitall()
    group.store._barrier()  # noqa: SLF001
    return Trainer(model, sgd, global_batch, gluon.loss.SoftmaxCrossEntropyLoss())


def train_step(t: Trainer, images: np.ndarray, labels: np.ndarray) -> float:
    x, y = mx.nd.array(images), mx.nd.array(labels)
    with autograd.record():
        loss = t.loss(t.model(x), y)
    loss.backward()
    t.trainer.step(t.global_batch)
    mx.nd.waitall()
    return float(loss.mean().asscalar())


def checksum(t: Trainer) -> tuple[float, float]:
    """(sum, sum of squares) of every parameter in float64: equal on every worker while the replicas agree."""
    flat = np.concatenate([p.data().asnumpy().astype(np.float64).ravel() for p in t.model.collect_params().values()])
    return float(flat.sum()), float((flat * flat).sum())


def leave(group: Group) -> None:
    group.store._barrier()  # noqa: SLF001 - no worker leaves while another still pulls
