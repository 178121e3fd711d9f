"""Source A: Borealis AI, 'PyTorch vs MXNet' (2018): claims A1-A10, judged on the ``imdb`` and ``onnx`` studies.

The post's numbers are stated once, in ``fwbench.published.borealis2018``; the claim texts and rules are written
from them. "PyTorch" and "MXNet" are the imdb study's reference arms (dense-gradient eager PyTorch, imperative
Gluon); the sparse arm (A5, A7), the advised hybrid blocks (A9) and the ONNX import step (A10) are named from their
studies' arm tables. Rule helpers shared by several claims are in ``borealis2018_rules``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...published.borealis2018 import (
    BEST_BATCH,
    BEST_SETTING_SPEEDUP,
    CONDITIONS,
    CPU_PCT,
    GPU_UTIL_1_WORKER_PCT,
    GPU_UTIL_PCT,
    HARDWARE,
    LOSS_SETTING,
    MXNET_SPEEDUP_1_TO_2_WORKERS,
    SOURCE,
    SPARSE_SPEEDUP,
    TORCH_SPEEDUP_0_WORKERS,
    WORKER_SPEEDUP_0_TO_4,
)
from ...studies import get_study
from .. import floors
from ..data import Claim, Data, have_imdb, named_arm, per_batch, reference, settings, times
from ..rules import (
    CONTEXT,
    CONTRADICTED,
    NOT_MEASURED,
    NOT_TESTABLE,
    REPRODUCED,
    Part,
    band_about,
    band_within,
    fastest_is,
    in_band,
    missing,
    ratio_part,
    verdict_above,
    verdict_at_most,
)
from .borealis2018_rules import GPU_UTIL_METRIC, band_text, gpu_claim, held_out, median, pct, speedup

# A6 and A7 compare settings across batch sizes: the time of a 25k-review epoch (the post's), whatever number of
# reviews a profile timed (``analysis.imdb.load_sweep``)
EPOCH = "epoch_25k_s"
ONNX_ATOL = 1e-3  # largest |PyTorch - MXNet| logit difference (float32, 500 LSTM steps) for a faithful import

STUDY, ONNX_STUDY = "imdb", "onnx"
SPARSE_ARM = named_arm(STUDY, "torch-sparse")
HYBRID_ARM = named_arm(STUDY, "mxnet-hybrid-partial")  # MXNet with the advised pre-/post-LSTM hybrid blocks
FULL_HYBRID_ARM = "mxnet-hybrid-full"  # the whole model, gluon.rnn.LSTM included (checked in eval_a9 via rows)
ONNX_IMPORT_STEP = named_arm(ONNX_STUDY, "mxnet-import")
MX, PT = reference(STUDY, "mxnet"), reference(STUDY, "torch")


def eval_a1(d: Data) -> list[Part]:
    return per_batch(d, MX, PT, 0, f"epoch time {MX} / {PT}", in_band(band_about(TORCH_SPEEDUP_0_WORKERS)))


def eval_a2(d: Data) -> list[Part]:
    parts = gpu_claim(d)
    if parts:
        return parts
    band = band_about(GPU_UTIL_PCT["torch"] / GPU_UTIL_PCT["mxnet"])
    return per_batch(d, PT, MX, 0, f"GPU utilisation {PT} / {MX}", in_band(band), metric=GPU_UTIL_METRIC)


def eval_a3(d: Data) -> list[Part]:
    parts = gpu_claim(d)
    if parts:
        return parts
    out = []
    for arm in (PT, MX):
        values = times(d, arm, workers=1, metric=GPU_UTIL_METRIC)
        out.append(
            ratio_part(
                f"{arm}, 1 worker",
                "GPU utilisation % (median)",
                values,
                np.ones(max(len(values), 2)),
                in_band(GPU_UTIL_1_WORKER_PCT),
            )
        )
    return out


def _analogue_only(d: Data) -> bool:
    """Rows that can give only a labelled analogue of these GPU claims (not GPU rows): there a setting the post
    swept but the profile did not (4 workers, batch 1024) is stood in for by the nearest swept one, named in the
    part's label, instead of leaving the claim unmeasured."""
    return d.device != "cuda"


