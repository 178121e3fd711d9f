"""VGG16 inference and dense fp32 GEMM on CPU (or GPU), as twin backends with the same public names (each twin's
``__all__``, the same list in both; ``tests/test_twins.py`` checks it): ``fwbench.vision.torch`` and
``fwbench.vision.mxnet``. Import one of them inside a trial process only (the ``vgg16`` and ``gemm`` arm tables
name them; ``Arm.load_backend``). Timing and device helpers are in ``fwbench.measure`` and ``fwbench.devices``.

Both define VGG16 configuration "D" (Simonyan & Zisserman 2014) the way torchvision does: 13 3x3 convolutions
with ReLU and 5 max-pools, an adaptive average pool to 7x7 (so a small smoke input still feeds the same
classifier), then 25088 -> 4096 -> 4096 -> 1000 dense layers with dropout (inactive at inference). Weights are
random (no download): latency does not depend on their values. 138,357,544 parameters in both.
"""

from __future__ import annotations

VGG16_CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
VGG16_PARAMETERS = 138_357_544
NUM_CLASSES = 1000
POOLED = 7  # the classifier sees 512 x 7 x 7 = 25088 features


def vgg16_flops(image_size: int) -> float:
    """Floating-point operations (2 x multiply-adds) of one VGG16 forward pass on one image: 30.9 GFLOP at
    224x224, i.e. the 15.5 G multiply-adds usually quoted as "15.5 GFLOPs"."""
    flops, size, channels = 0.0, image_size, 3
    for v in VGG16_CONFIG:
        if v == "M":
            size //= 2
        else:
            flops += 2.0 * size * size * 9 * channels * v
            channels = v
    dense = [(512 * POOLED * POOLED, 4096), (4096, 4096), (4096, NUM_CLASSES)]
    return flops + sum(2.0 * a * b for a, b in dense)


def gemm_flops(n: int) -> float:
    """Floating-point operations of one n x n by n x n matrix product (n^3 multiply-adds)."""
    return 2.0 * n**3
