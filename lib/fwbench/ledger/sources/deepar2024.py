"""Source B: the 2024 blog post comparing GluonTS DeepAR in MXNet and PyTorch on the Monash archive.

Decision (the post's library versions): B's verdict is drawn on the study's main environment. The ``versions``
part (the same datasets x seeds under the post's gluonts 0.13.3) is a condition that may explain part of the gap,
so its total ratio is a context part of B: it does not split B's confidence between two tests of one claim.

Decision (coverage): B is a total over the post's datasets, so its first judged part is the subset total over every
dataset of the post's list staged here, from the coverage part's per-batch costs at the protocol's scale, weighted
as the post summed them (``analysis.deepar_prediction.weighted_total``); the main part's full-scale total over its
datasets is the second, Bonferroni-corrected with it. The whole list's estimate, with the datasets not staged here
from the window line, is context beside them, never in their place.

Its numbers live in ``fwbench.published.deepar2024``; "MXNet" and "PyTorch" are the study's reference arms.
"""

from __future__ import annotations

import math

import pandas as pd

from ...analysis.deepar_prediction import archive_estimate, comparison, weighted_total
from ...data import monash
from ...published.deepar2024 import CLAIMED_SPEEDUP, CONDITIONS, HARDWARE, SOURCE, TOTAL_TRAIN_S
from .. import floors
from ..data import Claim, Data, reference
from ..rules import CONTEXT, INSUFFICIENT, Part, band_about, ci_part, confidence, missing, sum_ratio_ci, verdict_in_band

STUDY = "deepar"
N_POST_LIST = len(monash.names(in_2024_post=True))  # the catalogue's keys of the post's datasets (41)


def paired(frame: pd.DataFrame, metric: str = "train_time_s") -> tuple[pd.DataFrame, str]:
    """``metric`` of the reference arms side by side per dataset x seed finished by both (columns ``mxnet``,
    ``torch``), and, when there is no such pair, what is missing."""
    mx, pt = reference(STUDY, "mxnet"), reference(STUDY, "torch")
    if frame.empty or metric not in frame:
        return pd.DataFrame(), f"no finished trials of that part with {metric} on these rows"
    piv = frame.pivot_table(index=["dataset", "seed"], columns="arm", values=metric)
    if not {mx, pt} <= set(piv.columns):
        return pd.DataFrame(), f"DeepAR trials of arms {sorted(piv.columns)}, not both {mx} and {pt}"
    pairs = piv[[mx, pt]].dropna().rename(columns={mx: "mxnet", pt: "torch"})
    return pairs, "" if len(pairs) else f"no dataset x seed finished by both {mx} and {pt}"


def total_ratio(frame: pd.DataFrame, metric: str = "train_time_s") -> dict | None:
    """Total ``metric`` (the post's: training time) MXNet / PyTorch over the paired dataset x seed trials, with the
    paired bootstrap CI (``sum_ratio_ci``) and the counts; None when nothing is paired."""
    pairs, _ = paired(frame, metric)
    if pairs.empty:
        return None
    return {
        **sum_ratio_ci(pairs["mxnet"], pairs["torch"]),
        "n_datasets": int(pairs.index.get_level_values(0).nunique()),
    }


def coverage_parts(d: Data) -> list[Part]:
    """B over every dataset of the post's list measured here (the coverage part), weighted as the post weighted
    them (judged), and the whole list's estimate with the unmeasured datasets from the window line (context)."""
    rows = d.deepar_coverage
    total = weighted_total(rows, confidence()) if not rows.empty else {"n_datasets": 0}
    if not total["n_datasets"]:
        return []
    v = verdict_in_band(total["ci_low"], total["ci_high"], band_about(CLAIMED_SPEEDUP))
    out = [
        ci_part(
            f"subset total over the {total['n_datasets']} of the post's {N_POST_LIST} datasets staged here (coverage "
            "part: each dataset's cost per batch, at the protocol's 100 x 50)",
            "total train time, datasets weighted by their cost as the post summed them, MXNet / PyTorch",
            total,
            v,
            "a dataset with one trial: no CI" if v == INSUFFICIENT else "",
            n=f"{len(rows)} coverage trials, {total['n_datasets']} datasets",
        )
    ]
    archive = archive_estimate(comparison(rows))
    if archive["n_modelled"] and not math.isnan(archive["ratio"]):
        out.append(
            Part(
                f"the post's whole list, {archive['n_datasets']} datasets ({archive['n_modelled']} not staged here: "
                f"modelled by the window line, {archive['n_beyond']} beyond its measured windows)",
                "estimated total train time (context: partly modelled, not judged), MXNet / PyTorch",
                archive["ratio"],
                verdict=CONTEXT,
                beside=True,
            )
        )
    return out


