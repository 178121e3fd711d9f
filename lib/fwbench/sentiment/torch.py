"""PyTorch backend of the IMDB sentiment model (same public names as ``fwbench.sentiment.mxnet``)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..frameworks import torch_info
from . import EMBEDDING_INIT_RANGE, EpochPermutationSampler, uniform_range

FRAMEWORK = "torch"
__all__ = ["FRAMEWORK", "framework_info", "set_seed", "configure_threads", "SentimentLSTM", "build_model",
           "count_parameters", "make_loader", "Trainer", "make_trainer", "set_learning_rate", "train_one_epoch",
           "synchronize", "prepare", "evaluate"]


def framework_info() -> dict:
    return torch_info()


def set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def configure_threads(n: int) -> None:
    torch.set_num_threads(n)


class SentimentLSTM(nn.Module):
    """Embedding -> LSTM -> Dense(num_classes) on the last time step (softmax lives in the loss)."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int = 2,
                 sparse: bool = False):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, sparse=sparse)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.output = nn.Linear(hidden_size, num_classes)
        nn.init.uniform_(self.embedding.weight, -EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE)
        for p in self.lstm.parameters():
            nn.init.uniform_(p, -uniform_range(hidden_size), uniform_range(hidden_size))
        for p in self.output.parameters():
            nn.init.uniform_(p, -uniform_range(hidden_size), uniform_range(hidden_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(self.embedding(x))
        return self.output(hidden[:, -1])


def build_model(vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int = 2,
                sparse: bool = False, variant: str = "eager", device: str = "cpu") -> nn.Module:
    """``variant``: ``eager`` or ``compiled`` (``torch.compile`` with the default Inductor backend; the
    compilation itself is timed by ``prepare`` and stored apart from the epoch times)."""
    if variant not in ("eager", "compiled"):
        raise ValueError(f"unknown PyTorch variant {variant!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' asked for, but torch.cuda.is_available() is False on this machine")
    model = SentimentLSTM(vocab_size, embed_dim, hidden_size, num_classes, sparse).to(device)
    model.device = torch.device(device)
    if variant == "compiled":
        compiled = torch.compile(model)
        compiled.device = model.device
        return compiled
    return model


def _core(model: nn.Module) -> SentimentLSTM:
    """The SentimentLSTM behind a compiled wrapper."""
    return getattr(model, "_orig_mod", model)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in _core(model).parameters())


def make_loader(x: np.ndarray, y: np.ndarray, batch_size: int, num_workers: int, shuffle: bool, seed: int):
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x.astype(np.int64)), torch.from_numpy(y))
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                                       sampler=EpochPermutationSampler(len(y), seed, shuffle))


class Trainer:
    """Adam for dense gradients; with sparse embedding gradients, SparseAdam for the embedding (plain Adam
    rejects sparse tensors) and Adam for the rest, both with the same learning rate."""

    def __init__(self, model: nn.Module, lr: float):
        core = _core(model)
        sparse = core.embedding.sparse
        dense_params = [p for name, p in core.named_parameters() if not (sparse and name.startswith("embedding"))]
        self.optimizers = [torch.optim.Adam(dense_params, lr=lr)]
        if sparse:
            self.optimizers.append(torch.optim.SparseAdam(list(core.embedding.parameters()), lr=lr))
        self.loss = nn.CrossEntropyLoss()

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()


def make_trainer(model: SentimentLSTM, lr: float) -> Trainer:
    return Trainer(model, lr)


def set_learning_rate(trainer: Trainer, lr: float) -> None:
    for opt in trainer.optimizers:
        for group in opt.param_groups:
            group["lr"] = lr


def train_one_epoch(model: SentimentLSTM, trainer: Trainer, loader) -> tuple[float, int]:
    """One pass over the loader; returns (mean training loss, samples seen). Loss is summed on the
    framework side and read once at the end, so no per-batch host sync is added."""
    model.train()
    device = getattr(model, "device", torch.device("cpu"))
    total, seen = torch.zeros((), device=device), 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        trainer.zero_grad()
        loss = trainer.loss(model(x), y)
        loss.backward()
        trainer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    return float(total) / max(seen, 1), seen


def synchronize() -> None:
    """CPU PyTorch executes eagerly: nothing is pending when a call returns; CUDA kernels are asynchronous."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def prepare(model: nn.Module, trainer: Trainer, loader) -> float:
    """Ahead-of-epoch work, timed apart from the epochs: for a compiled model, one forward+backward on the
    first batch triggers compilation (gradients are then dropped, so no training step happens). Returns seconds."""
    if not hasattr(model, "_orig_mod"):
        return 0.0
    import time

    device = getattr(model, "device", torch.device("cpu"))
    x, y = next(iter(loader))
    t0 = time.perf_counter()
    trainer.loss(model(x.to(device)), y.to(device)).backward()
    synchronize()
    seconds = time.perf_counter() - t0
    trainer.zero_grad()
    loader.sampler.epoch = 0  # the probe batch must not shift the epochs' sample order
    return seconds


@torch.no_grad()
def evaluate(model: SentimentLSTM, loader) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) over the loader."""
    model.eval()
    device = getattr(model, "device", torch.device("cpu"))
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    total, correct, seen = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        total += float(loss_fn(logits, y))
        correct += int((logits.argmax(1) == y).sum())
        seen += len(y)
    return total / max(seen, 1), correct / max(seen, 1)
