"""Every figure passes a reader's look: rendered from small synthetic frames shaped like the store's tidy rows (no
trial runs), each has labelled axes, data, a legend where it has several series (outside the data area), tick labels
that do not overlap, and a figure with no data is not drawn at all (``NothingToDraw``). The GEMM figure is plotted
against the matrix size of the trials' configs, the convergence legends count the trials behind each band, and every
figure a notebook publishes has a caption that is not its file name."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the headless backend)
from jinja2 import Environment, FileSystemLoader  # noqa: E402

from fwbench import plots, report  # noqa: E402
from fwbench.analysis import convergence as conv  # noqa: E402
from fwbench.analysis import deepar_prediction as post  # noqa: E402
from fwbench.plots import convergence, deepar, deepar_prediction, inference  # noqa: E402
from fwbench.studies import get_study  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SEEDS = (42, 43)
GEMM_SIZES = (256, 1024, 2048)
GEMM_REPEATS = 5


# ---------------------------------------------------------------------------------------------------- frames
def deepar_trials(breakdown: bool = True) -> pd.DataFrame:
    """One row per DeepAR trial, as ``fwbench.analysis.deepar.load_trials`` returns them."""
    study = get_study("deepar")
    # (context, prediction length): the paper store's windows 8, 27, 33, 39 and 73, close enough to crowd an axis
    datasets = {
        "m1_yearly": (2, 6),
        "cif_2016": (15, 12),
        "m1_monthly": (15, 18),
        "tourism_monthly": (15, 24),
        "electricity_weekly": (65, 8),
    }
    rows = []
    for (dataset, (context, horizon)), arm, seed in itertools.product(datasets.items(), study.arm_names[:2], SEEDS):
        slow = (1.0 + context / 4) if study.framework_of(arm) == "mxnet" else 1.0
        train = slow * (context + horizon) * (1 + 0.05 * (seed - 42))
        rows.append(
            {
                "trial_id": f"{dataset}-{arm}-{seed}",
                "dataset": dataset,
                "arm": arm,
                "seed": seed,
                "context_length": context,
                "prediction_length": horizon,
                "window": context + horizon,
                "train_time_s": train,
                "predict_time_s": 0.2 * train,
                "total_time_s": 1.2 * train,
                "stopped_early": False,
                "dataset_kind": "monash",
                "epochs": 100,
                "epochs_run": 100,
                "data_time_s": 0.3 * train if breakdown else np.nan,
                "fit_overhead_s": 0.1 * train,
            }
        )
    return pd.DataFrame(rows)


def vgg16_rows() -> pd.DataFrame:
    """One row per timed VGG16 pass, as ``fwbench.analysis.vgg16.vgg16_latencies`` returns them: every arm of the
    study (the long labels that used to collide), oneDNN on and off, two batch sizes, three trials each."""
    study = get_study("vgg16")
    rows = []
    for arm, onednn, batch, trial, repeat in itertools.product(
        study.arm_names, (True, False), (1, 8), range(3), range(4)
    ):
        latency = 30.0 * batch * (1.0 if onednn else 1.6) * (1 + 0.02 * repeat)
        rows.append(
            {
                "trial_id": f"{arm}-{onednn}-{batch}-{trial}",
                "arm": arm,
                "framework": study.framework_of(arm),
                "batch_size": batch,
                "image_size": 224,
                "onednn": onednn,
                "device": "cpu",
                "threads": 2,
                "repeat": repeat,
                "latency_ms": latency,
                "ms_per_image": latency / batch,
            }
        )
    return pd.DataFrame(rows)


def vgg16_compile_rows(frame: pd.DataFrame) -> pd.DataFrame:
    compiled = frame[frame.arm.isin(["torch-script", "torch-compile"])]
    keys = ["trial_id", "arm", "batch_size", "image_size", "onednn", "device"]
    return compiled[keys].drop_duplicates().assign(compile_s=lambda f: np.where(f.arm == "torch-compile", 40.0, 2.0))


def gemm_rows() -> pd.DataFrame:
    """One row per timed matmul, as ``fwbench.analysis.inference.gemm_results`` returns them: ``n`` is the matrix
    size of the trial's config, five repeats each (the count the old figure drew as the size)."""
    study = get_study("gemm")
    rows = []
    for arm, threads, size, repeat in itertools.product(study.arm_names, (1, 2), GEMM_SIZES, range(GEMM_REPEATS)):
        rows.append(
            {
                "trial_id": f"{arm}-{threads}-{size}",
                "arm": arm,
                "framework": study.framework_of(arm),
                "device": "cpu",
                "threads": threads,
                "n": size,
                "repeat": repeat,
                "gflops": 80.0 * threads * (1 + size / 4096) + repeat,
            }
        )
    return pd.DataFrame(rows)