def eval_b(d: Data) -> list[Part]:
    coverage = coverage_parts(d)
    return coverage[:1] + protocol_parts(d) + coverage[1:]


def protocol_parts(d: Data) -> list[Part]:
    """B at the protocol's full scale (the main part's 100 x 50 trials) and its context parts."""
    pairs, why = paired(d.deepar)
    if pairs.empty:
        arms = f"{reference(STUDY, 'mxnet')} and {reference(STUDY, 'torch')}"
        what = f"the main part's protocol-scale DeepAR trials (study {STUDY!r}, train_time_s) of arms {arms}"
        return [missing(f"{what} on the same dataset x seed", why)]
    r = total_ratio(d.deepar)
    v = verdict_in_band(r["ci_low"], r["ci_high"], band_about(CLAIMED_SPEEDUP))
    label = f"{r['n_datasets']} datasets"
    if r["n_datasets"] < N_POST_LIST:  # B is a total over the post's datasets: a subset total is labelled as such
        label = f"subset total over {r['n_datasets']} of the post's {N_POST_LIST} datasets"
    no_ci = "fewer than 2 dataset x seed pairs: no CI" if v == INSUFFICIENT else ""
    out = [_pairs_part(label, "total train time MXNet / PyTorch", r, v, no_ci)]
    both = d.deepar.assign(total_s=d.deepar.train_time_s + d.deepar.get("predict_time_s", 0.0))
    t = total_ratio(both, "total_s")
    if t is not None:
        out.append(
            _pairs_part(label, "train + forecast MXNet / PyTorch (context, not the post's quantity)", t, CONTEXT)
        )
    return out + versions_parts(d)


def _pairs_part(label: str, quantity: str, r: dict, verdict: str, reason: str = "") -> Part:
    """A total ratio over paired dataset x seed trials (``total_ratio``)."""
    return ci_part(label, quantity, r, verdict, reason, n=f"{r['n']} dataset x seed pairs")


def versions_parts(d: Data) -> list[Part]:
    """The total train ratio of the ``versions`` part per environment it ran in (context; see the docstring)."""
    frame = d.deepar_versions
    if frame.empty:
        return []
    quantity = "total train time MXNet / PyTorch (context: a condition of the gap, not judged)"
    out = []
    for env, trials in frame.groupby("env", sort=True):
        r = total_ratio(trials)
        if r is not None:
            label = f"the same datasets x seeds in environment {env} (the post's GluonTS, "
            out.append(_pairs_part(f"{label}{_versions_text(d, trials)}, with this run's PyTorch and MXNet)", quantity,
                                   r, CONTEXT))  # fmt: skip
    return out


def _versions_text(d: Data, trials: pd.DataFrame) -> str:
    """'gluonts 0.13.3' (the GluonTS versions these trials ran, from their provenance)."""
    stored = d.study_trials(STUDY)
    column = "provenance.gluonts_version"
    ran = stored[stored.trial_id.isin(trials.trial_id)] if column in stored else stored.iloc[0:0]
    versions = sorted({str(v) for v in ran.get(column, pd.Series(dtype=str)).dropna()})
    return "gluonts " + ", ".join(versions) if versions else "versions not recorded"


CLAIMS = [
    Claim(
        "B",
        f"PyTorch is {CLAIMED_SPEEDUP:g}x faster (total training time MXNet {TOTAL_TRAIN_S['mxnet']:,.0f} s vs "
        f"PyTorch {TOTAL_TRAIN_S['torch']:,.0f} s).",
        SOURCE,
        CONDITIONS,
        f"about({CLAIMED_SPEEDUP:g}): total train time {reference(STUDY, 'mxnet')} / {reference(STUDY, 'torch')} "
        "(a subset of the datasets: a labelled subset total), judged twice: over the coverage part's datasets, each "
        "at its mean protocol-scale cost over its trials, with a delta-method Welch t-interval on the log ratio; "
        "and over the main part's dataset x seed pairs at full scale, with a paired percentile-bootstrap CI",
        eval_b,
        study=STUDY,
        hardware="cpu",
        source_hardware=HARDWARE,
        floor=floors.deepar_protocol,
        scale=floors.DEEPAR,
        part="coverage",
        tests=2,
    ),
]
