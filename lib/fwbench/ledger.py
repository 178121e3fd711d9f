"""The claims ledger: every claim of the reproduced sources (shared/reference/PROTOCOLS.md: A1-A10, B, C) as one
row, with our measurement, its 95 % CI and conditions, and a verdict computed by an explicit rule.

No verdict is typed in. A claim names the rows it needs (study, arm, setting, metric); a rule turns the measured
values into a verdict:

- ``about(claimed)``  "X is about N % faster": reproduced if the 95 % CI of the measured ratio lies inside the
  tolerance band ``[claimed / (1 + TOL), claimed * (1 + TOL)]``; contradicted if the CI lies wholly outside it;
  inconclusive if it straddles an edge.
- ``within(lo, hi)``   "N-M %": the same with the band ``[lo / (1 + TOL), hi * (1 + TOL)]``.
- ``above(1)``        a direction ("PyTorch trains better", "MXNet is faster"): reproduced if the CI lies above
  the threshold, contradicted if it lies wholly at or below it, inconclusive otherwise.
- ``at_most(1)``      "more workers don't help": reproduced if the CI's upper end is <= bound * (1 + TOL),
  contradicted if its lower end is above that, inconclusive otherwise.
- ``fastest_is(v)``   "the best batch size is 1024": reproduced if v has the lowest median and the runner-up /
  v ratio CI lies above 1; contradicted if some other value's time / v's time has a CI wholly below 1.
- status and threshold rules for yes/no claims (A9: the advised pre-/post-LSTM hybrid blocks train, i.e. the
  ``mxnet-hybrid`` trials finish; contradicted if they all fail;
  and A10 ONNX: the MXNet import of PyTorch's ONNX file works and matches PyTorch's logits within ``ONNX_ATOL``.

Before a rule runs, its data must be there: a claim whose rows are absent is ``not measured yet`` (with the rows
it waits for, so it flips by itself once they exist), one that needs hardware this store has never seen (a GPU,
8 GPUs) is ``not testable here``, and one with a point estimate but no CI (fewer than 2 values per side) is
``insufficient data``. A claim with several parts (one per batch size, per arm, ...) takes the first verdict in
``PRECEDENCE`` among its parts. Ratios are of medians over the timed epochs (first epoch of each trial excluded)
of all the trials (seeds) of a setting, with a percentile-bootstrap CI (``fwbench.analysis.stats.ratio_ci``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats as sps

from .analysis.stats import CONFIDENCE, N_RESAMPLES, ratio_ci
from .errors import FwbenchError
from .store import ResultsStore

TOL = 0.05  # relative tolerance around a claimed ratio: band = [claimed / 1.05, claimed * 1.05]
ONNX_ATOL = 1e-3  # largest |PyTorch - MXNet| logit difference (float32, 500 LSTM steps) for a faithful ONNX import

REPRODUCED = "reproduced"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
INSUFFICIENT = "insufficient data"
NOT_MEASURED = "not measured yet"
NOT_TESTABLE = "not testable here"
CONTEXT = "context"  # a part shown next to the judged ones, never judged (excluded from ``combine``)
# A multi-part claim takes the first of these among its parts' verdicts.
PRECEDENCE = (CONTRADICTED, NOT_TESTABLE, NOT_MEASURED, INSUFFICIENT, INCONCLUSIVE, REPRODUCED)
VERDICTS = PRECEDENCE

# Names of the rows the future arms will write (kept in one place so the ledger flips when they land).
HYBRID_ARM = "mxnet-hybrid"        # imdb arm: MXNet with pre-/post-LSTM hybrid blocks (A9)
JIT_ARM = "torch-compile"          # imdb arm: torch.compile (C4)
ONNX_STUDY = "onnx"                # study: config.step export/ort/mxnet; summary.step_status, summary.max_abs_diff (A10)
VGG_STUDY = "vgg16"                # study: config.arm torch/mxnet, batch_size, image_size, onednn; metric latency_s (C1, C3)
GPU_UTIL_METRIC = "gpu_util_pct"   # imdb per-epoch metric a GPU run would add (A2, A3); none records it yet
IMDB_PARTS = ("main", "extra", "convergence")  # grid parts judged (``scaling`` varies seq_len/threads/n_train)

SOURCE_A = "Borealis AI, 'PyTorch vs MXNet' (2018-02-16)"
COND_A = "AWS p3.2xlarge, 1x Tesla V100; PyTorch 0.3.0.post4, MXNet 1.0.0, CUDA 9.0, cuDNN 7.0, Python 3.6; full IMDB (25k/25k)"
SOURCE_B = "Blog post, GluonTS DeepAR MXNet vs PyTorch on the Monash archive (2024-07-18)"
COND_B = "laptop CPU; gluonts.mx vs gluonts.torch, GluonTS defaults, 100 epochs; 40 Monash datasets x 5 seeds (42-46)"
SOURCE_C = "Two overview articles (2024-2025), no code, no setup"
B_TOTALS_S = {"mxnet": 395_807, "torch": 88_756}  # the 2024 post's total training seconds (its "4.5x")


# ---------------------------------------------------------------------------------------------------- rules
@dataclass
class Part:
    """One measured quantity of a claim and the verdict its rule gives."""
    label: str
    quantity: str = ""
    estimate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    verdict: str = NOT_MEASURED
    reason: str = ""
    n: str = ""

    def text(self) -> str:
        if math.isnan(self.estimate):
            return f"{self.label}: {self.reason}"
        ci = (f" [95 % CI {self.ci_low:.3g}-{self.ci_high:.3g}]" if not math.isnan(self.ci_low) else " [no CI]")
        if self.verdict == CONTEXT:
            return f"{self.label}: {self.quantity} = {self.estimate:.3g}{ci} (context)"
        n = f" ({self.n})" if self.n else ""
        return f"{self.label}: {self.quantity} = {self.estimate:.3g}{ci}{n} -> {self.verdict}"


def band_about(claimed: float, tol: float = TOL) -> tuple[float, float]:
    return claimed / (1 + tol), claimed * (1 + tol)


def band_within(lo: float, hi: float, tol: float = TOL) -> tuple[float, float]:
    return lo / (1 + tol), hi * (1 + tol)


def _no_ci(ci_low: float, ci_high: float) -> bool:
    return ci_low is None or ci_high is None or math.isnan(ci_low) or math.isnan(ci_high)


def verdict_in_band(ci_low: float, ci_high: float, band: tuple[float, float]) -> str:
    """Rule for 'about N %' and 'N-M %' claims."""
    if _no_ci(ci_low, ci_high):
        return INSUFFICIENT
    lo, hi = band
    if lo <= ci_low and ci_high <= hi:
        return REPRODUCED
    if ci_high < lo or ci_low > hi:
        return CONTRADICTED
    return INCONCLUSIVE


def verdict_above(ci_low: float, ci_high: float, threshold: float = 1.0) -> str:
    """Rule for direction claims: the ratio is above ``threshold``."""
    if _no_ci(ci_low, ci_high):
        return INSUFFICIENT
    if ci_low > threshold:
        return REPRODUCED
    if ci_high <= threshold:
        return CONTRADICTED
    return INCONCLUSIVE


def verdict_at_most(ci_low: float, ci_high: float, bound: float = 1.0, tol: float = TOL) -> str:
    """Rule for 'does not help' claims: the speed-up is at most ``bound`` (within the tolerance)."""
    if _no_ci(ci_low, ci_high):
        return INSUFFICIENT
    edge = bound * (1 + tol)
    if ci_high <= edge:
        return REPRODUCED
    if ci_low > edge:
        return CONTRADICTED
    return INCONCLUSIVE


def combine(verdicts: list[str]) -> str:
    """The verdict of a multi-part claim: the first of ``PRECEDENCE`` present among its parts."""
    verdicts = [v for v in verdicts if v != CONTEXT]
    if not verdicts:
        return NOT_MEASURED
    for v in PRECEDENCE:
        if v in verdicts:
            return v
    raise ValueError(f"unknown verdicts {verdicts}")


def ratio_part(label: str, quantity: str, num, den, rule: Callable[[float, float], str]) -> Part:
    """A ratio median(num) / median(den) with its bootstrap CI, judged by ``rule(ci_low, ci_high)``."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.size == 0 or den.size == 0:
        return Part(label, quantity, verdict=NOT_MEASURED, reason="no rows for one side of the ratio")
    r = ratio_ci(num, den)
    verdict = rule(r["ci_low"], r["ci_high"])
    reason = "fewer than 2 values on a side: no CI" if verdict == INSUFFICIENT else ""
    return Part(label, quantity, r["ratio"], r["ci_low"], r["ci_high"], verdict, reason,
                n=f"n={r['n_num']}/{r['n_den']}")


