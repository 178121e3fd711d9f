"""The IMDB sentiment model in twin backends (d2l style): ``fwbench.sentiment.torch`` and
``fwbench.sentiment.mxnet`` expose the same public names, so a trial swaps frameworks by one import.

Each twin's public names are its ``__all__`` (the same list in both; ``tests/test_twins.py`` checks it). The
arm table of the ``imdb`` study names the twin an arm loads (``Arm.load_backend``).

Only the framework-free pieces live here (importing this package imports neither framework).
"""

from __future__ import annotations

import numpy as np

EMBEDDING_INIT_RANGE = 0.05  # Keras' default Embedding init, U(-0.05, 0.05), in both frameworks


def uniform_range(fan: int) -> float:
    """PyTorch's default LSTM/Linear init range 1/sqrt(fan), applied in both frameworks."""
    return 1.0 / float(np.sqrt(fan))


# Weight initialisations (the ``init`` option of the imdb study, the same in both frameworks):
# - ``uniform``: PyTorch's defaults, U(-1/sqrt(hidden), 1/sqrt(hidden)) for every LSTM and dense weight and bias,
#   drawn by each framework's own generator (the 2018 post's frameworks' defaults; what earlier runs used);
# - ``keras``: what the Keras IMDB LSTM examples train with: Glorot-uniform input and dense kernels, orthogonal
#   recurrent kernels, zero biases with the forget gate's bias at 1 (``unit_forget_bias``). The arrays are drawn
#   once in NumPy from the trial's seed (``keras_initial_weights``) and copied into the model, so both
#   frameworks start from the same weights, not only the same distributions.
# The embedding is U(-0.05, 0.05) (Keras' default) in both.
INITS = ("uniform", "keras")


def keras_initial_weights(
    vocab_size: int, embed_dim: int, hidden_size: int, num_classes: int, seed: int
) -> dict[str, np.ndarray]:
    """Keras-style initial weights, float32, in the layout both frameworks share: LSTM gates stacked in the
    order input, forget, cell, output (PyTorch ``weight_ih_l0`` (4H, E), ``weight_hh_l0`` (4H, H); MXNet
    ``i2h_weight``/``h2h_weight`` the same), dense weight (classes, H)."""
    rng = np.random.RandomState(seed)

    def glorot(rows: int, cols: int) -> np.ndarray:
        limit = np.sqrt(6.0 / (rows + cols))
        return rng.uniform(-limit, limit, (rows, cols))

    q, r = np.linalg.qr(rng.normal(size=(4 * hidden_size, hidden_size)))
    recurrent = q * np.sign(np.diag(r))  # orthonormal columns: Keras' orthogonal (H, 4H) kernel, transposed
    i2h_bias = np.zeros(4 * hidden_size)
    i2h_bias[hidden_size : 2 * hidden_size] = 1.0  # the forget gate (the second block) starts open
    weights = {
        "embedding": rng.uniform(-EMBEDDING_INIT_RANGE, EMBEDDING_INIT_RANGE, (vocab_size, embed_dim)),
        "i2h_weight": glorot(4 * hidden_size, embed_dim),
        "h2h_weight": recurrent,
        "i2h_bias": i2h_bias,
        "h2h_bias": np.zeros(4 * hidden_size),
        "output_weight": glorot(num_classes, hidden_size),
        "output_bias": np.zeros(num_classes),
    }
    return {k: v.astype(np.float32) for k, v in weights.items()}


def check_init(init: str) -> str:
    if init not in INITS:
        raise ValueError(f"unknown init {init!r}; choose one of {INITS}")
    return init


class EpochPermutationSampler:
    """Sample order shared by both frameworks: epoch e visits ``RandomState(seed + e).permutation(n)``.

    Both DataLoaders accept any iterable sampler, so PyTorch and MXNet see the same batches in the same order.
    """

    def __init__(self, n: int, seed: int, shuffle: bool = True):
        self.n, self.seed, self.shuffle, self.epoch = n, seed, shuffle, 0

    def __iter__(self):
        order = np.random.RandomState(self.seed + self.epoch).permutation(self.n) if self.shuffle else np.arange(self.n)
        self.epoch += 1
        return iter(order.tolist())

    def __len__(self) -> int:
        return self.n
