"""JAX backend of the vision/kernel trials (same public names as ``fwbench.vision.torch`` and ``.mxnet``), in the
``jax`` environment.

VGG16 is the twins' configuration "D" as a Flax (linen) module: 13 3x3 convolutions with ReLU, 5 max-pools, an
adaptive average pool to 7x7 (PyTorch's rule, so a small smoke input still feeds the same classifier), then
25088 -> 4096 -> 4096 -> 1000 dense layers (dropout is inactive at inference: left out). Flax's
default random initialisation (latency does not depend on the weights); 138,357,544 parameters, as the twins.
Images are NHWC, XLA's CPU layout (the twins' NCHW arrays transposed: the same values).

Every computation is jitted, so there is no eager arm: ``compile_for_inference(..., "jit")`` compiles the forward
pass for the example's shape and runs it once, where the trial times it (``compile_time_s``). ``infer`` and
``matmul`` return their result after ``block_until_ready`` (JAX dispatches asynchronously; ``synchronize`` has
nothing left to wait for). Threads: ``configure_threads`` pins the process to ``n`` CPUs before the first
computation (``fwbench.frameworks.jax``). oneDNN: none (XLA's own CPU kernels).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn

from ..frameworks import jax as jax_facts
from . import NUM_CLASSES, POOLED, VGG16_CONFIG

FRAMEWORK = "jax"
__all__ = [
    "FRAMEWORK",
    "framework_info",
    "configure_threads",
    "set_seed",
    "resolve_device",
    "VGG16",
    "build_vgg16",
    "count_parameters",
    "make_images",
    "compile_for_inference",
    "compile_report",
    "onednn",
    "onednn_enabled",
    "infer",
    "to_numpy",
    "synchronize",
    "random_matrix",
    "matmul",
]

_state = {"seed": 0}


def framework_info(device: str = "cpu") -> dict:
    return {**jax_facts.info(), "device": device}


def configure_threads(n: int) -> None:
    jax_facts.pin_to_cpus(n)


def set_seed(seed: int) -> None:
    np.random.seed(seed)
    _state["seed"] = seed


def resolve_device(device: str) -> str:
    if device != "cpu":
        raise RuntimeError(f"device {device!r}: the JAX twin runs on the CPU only (the jax environment is CPU jaxlib)")
    return device


def _adaptive_average_pool(x: jnp.ndarray, out: int) -> jnp.ndarray:
    """PyTorch's ``AdaptiveAvgPool2d`` on NHWC: output cell i averages rows floor(i h / out) to ceil((i + 1) h /
    out) (so a 1x1 map is repeated, a 14x14 one averaged in 2x2 blocks); static shapes, unrolled at trace time."""
    h, w = x.shape[1], x.shape[2]

    def bounds(i: int, size: int) -> tuple[int, int]:
        return (i * size) // out, -(-((i + 1) * size) // out)

    rows = []
    for i in range(out):
        r0, r1 = bounds(i, h)
        cells = [x[:, r0:r1, c0:c1].mean(axis=(1, 2)) for c0, c1 in (bounds(j, w) for j in range(out))]
        rows.append(jnp.stack(cells, axis=1))
    return jnp.stack(rows, axis=1)


class VGG16(nn.Module):
    num_classes: int = NUM_CLASSES

    @nn.compact
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        for v in VGG16_CONFIG:
            if v == "M":
                x = nn.max_pool(x, (2, 2), strides=(2, 2))
            else:
                x = nn.relu(nn.Conv(v, (3, 3), padding=1)(x))
        x = _adaptive_average_pool(x, POOLED)
        x = jnp.transpose(x, (0, 3, 1, 2)).reshape(x.shape[0], -1)  # the twins' (C, H, W) flattening order
        x = nn.relu(nn.Dense(4096)(x))
        x = nn.relu(nn.Dense(4096)(x))
        return nn.Dense(self.num_classes)(x)


class _Model:
    """The module, its parameters and its jitted forward pass."""

    def __init__(self, module: VGG16, params):
        self.module, self.params = module, params
        self.forward = jax.jit(module.apply)


def build_vgg16(device: str = "cpu", num_classes: int = NUM_CLASSES) -> _Model:
    """VGG16 with Flax's default random weights (from the seed ``set_seed`` gave), for inference."""
    resolve_device(device)
    module = VGG16(num_classes)
    params = jax.jit(module.init)(jax.random.PRNGKey(_state["seed"]), jnp.zeros((1, 224, 224, 3), jnp.float32))
    return _Model(module, params)


def count_parameters(model: _Model) -> int:
    return int(sum(np.prod(leaf.shape) for leaf in jax.tree_util.tree_leaves(model.params)))


def make_images(batch: int, image_size: int, device: str = "cpu", seed: int = 0) -> jnp.ndarray:
    """The twins' random batch (the same NCHW values), as NHWC."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, image_size, image_size), dtype=np.float32)
    return jnp.asarray(np.transpose(x, (0, 2, 3, 1)))


def compile_for_inference(model: _Model, example, variant: str) -> _Model:
    """``"jit"``: compile the forward pass for ``example``'s shape and run it once (the compile lands here)."""
    if variant != "jit":
        raise ValueError(f"unknown JAX compile variant {variant!r}; choose 'jit'")
    model.forward(model.params, example).block_until_ready()
    return model


def compile_report() -> dict:
    return {}


def onednn(enabled: bool):
    return jax_facts.onednn(enabled)


def onednn_enabled() -> bool:
    return jax_facts.onednn_enabled()


def infer(model: _Model, x):
    """One forward pass, waited for (JAX dispatches asynchronously)."""
    return model.forward(model.params, x).block_until_ready()


def to_numpy(x) -> np.ndarray:
    return np.asarray(x)


def synchronize(device: str = "cpu") -> None:
    """``infer`` and ``matmul`` wait for their result already."""


def random_matrix(n: int, device: str = "cpu", seed: int = 0) -> jnp.ndarray:
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))


_matmul = jax.jit(jnp.matmul)


def matmul(a, b):
    return _matmul(a, b).block_until_ready()
