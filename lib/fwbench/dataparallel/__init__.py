"""Data-parallel training (claim C2's CPU analogue): what both frameworks' twin backends share, framework-free.

The model is a small VGG-style network (VGG16 itself has 138M parameters, a 550 MB gradient: one step of it on
two CPU cores would take minutes): three 3x3 convolution blocks (32, 64, 128 channels, each ReLU + 2x2 max-pool) on
32x32 RGB images, then dense ``hidden`` -> ReLU -> dense 10. With ``hidden=1024`` it has 2.2M parameters, an 8.8 MB
gradient: large enough that synchronising it costs a visible share of a step on a CPU, small enough for minutes.

Both backends load the same initial NumPy arrays (``initial_weights``, in ``parameter_shapes`` order) and train on
the same synthetic batches (``global_batch``: rank r takes rows ``r::world`` of each global batch). The inputs are
random images, said so in every table: C2 is a throughput claim, and what is measured here is the cost of keeping
replicas in step, which does not depend on what the pixels show.
"""

from __future__ import annotations

import numpy as np

CHANNELS = (32, 64, 128)
IMAGE_SIZE = 32
IN_CHANNELS = 3
NUM_CLASSES = 10


def flat_features() -> int:
    side = IMAGE_SIZE // 2 ** len(CHANNELS)
    return CHANNELS[-1] * side * side


def parameter_shapes(hidden: int) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every parameter in the order both backends declare them (weights OIHW / (out, in))."""
    shapes, c_in = [], IN_CHANNELS
    for i, c_out in enumerate(CHANNELS):
        shapes += [(f"conv{i}.weight", (c_out, c_in, 3, 3)), (f"conv{i}.bias", (c_out,))]
        c_in = c_out
    shapes += [("fc0.weight", (hidden, flat_features())), ("fc0.bias", (hidden,))]
    shapes += [("fc1.weight", (NUM_CLASSES, hidden)), ("fc1.bias", (NUM_CLASSES,))]
    return shapes


def parameter_count(hidden: int) -> int:
    return sum(int(np.prod(shape)) for _, shape in parameter_shapes(hidden))


def initial_weights(hidden: int, seed: int) -> list[np.ndarray]:
    """Glorot-uniform weights and zero biases, float32, the same arrays for every framework and rank."""
    rng = np.random.default_rng(seed)
    out = []
    for name, shape in parameter_shapes(hidden):
        if name.endswith(".bias"):
            out.append(np.zeros(shape, np.float32))
            continue
        receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        out.append(rng.uniform(-limit, limit, size=shape).astype(np.float32))
    return out


def global_batch(seed: int, step: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Step ``step``'s global batch of synthetic images (N, 3, 32, 32) and labels, the same on every rank."""
    rng = np.random.default_rng([seed, step])
    images = rng.standard_normal((size, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE), dtype=np.float32)
    labels = rng.integers(0, NUM_CLASSES, size=size).astype(np.int64)
    return images, labels


def rank_batch(seed: int, step: int, per_rank: int, rank: int, world: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s share of step ``step``'s global batch (``per_rank`` rows each: weak scaling)."""
    images, labels = global_batch(seed, step, per_rank * world)
    return images[rank::world], labels[rank::world]
