"""Source C: two overview articles (2024-2025) without code or setup: claims C1-C4, judged on the ``vgg16`` and
``imdb`` studies.

Their numbers live here only (the inference analysis imports ``VGG16_LATENCY_MS``). "PyTorch" and "MXNet" are the
studies' reference arms (eager PyTorch, imperative Gluon); C4's compiled arm is named from the imdb arm table.
"""
from __future__ import annotations

import pandas as pd

from ...studies import get_study
from ..data import Claim, Data, arms, have_imdb, named_arm, per_batch, reference
from ..rules import NOT_TESTABLE, Part, band_about, in_band, missing, ratio_part, verdict_above

SOURCE = "Two overview articles (2024-2025), no code, no setup"
VGG16_LATENCY_MS = {"torch": 30.4, "mxnet": 20.5}  # C1: average VGG16 inference time (Google Colab)
VGG16_8GPU_TRAIN_S = {"torch": 21.6, "mxnet": 15.4}  # C2: VGG16 on 8 GPUs
VGG16_IMAGE_SIZE = 224  # the standard input the C1 numbers are for
MIN_GPUS = 8
VGG, IMDB = "vgg16", "imdb"
COMPILE_ARM = named_arm(IMDB, "torch-compile")


def _ratio(numbers: dict) -> float:
    return numbers["torch"] / numbers["mxnet"]


def _vgg_latency(d: Data) -> tuple[pd.DataFrame, str]:
    """The reference arms' timed latencies with oneDNN on at the smallest batch, and a label of the setting."""
    f = d.vgg16
    if f.empty:
        return f, ""
    m = f[f.arm.isin([reference(VGG, "torch"), reference(VGG, "mxnet")]) & f.onednn.astype(bool)]
    if m.empty:
        return m, ""
    batch = int(m.batch_size.min())
    m = m[m.batch_size == batch]
    return m, f"VGG16 batch {batch}, {'/'.join(map(str, sorted(set(m.image_size))))} px, oneDNN on"


def _sides(m: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """PyTorch's and MXNet's latencies (the reference arms)."""
    return (m.loc[m.arm == reference(VGG, "torch"), "latency_ms"],
            m.loc[m.arm == reference(VGG, "mxnet"), "latency_ms"])


def eval_c1(d: Data) -> list[Part]:
    m, label = _vgg_latency(d)
    if m.empty:
        return [missing(f"study {VGG!r} (VGG16 inference, arms {reference(VGG, 'torch')} and "
                        f"{reference(VGG, 'mxnet')}, metric latency_s)", "no such rows")]
    sizes = set(m.image_size)
    if VGG16_IMAGE_SIZE not in sizes:  # the claim is about the standard input
        return [missing(f"VGG16 latencies at {VGG16_IMAGE_SIZE} x {VGG16_IMAGE_SIZE} px (profile quick or full)",
                        f"{sorted(sizes)} px only")]
    m = m[m.image_size == VGG16_IMAGE_SIZE]
    label = label.replace("/".join(map(str, sorted(sizes))), str(VGG16_IMAGE_SIZE))
    return [ratio_part(label, "latency PyTorch / MXNet", *_sides(m), in_band(band_about(_ratio(VGG16_LATENCY_MS))))]


def eval_c2(d: Data) -> list[Part]:
    trials = d.study_trials(VGG)
    gpus = trials["config.gpus"] if not trials.empty and "config.gpus" in trials else pd.Series(dtype=float)
    if not (gpus.fillna(0) >= MIN_GPUS).any():
        return [Part(f"{MIN_GPUS} GPUs", verdict=NOT_TESTABLE,
                     reason=f"needs distributed VGG16 training on {MIN_GPUS} GPUs; no trial in the store ran on >= "
                            f"{MIN_GPUS} GPUs (the vgg16 study times inference on one device)")]
    long = d.values(VGG)
    m = long[(long.metric == "train_time_s") & (long["config.gpus"] >= MIN_GPUS)]
    framework = m["config.arm"].map(get_study(VGG).framework_of)
    return [ratio_part(f"VGG16, {MIN_GPUS} GPUs", "train time PyTorch / MXNet", m.loc[framework == "torch", "value"],
                       m.loc[framework == "mxnet", "value"], in_band(band_about(_ratio(VGG16_8GPU_TRAIN_S))))]


def eval_c3(d: Data) -> list[Part]:
    """MXNet faster than PyTorch on the CPU: IMDB LSTM training per batch size, and VGG16 inference."""
    parts = []
    pt, mx = reference(IMDB, "torch"), reference(IMDB, "mxnet")
    if d.device == "cpu":
        parts += per_batch(d, pt, mx, 0, f"LSTM epoch time {pt} / {mx} on CPU", verdict_above)
    m, label = _vgg_latency(d)
    if not m.empty and (m.device.fillna("cpu") == "cpu").all():
        parts.append(ratio_part(label, "CPU inference latency PyTorch / MXNet", *_sides(m), verdict_above))
    return parts or [missing("CPU timings of both frameworks (IMDB or VGG16)", "none")]


def eval_c4(d: Data) -> list[Part]:
    pt = reference(IMDB, "torch")
    if COMPILE_ARM not in arms(d):
        return [missing(f"IMDB trials of arm {COMPILE_ARM!r} (TorchScript / torch.compile)", have_imdb(d))]
    return per_batch(d, pt, COMPILE_ARM, 0, f"epoch time {pt} / {COMPILE_ARM}", verdict_above)


_PT, _MX = reference(IMDB, "torch"), reference(IMDB, "mxnet")
CLAIMS = [
    Claim("C1", f"PyTorch achieved an average inference time of {VGG16_LATENCY_MS['torch']} ms on VGG16, MXNet "
          f"{VGG16_LATENCY_MS['mxnet']} ms.", SOURCE, "Google Colab (hardware not given)",
          f"about({VGG16_LATENCY_MS['torch']}/{VGG16_LATENCY_MS['mxnet']} = {_ratio(VGG16_LATENCY_MS):.2f}): VGG16 "
          f"latency {reference(VGG, 'torch')} / {reference(VGG, 'mxnet')} (smallest batch, oneDNN on, "
          f"{VGG16_IMAGE_SIZE} px)", eval_c1, study=VGG),
    Claim("C2", f"On {MIN_GPUS} GPUs MXNet {VGG16_8GPU_TRAIN_S['mxnet']} s vs PyTorch {VGG16_8GPU_TRAIN_S['torch']} s "
          "for VGG16; MXNet outperforms PyTorch in distributed training.", SOURCE,
          f"{MIN_GPUS} GPUs (model not given)", f"needs >= {MIN_GPUS} GPUs; then about({VGG16_8GPU_TRAIN_S['torch']}/"
          f"{VGG16_8GPU_TRAIN_S['mxnet']} = {_ratio(VGG16_8GPU_TRAIN_S):.2f})", eval_c2, study=VGG),
    Claim("C3", "MXNet has optimized CPU kernels.", SOURCE, "none given",
          f"above(1) on the CPU: IMDB LSTM epoch time {_PT} / {_MX} per batch size at 0 workers, and VGG16 "
          f"inference latency {reference(VGG, 'torch')} / {reference(VGG, 'mxnet')}", eval_c3),
    Claim("C4", "PyTorch's JIT compilation optimizes computations at runtime.", SOURCE, "none given",
          f"above(1) per batch size at 0 workers: epoch time {_PT} / {COMPILE_ARM}", eval_c4),
]
