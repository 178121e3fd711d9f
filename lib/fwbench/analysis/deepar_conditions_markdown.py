"""The conditions of B's gap to the post as the pages show them (issue 24): the factor table, the sentence that reads
it, and the contention part per dataset and condition, as Markdown with quantity spans. The numbers are
``analysis.deepar_conditions``'s; nothing is computed here but their rendering."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..published.deepar2024 import CLAIMED_SPEEDUP
from ..quantity import Quantity
from ..studies import get_framework, get_study
from .deepar import STUDY, reference_arms


def factor_markdown(table: pd.DataFrame, total: dict) -> str:
    """The factor table as Markdown, with what it is read against."""
    if table.empty:
        return "_No condition of B's gap is measured in this profile._"
    lines = [
        f"B here: **{total['ratio']:.2f}** (the judged subset total); the post: {CLAIMED_SPEEDUP:g}; the gap: "
        f"{total['gap']:.2f}x. Each factor alone, both frameworks under it:",
        "",
        "| factor | from | MXNet time x | PyTorch time x | effect on MXNet / PyTorch (95 % CI) | share of the gap |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        kind = "" if r.kind == "measured" else f" ({r.kind})"
        lines.append(
            f"| {r.factor}{kind} | {r.source}; {r.n} | {_x(r.mxnet_slowdown)} | {_x(r.pytorch_slowdown)} | "
            f"{effect_quantity(r).markup()} | {_pct(r.gap_share)} |"
        )
    lines += ["", factor_sentence(table)] if factor_sentence(table) else []
    lines += [
        "",
        "Share of the gap: log(effect) / log(gap), what the factor would close alone if it held on every dataset; "
        "negative: it widens the gap. The factors are measured one at a time, not multiplied into a decomposition. "
        "A CI needs 2 or more independent trials in every group (the oneDNN variant ran one seed).",
    ]
    return "\n".join(lines)


def factor_sentence(table: pd.DataFrame) -> str:
    """The measured factor that moves the ratio most, set beside what the post's chart implies of its machine
    (per framework): whether they point the same way. A reading of the table, not a fit."""
    measured = table[(table.kind == "measured") & np.isfinite(table.effect)]
    if measured.empty:
        return ""
    top = measured.loc[measured.effect.map(lambda e: abs(math.log(e))).idxmax()]
    text = (
        f"Of the measured conditions, **{top.factor}** moves the ratio most: {effect_quantity(top).markup()} "
        f"(MXNet {top.mxnet_slowdown:.2f}x slower, PyTorch {top.pytorch_slowdown:.2f}x)"
    )
    post = table[table.key == "post_machine"]
    if post.empty:
        return text + "."
    p = post.iloc[0]
    same = (top.mxnet_slowdown > top.pytorch_slowdown) == (p.mxnet_slowdown > p.pytorch_slowdown)
    return text + (
        f"; the post's chart implies a batch cost its machine {p.mxnet_slowdown:.2f}x ours in MXNet and "
        f"{p.pytorch_slowdown:.2f}x in PyTorch: "
        + ("the same pattern (MXNet slowed more)" if same else "another pattern")
        + ", which is consistent with that condition on the post's laptop, not a proof of it (its thread count "
        "and load are not published)."
    )


def effect_quantity(row) -> Quantity:
    """A factor's effect on B's ratio as a named quantity (``deepar.gap_factor.<key>``): one value on every page."""
    return Quantity(f"deepar.gap_factor.{row.key}", row.effect, row.effect_low, row.effect_high, n=row.n)


def _x(value: float) -> str:
    return f"{value:.2f}" if value == value else "-"


def _pct(value: float) -> str:
    return f"{100 * value:.0f} %" if value == value else "-"


def conditions_markdown(table: pd.DataFrame, rows: pd.DataFrame | None = None) -> str:
    """``conditions_table`` as Markdown: per dataset and condition, the costs, slowdowns, ratio and effect; with
    the part's ``rows``, whether any batch stalled beside the load (``stall_sentence``)."""
    if table.empty:
        return "_No contention trials stored for this profile._"
    lines = [
        "| dataset (window) | condition | trials a side | MXNet ms/batch | PyTorch ms/batch | MXNet x | PyTorch x | "
        "MXNet / PyTorch (95 % CI) | effect on the ratio (95 % CI) | CPUs busy MXNet / PyTorch | burner got |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.itertuples():
        burner = f"{100 * r.burner_cpu_frac:.0f} %" if r.burner_cpu_frac == r.burner_cpu_frac else "-"
        lines.append(
            f"| {r.dataset} ({r.window}) | {r.condition} | {r.n_trials} | {r.mxnet_ms:.1f} | {r.pytorch_ms:.1f} | "
            f"{r.mxnet_slowdown:.2f} | {r.pytorch_slowdown:.2f} | {r.ratio:.2f} ({_range(r.ratio_low, r.ratio_high)})"
            f" | {r.effect:.2f} ({_range(r.effect_low, r.effect_high)}) | {r.mxnet_cpus_busy:.2f} / "
            f"{r.pytorch_cpus_busy:.2f} | {burner} |"
        )
    lines += [
        "",
        "Cost per batch: the median of a trial's later epochs (the first is warm-up), geometric mean over its "
        "independent trials; x: against the same framework at the baseline; CPUs busy: the trial process's CPU "
        "time in training over its wall time (the burner is another process); burner got: the share of its own "
        "core the burner used. These trials measure contention on purpose and enter no other comparison.",
    ]
    return "\n".join(lines + ([stall_sentence(rows)] if rows is not None and not rows.empty else []))


def stall_sentence(rows: pd.DataFrame) -> str:
    """Whether a framework stalled for seconds per batch beside the background load: the slowest later epoch's
    mean per batch of each framework under the load, against its median."""
    loaded = rows[rows.background_load > 0]
    if loaded.empty:
        return ""
    parts = []
    for arm in reference_arms():
        side = get_framework(get_study(STUDY).arm(arm).framework).label
        g = loaded[loaded.arm == arm]
        if len(g):
            parts.append(f"{side} {1000 * g.c_batch_worst.max():.0f} ms (median {1000 * g.c_batch.median():.0f} ms)")
    return (
        "Beside the background load, the slowest epoch's mean time per batch: " + ", ".join(parts) + "; a stall of "
        "seconds per batch would show there."
    )


def _range(low: float, high: float) -> str:
    return f"{low:.2f}-{high:.2f}" if low == low else "no CI"
