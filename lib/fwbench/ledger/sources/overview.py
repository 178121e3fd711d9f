"""Source C: two overview articles (2024-2025) without code or setup: claims C1-C4, judged on the ``vgg16``,
``dataparallel`` and ``imdb`` studies. Their numbers live in ``fwbench.published.overview``. "PyTorch" and "MXNet"
are the studies' reference arms (eager PyTorch, imperative Gluon); the compiled arms are named from the arm tables.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from ...analysis import dataparallel
from ...analysis import imdb as imdb_analysis
from ...published.overview import C1_HARDWARE, MIN_GPUS, SOURCE, VGG16_8GPU_TRAIN_S, VGG16_IMAGE_SIZE, VGG16_LATENCY_MS
from ...studies import get_study
from .. import floors
from ..data import Claim, Data, arms, named_arm, per_batch, reference
from ..rules import CONTEXT, NOT_TESTABLE, Part, band_about, context_part, in_band, missing, ratio_part, verdict_above

VGG, IMDB, DP = "vgg16", "imdb", dataparallel.STUDY
COMPILE_ARM = named_arm(IMDB, "torch-compile")  # the LSTM under torch.compile (a graph break: context)
VGG_COMPILED = ("torch-script", "torch-compile")  # compiled VGG16 arms (C4), checked against the arm table
VGG_COMPILE_ARM = named_arm(VGG, "torch-compile")


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


def _per_trial(m: pd.DataFrame, arm: str) -> pd.Series:
    """One latency per trial (the median of its timed calls): the trial is the unit of replication."""
    return m[m.arm == arm].groupby("trial_id").latency_ms.median()


def _sides(m: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """PyTorch's and MXNet's per-trial latencies (the reference arms)."""
    return _per_trial(m, reference(VGG, "torch")), _per_trial(m, reference(VGG, "mxnet"))


def eval_c1(d: Data) -> list[Part]:
    m, label = _vgg_latency(d)
    if m.empty:
        pair = f"{reference(VGG, 'torch')} and {reference(VGG, 'mxnet')}"
        return [missing(f"study {VGG!r} (VGG16 inference, arms {pair}, metric latency_s)", "no such rows")]
    sizes = set(m.image_size)
    if VGG16_IMAGE_SIZE not in sizes:  # the claim is about the standard input
        size = f"{VGG16_IMAGE_SIZE} x {VGG16_IMAGE_SIZE} px"
        return [missing(f"VGG16 latencies at {size} (profile quick or full)", f"{sorted(sizes)} px only")]
    m = m[m.image_size == VGG16_IMAGE_SIZE]
    label = label.replace("/".join(map(str, sorted(sizes))), str(VGG16_IMAGE_SIZE))
    parts = [ratio_part(label, "latency PyTorch / MXNet", *_sides(m), in_band(band_about(_ratio(VGG16_LATENCY_MS))))]
    return parts + _compiled_beside(d)


def _compiled_beside(d: Data) -> list[Part]:
    """PyTorch compiled against MXNet per batch size, quoted beside C1's eager ratio (a reader choosing a framework
    would compile). The compiled arm ran in its own part (other blocks, same CPU model): context, never judged."""
    f, mx, arm = d.vgg16, reference(VGG, "mxnet"), VGG_COMPILE_ARM
    f = f[f.onednn.astype(bool) & (f.image_size == VGG16_IMAGE_SIZE)] if not f.empty else f
    return [
        replace(context_part(f"batch {b}, {arm} (its own part) as PyTorch", f"latency {arm} / {mx}",
                             _per_trial(m, arm), _per_trial(m, mx)), beside=True)
        for b, m in f.groupby("batch_size")
        if {arm, mx} <= set(m.arm)
    ]  # fmt: skip


def eval_c2(d: Data) -> list[Part]:
    """C2's mechanism on this machine: per world size, the data-parallel step time PyTorch DDP / MXNet dist_sync
    (against the claimed ratio's band), and the sync alone at the size nearest the model's gradient: with 2 or more
    workers judged against that band; one worker's, an all-reduce with nothing to reduce against MXNet's push + pull
    through its server, is no distributed sync but each framework's fixed cost, a context part (out of C2's
    Bonferroni k). On a CPU the judge shows these as a labelled analogue, never a verdict: the claim is about 8 GPUs."""
    f = d.dataparallel
    if f.empty:  # never judged here either way: no study trains on GPUs
        return [
            Part(
                f"{MIN_GPUS} GPUs",
                verdict=NOT_TESTABLE,
                reason=f"needs distributed VGG16 training on {MIN_GPUS} GPUs (no study here trains on GPUs); its CPU "
                f"analogue, study {DP!r}, has no finished trials in this profile",
            )
        ]
    band = in_band(band_about(_ratio(VGG16_8GPU_TRAIN_S)))
    parts = []
    sizes = dataparallel.sync_sizes(f)
    gradient = int(f.n_parameters.iloc[0]) if "n_parameters" in f else None
    for world, m in f.groupby("world_size"):
        threads = int(m.threads.iloc[0])
        where = f"{world} worker{'s' if world > 1 else ''} x {threads} thread{'s' if threads > 1 else ''}"
        step = dataparallel.reference_sides(m, "median_step_s")
        parts.append(ratio_part(where, "step time PyTorch DDP / MXNet dist_sync", *step, band))
        if sizes and gradient:
            n = min(sizes, key=lambda s: abs(math.log(s / gradient)))
            sync = dataparallel.reference_sides(m, f"{dataparallel.SYNC_PREFIX}{n}")
            label, quantity = f"{where}, sync of {n:,} values", "all-reduce / push + pull time"
            if world == 1:
                parts.append(context_part(label, f"{quantity} (the fixed cost, nothing to reduce; context)", *sync))
            else:
                parts.append(ratio_part(label, quantity, *sync, band))
    return parts


def _onednn_speedups(d: Data) -> list[Part]:
    """Each framework's own oneDNN speed-up on VGG16 (latency off / on, reference arms, each batch size)."""
    f = d.vgg16
    if f.empty or f.onednn.nunique() < 2:
        return []
    out = []
    for framework in ("mxnet", "torch"):
        arm = reference(VGG, framework)
        for (batch, size), m in f[f.arm == arm].groupby(["batch_size", "image_size"]):
            off, on = m[~m.onednn.astype(bool)], m[m.onednn.astype(bool)]
            if off.empty or on.empty:  # a setting timed with oneDNN on only (e.g. the compiled part)
                continue
            label, sides = f"VGG16 {arm}, batch {batch}, {size} px", (_per_trial(off, arm), _per_trial(on, arm))
            if framework == "mxnet":
                out.append(ratio_part(label, "latency oneDNN off / on", *sides, verdict_above))
            else:
                out.append(context_part(label, "latency oneDNN off / on", *sides))
    return out


