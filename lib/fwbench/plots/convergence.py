"""Convergence figures: one line per arm (the median over seeds) with a band (min-max over seeds, IQR darker),
in the arm's colour and with its label from the study's arm table. Each seed is its own trial (a fresh process),
so a band's n, given in the legend, counts the distinct trials that contributed to it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from ..analysis import arm_order
from ..analysis import convergence as conv
from . import NothingToDraw, arm_style, legend_outside, wrap

BAND_TITLE = "arm (line: median; bands: min-max and IQR over n independent trials, one per seed)"
_AXIS = {
    "train_loss": "training loss (cross-entropy)",
    "test_loss": "test loss (cross-entropy)",
    "test_acc": "test accuracy (fraction correct)",
}


def _band(ax, b: pd.DataFrame, x: str, label: str, color: str) -> None:
    b = b.sort_values("epoch")
    ax.fill_between(b[x], b["lo"], b["hi"], color=color, alpha=0.15, linewidth=0)
    ax.fill_between(b[x], b["q1"], b["q3"], color=color, alpha=0.25, linewidth=0)
    ax.plot(b[x], b["median"], color=color, label=label, marker="o" if len(b) < 8 else None, markersize=3)


def _label(study: str, arm: str, rows: pd.DataFrame) -> dict:
    """The arm's colour and its legend label with n: the distinct trials (seeds) whose rows made this band."""
    look = arm_style(study, arm)
    look["label"] = wrap(f"{look['label']} (n={rows.trial_id.nunique()})", 40)
    return look


def _grid(nrows: int, ncols: int):
    return plt.subplots(nrows, ncols, figsize=(4.2 * ncols + 3.0, 2.9 * nrows), squeeze=False, layout="constrained")


def _figure_legend(fig, axes) -> None:
    """One legend beside the panels: each (arm, n) once, in the order the panels first show them."""
    entries = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    legend_outside(fig, list(entries.values()), list(entries), title=wrap(BAND_TITLE, 40), alignment="left")


def imdb_metric_figure(frame: pd.DataFrame, metrics: tuple[str, ...], x: str = "epoch", settings=None):
    """Rows: settings; columns: those of ``metrics`` the rows hold; a band per arm. ``x``: ``epoch`` or ``wall_s``."""
    settings = settings if settings is not None else conv.curve_settings(frame)[0]
    present = [m for m in metrics if not frame.empty and m in frame and frame[m].notna().any()]
    if not settings or not present:
        what = " or ".join(metrics).replace("_", " ")
        raise NothingToDraw(f"no IMDB trial of this profile recorded {what} per epoch, so there is no curve to show.")
    fig, axes = _grid(len(settings), len(present))
    for i, setting in enumerate(settings):
        sub = frame[frame.setting == setting]
        for j, metric in enumerate(present):
            ax = axes[i, j]
            b = conv.bands(sub, metric, x=x)
            for arm in arm_order("imdb", sub.arm) if not b.empty else []:
                _band(ax, b[b.arm == arm], x, **_label("imdb", arm, sub[sub.arm == arm].dropna(subset=[metric])))
            ax.set_title(setting, fontsize=9)
            ax.set_xlabel("epoch (0 = first)" if x == "epoch" else "cumulative training time (s)")
            ax.set_ylabel(_AXIS.get(metric, metric.replace("_", " ")))
            if x == "epoch":
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
    _figure_legend(fig, axes)
    return fig


def imdb_loss_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("train_loss", "test_loss"), settings=settings)


def imdb_accuracy_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("test_acc",), settings=settings)


def imdb_wallclock_figure(frame: pd.DataFrame, settings=None):
    return imdb_metric_figure(frame, ("train_loss",), x="wall_s", settings=settings)


def deepar_loss_figure(frame: pd.DataFrame):
    """One panel per dataset: DeepAR training loss per epoch, a band per arm."""
    if frame.empty:
        raise NothingToDraw(
            "no DeepAR trial of this profile recorded a training loss per epoch, so there is no curve to show."
        )
    datasets = sorted(set(frame.dataset))
    ncols = min(len(datasets), 2)
    nrows = (len(datasets) + 1) // 2
    fig, axes = _grid(nrows, ncols)
    for ax, ds in zip(axes.flat, datasets):
        sub = frame[frame.dataset == ds]
        b = conv.bands(sub, "train_loss", by=("arm",))
        for arm in arm_order("deepar", sub.arm):
            _band(ax, b[b.arm == arm], "epoch", **_label("deepar", arm, sub[sub.arm == arm]))
        ax.set_title(f"DeepAR {ds}", fontsize=9)
        ax.set_xlabel("epoch (0 = first)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("training loss (NLL)")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(datasets) :]:
        ax.set_visible(False)
    _figure_legend(fig, axes)
    return fig


def show(paths) -> None:
    """Display the saved PNG inline: works under any matplotlib backend (``MPLBACKEND=agg`` in headless papermill
    runs shows no figure by itself), and the rendered HTML embeds it as base64."""
    from IPython.display import Image, display

    for path in paths:
        if str(path).endswith(".png"):
            display(Image(filename=str(path)))