def eval_a4(d: Data) -> list[Part]:
    out = []
    choose, judge, how = held_out(d)
    for arm, band in (
        (MX, band_about(WORKER_SPEEDUP_0_TO_4["mxnet"])),
        (PT, band_within(1.0, WORKER_SPEEDUP_0_TO_4["torch"])),
    ):
        have = settings(d, arm)
        workers, note = 4, ""
        # the paper profile sweeps 0 and 2 workers (4 loader processes on 2 cores measure contention)
        if _analogue_only(d) and not any((b, 4) in have for b, w in have if w == 0):
            swept = [w for b, w in have if w > 0 and (b, 0) in have]
            workers = max(swept) if swept else 4
            note = f"; 4 workers not swept, {workers} instead" if swept else ""
        batches = sorted(b for b in {b for b, w in have if w == 0} if (b, workers) in have)
        if not batches:
            out.append(missing(f"finished IMDB trials of {arm} with 0 and 4 workers at one batch size", have_imdb(d)))
            continue

        # "up to": judged at the batch size where the speed-up chosen on the first block is largest
        def chosen_speedup(b, arm=arm, workers=workers):
            slow, fast = speedup(d, arm, b, 0, workers, on=choose)
            return median(slow) / median(fast) if len(slow) and len(fast) else -np.inf

        best = max(batches, key=chosen_speedup)
        part = ratio_part(
            f"{arm}, batch {best} (largest speed-up; {how}{note})",
            f"epoch time 0 workers / {workers} workers",
            *speedup(d, arm, best, 0, workers, on=judge),
            in_band(band),
        )
        out.append(part)
    return out


def eval_a5(d: Data) -> list[Part]:
    return per_batch(d, PT, SPARSE_ARM, 0, f"epoch time {PT} / {SPARSE_ARM}", in_band(band_within(*SPARSE_SPEEDUP)))


def eval_a6(d: Data) -> list[Part]:
    out = []
    choose, judge, how = held_out(d)
    for arm in (MX, PT):
        have = settings(d, arm)
        if not have:
            out.append(missing(f"finished IMDB trials of {arm}", have_imdb(d)))
            continue
        samples = {}
        for b in sorted({b for b, _ in have}):
            # each batch size at its own fastest worker count, chosen on the first block
            best_w = min(
                (w for bb, w in have if bb == b),
                key=lambda w: np.nan_to_num(median(times(d, arm, b, w, EPOCH, choose)), nan=np.inf),
            )
            samples[b] = times(d, arm, b, best_w, EPOCH, judge)
        claimed, note = BEST_BATCH, ""
        if _analogue_only(d) and BEST_BATCH not in samples and len(samples) > 1:
            claimed = max(samples)  # the claim's sense, "the largest batch is fastest", at the largest swept
            note = f"; {BEST_BATCH} not swept, the largest swept instead"
        part = fastest_is(samples, claimed)
        part.label = f"{arm}: {part.label} ({how}{note})"
        out.append(part)
    for arm, w_from, w_to, rule in (
        (MX, 1, 2, in_band(band_about(MXNET_SPEEDUP_1_TO_2_WORKERS))),
        (MX, 2, 4, verdict_at_most),
        (PT, 2, 4, verdict_at_most),
    ):
        if {(BEST_BATCH, w_from), (BEST_BATCH, w_to)} <= settings(d, arm):
            quantity = f"epoch time {w_from} worker{'s' * (w_from != 1)} / {w_to} workers"
            out.append(
                ratio_part(f"{arm}, batch {BEST_BATCH}", quantity, *speedup(d, arm, BEST_BATCH, w_from, w_to), rule)
            )
        else:
            out.append(missing(f"{arm} at batch {BEST_BATCH} with {w_from} and {w_to} workers", have_imdb(d)))
    return out


def eval_a7(d: Data) -> list[Part]:
    t = d.timed()
    if t.empty:
        return [missing("finished IMDB trials", have_imdb(d))]
    choose, judge, how = held_out(d)
    best = {}
    for arm in (MX, PT, SPARSE_ARM):
        sel = t[(t.arm == arm) & t.block.isin(choose)]
        med = sel.groupby(["batch_size", "num_workers"])[EPOCH].median()
        if len(med):
            best[arm] = med.idxmin()
    if MX not in best:
        return [missing(f"finished IMDB trials of {MX}", have_imdb(d))]
    out = []
    for den, claimed in ((PT, BEST_SETTING_SPEEDUP["dense"]), (SPARSE_ARM, BEST_SETTING_SPEEDUP["sparse"])):
        if den not in best:
            out.append(missing(f"finished IMDB trials of {den}", have_imdb(d)))
            continue
        (bm, wm), (bd, wd) = best[MX], best[den]
        out.append(
            ratio_part(
                f"{den} at batch {bd}/{wd} workers vs {MX} at batch {bm}/{wm} workers ({how})",
                f"epoch time {den} / {MX}",
                times(d, den, bd, wd, EPOCH, judge),
                times(d, MX, bm, wm, EPOCH, judge),
                in_band(band_about(claimed)),
            )
        )
    return out


