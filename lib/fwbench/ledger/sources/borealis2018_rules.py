"""Source A's rule helpers (``borealis2018``): the held-out "best setting" split, the GPU-only claims' guard and
the formatting of the post's percentages and bands."""

from __future__ import annotations

import math

import numpy as np

from ..data import Data, blocks, reference, times
from ..rules import NOT_TESTABLE, Part

STUDY = "imdb"  # the study every A claim is judged on (A10 also reads the onnx study)
MX, PT = reference(STUDY, "mxnet"), reference(STUDY, "torch")  # the post's MXNet and PyTorch
GPU_UTIL_METRIC = "gpu_util_pct"  # imdb per-epoch metric a GPU run would add (A2, A3); none records it yet


def pct(ratio: float) -> str:
    return f"{100 * (ratio - 1):.4g}"


def band_text(b: tuple[float, float]) -> str:
    return f"[{b[0]:.3f}, {b[1]:.3f}]"


def gpu_claim(d: Data) -> list[Part]:
    if d.imdb.empty or GPU_UTIL_METRIC not in d.imdb or d.imdb[GPU_UTIL_METRIC].isna().all():
        cpu = ""
        t = d.timed()
        if not t.empty and "proc_cpu_pct" in t:
            med = t.groupby("arm")["proc_cpu_pct"].median()
            cpu = "; for context, process CPU % on this CPU-only run (median): " + ", ".join(
                f"{a} {v:.0f} %" for a, v in med.items()
            )
        ran = (
            "the store's GPU trials do not record it"
            if d.device == "cuda"
            else f"every IMDB trial in the store ran on CPU{cpu}"
        )
        return [
            Part(
                "GPU", verdict=NOT_TESTABLE, reason=f"needs GPU utilisation ({GPU_UTIL_METRIC}) from GPU trials; {ran}"
            )
        ]
    return []


def speedup(d: Data, arm: str, batch: int, w_from: int, w_to: int, on=None) -> tuple[np.ndarray, np.ndarray]:
    return times(d, arm, batch, w_from, blocks=on), times(d, arm, batch, w_to, blocks=on)


def held_out(d: Data) -> tuple[list, list, str]:
    """ "Best setting" claims: the first repeat block chooses the setting, the others judge it (no selection
    bias). With one block only, both use it (the claim's floor then says "below scale")."""
    b = blocks(d)
    choose, judge = b[:1], (b[1:] or b[:1])
    return choose, judge, f"best chosen on block {choose}, judged on blocks {judge}"


def median(values) -> float:
    return float(np.median(values)) if len(values) else math.nan
