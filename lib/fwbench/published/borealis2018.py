"""Borealis AI, 'PyTorch vs MXNet' (2018): the post's numbers (ratios are of epoch times: slower / faster)."""

from __future__ import annotations

SOURCE = "Borealis AI, 'PyTorch vs MXNet' (2018-02-16)"
HARDWARE = "1x Tesla V100 GPU (AWS p3.2xlarge)"
CONDITIONS = (
    "AWS p3.2xlarge, 1x Tesla V100; PyTorch 0.3.0.post4, MXNet 1.0.0, CUDA 9.0, cuDNN 7.0, Python 3.6; "
    "full IMDB (25k/25k)"
)

TORCH_SPEEDUP_0_WORKERS = 1.10  # A1: "with 0 workers PyTorch is about 10 % faster"
CPU_PCT = {"mxnet": 120, "torch": 100}  # A2: process CPU % (text only: not a GPU claim we can time)
GPU_UTIL_PCT = {"torch": 77, "mxnet": 65}  # A2
GPU_UTIL_1_WORKER_PCT = (80, 90)  # A3
WORKER_SPEEDUP_0_TO_4 = {"mxnet": 2.30, "torch": 1.05}  # A4: "up to 130 %" / "up to 5 %"
SPARSE_SPEEDUP = (1.20, 1.60)  # A5: "20-60 %"
BEST_BATCH = 1024  # A6
MXNET_SPEEDUP_1_TO_2_WORKERS = 1.516  # A6: "51.6 %"
BEST_SETTING_SPEEDUP = {"dense": 2.0, "sparse": 1.2}  # A7: MXNet vs dense / sparse PyTorch at their best
LOSS_SETTING = (256, 0)  # A8: the convergence setting (batch, workers)
