"""MXNet Gluon backend of the vision/kernel trials (same public names as ``fwbench.vision.torch``).

oneDNN (MKLDNN): MXNet decides at import from ``MXNET_MKLDNN_ENABLED`` (default on in the pip build); the
trial sets it before importing this module, and ``onednn(enabled)`` only checks that the process matches.
Threads: the OpenMP pool is sized by ``OMP_NUM_THREADS`` at import (set by the runner). MXNet is
asynchronous: ``synchronize`` (``mx.nd.waitall``) before reading the clock.
GPU: needs a CUDA build of MXNet 1.9.1 (``mxnet-cu112``; the pinned ``mxnet`` wheel is CPU-only).
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np
from mxnet.gluon import nn

from ..frameworks import mxnet as mxnet_facts
from . import NUM_CLASSES, POOLED, VGG16_CONFIG

FRAMEWORK = "mxnet"
ONEDNN_ENV = ("MXNET_MKLDNN_ENABLED",)  # read at import; the VGG16 study sets it before importing this module
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


def framework_info(device: str = "cpu") -> dict:
    info = mxnet_facts.info()
    return {**info, "device": device, "num_gpus": mx.context.num_gpus() if "CUDA" in info["features_enabled"] else 0}


def configure_threads(n: int) -> None:
    if os.environ.get("OMP_NUM_THREADS") != str(n):
        raise RuntimeError(f"MXNet reads OMP_NUM_THREADS at import; set it to {n} before importing mxnet")


def set_seed(seed: int) -> None:
    mx.random.seed(seed)
    np.random.seed(seed)


def resolve_device(device: str):
    """``"cpu"`` -> ``mx.cpu()``, ``"cuda"`` -> ``mx.gpu(0)``; a clear error where this build has no CUDA."""
    if device == "cpu":
        return mx.cpu()
    if device == "cuda":
        if not mx.runtime.Features().is_enabled("CUDA") or mx.context.num_gpus() == 0:
            raise RuntimeError(
                f"device='cuda' but mxnet {mx.__version__} has no CUDA GPU here (the pinned wheel "
                "is CPU-only; install mxnet-cu112==1.9.1 on a GPU host)"
            )
        return mx.gpu(0)
    raise ValueError(f"unknown device {device!r}; choose 'cpu' or 'cuda'")


class VGG16(nn.HybridBlock):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            channels = 3
            for v in VGG16_CONFIG:
                if v == "M":
                    self.features.add(nn.MaxPool2D(pool_size=2, strides=2))
                else:
                    self.features.add(nn.Conv2D(v, kernel_size=3, padding=1, in_channels=channels, activation="relu"))
                    channels = v
            self.classifier = nn.HybridSequential(prefix="classifier_")
            self.classifier.add(
                nn.Dense(4096, in_units=512 * POOLED * POOLED, activation="relu"),
                nn.Dropout(0.5),
                nn.Dense(4096, in_units=4096, activation="relu"),
                nn.Dropout(0.5),
                nn.Dense(num_classes, in_units=4096),
            )

    def hybrid_forward(self, F, x):
        x = F.contrib.AdaptiveAvgPooling2D(self.features(x), output_size=POOLED)
        return self.classifier(F.flatten(x))


def build_vgg16(device: str = "cpu", num_classes: int = NUM_CLASSES) -> VGG16:
    """VGG16 with random weights (Xavier), initialized on ``device``; Gluon runs inference mode unless
    recording autograd, so dropout is off."""
    model = VGG16(num_classes)
    model.initialize(mx.init.Xavier(), ctx=resolve_device(device))
    return model


def count_parameters(model) -> int:
    return sum(int(np.prod(p.shape)) for p in model.collect_params().values())


def make_images(batch: int, image_size: int, device: str = "cpu", seed: int = 0):
    """A random NCHW float32 batch of ``image_size`` x ``image_size`` RGB images."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, image_size, image_size), dtype=np.float32)
    return mx.nd.array(x, ctx=resolve_device(device), dtype=np.float32)


def compile_for_inference(model, example, variant: str):
    """``"hybrid-full"``: Gluon ``hybridize(static_alloc=True, static_shape=True)``, one cached symbolic graph with
    memory planned once, built by one call on ``example`` (here, where the trial times it, not in the warm-up)."""
    if variant != "hybrid-full":
        raise ValueError(f"unknown MXNet compile variant {variant!r}; choose 'hybrid-full'")
    model.hybridize(static_alloc=True, static_shape=True)
    model(example)
    mx.nd.waitall()
    return model


def compile_report() -> dict:
    """Twin of the PyTorch backend's TorchDynamo report: Gluon's hybridize has no graph breaks to count."""
    return {}


def onednn(enabled: bool):
    """MXNet fixes oneDNN use at import (``MXNET_MKLDNN_ENABLED``): this only checks the process matches."""
    return mxnet_facts.onednn(enabled, ONEDNN_ENV)


def onednn_enabled() -> bool:
    return mxnet_facts.onednn_enabled(ONEDNN_ENV)


def infer(model, x):
    """One forward pass (outside ``autograd.record``: no graph kept); the caller synchronizes."""
    return model(x)


def to_numpy(x) -> np.ndarray:
    return x.asnumpy()


def synchronize(device: str = "cpu") -> None:
    mx.nd.waitall()


def random_matrix(n: int, device: str = "cpu", seed: int = 0):
    rng = np.random.default_rng(seed)
    return mx.nd.array(rng.standard_normal((n, n), dtype=np.float32), ctx=resolve_device(device), dtype=np.float32)


def matmul(a, b):
    return mx.nd.dot(a, b)