def _a8_rows(d: Data) -> tuple[pd.DataFrame, int, int]:
    """The training-quality part's rows where the profile has one (its own batch size), else the main grid's
    at ``LOSS_SETTING``; with the batch size and workers they are at."""
    if not d.imdb_quality.empty:
        q = d.imdb_quality
        return q, int(q.batch_size.iloc[0]), int(q.num_workers.iloc[0])
    return d.imdb, *LOSS_SETTING


def eval_a8(d: Data) -> list[Part]:
    rows, batch, workers = _a8_rows(d)
    if rows.empty:
        return [missing("finished IMDB trials", have_imdb(d))]
    f = rows[(rows.batch_size == batch) & (rows.num_workers == workers) & rows.lr_schedule.astype(bool)]
    if f.empty:
        return [missing(f"IMDB trials at batch {batch} / {workers} workers with the LR schedule", have_imdb(d))]
    longest = f.epochs.max()
    f = f[(f.epochs == longest) & (f.epoch == longest - 1)]
    return [
        ratio_part(
            f"batch {batch}, {workers} workers, after {longest} epochs",
            f"final train loss {MX} / {PT}",
            f.loc[f.arm == MX, "train_loss"],
            f.loc[f.arm == PT, "train_loss"],
            verdict_above,
        )
    ]


def eval_a9(d: Data) -> list[Part]:
    """Whether the whole model, gluon.rnn.LSTM included, hybridizes in today's MXNet (``mxnet-hybrid-full``:
    ``summary.hybridize_ok``), and what each hybrid arm buys over imperative Gluon (context)."""
    t = d.imdb_trials
    full = t[t["config.arm"] == FULL_HYBRID_ARM] if not t.empty else t
    if full.empty:
        return [
            missing(
                f"IMDB trials of arm {FULL_HYBRID_ARM!r} (the whole MXNet model hybridized, LSTM included)",
                have_imdb(d),
            )
        ]
    ok = full.get("summary.hybridize_ok", pd.Series(dtype=object)).dropna().astype(bool)
    crashed = int((full.status == "failed").sum())
    if ok.empty:
        return [
            Part(
                "hybridize the LSTM",
                verdict=NOT_MEASURED,
                n=f"{crashed} crashed",
                reason=f"no finished {FULL_HYBRID_ARM} trial recorded whether hybridize worked; rerun it",
            )
        ]
    errors = full.get("summary.hybridize_error", pd.Series(dtype=str)).dropna()
    works = bool(ok.all())
    # the claim says it could NOT be hybridized: it is contradicted where today's MXNet hybridizes it
    part = Part(
        f"{FULL_HYBRID_ARM}: hybridize() of the whole model incl. gluon.rnn.LSTM",
        "trials that hybridized",
        float(ok.sum()),
        verdict=CONTRADICTED if works else REPRODUCED,
        n=f"{int(ok.sum())} of {len(ok)}",
        reason=(
            f"MXNet {_mx_version(d)} hybridizes gluon.rnn.LSTM (the 2018 limitation is gone)"
            if works
            else "hybridize failed: " + str(errors.iloc[0])[:200]
            if len(errors)
            else "hybridize failed"
        ),
    )
    out = [part]
    for arm in (HYBRID_ARM, FULL_HYBRID_ARM):
        for b, w in sorted(settings(d, arm) & settings(d, MX)):
            ctx = ratio_part(
                f"batch {b}, {w} workers",
                f"epoch time {MX} / {arm} (what it buys; context)",
                times(d, MX, b, w),
                times(d, arm, b, w),
                lambda lo, hi: CONTEXT,
            )
            ctx.verdict, ctx.reason = CONTEXT, ""
            out.append(ctx)
    return out


def _mx_version(d: Data) -> str:
    t = d.imdb_trials
    if t.empty or "provenance.framework_version" not in t:
        return "1.9.1"
    v = t.loc[t.get("provenance.framework") == "mxnet", "provenance.framework_version"].dropna()
    return str(v.iloc[0]) if len(v) else "1.9.1"


