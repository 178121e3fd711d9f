"""Two overview articles (2024-2025) without code or setup: their VGG16 numbers."""

from __future__ import annotations

SOURCE = "Two overview articles (2024-2025), no code, no setup"
# C1's 30.9 GFLOP (15.5 G multiply-adds) per image in 20.5-30.4 ms is 1.0-1.5 TFLOP/s: a GPU's rate, not a CPU's
C1_HARDWARE = "Google Colab, hardware not given (1.0-1.5 TFLOP/s implied: a GPU)"
VGG16_LATENCY_MS = {"torch": 30.4, "mxnet": 20.5}  # C1: average VGG16 inference time (Google Colab)
VGG16_8GPU_TRAIN_S = {"torch": 21.6, "mxnet": 15.4}  # C2: VGG16 on 8 GPUs
VGG16_IMAGE_SIZE = 224  # the standard input the C1 numbers are for
MIN_GPUS = 8  # C2's setup