def sum_ratio_ci(num, den, seed: int = 0) -> dict:
    """sum(num) / sum(den) over paired values (e.g. per dataset x seed) with a paired percentile-bootstrap CI."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    point = float(a.sum() / b.sum()) if a.size and b.sum() else math.nan
    low = high = math.nan
    if a.size >= 2:
        res = sps.bootstrap((a, b), lambda x, y, axis=-1: x.sum(axis=axis) / y.sum(axis=axis), paired=True,
                            vectorized=True, confidence_level=CONFIDENCE, n_resamples=N_RESAMPLES,
                            method="percentile", random_state=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"ratio": point, "ci_low": low, "ci_high": high, "n": int(a.size)}


# ---------------------------------------------------------------------------------------------------- data
@dataclass
class Data:
    """What the ledger reads: the IMDB epochs (wide, one row per trial x epoch), the IMDB trials, the DeepAR
    whole-trial values and every other study's trials, restricted to a profile where the study has one."""
    imdb: pd.DataFrame
    imdb_trials: pd.DataFrame
    deepar: pd.DataFrame
    other: dict = field(default_factory=dict)
    profile: str | None = None
    device: str | None = None

    def timed(self) -> pd.DataFrame:
        return self.imdb[self.imdb.epoch > 0] if not self.imdb.empty else self.imdb


def _planned_ids(study: str, profile: str | None, overrides: dict | None) -> set | None:
    if profile in (None, "all"):
        return None
    from .runner import plan

    try:
        return {t.trial_id for t in plan(study, profile, (overrides or {}).get(study))}
    except (FwbenchError, ImportError):
        return None  # a study this checkout does not define (yet): all of its rows


def _wide(long: pd.DataFrame, extra: dict) -> pd.DataFrame:
    keys = {"trial_id": "trial_id", "step": "epoch", **extra}
    keys = {k: v for k, v in keys.items() if k in long.columns}
    wide = long.pivot_table(index=list(keys), columns="metric", values="value").reset_index()
    wide = wide.rename(columns=keys)
    wide.columns.name = None
    return wide


