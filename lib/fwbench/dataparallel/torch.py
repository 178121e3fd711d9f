"""PyTorch backend of the data-parallel trials (same public names as ``fwbench.dataparallel.mxnet``).

``DistributedDataParallel`` over gloo (the CPU backend; torch 2.13.0+cpu has no NCCL or MPI): every rank holds the
whole model, and the gradients are averaged by all-reduce in buckets (25 MB, the default) while the backward pass
runs; then each rank applies the same SGD step itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from ..frameworks import torch as torch_facts
from . import CHANNELS, IN_CHANNELS, NUM_CLASSES, flat_features

FRAMEWORK = "torch"
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


@dataclass
class Group:
    rank: int
    world: int


def framework_info() -> dict:
    return {**torch_facts.info(), "device": "cpu", "sync": "DistributedDataParallel, gloo all-reduce"}


def configure_threads(n: int) -> None:
    torch.set_num_threads(n)


def join(rank: int, world: int, address: str, port: int, timeout_s: float) -> Group:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://{address}:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=timeout_s),
    )
    return Group(rank, world)


def rank_of(group: Group) -> int:
    return dist.get_rank()


def barrier(group: Group) -> None:
    dist.barrier()


def sync_seconds(group: Group, n_floats: int, warmup: int, repeats: int) -> list[float]:
    """Seconds of each timed all-reduce (sum) of ``n_floats`` float32 values, every rank starting together."""
    from time import perf_counter

    tensor, out = torch.ones(n_floats), []
    for i in range(warmup + repeats):
        dist.barrier()
        t0 = perf_counter()
        dist.all_reduce(tensor)
        if i >= warmup:
            out.append(perf_counter() - t0)
    return out


class SmallVGG(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        layers, c_in = [], IN_CHANNELS
        for c_out in CHANNELS:
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.fc0, self.fc1 = nn.Linear(flat_features(), hidden), nn.Linear(hidden, NUM_CLASSES)

    def forward(self, x):
        return self.fc1(torch.relu(self.fc0(torch.flatten(self.features(x), 1))))


def build(hidden: int, weights: list[np.ndarray]) -> SmallVGG:
    model = SmallVGG(hidden)
    params = list(model.parameters())
    if len(params) != len(weights):
        raise ValueError(f"{len(weights)} initial arrays for {len(params)} parameters")
    with torch.no_grad():
        for p, w in zip(params, weights, strict=True):
            p.copy_(torch.from_numpy(w))
    return model


@dataclass
class Trainer:
    model: nn.Module
    optimizer: torch.optim.Optimizer


def trainer(group: Group, model: SmallVGG, lr: float, global_batch: int, variant: str) -> Trainer:
    """DDP around the model; each rank's loss is its batch mean, and DDP averages over ranks: the global mean.
    Each rank applies the SGD step itself (DDP's only way)."""
    if variant != "ddp":
        raise ValueError(f"no PyTorch trainer for variant {variant!r}; known: ddp")
    ddp = nn.parallel.DistributedDataParallel(model)
    return Trainer(ddp, torch.optim.SGD(ddp.parameters(), lr=lr))


def train_step(t: Trainer, images: np.ndarray, labels: np.ndarray) -> float:
    t.optimizer.zero_grad()
    loss = nn.functional.cross_entropy(t.model(torch.from_numpy(images)), torch.from_numpy(labels))
    loss.backward()
    t.optimizer.step()
    return float(loss.detach())


def checksum(t: Trainer) -> tuple[float, float]:
    """(sum, sum of squares) of every parameter in float64: equal on every rank while the replicas agree."""
    with torch.no_grad():
        flat = torch.cat([p.detach().double().flatten() for p in t.model.parameters()])
    return float(flat.sum()), float((flat * flat).sum())


def leave(group: Group) -> None:
    dist.destroy_process_group()