def onnx_rows() -> pd.DataFrame:
    study = get_study("onnx")
    rows = [
        {
            "step": step,
            "runtime": study.framework_of(step),
            "batch_size": batch,
            "repeat": repeat,
            "latency_ms": (2.0 if step == "onnxruntime" else 3.0) * batch * (1 + 0.01 * repeat),
        }
        for step in ("torch-export", "onnxruntime")
        for batch in (1, 32)
        for repeat in range(10)
    ]
    for row in rows:  # three trials per runtime, as a sweep with repeats stores them: the ratio CI is over trials
        row["trial_id"] = f"{row['step']}-{row['repeat'] % 3}"
    return pd.DataFrame(rows)


def imdb_curves(seeds_by_setting=None) -> pd.DataFrame:
    """One row per IMDB trial x epoch, as ``fwbench.analysis.convergence.load_imdb`` returns them. By default two
    settings with different seeds (42, 43 and 44, 45): four seeds in the frame, two behind each band."""
    seeds_by_setting = seeds_by_setting or {64: (42, 43), 256: (44, 45)}
    study = get_study("imdb")
    rows = []
    for (batch, seeds), arm in itertools.product(seeds_by_setting.items(), study.arm_names[:3]):
        for seed, epoch in itertools.product(seeds, range(5)):
            rows.append(
                {
                    "trial_id": f"{arm}-{batch}-{seed}",
                    "arm": arm,
                    "seed": seed,
                    "epoch": epoch,
                    "epochs": 5,
                    "batch_size": batch,
                    "num_workers": 0,
                    "lr_schedule": True,
                    "train_loss": 0.7 / (epoch + 1) + 0.01 * (seed - 42),
                    "test_loss": 0.5 + 0.01 * epoch,
                    "test_acc": 0.6 + 0.05 * epoch,
                    "train_time_s": 10.0 + seed - 42,
                }
            )
    frame = pd.DataFrame(rows)
    frame["setting"] = [
        conv.setting_label(b, w, s) for b, w, s in zip(frame.batch_size, frame.num_workers, frame.lr_schedule)
    ]
    frame["wall_s"] = frame.groupby("trial_id")["train_time_s"].cumsum()
    return frame


def deepar_curves() -> pd.DataFrame:
    study = get_study("deepar")
    rows = [
        {
            "trial_id": f"{dataset}-{arm}-{seed}",
            "dataset": dataset,
            "arm": arm,
            "seed": seed,
            "epoch": epoch,
            "train_loss": 2.0 / (epoch + 1) + 0.01 * (seed - 42),
        }
        for dataset in ("m1_yearly", "cif_2016", "tourism_monthly")
        for arm in study.arm_names[:2]
        for seed in SEEDS
        for epoch in range(6)
    ]
    return pd.DataFrame(rows)


