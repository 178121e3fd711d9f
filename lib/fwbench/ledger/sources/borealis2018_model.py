"""Source A's claims about the model rather than its speed: A8 (training quality: PyTorch trains slightly better),
A9 (gluon.rnn.LSTM could not be hybridized) and A10 (the ONNX export/import round trip), with the floors they are
judged at. Their claim texts are declared with the rest in ``borealis2018``."""

from __future__ import annotations

import math

import pandas as pd

from ...published.borealis2018 import LOSS_SETTING
from ...studies import get_study
from .. import floors
from ..data import Data, have_imdb, named_arm, settings, times
from ..rules import (
    CONTRADICTED,
    NOT_MEASURED,
    NOT_TESTABLE,
    REPRODUCED,
    Part,
    context_part,
    missing,
    ratio_part,
    verdict_above,
)
from .borealis2018_rules import MX, PT, STUDY

ONNX_STUDY = "onnx"
ONNX_ATOL = 1e-3  # largest |PyTorch - MXNet| logit difference (float32, 500 LSTM steps) for a faithful import
HYBRID_ARM = named_arm(STUDY, "mxnet-hybrid-partial")  # MXNet with the advised pre-/post-LSTM hybrid blocks
FULL_HYBRID_ARM = "mxnet-hybrid-full"  # the whole model, gluon.rnn.LSTM included (checked in eval_a9 via rows)
ONNX_IMPORT_STEP = named_arm(ONNX_STUDY, "mxnet-import")


def a8_rows(d: Data) -> tuple[pd.DataFrame, int, int]:
    """The training-quality part's rows where the profile has one (its own batch size), else the main grid's
    at ``LOSS_SETTING``; with the batch size and workers they are at."""
    if not d.imdb_quality.empty:
        q = d.imdb_quality
        return q, int(q.batch_size.iloc[0]), int(q.num_workers.iloc[0])
    return d.imdb, *LOSS_SETTING


def eval_a8(d: Data) -> list[Part]:
    rows, batch, workers = a8_rows(d)
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
        what = f"IMDB trials of arm {FULL_HYBRID_ARM!r} (the whole MXNet model hybridized, LSTM included)"
        return [missing(what, have_imdb(d))]
    ok = full.get("summary.hybridize_ok", pd.Series(dtype=object)).dropna().astype(bool)
    crashed = int((full.status == "failed").sum())
    if ok.empty:
        why = f"no finished {FULL_HYBRID_ARM} trial recorded whether hybridize worked; rerun it"
        return [Part("hybridize the LSTM", verdict=NOT_MEASURED, n=f"{crashed} crashed", reason=why)]
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
            f"MXNet {mx_version(d)} hybridizes gluon.rnn.LSTM (the 2018 limitation is gone)"
            if works
            else "hybridize failed: " + str(errors.iloc[0])[:200]
            if len(errors)
            else "hybridize failed"
        ),
    )
    return [part] + [
        context_part(
            f"batch {b}, {w} workers",
            f"epoch time {MX} / {arm} (what it buys; context)",
            times(d, MX, b, w),
            times(d, arm, b, w),
        )
        for arm in (HYBRID_ARM, FULL_HYBRID_ARM)
        for b, w in sorted(settings(d, arm) & settings(d, MX))
    ]


def mx_version(d: Data) -> str:
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
        what = f"the {ONNX_IMPORT_STEP!r} step of study {ONNX_STUDY!r}"
        return [missing(f"{what} (PyTorch -> ONNX -> MXNet import, summary.max_abs_diff)", "no such rows")]
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
        why = "a package the step needs is missing here: " + "; ".join(map(str, errors[:1]))
        return [Part("MXNet import", verdict=NOT_TESTABLE, n=n, reason=why)]
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
    quantity = f"max |MXNet - PyTorch| logit (tolerance {ONNX_ATOL:g})"
    return [Part("MXNet import", quantity, worst, verdict=verdict, reason=reason, n=n)]


def a8_floor(d: Data) -> str | None:
    rows, batch, workers = a8_rows(d)
    return floors.imdb_quality(rows, (MX, PT), batch, workers)
