"""PyTorch backend of the IMDB sentiment model (same public names as ``fwbench.sentiment.mxnet``).

Data-loader workers (``make_loader(..., persistent=)``): ``persistent=False`` is PyTorch's default (and all that
PyTorch 0.3 had in 2018): every pass over the loader starts its workers and joins them when the pass ends, inside
the timed epoch. ``persistent=True`` sets ``persistent_workers`` and starts the workers in ``make_loader``, before
the timed epochs, as MXNet 1.9.1 builds its worker pool in ``DataLoader.__init__``.
oneDNN: ``onednn(enabled)`` is ``torch.backends.mkldnn.flags``; it decides whether ``nn.LSTM`` on the CPU runs
oneDNN's fused RNN (``aten::mkldnn_rnn_layer``) or PyTorch's own cell-by-cell kernels.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..frameworks import torch as torch_facts
from . import EMBEDDING_INIT_RANGE, EpochPermutationSampler, check_init, keras_initial_weights, uniform_range

FRAMEWORK = "torch"
__all__ = [
    "FRAMEWORK",
    "framework_info",
    "set_seed",
    "configure_threads",
    "SentimentLSTM",
    "build_model",
    "count_parameters",
    "make_loader",
    "Trainer",
    "make_trainer",
    "set_learning_rate",
    "train_one_epoch",
    "synchronize",
    "prepare",
    "evaluate",
    "onednn",
    "onednn_enabled",
    "bare_loop",
]


def framework_info() -> dict:
    return torch_facts.info()


def set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def configure_threads(n: int) -> None:
    torch.set_num_threads(n)


class SentimentLSTM(nn.Module):
    """Embedding -> LSTM -> Dense(num_classes) on the last time step (softmax lives in the loss)."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        num_classes: int = 2,
        sparse: bool = False,
        init: str = "uniform",
        seed: int = 0,
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, sparse=sparse)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.output = nn.Linear(hidden_size, num_classes)
        if check_init(init) == "keras":  # the same arrays as the MXNet twin (``keras_initial_weights``)
            w = keras_initial_weights(vocab_size, embed_dim, hidden_size, num_classes, seed)
            targets = {
                "embedding": self.embedding.weight,
                "i2h_weight": self.lstm.weight_ih_l0,
                "h2h_weight": self.lstm.weight_hh_l0,
                "i2h_bias": self.lstm.bias_ih_l0,
                "h2h_bias": self.lstm.bias_hh_l0,
                "output_weight": self.output.weight,
                "output_bias": self.output.bias,
            }
            with torch.no_grad():
                for name, param in targets.items():
                    param.copy_(torch.from_numpy(w[name]))
            return
        nn.init.uniform_(self.embedding.weight, -EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE)
        for p in self.lstm.parameters():
            nn.init.uniform_(p, -uniform_range(hidden_size), uniform_range(hidden_size))
        for p in self.output.parameters():
            nn.init.uniform_(p, -uniform_range(hidden_size), uniform_range(hidden_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.lstm(self.embedding(x))
        return self.output(hidden[:, -1])


def build_model(
    vocab_size: int,
    embed_dim: int,
    hidden_size: int,
    num_classes: int = 2,
    sparse: bool = False,
    variant: str = "eager",
    device: str = "cpu",
    init: str = "uniform",
    seed: int = 0,
) -> nn.Module:
    """``variant``: ``eager`` or ``compiled`` (``torch.compile`` with the default Inductor backend; the
    compilation itself is timed by ``prepare`` and stored apart from the epoch times). ``init``: one of
    ``fwbench.sentiment.INITS`` (``seed`` draws the ``keras`` arrays)."""
    if variant not in ("eager", "compiled"):
        raise ValueError(f"unknown PyTorch variant {variant!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' asked for, but torch.cuda.is_available() is False on this machine")
    model = SentimentLSTM(vocab_size, embed_dim, hidden_size, num_classes, sparse, init, seed).to(device)
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


def make_loader(
    x: np.ndarray, y: np.ndarray, batch_size: int, num_workers: int, shuffle: bool, seed: int, persistent: bool = False
):
    """A DataLoader in the shared sample order; with workers and ``persistent``, its workers are started here
    (outside the timed epochs) and kept for every pass."""
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x.astype(np.int64)), torch.from_numpy(y))
    sampler = EpochPermutationSampler(len(y), seed, shuffle)
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=num_workers,
        sampler=sampler,
        persistent_workers=persistent and num_workers > 0,
    )
    if loader.persistent_workers:
        iter(loader)  # starts the workers (they prefetch a few batches, dropped at the first epoch's reset)
        sampler.epoch = 0  # that start drew one epoch's order: epoch 0 must still see order 0
    return loader