def post_prediction_rows() -> pd.DataFrame:
    """Three charted datasets: two measured (MXNet predicted half the published total, PyTorch on it), one
    modelled."""
    table = pd.DataFrame(
        [
            {"dataset": d, "window": w, "measured": m, "condition": "c", "ours_mxnet_s_per_batch": 0.04,
             "ours_pytorch_s_per_batch": 0.02, "predicted_post_mxnet_s": 1000.0 * k,
             "predicted_post_pytorch_s": 500.0 * k, "predicted_post_ratio": 2.0}
            for d, w, m, k in (("m3_yearly", 8, True, 1), ("m1_monthly", 33, True, 2), ("nn5_weekly", 73, False, 3))
        ]
    )  # fmt: skip
    chart = pd.DataFrame(
        {"dataset": table.dataset, "post_mxnet_s": table.predicted_post_mxnet_s * 2,
         "post_pytorch_s": table.predicted_post_pytorch_s}
    )  # fmt: skip
    return post.against_chart(table, chart)


# ---------------------------------------------------------------------------------------------------- the figures
FIGURES = {  # figure function and the frame it is drawn from; the keys are the names the notebooks publish
    "deepar_runtime": (deepar.runtime_figure, lambda: (deepar_trials(),)),
    "deepar_ratio": (deepar.ratio_figure, lambda: (deepar_trials(),)),
    "deepar_ratio_by_window": (deepar.window_figure, lambda: (deepar_trials(),)),
    "deepar_breakdown": (deepar.breakdown_figure, lambda: (deepar_trials(),)),
    "vgg16_latency": (inference.vgg16_latency_figure, lambda: (vgg16_rows(),)),
    "vgg16_compiled": (inference.vgg16_compiled_figure, lambda: (vgg16_rows(), vgg16_compile_rows(vgg16_rows()))),
    "gemm_peak": (inference.gemm_figure, lambda: (gemm_rows(),)),
    "onnx_latency": (inference.onnx_latency_figure, lambda: (onnx_rows(),)),
    "convergence_imdb_loss": (convergence.imdb_loss_figure, lambda: (imdb_curves(),)),
    "convergence_imdb_accuracy": (convergence.imdb_accuracy_figure, lambda: (imdb_curves(),)),
    "convergence_imdb_wallclock": (convergence.imdb_wallclock_figure, lambda: (imdb_curves(),)),
    "convergence_deepar_loss": (convergence.deepar_loss_figure, lambda: (deepar_curves(),)),
    "deepar_post_prediction": (deepar_prediction.prediction_figure, lambda: (post_prediction_rows(),)),
}
EMPTY = {  # what each figure function gets when the store holds nothing for it
    "deepar_runtime": (pd.DataFrame(),),
    "deepar_ratio": (pd.DataFrame(),),
    "deepar_ratio_by_window": (pd.DataFrame(),),
    "deepar_breakdown": (deepar_trials(breakdown=False),),  # the paper store: trials, none with a breakdown
    "vgg16_latency": (pd.DataFrame(),),
    "vgg16_compiled": (pd.DataFrame(), None),
    "gemm_peak": (pd.DataFrame(),),
    "onnx_latency": (pd.DataFrame(),),
    "convergence_imdb_loss": (pd.DataFrame(), []),
    "convergence_imdb_accuracy": (pd.DataFrame(), []),
    "convergence_imdb_wallclock": (pd.DataFrame(), []),
    "convergence_deepar_loss": (pd.DataFrame(),),
    "deepar_post_prediction": (pd.DataFrame(),),
}


@pytest.fixture
def drawn(request):
    """The figure named by the test's parameter, drawn (so text has its final extent), closed afterwards."""
    draw, args = FIGURES[request.param]
    fig = draw(*args())
    fig.canvas.draw()
    yield fig
    plt.close(fig)


def _has_data(ax) -> bool:
    return bool(any(len(line.get_xdata()) for line in ax.lines) or ax.collections or ax.patches)


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison and _has_data(ax)]


def _shown_ticklabels(ax, axis: str):
    """The tick labels a reader sees: non-empty text at a tick inside the view limits."""
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    labels = ax.get_xticklabels(which="both") if axis == "x" else ax.get_yticklabels(which="both")
    index = 0 if axis == "x" else 1
    return [
        label
        for label in labels
        if label.get_visible() and label.get_text().strip() and low <= label.get_position()[index] <= high
    ]


def _legends(fig):
    return [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)


