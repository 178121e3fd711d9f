"""The 2024 blog post comparing GluonTS DeepAR in MXNet and PyTorch on the Monash archive: its totals."""

from __future__ import annotations

SOURCE = "Blog post, GluonTS DeepAR MXNet vs PyTorch on the Monash archive (2024-07-18)"
CONDITIONS = (
    "laptop CPU; gluonts.mx vs gluonts.torch, GluonTS defaults, 100 epochs; 40 Monash datasets x 5 seeds (42-46)"
)
HARDWARE = "a laptop CPU (model not given)"
N_DATASETS = 40  # the post's datasets (x 5 seeds)
TOTAL_TRAIN_S = {"mxnet": 395_807.0, "torch": 88_756.0}  # total training seconds per framework
CLAIMED_SPEEDUP = 4.5  # the post's "PyTorch is 4.5x faster" (its totals give 4.46)


def post_ratio() -> float:
    """MXNet / PyTorch of the post's own totals."""
    return TOTAL_TRAIN_S["mxnet"] / TOTAL_TRAIN_S["torch"]