def _lstm_onednn(d: Data) -> list[Part]:
    """The LSTM's oneDNN speed-up per framework (the imdb study's ``onednn`` part), when measured: context. Off is
    set against on at the same setting only, as the notebook's ``onednn_effect`` pairs them."""
    trials = imdb_analysis.per_trial(d.imdb_onednn) if not d.imdb_onednn.empty else pd.DataFrame()
    if trials.empty or trials.onednn.nunique() < 2:
        return []
    references = {reference(IMDB, framework) for framework in ("mxnet", "torch")}
    return [
        context_part(
            f"LSTM {setting['arm']}, batch {setting['batch_size']}, {setting['num_workers']} workers",
            "epoch time oneDNN off / on",
            off,
            on,
        )
        for setting, off, on in imdb_analysis.paired_settings(trials, "onednn", False, True)
        if setting["arm"] in references
    ]


def eval_c3(d: Data) -> list[Part]:
    """ "MXNet has optimized CPU kernels", as stated: MXNet's own oneDNN speed-up on the CPU (VGG16 judged above 1;
    PyTorch's and the LSTM's speed-ups and the cross-framework ratio shown as context)."""
    if d.device_of(VGG) not in (None, "cpu"):
        return [Part("CPU", verdict=NOT_TESTABLE, reason="needs CPU rows; the VGG16 rows ran on a GPU")]
    parts = _onednn_speedups(d)
    if not parts:
        what = f"VGG16 latencies with oneDNN on and off (study {VGG!r}, option onednn=[True, False])"
        return [missing(what, "no such pair")]
    parts += _lstm_onednn(d)
    m, label = _vgg_latency(d)
    if not m.empty:
        parts.append(context_part(label, "CPU latency PyTorch / MXNet (context)", *_sides(m)))
    return parts