def eval_a10(d: Data) -> list[Part]:
    """The MXNet import step of the onnx study: PyTorch's ONNX export imported into MXNet, and logit parity."""
    trials = d.study_trials(ONNX_STUDY)
    col = f"config.{get_study(ONNX_STUDY).arm_field}"
    mx = trials[trials[col] == ONNX_IMPORT_STEP] if not trials.empty and col in trials else pd.DataFrame()
    if mx.empty:
        return [
            missing(
                f"the {ONNX_IMPORT_STEP!r} step of study {ONNX_STUDY!r} (PyTorch -> ONNX -> MXNet import, "
                "summary.max_abs_diff)",
                "no such rows",
            )
        ]
    status = mx.get("summary.step_status", pd.Series(["ok"] * len(mx), index=mx.index)).fillna("")
    crashed = mx.status == "failed"
    diffs = pd.to_numeric(mx.get("summary.max_abs_diff", pd.Series(dtype=float)), errors="coerce").dropna()
    worst = float(diffs.max()) if len(diffs) else math.nan
    errors = mx.get("summary.error", pd.Series(dtype=str)).dropna()
    n = (
        f"{int((status == 'ok').sum())} ok, {int((status == 'step_failed').sum())} import failed, "
        f"{int(crashed.sum())} crashed"
    )
    if (status == "unavailable").all():
        return [
            Part(
                "MXNet import",
                verdict=NOT_TESTABLE,
                n=n,
                reason="a package the step needs is missing here: " + "; ".join(map(str, errors[:1])),
            )
        ]
    if (status == "step_failed").any() or (len(diffs) and worst > ONNX_ATOL):
        verdict = CONTRADICTED
    elif len(diffs) and not crashed.all():
        verdict = REPRODUCED
    else:
        verdict = NOT_MEASURED
    reason = (
        ("MXNet's ONNX import failed: " + str(errors.iloc[0])[:200])
        if (status == "step_failed").any() and len(errors)
        else ("the step crashed; rerun it" if verdict == NOT_MEASURED else "")
    )
    return [
        Part(
            "MXNet import",
            f"max |MXNet - PyTorch| logit (tolerance {ONNX_ATOL:g})",
            worst,
            verdict=verdict,
            reason=reason,
            n=n,
        )
    ]


_A1 = band_about(TORCH_SPEEDUP_0_WORKERS)
_A5 = band_within(*SPARSE_SPEEDUP)


def _a8_floor(d: Data) -> str | None:
    rows, batch, workers = _a8_rows(d)
    return floors.imdb_quality(rows, (MX, PT), batch, workers)