def _colours(ax) -> set:
    """The distinct colours of the data artists: one per series."""
    found = {matplotlib.colors.to_hex(line.get_color()) for line in ax.lines if len(line.get_xdata()) > 0}
    for patch in ax.patches:
        found |= {matplotlib.colors.to_hex(patch.get_facecolor()), matplotlib.colors.to_hex(patch.get_edgecolor())}
    return found


@pytest.mark.parametrize("drawn", list(FIGURES), indirect=True)
def test_every_axes_with_data_has_both_labels(drawn):
    axes = _data_axes(drawn)
    assert axes, "the figure draws no data"
    for ax in axes:
        assert ax.get_xlabel().strip(), f"axes {ax.get_title()!r} has no x label"
        assert ax.get_ylabel().strip(), f"axes {ax.get_title()!r} has no y label"


@pytest.mark.parametrize("drawn", list(FIGURES), indirect=True)
def test_several_series_have_a_legend_outside_the_data(drawn):
    several = any(len(_colours(ax)) > 1 for ax in _data_axes(drawn))
    legends = _legends(drawn)
    if several:
        assert legends, "several series and no legend"
        assert max(len(legend.get_texts()) for legend in legends) >= 2
    renderer = drawn.canvas.get_renderer()
    for legend, ax in itertools.product(legends, _data_axes(drawn)):
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer)), (
            f"the legend covers the axes {ax.get_title()!r}"
        )


@pytest.mark.parametrize("drawn", list(FIGURES), indirect=True)
def test_tick_labels_do_not_overlap(drawn):
    renderer = drawn.canvas.get_renderer()
    for ax, axis in itertools.product(_data_axes(drawn), ("x", "y")):
        extents = [(label.get_text(), label.get_window_extent(renderer)) for label in _shown_ticklabels(ax, axis)]
        for (first, box), (second, other) in itertools.combinations(extents, 2):
            assert not box.overlaps(other), f"{axis} tick labels {first!r} and {second!r} overlap"
    for ax in _data_axes(drawn):  # the names written next to points
        notes = [(text.get_text(), text.get_window_extent(renderer)) for text in ax.texts if text.get_visible()]
        for (first, box), (second, other) in itertools.combinations(notes, 2):
            assert not box.overlaps(other), f"annotations {first!r} and {second!r} overlap"


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_data_draws_nothing(name):
    draw, _ = FIGURES[name]
    before = set(plt.get_fignums())
    with pytest.raises(plots.NothingToDraw) as reason:
        draw(*EMPTY[name])
    assert set(plt.get_fignums()) == before, "a figure was opened for nothing"
    sentence = str(reason.value)
    assert sentence.endswith(".") and " so there is no " in sentence  # one sentence saying why


def test_publish_shows_the_reason_and_removes_a_stale_figure(tmp_path, capsys):
    for ext in plots.EXTENSIONS:
        (tmp_path / f"deepar_breakdown.{ext}").write_text("an older run's figure")
    assert (
        plots.publish("deepar_breakdown", deepar.breakdown_figure, deepar_trials(breakdown=False), directory=tmp_path)
        == []
    )
    assert [path.name for path in tmp_path.iterdir()] == [f"deepar_breakdown{plots.NOT_DRAWN}"], (
        "a stale figure would still reach the post"
    )
    assert "ran with the time breakdown" in capsys.readouterr().out
    paths = plots.publish("deepar_breakdown", deepar.breakdown_figure, deepar_trials(), directory=tmp_path)
    assert (
        sorted(path.name for path in tmp_path.iterdir())
        == sorted(path.name for path in paths)
        == ["deepar_breakdown.png", "deepar_breakdown.svg"]
    )  # drawn again: the note is gone
    plt.close("all")


