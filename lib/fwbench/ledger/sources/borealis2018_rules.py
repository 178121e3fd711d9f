"""Source A's rule helpers (``borealis2018``): the held-out "best setting" split, the GPU-only claims' guard and
the formatting of the post's percentages and bands."""

from __future__ import annotations

import math

import numpy as np

from ...pages import render_markdown
from ..data import Data, blocks, reference, times
from ..rules import NOT_TESTABLE, Part, ratio_part

STUDY = "imdb"  # the study every A claim is judged on (A10 also reads the onnx study)
MX, PT = reference(STUDY, "mxnet"), reference(STUDY, "torch")  # the post's MXNet and PyTorch
GPU_UTIL_METRIC = "gpu_util_pct"  # imdb per-epoch metric a GPU run would add (A2, A3); none records it yet


def pct(ratio: float) -> str:
    return f"{100 * (ratio - 1):.4g}"


def band_text(b: tuple[float, float]) -> str:
    return f"[{b[0]:.3f}, {b[1]:.3f}]"


def gpu_claim(d: Data) -> list[Part]:
    """The part of a GPU-utilisation claim (A2, A3) on rows that do not record it; none where they do."""
    if not d.imdb.empty and GPU_UTIL_METRIC in d.imdb and d.imdb[GPU_UTIL_METRIC].notna().any():
        return []
    t, cpu = d.timed(), None
    if not t.empty and "proc_cpu_pct" in t:  # at a setting every arm ran (the extra arms': largest batch, 0 workers)
        b, w = t.batch_size.max(), t.num_workers.min()
        medians = t[t.batch_size.eq(b) & t.num_workers.eq(w)].groupby("arm")["proc_cpu_pct"].median()
        cpu = {"batch": b, "workers": w, "medians": medians}
    reason = render_markdown("ledger_gpu_reason", metric=GPU_UTIL_METRIC, gpu=d.device == "cuda", cpu=cpu)
    return [Part("GPU", verdict=NOT_TESTABLE, reason=reason)]


def speedup(d: Data, arm: str, batch: int, w_from: int, w_to: int, on=None) -> tuple[np.ndarray, np.ndarray]:
    return times(d, arm, batch, w_from, blocks=on), times(d, arm, batch, w_to, blocks=on)


def held_out(d: Data) -> tuple[list, list, str]:
    """ "Best setting" claims: the first repeat block chooses the setting, the others judge it (no selection
    bias). With one block only, both use it (the claim's floor then says "below scale"); with one setting swept
    there is nothing to choose, and every block judges it (as a per-setting claim reads the same trials)."""
    b, t = blocks(d), d.timed()
    if not t.empty and t.groupby(["batch_size", "num_workers"]).ngroups < 2:
        return b, b, f"the one setting swept: no best chosen, judged on blocks {b}"
    choose, judge = b[:1], (b[1:] or b[:1])
    return choose, judge, f"best chosen on block {choose}, judged on blocks {judge}"


def best_setting(d: Data, arm: str, on_blocks, metric: str) -> tuple[int, int] | None:
    """``arm``'s fastest (batch size, workers) by the median of ``metric`` over its timed epochs in ``on_blocks``
    (the choosing blocks of ``held_out``); None when it has no rows there. The one selection every "best setting"
    number uses: claim A7, the answer's fastest-arm comparison and the fastest-settings table."""
    t = d.timed()
    if t.empty:
        return None
    sel = t[(t.arm == arm) & t.block.isin(list(on_blocks))]
    med = sel.groupby(["batch_size", "num_workers"])[metric].median()
    return tuple(int(x) for x in med.idxmin()) if len(med) else None


def best_setting_ratio(d: Data, num: str, den: str, metric: str, rule) -> Part | None:
    """``metric`` of ``num`` over ``den``, each arm at its own best setting (chosen on the choosing blocks, the
    ratio over the trials of the judging blocks: ``held_out``), judged by ``rule``; None when an arm has no rows."""
    choose, judge, how = held_out(d)
    bn, bd = best_setting(d, num, choose, metric), best_setting(d, den, choose, metric)
    if bn is None or bd is None:
        return None
    return ratio_part(
        f"{num} at batch {bn[0]}/{bn[1]} workers vs {den} at batch {bd[0]}/{bd[1]} workers ({how})",
        f"epoch time {num} / {den}",
        times(d, num, *bn, metric, judge),
        times(d, den, *bd, metric, judge),
        rule,
    )


def best_settings_table(d: Data, metric: str) -> list[dict]:
    """Every arm at its best setting (``best_setting`` on the choosing blocks): the setting, and the geometric mean
    (the estimator of ``best_setting_ratio``), fastest and slowest of the per-trial values (``times``) on the
    judging blocks, with the number of trials and of the settings it ran (one: nothing was chosen)."""
    choose, judge, how = held_out(d)
    rows = []
    for arm in sorted(set(d.timed().arm)) if not d.timed().empty else []:
        best = best_setting(d, arm, choose, metric)
        if best is None:
            continue
        values = times(d, arm, best[0], best[1], metric, judge)
        if not len(values):
            continue
        rows.append(
            {
                "arm": arm,
                "batch_size": best[0],
                "num_workers": best[1],
                "geomean": float(np.exp(np.log(values).mean())),
                "fastest": float(values.min()),
                "slowest": float(values.max()),
                "n": len(values),
                "how": how,
                "settings": d.timed()[d.timed().arm == arm].groupby(["batch_size", "num_workers"]).ngroups,
            }
        )
    return rows


def median(values) -> float:
    return float(np.median(values)) if len(values) else math.nan
