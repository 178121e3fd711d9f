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


class EpochPermutationSampler:
    """Sample order shared by both frameworks: epoch e visits ``RandomState(seed + e).permutation(n)``.

    Both DataLoaders accept any iterable sampler, so PyTorch and MXNet see the same batches in the same order.
    """

    def __init__(self, n: int, seed: int, shuffle: bool = True):
        self.n, self.seed, self.shuffle, self.epoch = n, seed, shuffle, 0

    def __iter__(self):
        order = (np.random.RandomState(self.seed + self.epoch).permutation(self.n) if self.shuffle
                 else np.arange(self.n))
        self.epoch += 1
        return iter(order.tolist())

    def __len__(self) -> int:
        return self.n
