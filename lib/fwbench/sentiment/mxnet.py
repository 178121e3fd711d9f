"""MXNet Gluon backend of the IMDB sentiment model (same public names as ``fwbench.sentiment.torch``).

Thread count: MXNet's OpenMP pool is sized by ``OMP_NUM_THREADS`` at import; the trial runner sets it in the
child's environment before this module is imported, and ``configure_threads`` only checks it.
oneDNN: fixed at import by ``MXNET_MKLDNN_ENABLED`` and, for the LSTM, ``MXNET_USE_MKLDNN_RNN`` (``ONEDNN_ENV``;
the trial sets both first); ``onednn(enabled)`` only checks. Both must be 0 for oneDNN off: with
``MXNET_MKLDNN_ENABLED=0`` alone, MXNet 1.9.1 fails the LSTM's backward pass ("Check failed: in_data.size() ==
num_inputs (4 vs. 3)", rnn-inl.h:581); with both off the LSTM runs MXNet's own CPU kernels.

Data-loader workers (``make_loader(..., persistent=)``): MXNet 1.9.1 builds a ``multiprocessing.Pool`` in
``DataLoader.__init__`` and keeps it, so ``persistent=True`` is its own behaviour (pool built before the timed
epochs). ``persistent=False`` does what PyTorch's default does (and what MXNet 1.0 did in 2018, starting its
workers per pass): each pass builds the DataLoader, and so its pool, and closes and joins the pool when the pass
ends, inside the timed epoch. With 0 workers there is no pool and both are the same.
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn, rnn

from ..frameworks import mxnet as mxnet_facts
from . import EMBEDDING_INIT_RANGE, EpochPermutationSampler, check_init, keras_initial_weights, uniform_range

FRAMEWORK = "mxnet"
ONEDNN_ENV = ("MXNET_MKLDNN_ENABLED", "MXNET_USE_MKLDNN_RNN")  # read at import; "0" turns oneDNN off
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


def _context(device: str = "cpu"):
    """``cpu`` or ``cuda`` (needs an ``mxnet-cu11x``/``cu12x`` build instead of the CPU wheel)."""
    if device == "cpu":
        return mx.cpu()
    if device == "cuda":
        if mx.context.num_gpus() == 0:
            raise RuntimeError(
                "device 'cuda' asked for, but this MXNet build sees no GPU (install an mxnet-cu11x "
                "wheel on a CUDA machine)"
            )
        return mx.gpu(0)
    raise ValueError(f"unknown device {device!r}")


def framework_info() -> dict:
    return mxnet_facts.info()


def set_seed(seed: int) -> None:
    mx.random.seed(seed)
    np.random.seed(seed)


def configure_threads(n: int) -> None:
    if os.environ.get("OMP_NUM_THREADS") != str(n):
        raise RuntimeError(f"MXNet reads OMP_NUM_THREADS at import; set it to {n} before importing mxnet")


class SentimentLSTM(gluon.HybridBlock):
    """Embedding -> LSTM -> Dense(num_classes) on the last time step (softmax lives in the loss).

    A HybridBlock, so the same code runs three ways (``build_model(variant=)``): ``imperative`` (nothing
    hybridized), ``hybrid-partial`` (the MXNet team's advice to the 2018 post, which could not hybridize
    ``gluon.rnn.LSTM``: only the pre-LSTM embedding and post-LSTM dense blocks become static graphs) and
    ``hybrid-full`` (the whole model, ``gluon.rnn.LSTM`` included, one static graph). The last time step is taken
    with ``F.slice_axis``: ``F.SequenceLast(axis=1)`` gives wrong input gradients in MXNet 1.9.1 (and corrupts
    the heap on exit).
    """

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int = 2):
        super().__init__()
        self.ctx, self.variant = mx.cpu(), "imperative"
        k = uniform_range(hidden_size)
        with self.name_scope():
            self.embedding = nn.Embedding(
                vocab_size, embed_dim, weight_initializer=mx.init.Uniform(EMBEDDING_INIT_RANGE)
            )
            self.lstm = rnn.LSTM(
                hidden_size,
                layout="NTC",
                input_size=embed_dim,
                i2h_weight_initializer=mx.init.Uniform(k),
                h2h_weight_initializer=mx.init.Uniform(k),
                i2h_bias_initializer=mx.init.Uniform(k),
                h2h_bias_initializer=mx.init.Uniform(k),
            )
            self.output = nn.Dense(
                num_classes,
                in_units=hidden_size,
                weight_initializer=mx.init.Uniform(k),
                bias_initializer=mx.init.Uniform(k),
            )

    def hybrid_forward(self, F, x):
        hidden = self.lstm(self.embedding(x))  # (batch, time, hidden)
        last = F.slice_axis(hidden, axis=1, begin=-1, end=None)
        return self.output(F.reshape(last, shape=(0, -1)))


_VARIANTS = ("imperative", "hybrid-partial", "hybrid-full")


def build_model(
    vocab_size: int,
    embed_dim: int,
    hidden_size: int,
    num_classes: int = 2,
    sparse: bool = False,
    variant: str = "imperative",
    device: str = "cpu",
    init: str = "uniform",
    seed: int = 0,
) -> SentimentLSTM:
    """``variant``: ``imperative``, ``hybrid-partial`` (pre/post-LSTM blocks hybridized) or ``hybrid-full``
    (everything hybridized); the graphs are built by the first forward pass (``prepare``). ``init``: one of
    ``fwbench.sentiment.INITS`` (``seed`` draws the ``keras`` arrays)."""
    if sparse:
        raise ValueError("the MXNet arm uses dense embedding gradients (the sparse arm is PyTorch's)")
    if variant not in _VARIANTS:
        raise ValueError(f"unknown MXNet variant {variant!r}; choose one of {_VARIANTS}")
    model = SentimentLSTM(vocab_size, embed_dim, hidden_size, num_classes)
    model.ctx, model.variant = _context(device), variant
    model.initialize(ctx=model.ctx)
    if check_init(init) == "keras":  # the same arrays as the PyTorch twin (``keras_initial_weights``)
        w = keras_initial_weights(vocab_size, embed_dim, hidden_size, num_classes, seed)
        blocks = {
            "embedding": model.embedding.weight,
            "output_weight": model.output.weight,
            "output_bias": model.output.bias,
        }
        lstm = model.lstm.collect_params()  # names end in l0_i2h_weight, l0_h2h_weight, ... (one layer)
        blocks.update(
            {
                k: next(p for name, p in lstm.items() if name.endswith(f"l0_{k}"))
                for k in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")
            }
        )
        for name, param in blocks.items():
            param.set_data(mx.nd.array(w[name], ctx=model.ctx))
    if variant == "hybrid-partial":
        model.embedding.hybridize(static_alloc=True, static_shape=True)
        model.output.hybridize(static_alloc=True, static_shape=True)
    elif variant == "hybrid-full":
        model.hybridize(static_alloc=True, static_shape=True)
    return model


def count_parameters(model: SentimentLSTM) -> int:
    return sum(int(np.prod(p.shape)) for p in model.collect_params().values())


class _Loader:
    """The training/test loader: a DataLoader kept for every pass (``persistent``, or 0 workers), or one built
    per pass whose worker pool is closed and joined when the pass ends."""

    def __init__(self, dataset, batch_size: int, num_workers: int, sampler, persistent: bool):
        self.dataset, self.batch_size, self.num_workers, self.sampler = dataset, batch_size, num_workers, sampler
        self.per_pass = num_workers > 0 and not persistent
        self.loader = None if self.per_pass else self._build()

    def _build(self):
        return gluon.data.DataLoader(
            self.dataset, batch_size=self.batch_size, num_workers=self.num_workers, sampler=self.sampler
        )

    def __iter__(self):
        if not self.per_pass:
            yield from self.loader
            return
        loader = self._build()
        try:
            yield from loader
        finally:
            pool = loader._worker_pool  # MXNet only terminates it in __del__: shut it down here, as PyTorch does
            pool.close()
            pool.join()

    def __len__(self) -> int:
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def make_loader(
    x: np.ndarray, y: np.ndarray, batch_size: int, num_workers: int, shuffle: bool, seed: int, persistent: bool = False
):
    """Batches in the shared sample order; ``persistent``: one worker pool built now, before the timed epochs."""
    dataset = gluon.data.ArrayDataset(x.astype(np.float32), y.astype(np.float32))
    return _Loader(dataset, batch_size, num_workers, EpochPermutationSampler(len(y), seed, shuffle), persistent)


class Trainer:
    """Adam. ``clip_norm``: as in the PyTorch twin, on the gradients of the batch-mean loss (MXNet's gradients
    are of the summed loss, so the norm is compared at ``clip_norm * batch``; ``step(batch)`` divides later)."""

    def __init__(self, model: SentimentLSTM, lr: float, clip_norm: float | None = None):
        self.trainer = gluon.Trainer(model.collect_params(), "adam", {"learning_rate": lr})
        self.loss = gluon.loss.SoftmaxCrossEntropyLoss()
        self.params, self.clip_norm = list(model.collect_params().values()), clip_norm

    def clip(self, batch: int) -> None:
        if self.clip_norm is not None:
            grads = [p.grad(p.list_ctx()[0]) for p in self.params if p.grad_req != "null"]
            gluon.utils.clip_global_norm(grads, self.clip_norm * batch, check_isfinite=False)


def make_trainer(model: SentimentLSTM, lr: float, clip_norm: float | None = None) -> Trainer:
    return Trainer(model, lr, clip_norm)


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
        trainer.clip(x.shape[0])
        trainer.trainer.step(x.shape[0])
        total += loss.sum()
        seen += x.shape[0]
    return float(total.asscalar()) / max(seen, 1), seen


def synchronize() -> None:
    mx.nd.waitall()


def prepare(model: SentimentLSTM, trainer: Trainer, loader) -> float:
    """Ahead-of-epoch work, timed apart from the epochs: for a hybridized model, one forward+backward on the
    first ``batch_size`` samples builds its static graphs (gradients are left unused: no training step), as
    ``torch.compile`` is triggered in PyTorch's ``prepare``. Errors (a block that cannot be hybridized) propagate.
    Returns seconds (0 for the imperative model)."""
    if model.variant == "imperative":
        return 0.0
    import time

    data, labels = loader.dataset[: loader.batch_size]  # the first samples, not the loader: its order stays
    x, y = mx.nd.array(data, ctx=model.ctx), mx.nd.array(labels, ctx=model.ctx)
    mx.nd.waitall()
    t0 = time.perf_counter()
    with autograd.record():
        loss = trainer.loss(model(x), y)
    loss.backward()
    mx.nd.waitall()
    return time.perf_counter() - t0


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


def onednn(enabled: bool):
    """MXNet fixes oneDNN use at import (``ONEDNN_ENV``): this only checks the process matches."""
    return mxnet_facts.onednn(enabled, ONEDNN_ENV)


def onednn_enabled() -> bool:
    """Whether this process's MXNet runs oneDNN kernels, the LSTM's included."""
    return mxnet_facts.onednn_enabled(ONEDNN_ENV)


def bare_loop(spec: dict, x, y) -> list[float]:
    """Plain MXNet Gluon, written from scratch: the same network as the PyTorch twin's, Adam, one loop, ``waitall``
    before each clock; seconds per epoch.

    Imports what it uses inside (the clock too) and reads nothing of this module, so a test can check that no
    fwbench code runs near the clock; the harness benchmark (``fwbench.bench``) runs it in a child process."""
    import time

    import mxnet as mx
    from mxnet import autograd, gluon

    m = spec["model"]
    mx.random.seed(spec["seed"])

    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.embedding = gluon.nn.Embedding(m["num_words"], m["embed_dim"])
                self.lstm = gluon.rnn.LSTM(m["hidden_size"], layout="NTC", input_size=m["embed_dim"])
                self.output = gluon.nn.Dense(m["num_classes"], in_units=m["hidden_size"])

        def forward(self, tokens):
            return self.output(self.lstm(self.embedding(tokens))[:, -1, :])

    net = Net()
    net.initialize()
    data = gluon.data.ArrayDataset(x.astype("float32"), y.astype("float32"))
    loader = gluon.data.DataLoader(data, batch_size=spec["batch_size"], shuffle=True)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": spec["lr"]})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    times = []
    for _ in range(spec["epochs"]):
        mx.nd.waitall()
        t0 = time.perf_counter()
        for xb, yb in loader:
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(xb.shape[0])
        mx.nd.waitall()
        times.append(time.perf_counter() - t0)
    return times
