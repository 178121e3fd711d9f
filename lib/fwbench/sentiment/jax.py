"""JAX backend of the IMDB sentiment model (same public names as ``fwbench.sentiment.torch`` and ``.mxnet``): a Flax
(linen) module, optax's Adam, one jit-compiled training step. It runs in the ``jax`` environment (numpy 2).

The model is the twins' Embedding -> LSTM -> Dense on the last time step, with its parameters in their shared
layout (``keras_initial_weights``: LSTM gates stacked input, forget, cell, output; ``i2h_weight`` (4H, E),
``h2h_weight`` (4H, H), both biases), the LSTM written as a ``lax.scan`` over the time steps, as PyTorch's
``nn.LSTM`` computes it. Adam is optax's with PyTorch's defaults (betas 0.9 / 0.999, eps 1e-8 added to the root of
the second moment); the learning rate is a hyperparameter of the optimizer state (``inject_hyperparams``), so a
schedule changes it without recompiling. Clipping is PyTorch's twin's global-norm rule, written out.

Threads: ``configure_threads`` pins the process to ``n`` CPUs before the first computation (``fwbench.frameworks.jax``
says why affinity, not ``XLA_FLAGS``); called after JAX made its thread pool, it raises.

Compilation: the jitted step compiles on its first call for each input shape. ``prepare`` calls the training step
and the evaluation step on the first batch's shape, throws the results away (the step is a pure function: no
parameter changes) and returns the seconds: the trial stores them as ``prepare_time_s``, the wait before the first
batch, and the epochs exclude it. A last partial batch has another shape and compiles once more in the first epoch,
which the timing excludes as warm-up.

Loader workers: JAX has no data loader. ``make_loader`` slices the in-memory token arrays in the shared sample order
(``EpochPermutationSampler``); with ``num_workers`` > 0 that many background threads prepare the next batches
while the step runs (slicing NumPy arrays: little to hide). ``persistent`` changes nothing (no processes to keep).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn

from ..frameworks import jax as jax_facts
from . import EMBEDDING_INIT_RANGE, EpochPermutationSampler, check_init, keras_initial_weights, uniform_range

FRAMEWORK = "jax"
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

_state = {"computed": False}  # whether this process has run a JAX computation (its thread pool exists)


def framework_info() -> dict:
    return jax_facts.info()


def set_seed(seed: int) -> None:
    """The initial weights are NumPy arrays (``init`` uniform or keras), so NumPy's generator is the one to seed."""
    np.random.seed(seed)


def configure_threads(n: int) -> None:
    if _state["computed"]:
        raise RuntimeError("JAX threads are set by CPU affinity before the first computation; it has run already")
    jax_facts.pin_to_cpus(n)


def _initial_params(vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int, init: str, seed: int):
    """The twins' parameter arrays: ``keras`` the shared Keras-style arrays; ``uniform`` PyTorch's default ranges,
    drawn by NumPy from ``seed`` (this twin's own generator, as each twin draws its own)."""
    if check_init(init) == "keras":
        return keras_initial_weights(vocab_size, embed_dim, hidden_size, num_classes, seed)
    rng = np.random.RandomState(seed)
    r = uniform_range(hidden_size)
    shapes = {
        "i2h_weight": (4 * hidden_size, embed_dim),
        "h2h_weight": (4 * hidden_size, hidden_size),
        "i2h_bias": (4 * hidden_size,),
        "h2h_bias": (4 * hidden_size,),
        "output_weight": (num_classes, hidden_size),
        "output_bias": (num_classes,),
    }
    out = {"embedding": rng.uniform(-EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE, (vocab_size, embed_dim))}
    out.update({name: rng.uniform(-r, r, shape) for name, shape in shapes.items()})
    return {k: v.astype(np.float32) for k, v in out.items()}


def _given(value: np.ndarray):
    """A Flax initializer that returns ``value`` (the key is unused: the twins' arrays are drawn in NumPy)."""
    return lambda _key: jnp.asarray(value)


class SentimentLSTM(nn.Module):
    """Embedding -> LSTM -> Dense(num_classes) on the last time step (softmax lives in the loss). Its parameters
    are given (``initial``: the twins' arrays), not drawn by Flax."""

    vocab_size: int
    embed_dim: int
    hidden_size: int
    num_classes: int
    initial: dict

    @nn.compact
    def __call__(self, tokens: jnp.ndarray) -> jnp.ndarray:
        p = {name: self.param(name, _given(value)) for name, value in self.initial.items()}
        x = jnp.take(p["embedding"], tokens, axis=0)  # (batch, time, embed)
        x_gates = x @ p["i2h_weight"].T + p["i2h_bias"] + p["h2h_bias"]  # the input's part of every step at once
        batch, h = tokens.shape[0], self.hidden_size

        def step(carry, gates_in):
            hidden, cell = carry
            gates = gates_in + hidden @ p["h2h_weight"].T
            i, f, g, o = jnp.split(gates, 4, axis=-1)  # PyTorch's gate order
            cell = jax.nn.sigmoid(f) * cell + jax.nn.sigmoid(i) * jnp.tanh(g)
            hidden = jax.nn.sigmoid(o) * jnp.tanh(cell)
            return (hidden, cell), None

        zeros = jnp.zeros((batch, h), x.dtype)
        (hidden, _), _ = jax.lax.scan(step, (zeros, zeros), jnp.swapaxes(x_gates, 0, 1))
        return hidden @ p["output_weight"].T + p["output_bias"]