CLAIMS = [
    Claim(
        "A1",
        f"With 0 workers PyTorch is about {pct(TORCH_SPEEDUP_0_WORKERS)} % faster than MXNet.",
        SOURCE,
        CONDITIONS,
        f"about({TORCH_SPEEDUP_0_WORKERS:.2f}) per batch size at 0 workers: epoch-time ratio {MX} / "
        f"{PT} in {band_text(_A1)}",
        eval_a1,
        hardware="gpu",
        source_hardware=HARDWARE,
        floor=floors.imdb_timing,
        scale=floors.IMDB_TIMING,
    ),
    Claim(
        "A2",
        f"MXNet used more CPU (~{CPU_PCT['mxnet']} % vs ~{CPU_PCT['torch']} %); PyTorch had better GPU "
        f"utilisation ({GPU_UTIL_PCT['torch']} % vs {GPU_UTIL_PCT['mxnet']} %).",
        SOURCE,
        CONDITIONS,
        f"needs GPU trials; then about({GPU_UTIL_PCT['torch']}/{GPU_UTIL_PCT['mxnet']}) on GPU utilisation {PT} / {MX}",
        eval_a2,
        hardware="gpu",
        source_hardware=HARDWARE,
    ),
    Claim(
        "A3",
        "1 worker raises GPU utilisation to {}-{} % for both.".format(*GPU_UTIL_1_WORKER_PCT),
        SOURCE,
        CONDITIONS,
        "needs GPU trials; then median GPU utilisation at 1 worker within [{}, {}] %".format(*GPU_UTIL_1_WORKER_PCT),
        eval_a3,
        hardware="gpu",
        source_hardware=HARDWARE,
    ),
    Claim(
        "A4",
        f"Going from 0 to 4 workers speeds MXNet up by up to {pct(WORKER_SPEEDUP_0_TO_4['mxnet'])} %, "
        f"PyTorch by up to {pct(WORKER_SPEEDUP_0_TO_4['torch'])} %.",
        SOURCE,
        CONDITIONS,
        f"largest speed-up over batch sizes (time 0 workers / 4 workers): {MX} "
        f"about({WORKER_SPEEDUP_0_TO_4['mxnet']:.2f}), {PT} within(1.00, {WORKER_SPEEDUP_0_TO_4['torch']:.2f})",
        eval_a4,
        hardware="gpu",
        source_hardware=HARDWARE,
        floor=floors.imdb_heldout,
        scale=floors.HELDOUT,
    ),
    Claim(
        "A5",
        f"Sparse embedding gradients speed PyTorch up by {pct(SPARSE_SPEEDUP[0])}-{pct(SPARSE_SPEEDUP[1])} "
        "%, depending on batch size.",
        SOURCE,
        CONDITIONS,
        f"within({SPARSE_SPEEDUP[0]:.2f}, {SPARSE_SPEEDUP[1]:.2f}) per batch size at 0 workers: epoch time "
        f"{PT} / {SPARSE_ARM} in {band_text(_A5)}",
        eval_a5,
        hardware="gpu",
        source_hardware=HARDWARE,
        floor=floors.imdb_timing,
        scale=floors.IMDB_TIMING,
    ),
    Claim(
        "A6",
        f"Best batch size for both is {BEST_BATCH}; 1 -> 2 workers improves MXNet by "
        f"{pct(MXNET_SPEEDUP_1_TO_2_WORKERS)} %; more workers don't help.",
        SOURCE,
        CONDITIONS,
        f"fastest_is({BEST_BATCH}) per arm; about({MXNET_SPEEDUP_1_TO_2_WORKERS}) for {MX} 1/2 workers at batch "
        f"{BEST_BATCH}; at_most(1) for 2/4 workers at batch {BEST_BATCH}",
        eval_a6,
        hardware="gpu",
        source_hardware=HARDWARE,
        floor=floors.imdb_heldout,
        scale=floors.HELDOUT,
    ),
    Claim(
        "A7",
        f"At their best settings MXNet is {BEST_SETTING_SPEEDUP['dense']:g}x as fast as dense PyTorch, and "
        f"{pct(BEST_SETTING_SPEEDUP['sparse'])} % faster than sparse PyTorch.",
        SOURCE,
        CONDITIONS,
        f"each arm at its fastest setting: about({BEST_SETTING_SPEEDUP['dense']:.1f}) {PT} / {MX}, "
        f"about({BEST_SETTING_SPEEDUP['sparse']:.1f}) {SPARSE_ARM} / {MX}",
        eval_a7,
        hardware="gpu",
        source_hardware=HARDWARE,
        floor=floors.imdb_heldout,
        scale=floors.HELDOUT,
    ),
    Claim(
        "A8",
        "PyTorch trains slightly better (lower loss curve).",
        SOURCE,
        CONDITIONS,
        f"above(1): final train loss {MX} / {PT} over seeds, in the training-quality part (all 25k reviews; "
        f"the paper profile: batch 64) or else at batch {LOSS_SETTING[0]} / {LOSS_SETTING[1]} workers",
        eval_a8,
        hardware="none",
        source_hardware=HARDWARE,
        floor=_a8_floor,
        scale=floors.IMDB_QUALITY,
    ),
    Claim(
        "A9",
        "gluon.rnn.LSTM could not be hybridized; the MXNet team recommended pre-LSTM and post-LSTM hybrid blocks.",
        SOURCE,
        CONDITIONS,
        f"arm {FULL_HYBRID_ARM!r} hybridizes the whole model, LSTM included: "
        "hybridize fails -> reproduced, works -> contradicted; epoch time of each hybrid arm "
        f"({HYBRID_ARM}, {FULL_HYBRID_ARM}) against {MX} as context",
        eval_a9,
        hardware="none",
        source_hardware=HARDWARE,
        scale="one finished trial of the arm",
    ),
    Claim(
        "A10",
        "ONNX could carry a model from PyTorch (research) to MXNet (deployment).",
        SOURCE,
        CONDITIONS,
        f"study {ONNX_STUDY!r}, step {ONNX_IMPORT_STEP}: import works and max |logit diff| <= {ONNX_ATOL:g} -> "
        "reproduced; import fails or diff above -> contradicted",
        eval_a10,
        study=ONNX_STUDY,
        hardware="none",
        source_hardware=HARDWARE,
        scale="one finished import step",
    ),
]
