"""The answer's one figure: each workload's time ratio MXNet / PyTorch with its interval, beside the source's.

Drawn from ``fwbench.answer.Answer`` (the same quantities the answer's text quotes). Every ratio is drawn as
MXNet / PyTorch, so that one side of the line means one framework: a quantity the ledger states the other way
round (PyTorch / MXNet) is drawn as its inverse, which the caption says.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter

from ..answer import Answer
from . import NothingToDraw, legend_outside, wrap

ANSWER_FIGURE = "answer_speed"
TICKS = (0.125, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8)


def _row(label: str, q, claimed, inverse: bool = False) -> dict:
    value, low, high = q.shown(inverse)
    return {"label": label, "value": value, "low": low, "high": high, "claimed": claimed, "n": q.n}


def rows(a: Answer) -> list[dict]:
    """(label, ratio, low, high, source's ratio) per workload, all as MXNet / PyTorch."""
    out = []
    for s in a.speed:
        w, inverse = s["workload"], s["workload"].drawn_inverse
        claimed = 1 / w.claimed if inverse else w.claimed
        out.append(_row(f"{w.title} (claim {w.claim})", s["quantity"], claimed, inverse))
    if a.favour and a.favour["quantity"]:
        label = f"IMDB LSTM, fastest arm ({a.favour['arm']}) vs PyTorch at its best setting"
        out.append(_row(label, a.favour["quantity"], None))
    return out


def answer_figure(a: Answer):
    data = rows(a)
    if not data:
        raise NothingToDraw("no workload has both frameworks' trials in this profile")
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(data) + 1.2))
    ys = list(range(len(data)))[::-1]
    for y, r in zip(ys, data):
        has_ci = r["low"] == r["low"] and r["high"] == r["high"]
        err = [[r["value"] - r["low"]], [r["high"] - r["value"]]] if has_ci else None
        ax.errorbar(r["value"], y, xerr=err, fmt="o", color="#1f4e79", capsize=4, label="ours, interval over trials")
        if r["claimed"]:
            ax.plot(r["claimed"], y, marker="D", color="#b31b1b", linestyle="none", label="the source's ratio")
    ax.axvline(1, color="#888", linewidth=1)
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    ax.set_xticks([t for t in TICKS if lo <= t <= hi], [f"{t:g}" for t in TICKS if lo <= t <= hi])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(ys, [wrap(r["label"], 34) for r in data], fontsize=8)
    ax.set_xlabel("time ratio MXNet / PyTorch (log scale; above 1: PyTorch faster)")
    ax.set_ylabel("workload")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    legend_outside(ax, list(unique.values()), list(unique.keys()))
    fig.tight_layout()
    return fig