class Trainer:
    """Adam for dense gradients; with sparse embedding gradients, SparseAdam for the embedding (plain Adam
    rejects sparse tensors) and Adam for the rest, both with the same learning rate. ``clip_norm``: the
    gradients of the batch-mean loss are scaled so their global L2 norm is at most this (None: no clipping)."""

    def __init__(self, model: nn.Module, lr: float, clip_norm: float | None = None):
        core = _core(model)
        sparse = core.embedding.sparse
        dense_params = [p for name, p in core.named_parameters() if not (sparse and name.startswith("embedding"))]
        self.optimizers = [torch.optim.Adam(dense_params, lr=lr)]
        if sparse:
            self.optimizers.append(torch.optim.SparseAdam(list(core.embedding.parameters()), lr=lr))
        self.loss = nn.CrossEntropyLoss()
        self.params, self.clip_norm = list(core.parameters()), clip_norm

    def clip(self) -> None:
        """Global-norm clipping written out (``clip_grad_norm_`` takes no sparse gradients)."""
        if self.clip_norm is None:
            return
        grads = [p.grad for p in self.params if p.grad is not None]
        squares = [(g.coalesce().values() if g.is_sparse else g).pow(2).sum() for g in grads]
        scale = self.clip_norm / (float(torch.stack(squares).sum().sqrt()) + 1e-6)
        if scale < 1.0:
            for g in grads:
                g.mul_(scale)

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()


def make_trainer(model: SentimentLSTM, lr: float, clip_norm: float | None = None) -> Trainer:
    return Trainer(model, lr, clip_norm)


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
        trainer.clip()
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
    first ``batch_size`` samples triggers compilation (gradients are then dropped, so no training step happens).
    Returns seconds."""
    if not hasattr(model, "_orig_mod"):
        return 0.0
    import time

    device = getattr(model, "device", torch.device("cpu"))
    x, y = loader.dataset[: loader.batch_size]  # the first samples, not the loader: its order stays untouched
    t0 = time.perf_counter()
    trainer.loss(model(x.to(device)), y.to(device)).backward()
    synchronize()
    seconds = time.perf_counter() - t0
    trainer.zero_grad()
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


def onednn(enabled: bool):
    """Context in which oneDNN is on or off for this process's CPU ops (``nn.LSTM`` included)."""
    return torch.backends.mkldnn.flags(enabled=enabled)


def onednn_enabled() -> bool:
    return bool(torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled)


def bare_loop(spec: dict, x, y) -> list[float]:
    """Plain PyTorch, written from scratch: Embedding -> LSTM -> Linear on the last step, Adam, one loop; seconds
    per epoch.

    Imports what it uses inside (the clock too) and reads nothing of this module, so a test can check that no
    fwbench code runs near the clock; the harness benchmark (``fwbench.bench``) runs it in a child process."""
    import time

    import torch
    from torch import nn

    m = spec["model"]
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(m["num_words"], m["embed_dim"])
            self.lstm = nn.LSTM(m["embed_dim"], m["hidden_size"], batch_first=True)
            self.output = nn.Linear(m["hidden_size"], m["num_classes"])

        def forward(self, tokens):
            hidden, _ = self.lstm(self.embedding(tokens))
            return self.output(hidden[:, -1])

    net = Net()
    data = torch.utils.data.TensorDataset(torch.from_numpy(x.astype("int64")), torch.from_numpy(y.astype("int64")))
    loader = torch.utils.data.DataLoader(data, batch_size=spec["batch_size"], shuffle=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=spec["lr"])
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for _ in range(spec["epochs"]):
        t0 = time.perf_counter()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss_fn(net(xb), yb).backward()
            optimizer.step()
        times.append(time.perf_counter() - t0)
    return times
