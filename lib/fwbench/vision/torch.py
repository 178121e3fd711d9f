"""PyTorch backend of the vision/kernel trials (same public names as ``fwbench.vision.mxnet``).

VGG16 is written out here (torchvision is not part of the pinned environment); its layer layout and parameter
count match ``torchvision.models.vgg16``. oneDNN (MKLDNN) is switched per call with
``torch.backends.mkldnn.flags(enabled=...)``: with it off, convolutions take PyTorch's own CPU path
(im2col + BLAS GEMM) instead of oneDNN's kernels.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..frameworks import torch as torch_facts
from . import NUM_CLASSES, POOLED, VGG16_CONFIG

FRAMEWORK = "torch"
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
    info = {**torch_facts.info(), "device": device}
    if device == "cuda" and torch.cuda.is_available():
        info.update(
            cuda_version=torch.version.cuda,
            gpu_name=torch.cuda.get_device_name(0),
            cudnn_version=torch.backends.cudnn.version(),
        )
    return info


def configure_threads(n: int) -> None:
    torch.set_num_threads(n)


def set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def resolve_device(device: str) -> torch.device:
    """``"cpu"`` or ``"cuda"`` (the first GPU); a clear error where this build or machine has no CUDA."""
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device='cuda' but torch {torch.__version__} sees no CUDA GPU "
                f"(built with CUDA {torch.version.cuda}); install a CUDA build of torch on a GPU host"
            )
        return torch.device("cuda", 0)
    raise ValueError(f"unknown device {device!r}; choose 'cpu' or 'cuda'")


class VGG16(nn.Module):
    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        layers, channels = [], 3
        for v in VGG16_CONFIG:
            if v == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                channels = v
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((POOLED, POOLED))
        self.classifier = nn.Sequential(
            nn.Linear(512 * POOLED * POOLED, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def build_vgg16(device: str = "cpu", num_classes: int = NUM_CLASSES) -> VGG16:
    """VGG16 with random weights (PyTorch's default init), in eval mode (dropout off), on ``device``."""
    return VGG16(num_classes).to(resolve_device(device)).eval()


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def make_images(batch: int, image_size: int, device: str = "cpu", seed: int = 0) -> torch.Tensor:
    """A random NCHW float32 batch of ``image_size`` x ``image_size`` RGB images."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, image_size, image_size), dtype=np.float32)
    return torch.from_numpy(x).to(resolve_device(device))


def compile_for_inference(model, example, variant: str):
    """The model compiled the way the arm's ``variant`` says, then called once on ``example`` (no grad) so the
    compilation work lands here, where the trial times it, and not in the warm-up:

    - ``"script"``: TorchScript, ``torch.jit.trace`` then ``torch.jit.freeze`` (weights folded as constants);
    - ``"compile"``: ``torch.compile`` (TorchDynamo + Inductor, default mode) of the eager model; Inductor
      compiles on the first call, with its cache directory as the caller set it (``TORCHINDUCTOR_CACHE_DIR``).
    """
    with torch.no_grad():
        if variant == "script":
            compiled = torch.jit.freeze(torch.jit.trace(model, example).eval())
        elif variant == "compile":
            compiled = torch.compile(model)
        else:
            raise ValueError(f"unknown PyTorch compile variant {variant!r}; choose 'script' or 'compile'")
        compiled(example)
    return compiled


def compile_report() -> dict:
    """What TorchDynamo captured in this process (``torch.compile``): graphs compiled and graph breaks (0 breaks
    and 1 graph: the compiler traced the whole model). Empty where Dynamo never ran (eager, TorchScript)."""
    from torch._dynamo.utils import counters

    graphs = int(counters["stats"].get("unique_graphs", 0))
    breaks = int(sum(counters["graph_break"].values()))
    return {"dynamo_graphs": graphs, "graph_breaks": breaks} if graphs or breaks else {}


def onednn(enabled: bool):
    """Context in which oneDNN is on or off for this process's CPU ops."""
    return torch.backends.mkldnn.flags(enabled=enabled)


def onednn_enabled() -> bool:
    return bool(torch.backends.mkldnn.enabled)


@torch.no_grad()
def infer(model, x: torch.Tensor) -> torch.Tensor:
    """One forward pass without autograd (the caller synchronizes before reading the clock)."""
    return model(x)


def to_numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy()


def synchronize(device: str = "cpu") -> None:
    """CPU PyTorch executes eagerly; on CUDA wait for the queued kernels."""
    if device == "cuda":
        torch.cuda.synchronize()


def random_matrix(n: int, device: str = "cpu", seed: int = 0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal((n, n), dtype=np.float32)).to(resolve_device(device))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(a, b)