def test_the_post_says_why_a_figure_is_not_drawn_and_looks_for_no_png(tmp_path):
    figures, site = tmp_path / "figures", tmp_path / "site"
    plots.publish("deepar_breakdown", deepar.breakdown_figure, deepar_trials(breakdown=False), directory=figures)
    plots.publish("deepar_runtime", deepar.runtime_figure, deepar_trials(), directory=figures)
    plt.close("all")
    found = report.collect_figures(figures, site, since=None)
    by_name = {fig["name"]: fig for fig in found["deepar"]}
    assert by_name["deepar_runtime"]["src"] == "figures/deepar_runtime.png"
    missing = by_name["deepar_breakdown"]
    assert missing["src"] is None and "ran with the time breakdown" in missing["reason"]
    assert sorted(path.name for path in (site / "figures").iterdir()) == ["deepar_runtime.png"]
    template = Environment(loader=FileSystemLoader(str(report.TEMPLATES)), autoescape=True)
    page = template.get_template("post.html.j2").render(
        studies=[{"name": "deepar", "title": "DeepAR", "arms": [], "figures": found["deepar"]}], figures=found
    )
    assert '<img src="figures/deepar_runtime.png"' in page and "deepar_breakdown.png" not in page
    assert re.search(
        r'<p class="not-drawn">Not drawn \(DeepAR: where the time of a trial goes.*?\): no DeepAR '
        r"trial of this profile ran with the time breakdown",
        page,
    )


def test_gemm_is_plotted_against_the_matrix_size_of_the_config():
    fig = inference.gemm_figure(gemm_rows())
    ax = fig.axes[0]
    assert ax.lines, "no GEMM line"
    for line in ax.lines:
        assert sorted(line.get_xdata()) == list(GEMM_SIZES), "x is not the matrix size (the old figure drew n=5)"
    assert [label.get_text() for label in _shown_ticklabels(ax, "x")] == [str(size) for size in GEMM_SIZES]
    assert all(f"{GEMM_REPEATS} repeats" in text.get_text().replace("\n", " ") for text in ax.get_legend().get_texts())
    plt.close(fig)


def test_convergence_legends_count_the_trials_behind_each_band():
    frame = imdb_curves()
    assert frame.seed.nunique() == 4  # the old legend said n=4
    fig = convergence.imdb_loss_figure(frame)
    texts = [text.get_text() for legend in _legends(fig) for text in legend.get_texts()]
    assert texts and all(text.replace("\n", " ").endswith("(n=2)") for text in texts), texts
    plt.close(fig)
    uneven = imdb_curves({64: (42, 43, 44)})
    uneven = uneven[~((uneven.arm == get_study("imdb").arm_names[0]) & (uneven.seed == 44))]
    fig = convergence.imdb_loss_figure(uneven)
    texts = sorted(text.get_text().replace("\n", " ")[-5:] for legend in _legends(fig) for text in legend.get_texts())
    assert texts == ["(n=2)", "(n=3)", "(n=3)"]
    plt.close(fig)


# ---------------------------------------------------------------------------------------------------- captions
def published_names() -> set[str]:
    """Every figure name the notebooks save or publish (they are the only callers of the figure functions)."""
    names = set()
    for path in NOTEBOOKS.glob("*.ipynb"):
        source = "\n".join(
            "".join(cell["source"]) for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "code"
        )
        names |= set(re.findall(r"""(?:publish\(|save\(\s*\w+\s*,)\s*["']([\w-]+)["']""", source))
    return names


def test_every_published_figure_has_a_caption_not_its_file_name():
    names = published_names()
    assert set(FIGURES) <= names, "a figure this test renders is not published by any notebook"
    for name in sorted(names):
        assert name in report.CAPTIONS, f"figure {name} has no caption"
        caption = report.CAPTIONS[name]
        assert caption != name.replace("_", " ") and len(caption.split()) >= 12, f"{name}: caption too thin"


@pytest.mark.parametrize("name", list(FIGURES))
def test_captions_say_what_the_bars_and_bands_are(name):
    caption = report.CAPTIONS[name]
    assert re.search(r"\b(bars?|bands?|whiskers|points|line)\b", caption, re.I), caption
    assert re.search(r"\bn\b|one trial", caption), f"{name}: the caption does not say over how many trials"
