"""MXNet Gluon backend of the IMDB sentiment model (same public names as ``fwbench.sentiment.torch``).

Thread count: MXNet's OpenMP pool is sized by ``OMP_NUM_THREADS`` at import; the trial runner sets it in the
child's environment before this module is imported, and ``configure_threads`` only checks it.
"""
from __future__ import annotations

import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn, rnn

from ..frameworks import mxnet_info
from . import EMBEDDING_INIT_RANGE, EpochPermutationSampler, uniform_range

FRAMEWORK = "mxnet"
__all__ = ["FRAMEWORK", "framework_info", "set_seed", "configure_threads", "SentimentLSTM", "build_model",
           "count_parameters", "make_loader", "Trainer", "make_trainer", "set_learning_rate", "train_one_epoch",
           "synchronize", "prepare", "evaluate"]


def _context(device: str = "cpu"):
    """``cpu`` or ``cuda`` (needs an ``mxnet-cu11x``/``cu12x`` build instead of the CPU wheel)."""
    if device == "cpu":
        return mx.cpu()
    if device == "cuda":
        if mx.context.num_gpus() == 0:
            raise RuntimeError("device 'cuda' asked for, but this MXNet build sees no GPU (install an mxnet-cu11x "
                               "wheel on a CUDA machine)")
        return mx.gpu(0)
    raise ValueError(f"unknown device {device!r}")


def framework_info() -> dict:
    return mxnet_info()


def set_seed(seed: int) -> None:
    mx.random.seed(seed)
    np.random.seed(seed)


def configure_threads(n: int) -> None:
    if os.environ.get("OMP_NUM_THREADS") != str(n):
        raise RuntimeError(f"MXNet reads OMP_NUM_THREADS at import; set it to {n} before importing mxnet")


class SentimentLSTM(gluon.Block):
    """Embedding -> LSTM -> Dense(num_classes) on the last time step (softmax lives in the loss).

    ``hybridize_around_lstm``: the MXNet team's advice to the 2018 post, which could not hybridize
    ``gluon.rnn.LSTM``: compile the pre-LSTM (embedding) and post-LSTM (dense) blocks into static graphs and keep
    the LSTM (already one fused cuDNN/oneDNN operator) imperative between them.
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int = 2):
        super().__init__()
        self.ctx = mx.cpu()
        k = uniform_range(hidden_size)
        with self.name_scope():
            self.embedding = nn.Embedding(vocab_size, embed_dim,
                                          weight_initializer=mx.init.Uniform(EMBEDDING_INIT_RANGE))
            self.lstm = rnn.LSTM(hidden_size, layout="NTC", input_size=embed_dim,
                                 i2h_weight_initializer=mx.init.Uniform(k), h2h_weight_initializer=mx.init.Uniform(k),
                                 i2h_bias_initializer=mx.init.Uniform(k), h2h_bias_initializer=mx.init.Uniform(k))
            self.output = nn.Dense(num_classes, in_units=hidden_size, weight_initializer=mx.init.Uniform(k),
                                   bias_initializer=mx.init.Uniform(k))

    def forward(self, x):
        hidden = self.lstm(self.embedding(x))
        return self.output(hidden[:, -1, :])


def build_model(vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int = 2,
                sparse: bool = False, variant: str = "imperative", device: str = "cpu") -> SentimentLSTM:
    """``variant``: ``imperative`` (the plain Gluon arm) or ``hybrid`` (pre/post-LSTM blocks hybridized)."""
    if sparse:
        raise ValueError("the MXNet arm uses dense embedding gradients (the sparse arm is PyTorch's)")
    if variant not in ("imperative", "hybrid"):
        raise ValueError(f"unknown MXNet variant {variant!r}")
    model = SentimentLSTM(vocab_size, embed_dim, hidden_size, num_classes)
    model.ctx = _context(device)
    model.initialize(ctx=model.ctx)
    if variant == "hybrid":
        model.embedding.hybridize(static_alloc=True, static_shape=True)
        model.output.hybridize(static_alloc=True, static_shape=True)
    return model


def count_parameters(model: SentimentLSTM) -> int:
    return sum(int(np.prod(p.shape)) for p in model.collect_params().values())


def make_loader(x: np.ndarray, y: np.ndarray, batch_size: int, num_workers: int, shuffle: bool, seed: int):
    dataset = gluon.data.ArrayDataset(x.astype(np.float32), y.astype(np.float32))
    return gluon.data.DataLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                                 sampler=EpochPermutationSampler(len(y), seed, shuffle))


class Trainer:
    def __init__(self, model: SentimentLSTM, lr: float):
        self.trainer = gluon.Trainer(model.collect_params(), "adam", {"learning_rate": lr})
        self.loss = gluon.loss.SoftmaxCrossEntropyLoss()


def make_trainer(model: SentimentLSTM, lr: float) -> Trainer:
    return Trainer(model, lr)


def set_learning_rate(trainer: Trainer, lr: float) -> None:
    trainer.trainer.set_learning_rate(lr)


def train_one_epoch(model: SentimentLSTM, trainer: Trainer, loader) -> tuple[float, int]:
    """One pass over the loader; returns (mean training loss, samples seen). The loss sum stays an NDArray
    until the end (no per-batch sync); ``step(batch)`` makes the summed loss a per-sample mean as in PyTorch."""
    total, seen = mx.nd.zeros((1,), ctx=model.ctx), 0
    for x, y in loader:
        x, y = x.as_in_context(model.ctx), y.as_in_context(model.ctx)
        with autograd.record():
            loss = trainer.loss(model(x), y)
        loss.backward()
        trainer.trainer.step(x.shape[0])
        total += loss.sum()
        seen += x.shape[0]
    return float(total.asscalar()) / max(seen, 1), seen


def synchronize() -> None:
    mx.nd.waitall()


def prepare(model: SentimentLSTM, trainer: Trainer, loader) -> float:
    """Nothing to compile ahead for MXNet (hybridized blocks build their graph on the first call, inside
    epoch 0, which is excluded from the statistics); returns 0 seconds."""
    return 0.0


def evaluate(model: SentimentLSTM, loader) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) over the loader."""
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    total, correct, seen = 0.0, 0, 0
    for x, y in loader:
        logits = model(x.as_in_context(model.ctx))
        y = y.as_in_context(model.ctx)
        total += float(loss_fn(logits, y).sum().asscalar())
        correct += int((logits.argmax(axis=1) == y).sum().asscalar())
        seen += x.shape[0]
    return total / max(seen, 1), correct / max(seen, 1)