class _Model:
    """The module, its current parameters (JAX's are values, not state: the trainer replaces them) and its jitted
    evaluation step (summed cross-entropy and correct count of a batch)."""

    def __init__(self, module: SentimentLSTM, params):
        self.module, self.params = module, params

        def eval_step(params, tokens, labels):
            logits = module.apply(params, tokens)
            losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
            return losses.sum(), (logits.argmax(-1) == labels).sum()

        self.eval_step = jax.jit(eval_step)


def build_model(
    vocab_size: int,
    embed_dim: int,
    hidden_size: int,
    num_classes: int = 2,
    sparse: bool = False,
    variant: str = "jit",
    device: str = "cpu",
    init: str = "uniform",
    seed: int = 0,
) -> _Model:
    """``variant``: ``jit`` (the only one: a JAX step is compiled or it is not JAX). No sparse gradients and no
    device but the CPU in this study."""
    if variant != "jit":
        raise ValueError(f"unknown JAX variant {variant!r}")
    if sparse:
        raise ValueError("the JAX twin has no sparse embedding gradients")
    if device != "cpu":
        raise RuntimeError(f"device {device!r}: the JAX twin runs on the CPU only")
    initial = _initial_params(vocab_size, embed_dim, hidden_size, num_classes, init, seed)
    module = SentimentLSTM(vocab_size, embed_dim, hidden_size, num_classes, initial)
    _state["computed"] = True
    params = module.init(jax.random.PRNGKey(seed), jnp.zeros((1, 1), jnp.int32))
    return _Model(module, params)


def count_parameters(model: _Model) -> int:
    return int(sum(np.prod(leaf.shape) for leaf in jax.tree_util.tree_leaves(model.params)))