def eval_c4(d: Data) -> list[Part]:
    """ "JIT optimizes computations at runtime", on a model the compilers trace (VGG16: eager / compiled latency
    per compiled arm and batch size, judged above 1); the LSTM under torch.compile (a Dynamo graph break) as
    context."""
    f = d.vgg16
    eager = reference(VGG, "torch")
    compiled = [get_study(VGG).arm(a).name for a in VGG_COMPILED if a in get_study(VGG).arm_names]
    parts = []
    if not f.empty:
        f = f[f.onednn.astype(bool)]
        for arm in compiled:  # eager against compiled at the same batch and image size (a profile may time
            # the compiled part at another size than the main grid)
            for batch, size in sorted(set(zip(f.loc[f.arm == arm, "batch_size"], f.loc[f.arm == arm, "image_size"]))):
                m = f[(f.batch_size == batch) & (f.image_size == size)]
                sides = _per_trial(m, eager), _per_trial(m, arm)
                parts.append(
                    ratio_part(
                        f"VGG16 {arm}, batch {batch}, {size} px", f"latency {eager} / {arm}", *sides, verdict_above
                    )
                )
    if not parts:
        parts.append(missing(f"VGG16 trials of a compiled arm ({', '.join(compiled)}) beside {eager}", "no such rows"))
    pt = reference(IMDB, "torch")
    if COMPILE_ARM in arms(d):
        context = f"LSTM epoch time {pt} / {COMPILE_ARM} (graph break; context)"
        parts += per_batch(d, pt, COMPILE_ARM, 0, context, lambda lo, hi: CONTEXT)
    return parts


_PT, _MX = reference(IMDB, "torch"), reference(IMDB, "mxnet")
CLAIMS = [
    Claim(
        "C1",
        f"PyTorch achieved an average inference time of {VGG16_LATENCY_MS['torch']} ms on VGG16, MXNet "
        f"{VGG16_LATENCY_MS['mxnet']} ms.",
        SOURCE,
        "Google Colab (hardware not given)",
        f"about({VGG16_LATENCY_MS['torch']}/{VGG16_LATENCY_MS['mxnet']} = {_ratio(VGG16_LATENCY_MS):.2f}): VGG16 "
        f"latency {reference(VGG, 'torch')} / {reference(VGG, 'mxnet')} (smallest batch, oneDNN on, "
        f"{VGG16_IMAGE_SIZE} px)",
        eval_c1,
        study=VGG,
        hardware="gpu",
        source_hardware=C1_HARDWARE,
        floor=floors.latency_trials,
        scale=floors.LATENCY,
    ),
    Claim(
        "C2",
        f"On {MIN_GPUS} GPUs MXNet {VGG16_8GPU_TRAIN_S['mxnet']} s vs PyTorch {VGG16_8GPU_TRAIN_S['torch']} s "
        "for VGG16; MXNet outperforms PyTorch in distributed training.",
        SOURCE,
        f"{MIN_GPUS} GPUs (model not given)",
        f"about({VGG16_8GPU_TRAIN_S['torch']}/{VGG16_8GPU_TRAIN_S['mxnet']} = {_ratio(VGG16_8GPU_TRAIN_S):.2f}) "
        f"on >= {MIN_GPUS} GPUs; on CPUs a labelled analogue of its mechanism: data-parallel step time "
        f"{reference(DP, 'torch')} / {reference(DP, 'mxnet')} per world size, and the sync alone at the "
        "gradient's size",
        eval_c2,
        study=DP,
        hardware="gpu",
        source_hardware=f"{MIN_GPUS} GPUs (model not given)",
    ),
    Claim(
        "C3",
        "MXNet has optimized CPU kernels.",
        SOURCE,
        "none given",
        f"above(1) on the CPU: MXNet's own oneDNN speed-up, VGG16 latency oneDNN off / on ({reference(VGG, 'mxnet')}"
        f", per batch size); PyTorch's speed-up, the LSTM's ({_MX}, {_PT}) and the cross-framework latency ratio "
        "as context",
        eval_c3,
        study=VGG,
        hardware="cpu",
        source_hardware="a CPU (not named)",
        floor=floors.latency_trials,
        scale=floors.LATENCY,
        scope="MXNet's oneDNN kernels speed MXNet up; not that they beat PyTorch's",
    ),
    Claim(
        "C4",
        "PyTorch's JIT compilation optimizes computations at runtime.",
        SOURCE,
        "none given",
        f"above(1) per compiled arm and batch size: VGG16 latency {reference(VGG, 'torch')} / compiled "
        f"({', '.join(VGG_COMPILED)}); the LSTM's {_PT} / {COMPILE_ARM} (a graph break) as context",
        eval_c4,
        study=VGG,
        hardware="none",
        source_hardware="not given",
        floor=floors.latency_trials,
        scale=floors.LATENCY,
    ),
]