def load(store: ResultsStore, profile: str | None = "quick", overrides: dict | None = None) -> Data:
    """The rows the ledger needs. ``profile`` None or "all": every row of the store; ``overrides`` maps a study
    name to its profile overrides."""
    def select(study: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        trials = store.trials(study)
        if trials.empty:
            return trials, trials
        ids = _planned_ids(study, profile, overrides)
        if ids is not None:
            trials = trials[trials.trial_id.isin(ids)]
        long = store.measurements(study)
        long = long[long.trial_id.isin(set(trials.trial_id)) & (long.status == "done")] if not long.empty else long
        return trials.reset_index(drop=True), long

    imdb_trials, long = select("imdb")
    imdb = pd.DataFrame()
    device = None
    if not imdb_trials.empty:
        for col, default in (("config.part", "main"), ("config.device", "cpu")):
            imdb_trials[col] = imdb_trials[col].fillna(default) if col in imdb_trials else default
        imdb_trials = imdb_trials[imdb_trials["config.part"].isin(IMDB_PARTS)]
        # one device: the sources' GPU where the store has GPU trials, else the CPU
        devices = set(imdb_trials.loc[imdb_trials.status == "done", "config.device"])
        device = "cuda" if "cuda" in devices else "cpu"
        imdb_trials = imdb_trials[imdb_trials["config.device"] == device].reset_index(drop=True)
    if not long.empty:
        long = long[long.trial_id.isin(set(imdb_trials.trial_id))]
    if not long.empty:
        long = long.assign(lr_schedule=long["config.lr_schedule.factor"].notna()
                           if "config.lr_schedule.factor" in long else False)
        imdb = _wide(long, {"config.arm": "arm", "config.batch_size": "batch_size",
                            "config.num_workers": "num_workers", "config.seed": "seed", "config.epochs": "epochs",
                            "config.n_train": "n_train", "lr_schedule": "lr_schedule"})
    deepar_trials, long = select("deepar")
    deepar = pd.DataFrame()
    if not long.empty:
        whole = long[long.step == -1]
        if not whole.empty:
            deepar = _wide(whole, {"config.dataset": "dataset", "config.arm": "arm", "config.seed": "seed"})
    other = {}
    for study in (ONNX_STUDY, VGG_STUDY):
        trials, long = select(study)
        other[study] = (trials, long)
    return Data(imdb, imdb_trials, deepar, other, profile, device)


# ---------------------------------------------------------------------------------------------------- claims
@dataclass
class Claim:
    id: str
    text: str
    source: str
    source_conditions: str
    rule: str
    evaluate: Callable[[Data], list[Part]]


def _times(d: Data, arm: str, batch=None, workers=None, metric: str = "train_time_s") -> np.ndarray:
    t = d.timed()
    if t.empty or metric not in t:
        return np.array([])
    sel = t.arm == arm
    if batch is not None:
        sel &= t.batch_size == batch
    if workers is not None:
        sel &= t.num_workers == workers
    return t.loc[sel, metric].dropna().to_numpy()


def _settings(d: Data, arm: str) -> set:
    if d.imdb.empty:
        return set()
    s = d.imdb[d.imdb.arm == arm]
    return set(zip(s.batch_size, s.num_workers))


def _missing(what: str, have: str) -> Part:
    return Part("rows", verdict=NOT_MEASURED, reason=f"needs {what}; the store has {have}")


def _have_imdb(d: Data) -> str:
    if d.imdb.empty:
        return "no finished IMDB trials for this profile"
    arms = sorted(set(d.imdb.arm))
    return (f"arms {arms}, batch sizes {sorted(set(d.imdb.batch_size))}, "
            f"workers {sorted(set(d.imdb.num_workers))}")


def _per_batch(d: Data, num_arm: str, den_arm: str, workers: int, quantity: str, rule,
               metric: str = "train_time_s") -> list[Part]:
    """One part per batch size where both arms have timed values of ``metric`` at ``workers``."""
    common = sorted(b for b, w in _settings(d, num_arm) & _settings(d, den_arm) if w == workers)
    pairs = [(b, _times(d, num_arm, b, workers, metric), _times(d, den_arm, b, workers, metric)) for b in common]
    pairs = [(b, num, den) for b, num, den in pairs if len(num) and len(den)]
    if not pairs:
        return [_missing(f"finished IMDB trials of {num_arm} and {den_arm} with {workers} workers ({metric})",
                         _have_imdb(d))]
    return [ratio_part(f"batch {b}, {workers} workers", quantity, num, den, rule) for b, num, den in pairs]


def eval_a1(d: Data) -> list[Part]:
    band = band_about(1.10)
    return _per_batch(d, "mxnet", "torch-dense", 0, "epoch time MXNet / PyTorch (dense)",
                      lambda lo, hi: verdict_in_band(lo, hi, band))


def _gpu_claim(d: Data) -> list[Part]:
    if d.imdb.empty or GPU_UTIL_METRIC not in d.imdb or d.imdb[GPU_UTIL_METRIC].isna().all():
        cpu = ""
        if not d.timed().empty and "proc_cpu_pct" in d.timed():
            t = d.timed()
            med = t.groupby("arm")["proc_cpu_pct"].median()
            cpu = "; for context, process CPU % on this CPU-only run (median): " + ", ".join(
                f"{a} {v:.0f} %" for a, v in med.items())
        return [Part("GPU", verdict=NOT_TESTABLE,
                     reason=f"needs GPU utilisation ({GPU_UTIL_METRIC}) from GPU trials; every IMDB trial in the "
                            f"store ran on CPU{cpu}")]
    return []


def eval_a2(d: Data) -> list[Part]:
    parts = _gpu_claim(d)
    if parts:
        return parts
    band = band_about(77 / 65)
    return _per_batch(d, "torch-dense", "mxnet", 0, "GPU utilisation PyTorch / MXNet",
                      lambda lo, hi: verdict_in_band(lo, hi, band), metric=GPU_UTIL_METRIC)


def eval_a3(d: Data) -> list[Part]:
    parts = _gpu_claim(d)
    if parts:
        return parts
    out = []
    for arm in ("torch-dense", "mxnet"):
        values = _times(d, arm, workers=1, metric=GPU_UTIL_METRIC)
        out.append(ratio_part(f"{arm}, 1 worker", "GPU utilisation % (median)", values,
                              np.ones(max(len(values), 2)), lambda lo, hi: verdict_in_band(lo, hi, (80, 90))))
    return out


def _speedup(d: Data, arm: str, batch: int, w_from: int, w_to: int) -> tuple[np.ndarray, np.ndarray]:
    return _times(d, arm, batch, w_from), _times(d, arm, batch, w_to)


def eval_a4(d: Data) -> list[Part]:
    out = []
    for arm, claimed_max, rule_name in (("mxnet", 2.30, "about"), ("torch-dense", 1.05, "within")):
        batches = sorted(b for b in {b for b, w in _settings(d, arm) if w == 0}
                         if (b, 4) in _settings(d, arm))
        if not batches:
            out.append(_missing(f"finished IMDB trials of {arm} with 0 and 4 workers at one batch size",
                                _have_imdb(d)))
            continue
        # "up to": judged at the batch size where the measured speed-up is largest
        parts = [ratio_part(f"{arm}, batch {b}", "epoch time 0 workers / 4 workers", *_speedup(d, arm, b, 0, 4),
                            lambda lo, hi: INSUFFICIENT) for b in batches]
        best = max(parts, key=lambda p: -np.inf if math.isnan(p.estimate) else p.estimate)
        band = band_about(claimed_max) if rule_name == "about" else band_within(1.0, claimed_max)
        best.verdict = verdict_in_band(best.ci_low, best.ci_high, band)
        best.reason = "fewer than 2 values on a side: no CI" if best.verdict == INSUFFICIENT else ""
        best.label += " (largest speed-up)"
        out.append(best)
    return out


def eval_a5(d: Data) -> list[Part]:
    band = band_within(1.20, 1.60)
    return _per_batch(d, "torch-dense", "torch-sparse", 0, "epoch time dense / sparse",
                      lambda lo, hi: verdict_in_band(lo, hi, band))


def fastest_is(samples: dict, claimed) -> Part:
    """Rule ``fastest_is``: ``samples`` maps a candidate (e.g. batch size) to its epoch times."""
    label = f"fastest = {claimed}"
    if claimed not in samples:
        return Part(label, verdict=NOT_MEASURED,
                    reason=f"needs trials at {claimed}; swept: {sorted(samples)}")
    medians = {k: float(np.median(v)) for k, v in samples.items() if len(v)}
    best = min(medians, key=medians.get)
    others = [k for k in medians if k != claimed]
    if not others:
        return Part(label, verdict=INSUFFICIENT, reason="only one candidate swept")
    if best == claimed:
        runner_up = min(others, key=medians.get)
        r = ratio_ci(samples[runner_up], samples[claimed])
        v = verdict_above(r["ci_low"], r["ci_high"])
        v = INCONCLUSIVE if v == CONTRADICTED else v
        return Part(label, f"time at {runner_up} / time at {claimed}", r["ratio"], r["ci_low"], r["ci_high"], v,
                    "" if v != INSUFFICIENT else "fewer than 2 values on a side: no CI")
    r = ratio_ci(samples[claimed], samples[best])
    v = verdict_above(r["ci_low"], r["ci_high"])  # claimed slower than the measured best: contradicted
    v = {REPRODUCED: CONTRADICTED, CONTRADICTED: INCONCLUSIVE}.get(v, v)
    return Part(label, f"time at {claimed} / time at {best} (measured fastest)", r["ratio"], r["ci_low"],
                r["ci_high"], v, "" if v != INSUFFICIENT else "fewer than 2 values on a side: no CI")


def eval_a6(d: Data) -> list[Part]:
    out = []
    for arm in ("mxnet", "torch-dense"):
        settings = _settings(d, arm)
        if not settings:
            out.append(_missing(f"finished IMDB trials of {arm}", _have_imdb(d)))
            continue
        samples = {}
        for b in sorted({b for b, _ in settings}):
            # each batch size at its own fastest worker count
            best_w = min((w for bb, w in settings if bb == b), key=lambda w: np.median(_times(d, arm, b, w))
                         if len(_times(d, arm, b, w)) else np.inf)
            samples[b] = _times(d, arm, b, best_w)
        part = fastest_is(samples, 1024)
        part.label = f"{arm}: {part.label}"
        out.append(part)
    for arm, w_from, w_to, quantity, rule in (
            ("mxnet", 1, 2, "epoch time 1 worker / 2 workers",
             lambda lo, hi: verdict_in_band(lo, hi, band_about(1.516))),
            ("mxnet", 2, 4, "epoch time 2 workers / 4 workers", verdict_at_most),
            ("torch-dense", 2, 4, "epoch time 2 workers / 4 workers", verdict_at_most)):
        if {(1024, w_from), (1024, w_to)} <= _settings(d, arm):
            out.append(ratio_part(f"{arm}, batch 1024", quantity, *_speedup(d, arm, 1024, w_from, w_to), rule))
        else:
            out.append(_missing(f"{arm} at batch 1024 with {w_from} and {w_to} workers", _have_imdb(d)))
    return out


def eval_a7(d: Data) -> list[Part]:
    t = d.timed()
    if t.empty:
        return [_missing("finished IMDB trials", _have_imdb(d))]
    best = {}
    for arm in ("mxnet", "torch-dense", "torch-sparse"):
        med = t[t.arm == arm].groupby(["batch_size", "num_workers"])["train_time_s"].median()
        if len(med):
            best[arm] = med.idxmin()
    if "mxnet" not in best:
        return [_missing("finished IMDB trials of mxnet", _have_imdb(d))]
    out = []
    for den, claimed in (("torch-dense", 2.0), ("torch-sparse", 1.2)):
        if den not in best:
            out.append(_missing(f"finished IMDB trials of {den}", _have_imdb(d)))
            continue
        (bm, wm), (bd, wd) = best["mxnet"], best[den]
        band = band_about(claimed)
        out.append(ratio_part(f"{den} at batch {bd}/{wd} workers vs mxnet at batch {bm}/{wm} workers",
                              f"epoch time {den} / MXNet", _times(d, den, bd, wd), _times(d, "mxnet", bm, wm),
                              lambda lo, hi, band=band: verdict_in_band(lo, hi, band)))
    return out


def eval_a8(d: Data) -> list[Part]:
    if d.imdb.empty:
        return [_missing("finished IMDB trials", _have_imdb(d))]
    f = d.imdb[(d.imdb.batch_size == 256) & (d.imdb.num_workers == 0) & d.imdb.lr_schedule.astype(bool)]
    if f.empty:
        return [_missing("IMDB trials at batch 256 / 0 workers with the LR schedule", _have_imdb(d))]
    longest = f.epochs.max()
    f = f[(f.epochs == longest) & (f.epoch == longest - 1)]
    return [ratio_part(f"batch 256, 0 workers, after {longest} epochs", "final train loss MXNet / PyTorch (dense)",
                       f.loc[f.arm == "mxnet", "train_loss"], f.loc[f.arm == "torch-dense", "train_loss"],
                       verdict_above)]


def eval_a9(d: Data) -> list[Part]:
    t = d.imdb_trials
    hyb = t[t["config.arm"] == HYBRID_ARM] if not t.empty else t
    if hyb.empty:
        return [_missing(f"IMDB trials of arm {HYBRID_ARM!r} (MXNet with pre-/post-LSTM hybrid blocks)",
                         _have_imdb(d))]
    done, failed = int((hyb.status == "done").sum()), int((hyb.status == "failed").sum())
    verdict = REPRODUCED if done else CONTRADICTED
    part = Part(f"{HYBRID_ARM} trials (advised pre-/post-LSTM hybrid blocks)", "finished trials", float(done),
                verdict=verdict, n=f"{done} done / {failed} failed",
                reason=("the advised workaround trains; whether gluon.rnn.LSTM itself hybridizes is not measured "
                        "(the arm hybridizes the blocks around it)") if done else
                f"every {HYBRID_ARM} trial failed")
    out = [part]
    if done:
        for b, w in sorted(_settings(d, HYBRID_ARM) & _settings(d, "mxnet")):
            ctx = ratio_part(f"batch {b}, {w} workers", f"epoch time mxnet / {HYBRID_ARM} (context, not judged)",
                             _times(d, "mxnet", b, w), _times(d, HYBRID_ARM, b, w), lambda lo, hi: CONTEXT)
            ctx.verdict, ctx.reason = CONTEXT, ""
            out.append(ctx)
    return out


def eval_a10(d: Data) -> list[Part]:
    """The MXNet step of the onnx study: import of PyTorch's ONNX export into MXNet and logit parity."""
    trials, _ = d.other.get(ONNX_STUDY, (pd.DataFrame(), pd.DataFrame()))
    step = trials.get("config.step") if not trials.empty else None
    mx = trials[step == "mxnet"] if step is not None else trials
    if mx.empty:
        return [_missing(f"the 'mxnet' step of study {ONNX_STUDY!r} (PyTorch -> ONNX -> MXNet import, "
                         "summary.max_abs_diff)", "no such rows")]
    status = mx.get("summary.step_status", pd.Series(["ok"] * len(mx), index=mx.index)).fillna("")
    crashed = mx.status == "failed"
    unavailable = status == "unavailable"
    diffs = pd.to_numeric(mx.get("summary.max_abs_diff", pd.Series(dtype=float)), errors="coerce").dropna()
    worst = float(diffs.max()) if len(diffs) else math.nan
    n = f"{int((status == 'ok').sum())} ok, {int((status == 'step_failed').sum())} import failed, {int(crashed.sum())} crashed"
    if unavailable.all():
        return [Part("MXNet import", verdict=NOT_TESTABLE, n=n,
                     reason="a package the step needs is missing here: " + "; ".join(
                         map(str, mx.get("summary.error", pd.Series(dtype=str)).dropna()[:1])))]
    if (status == "step_failed").any() or (len(diffs) and worst > ONNX_ATOL):
        verdict = CONTRADICTED
    elif len(diffs) and not crashed.all():
        verdict = REPRODUCED
    else:
        verdict = NOT_MEASURED
    errors = mx.get("summary.error", pd.Series(dtype=str)).dropna()
    reason = ("MXNet's ONNX import failed: " + str(errors.iloc[0])[:200]) if (status == "step_failed").any() and len(errors) \
        else ("the step crashed; rerun it" if verdict == NOT_MEASURED else "")
    return [Part("MXNet import", f"max |MXNet - PyTorch| logit (tolerance {ONNX_ATOL:g})", worst, verdict=verdict,
                 reason=reason, n=n)]


def eval_b(d: Data) -> list[Part]:
    f = d.deepar
    if f.empty or "train_time_s" not in f:
        return [_missing("finished DeepAR trials (study 'deepar', train_time_s) of arms torch and mxnet",
                         "no such rows for this profile")]
    piv = f.pivot_table(index=["dataset", "seed"], columns="arm", values="train_time_s")
    if not {"mxnet", "torch"} <= set(piv.columns):
        return [_missing("DeepAR trials of both arms torch and mxnet", f"arms {sorted(piv.columns)}")]
    pairs = piv[["mxnet", "torch"]].dropna()
    if pairs.empty:
        return [_missing("a dataset x seed finished by both arms", "none paired")]
    r = sum_ratio_ci(pairs["mxnet"], pairs["torch"])
    v = verdict_in_band(r["ci_low"], r["ci_high"], band_about(4.5))
    return [Part(f"{pairs.index.get_level_values(0).nunique()} datasets", "total train time MXNet / PyTorch",
                 r["ratio"], r["ci_low"], r["ci_high"], v,
                 "fewer than 2 dataset x seed pairs: no CI" if v == INSUFFICIENT else "",
                 n=f"{r['n']} dataset x seed pairs")]


def _vgg(d: Data) -> tuple[pd.DataFrame, pd.DataFrame]:
    return d.other.get(VGG_STUDY, (pd.DataFrame(), pd.DataFrame()))


def _vgg_latency(d: Data) -> tuple[pd.DataFrame, str]:
    """The eager arms' timed latencies (metric latency_s) with oneDNN on, and a label of the setting."""
    trials, long = _vgg(d)
    if long.empty or "latency_s" not in set(long.metric):
        return pd.DataFrame(), ""
    m = long[(long.metric == "latency_s") & long["config.arm"].isin(["torch", "mxnet"])]
    if "config.onednn" in m:
        m = m[m["config.onednn"].map(lambda v: True if pd.isna(v) else bool(v)).astype(bool)]
    if m.empty:
        return m, ""
    batch = int(m["config.batch_size"].min())
    m = m[m["config.batch_size"] == batch]
    size = sorted(set(m.get("config.image_size", pd.Series([224]))))
    return m, f"VGG16 batch {batch}, {'/'.join(map(str, size))} px, oneDNN on"


def eval_c1(d: Data) -> list[Part]:
    m, label = _vgg_latency(d)
    if m.empty:
        return [_missing(f"study {VGG_STUDY!r} (VGG16 inference, arms torch and mxnet, metric latency_s)",
                         "no such rows")]
    sizes = set(m["config.image_size"]) if "config.image_size" in m else {224}
    if 224 not in sizes:  # the claim is about the standard 224 x 224 input
        return [_missing("VGG16 latencies at 224 x 224 px (profile quick or full)", f"{sorted(sizes)} px only")]
    m = m[m["config.image_size"] == 224] if "config.image_size" in m else m
    label = label.replace("/".join(map(str, sorted(sizes))), "224")
    band = band_about(30.4 / 20.5)
    return [ratio_part(label, "latency PyTorch / MXNet", m.loc[m["config.arm"] == "torch", "value"],
                       m.loc[m["config.arm"] == "mxnet", "value"], lambda lo, hi: verdict_in_band(lo, hi, band))]


def eval_c2(d: Data) -> list[Part]:
    trials, long = _vgg(d)
    gpus = trials["config.gpus"] if not trials.empty and "config.gpus" in trials else pd.Series(dtype=float)
    if not (gpus.fillna(0) >= 8).any():
        return [Part("8 GPUs", verdict=NOT_TESTABLE,
                     reason="needs distributed VGG16 training on 8 GPUs; no trial in the store ran on >= 8 GPUs "
                            "(the vgg16 study times inference on one device)")]
    m = long[(long.metric == "train_time_s") & (long["config.gpus"] >= 8)]
    mx = m["config.arm"].astype(str).str.startswith("mxnet")
    band = band_about(21.6 / 15.4)
    return [ratio_part("VGG16, 8 GPUs", "train time PyTorch / MXNet", m.loc[~mx, "value"], m.loc[mx, "value"],
                       lambda lo, hi: verdict_in_band(lo, hi, band))]


def eval_c3(d: Data) -> list[Part]:
    """MXNet faster than PyTorch on the CPU: IMDB LSTM training per batch size, and VGG16 inference."""
    parts = []
    if d.device == "cpu":
        parts += _per_batch(d, "torch-dense", "mxnet", 0, "LSTM epoch time PyTorch (dense) / MXNet on CPU",
                            verdict_above)
    m, label = _vgg_latency(d)
    if not m.empty and (m.get("config.device", pd.Series(["cpu"])).fillna("cpu") == "cpu").all():
        parts.append(ratio_part(label, "CPU inference latency PyTorch / MXNet",
                                m.loc[m["config.arm"] == "torch", "value"], m.loc[m["config.arm"] == "mxnet", "value"],
                                verdict_above))
    return parts or [_missing("CPU timings of both frameworks (IMDB or VGG16)", "none")]


def eval_c4(d: Data) -> list[Part]:
    if JIT_ARM not in _arms(d):
        return [_missing(f"IMDB trials of arm {JIT_ARM!r} (TorchScript / torch.compile)", _have_imdb(d))]
    return _per_batch(d, "torch-dense", JIT_ARM, 0, f"epoch time torch-dense / {JIT_ARM}", verdict_above)


def _arms(d: Data) -> set:
    return set(d.imdb.arm) if not d.imdb.empty else set()


R_ABOUT = "about: CI inside [claimed/1.05, claimed*1.05] -> reproduced; CI wholly outside -> contradicted"
CLAIMS = [
    Claim("A1", "With 0 workers PyTorch is about 10 % faster than MXNet.", SOURCE_A, COND_A,
          "about(1.10) per batch size at 0 workers: epoch-time ratio MXNet / PyTorch dense in [1.048, 1.155]", eval_a1),
    Claim("A2", "MXNet used more CPU (~120 % vs ~100 %); PyTorch had better GPU utilisation (77 % vs 65 %).", SOURCE_A,
          COND_A, "needs GPU trials; then about(77/65) on GPU utilisation PyTorch / MXNet", eval_a2),
    Claim("A3", "1 worker raises GPU utilisation to 80-90 % for both.", SOURCE_A, COND_A,
          "needs GPU trials; then median GPU utilisation at 1 worker within [80, 90] %", eval_a3),
    Claim("A4", "Going from 0 to 4 workers speeds MXNet up by up to 130 %, PyTorch by up to 5 %.", SOURCE_A, COND_A,
          "largest speed-up over batch sizes (time 0 workers / 4 workers): MXNet about(2.30), PyTorch dense "
          "within(1.00, 1.05)", eval_a4),
    Claim("A5", "Sparse embedding gradients speed PyTorch up by 20-60 %, depending on batch size.", SOURCE_A, COND_A,
          "within(1.20, 1.60) per batch size at 0 workers: epoch time dense / sparse in [1.143, 1.680]", eval_a5),
    Claim("A6", "Best batch size for both is 1024; 1 -> 2 workers improves MXNet by 51.6 %; more workers don't help.",
          SOURCE_A, COND_A, "fastest_is(1024) per arm; about(1.516) for MXNet 1/2 workers at batch 1024; at_most(1) "
          "for 2/4 workers at batch 1024", eval_a6),
    Claim("A7", "At their best settings MXNet is 2x as fast as dense PyTorch, and 20 % faster than sparse PyTorch.",
          SOURCE_A, COND_A, "each arm at its fastest setting: about(2.0) dense / MXNet, about(1.2) sparse / MXNet",
          eval_a7),
    Claim("A8", "PyTorch trains slightly better (lower loss curve).", SOURCE_A, COND_A,
          "above(1): final train loss MXNet / PyTorch dense at batch 256 / 0 workers, over seeds", eval_a8),
    Claim("A9", "gluon.rnn.LSTM could not be hybridized; the MXNet team recommended pre-LSTM and post-LSTM hybrid "
          "blocks.", SOURCE_A, COND_A, f"arm {HYBRID_ARM!r} (the advised hybrid blocks): a finished trial -> "
          "reproduced, all failed -> contradicted; epoch-time ratio to mxnet as context", eval_a9),
    Claim("A10", "ONNX could carry a model from PyTorch (research) to MXNet (deployment).", SOURCE_A, COND_A,
          f"study {ONNX_STUDY!r}, step mxnet: import works and max |logit diff| <= {ONNX_ATOL:g} -> reproduced; "
          "import fails or diff above -> contradicted", eval_a10),
    Claim("B", "PyTorch is 4.5x faster (total training time MXNet 395,807 s vs PyTorch 88,756 s).", SOURCE_B, COND_B,
          "about(4.5): sum of train time MXNet / PyTorch over dataset x seed pairs, paired bootstrap CI", eval_b),
    Claim("C1", "PyTorch achieved an average inference time of 30.4 ms on VGG16, MXNet 20.5 ms.", SOURCE_C,
          "Google Colab (hardware not given)", "about(30.4/20.5 = 1.48): VGG16 latency PyTorch / MXNet (eager, "
          "smallest batch, oneDNN on)", eval_c1),
    Claim("C2", "On 8 GPUs MXNet 15.4 s vs PyTorch 21.6 s for VGG16; MXNet outperforms PyTorch in distributed "
          "training.", SOURCE_C, "8 GPUs (model not given)", "needs >= 8 GPUs; then about(21.6/15.4 = 1.40)", eval_c2),
    Claim("C3", "MXNet has optimized CPU kernels.", SOURCE_C, "none given",
          "above(1) on the CPU: IMDB LSTM epoch time PyTorch dense / MXNet per batch size at 0 workers, and VGG16 "
          "inference latency PyTorch / MXNet", eval_c3),
    Claim("C4", "PyTorch's JIT compilation optimizes computations at runtime.", SOURCE_C, "none given",
          f"above(1) per batch size at 0 workers: epoch time torch-dense / {JIT_ARM}", eval_c4),
]


# ---------------------------------------------------------------------------------------------------- the table
COLUMNS = ["claim_id", "claim", "source", "source_conditions", "rule", "verdict", "quantity", "estimate", "ci_low",
           "ci_high", "measurement", "our_conditions", "reason"]


def conditions(d: Data) -> str:
    """Where our numbers come from: host, versions, profile, scale (from the trials' provenance)."""
    t = d.imdb_trials
    if t.empty:
        return "no IMDB trials"
    t = t[t.status == "done"]
    if t.empty:
        return "no finished IMDB trials"
    first = t.iloc[0]
    versions = sorted({f"{f} {v}" for f, v in zip(t.get("provenance.framework", []),
                                                    t.get("provenance.framework_version", [])) if isinstance(f, str)})
    return (f"device {d.device or 'cpu'}; CPU {first.get('provenance.cpu_model')} ({first.get('provenance.cpu_count')} cores), "
            f"{first.get('config.threads')} threads/trial; {', '.join(versions)}; Python {first.get('provenance.python')}; "
            f"profile {d.profile or 'all'}: {first.get('config.n_train')} train reviews, "
            f"epochs {sorted(set(t['config.epochs']))}, {t['config.seed'].nunique()} seed(s), {len(t)} trials")


def evaluate(claim: Claim, d: Data) -> dict:
    parts = claim.evaluate(d)
    verdict = combine([p.verdict for p in parts])
    deciding = next(p for p in parts if p.verdict == verdict)
    reasons = "; ".join(dict.fromkeys(p.reason for p in parts
                                      if p.reason and p.verdict in (verdict, NOT_TESTABLE, NOT_MEASURED)))
    return {"claim_id": claim.id, "claim": claim.text, "source": claim.source,
            "source_conditions": claim.source_conditions, "rule": claim.rule, "verdict": verdict,
            "quantity": deciding.quantity, "estimate": deciding.estimate, "ci_low": deciding.ci_low,
            "ci_high": deciding.ci_high, "measurement": " | ".join(p.text() for p in parts),
            "our_conditions": {"deepar": _deepar_conditions, "vgg16": _vgg_conditions, "onnx": _onnx_conditions}.get(
                STUDY_OF.get(claim.id, "imdb"), conditions)(d),
            "reason": reasons}


# the study whose rows a claim's conditions describe (IMDB otherwise)
STUDY_OF = {"B": "deepar", "C1": "vgg16", "C2": "vgg16", "A10": "onnx"}


def _host(t: pd.DataFrame) -> str:
    first = t.iloc[0]
    versions = sorted({f"{f} {v}" for f, v in zip(t.get("provenance.framework", []),
                                                    t.get("provenance.framework_version", [])) if isinstance(f, str)})
    return (f"CPU {first.get('provenance.cpu_model')} ({first.get('provenance.cpu_count')} cores)"
            + (f"; {', '.join(versions)}" if versions else ""))


def _vgg_conditions(d: Data) -> str:
    t, _ = d.other.get(VGG_STUDY, (pd.DataFrame(), pd.DataFrame()))
    t = t[t.status == "done"] if not t.empty else t
    if t.empty:
        return "no VGG16 trials"
    def values(col):
        return sorted(set(t[col].dropna())) if col in t else []
    return (f"{_host(t)}; profile {d.profile or 'all'}: VGG16 random weights, arms {values('config.arm')}, "
            f"batch {values('config.batch_size')}, {values('config.image_size')} px, oneDNN {values('config.onednn')}, "
            f"{values('config.repeats')} timed calls per trial, device {values('config.device')}")


def _onnx_conditions(d: Data) -> str:
    t, _ = d.other.get(ONNX_STUDY, (pd.DataFrame(), pd.DataFrame()))
    t = t[t.status == "done"] if not t.empty else t
    if t.empty:
        return "no ONNX trials"
    return f"{_host(t)}; profile {d.profile or 'all'}: steps {sorted(set(t.get('config.step', pd.Series(dtype=str)).dropna()))}"


def _deepar_conditions(d: Data) -> str:
    f = d.deepar
    if f.empty:
        return "no DeepAR trials"
    return (f"profile {d.profile or 'all'}: {f.dataset.nunique()} dataset(s), {f.seed.nunique()} seed(s), "
            f"arms {sorted(set(f.arm))}; host as for the IMDB rows")


def build(store: ResultsStore | None = None, profile: str | None = "quick", overrides: dict | None = None) -> pd.DataFrame:
    """The ledger: one row per claim (``COLUMNS``), every verdict computed from the store."""
    if store is None:
        from .paths import results_path

        store = ResultsStore.open_read(results_path())
    d = load(store, profile, overrides)
    return pd.DataFrame([evaluate(c, d) for c in CLAIMS], columns=COLUMNS)


def rules_markdown() -> str:
    """The rules and tolerance, as the README and the post state them."""
    lines = [f"Tolerance: a claimed ratio r is matched by the band [r / {1 + TOL:g}, r x {1 + TOL:g}] "
             f"(+-{TOL:.0%} relative); CIs are 95 % percentile-bootstrap intervals "
             f"({N_RESAMPLES} resamples) over timed epochs (first epoch of each trial excluded) and seeds.", "",
             "| claim | rule |", "|---|---|"]
    lines += [f"| {c.id} | {c.rule.replace('|', chr(92) + '|')} |" for c in CLAIMS]
    return "\n".join(lines)