class _Loader:
    """Batches of (tokens int32, labels int32) in the shared sample order; ``workers`` threads slice ahead."""

    def __init__(self, x: np.ndarray, y: np.ndarray, batch_size: int, workers: int, sampler: EpochPermutationSampler):
        self.x, self.y = x.astype(np.int32), y.astype(np.int32)
        self.batch_size, self.workers, self.sampler = batch_size, workers, sampler

    def _batch(self, rows: list[int]):
        return self.x[rows], self.y[rows]

    def __iter__(self):
        order = list(iter(self.sampler))
        chunks = [order[k : k + self.batch_size] for k in range(0, len(order), self.batch_size)]
        if not self.workers:
            yield from (self._batch(rows) for rows in chunks)
            return
        with ThreadPoolExecutor(self.workers) as pool:
            yield from pool.map(self._batch, chunks)

    def __len__(self) -> int:
        return -(-len(self.y) // self.batch_size)


def make_loader(
    x: np.ndarray, y: np.ndarray, batch_size: int, num_workers: int, shuffle: bool, seed: int, persistent: bool = False
) -> _Loader:
    return _Loader(x, y, batch_size, num_workers, EpochPermutationSampler(len(y), seed, shuffle))


def _cross_entropy(logits: jnp.ndarray, labels: jnp.ndarray) -> jnp.ndarray:
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def _clip(grads, clip_norm: float | None):
    """PyTorch's twin's rule: scale by clip / (norm + 1e-6) when that is below 1."""
    if clip_norm is None:
        return grads
    norm = optax.global_norm(grads)
    scale = jnp.minimum(1.0, clip_norm / (norm + 1e-6))
    return jax.tree_util.tree_map(lambda g: g * scale, grads)


class Trainer:
    """optax Adam with the learning rate in its state; ``step`` is the jitted training step."""

    def __init__(self, model: _Model, lr: float, clip_norm: float | None = None):
        self.optimizer = optax.inject_hyperparams(optax.adam)(learning_rate=lr, b1=0.9, b2=0.999, eps=1e-8)
        self.opt_state = self.optimizer.init(model.params)
        module, optimizer = model.module, self.optimizer

        def train_step(params, opt_state, tokens, labels):
            loss, grads = jax.value_and_grad(lambda p: _cross_entropy(module.apply(p, tokens), labels))(params)
            updates, opt_state = optimizer.update(_clip(grads, clip_norm), opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        self.step = jax.jit(train_step)


def make_trainer(model: _Model, lr: float, clip_norm: float | None = None) -> Trainer:
    return Trainer(model, lr, clip_norm)


def set_learning_rate(trainer: Trainer, lr: float) -> None:
    trainer.opt_state.hyperparams["learning_rate"] = jnp.asarray(lr, jnp.float32)


def train_one_epoch(model: _Model, trainer: Trainer, loader: _Loader) -> tuple[float, int]:
    """One pass over the loader; returns (mean training loss, samples seen). The losses stay on the device and are
    summed once at the end, so no per-batch host sync is added (JAX dispatches the steps asynchronously)."""
    total, seen = jnp.zeros((), jnp.float32), 0
    for x, y in loader:
        model.params, trainer.opt_state, loss = trainer.step(model.params, trainer.opt_state, x, y)
        total = total + loss * len(y)
        seen += len(y)
    return float(total) / max(seen, 1), seen


def synchronize() -> None:
    """Wait for every dispatched computation (JAX runs asynchronously)."""
    (jnp.zeros(()) + 0).block_until_ready()


def prepare(model: _Model, trainer: Trainer, loader: _Loader) -> float:
    """Compile the training and evaluation steps for the first batch's shape (results dropped: no step is taken);
    returns seconds, the wait before the first batch."""
    rows = list(range(min(loader.batch_size, len(loader.y))))
    x, y = loader.x[rows], loader.y[rows]
    t0 = time.perf_counter()
    params, _, loss = trainer.step(model.params, trainer.opt_state, x, y)
    jax.block_until_ready((params, loss))
    jax.block_until_ready(model.eval_step(model.params, x, y))
    return time.perf_counter() - t0


def evaluate(model: _Model, loader: _Loader) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) over the loader."""
    total, correct, seen = 0.0, 0, 0
    for x, y in loader:
        loss_sum, right = model.eval_step(model.params, x, y)
        total += float(loss_sum)
        correct += int(right)
        seen += len(y)
    return total / max(seen, 1), correct / max(seen, 1)


def onednn(enabled: bool):
    return jax_facts.onednn(enabled)


def onednn_enabled() -> bool:
    return jax_facts.onednn_enabled()


def bare_loop(spec: dict, x, y) -> list[float]:
    """Plain JAX + optax, written from scratch: Embedding -> LSTM (``lax.scan``) -> Dense on the last step, Adam,
    one jitted step; seconds per epoch (the first includes compiling). Reads nothing of this module."""
    import os
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: spec["threads"]])  # XLA's pool: these CPUs only
    m = spec["model"]
    rng = np.random.RandomState(spec["seed"])
    e, h, c = m["embed_dim"], m["hidden_size"], m["num_classes"]
    r = 1 / np.sqrt(h)
    params = {
        "emb": rng.uniform(-0.05, 0.05, (m["num_words"], e)),
        "wi": rng.uniform(-r, r, (e, 4 * h)),
        "wh": rng.uniform(-r, r, (h, 4 * h)),
        "b": rng.uniform(-r, r, (4 * h,)),
        "wo": rng.uniform(-r, r, (h, c)),
        "bo": rng.uniform(-r, r, (c,)),
    }
    params = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), params)

    def forward(p, tokens):
        xs = jnp.take(p["emb"], tokens, axis=0) @ p["wi"] + p["b"]

        def cell(carry, xt):
            hid, mem = carry
            i, f, g, o = jnp.split(xt + hid @ p["wh"], 4, axis=-1)
            mem = jax.nn.sigmoid(f) * mem + jax.nn.sigmoid(i) * jnp.tanh(g)
            hid = jax.nn.sigmoid(o) * jnp.tanh(mem)
            return (hid, mem), None

        zeros = jnp.zeros((tokens.shape[0], h))
        (hid, _), _ = jax.lax.scan(cell, (zeros, zeros), jnp.swapaxes(xs, 0, 1))
        return hid @ p["wo"] + p["bo"]

    optimizer = optax.adam(spec["lr"])
    state = optimizer.init(params)

    @jax.jit
    def step(p, s, xb, yb):
        loss = lambda q: optax.softmax_cross_entropy_with_integer_labels(forward(q, xb), yb).mean()  # noqa: E731
        grads = jax.grad(loss)(p)
        updates, s = optimizer.update(grads, s, p)
        return optax.apply_updates(p, updates), s

    x, y = x.astype(np.int32), y.astype(np.int32)
    times = []
    for _ in range(spec["epochs"]):
        order = rng.permutation(len(y))
        t0 = time.perf_counter()
        for k in range(0, len(y), spec["batch_size"]):
            rows = order[k : k + spec["batch_size"]]
            params, state = step(params, state, x[rows], y[rows])
        jax.block_until_ready(params)
        times.append(time.perf_counter() - t0)
    return times
