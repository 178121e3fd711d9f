"""Convergence curves: bands over seeds computed right on planted rows, missing convergence runs named with the
profile that makes them, figures coloured and labelled by the arm table, and notebook 03 showing prose and figures
computed from the store."""

from __future__ import annotations

import nbformat
import pandas as pd
import pytest

from fwbench import prose
from fwbench.analysis import Results
from fwbench.analysis import convergence as conv
from fwbench.errors import FwbenchError
from fwbench.store import ResultsStore
from fwbench.studies import get_study

IMDB = get_study("imdb")
PT, MX = IMDB.reference_arm("torch"), IMDB.reference_arm("mxnet")


def planted(seeds=(42, 43, 44), epochs=4, arms=(PT, MX)) -> pd.DataFrame:
    rows = []
    for arm in arms:
        for seed in seeds:
            for e in range(epochs):
                rows.append(
                    {
                        "trial_id": f"{arm}-{seed}",
                        "arm": arm,
                        "seed": seed,
                        "epoch": e,
                        "epochs": epochs,
                        "batch_size": 256,
                        "num_workers": 0,
                        "threads": 2,
                        "lr_schedule": True,
                        "train_loss": 1.0 / (e + 1) + 0.01 * (seed - 42),
                        "test_loss": 0.7,
                        "test_acc": 0.5 + 0.1 * e,
                        "train_time_s": 2.0 + (seed - 42),
                    }
                )
    frame = pd.DataFrame(rows)
    frame["setting"] = conv.setting_label(256, 0, True)
    frame["wall_s"] = frame.groupby("trial_id")["train_time_s"].cumsum()
    return frame


def test_bands_are_median_min_max_over_seeds():
    b = conv.bands(planted(), "train_loss").set_index(["arm", "epoch"])
    row = b.loc[(MX, 1)]
    assert row["n"] == 3
    assert row["median"] == pytest.approx(0.5 + 0.01)
    assert row["lo"] == pytest.approx(0.5) and row["hi"] == pytest.approx(0.52)
    assert row["q1"] <= row["median"] <= row["q3"]
    w = conv.bands(planted(), "train_loss", x="wall_s").set_index(["arm", "epoch"])
    assert w.loc[(MX, 1), "wall_s"] == pytest.approx(2 * 3.0)  # median cumulative seconds after 2 epochs


def test_missing_convergence_runs_name_the_profile_that_makes_them():
    missing = conv.missing_convergence("quick", planted())
    assert len(missing) == 3 and all("full" in m["profiles"] for m in missing)
    long = planted(epochs=30)
    assert len(conv.missing_convergence("full", long)) == 2  # only batch 256 / 0 workers with schedule present
    assert conv.curve_settings(long) == ([conv.setting_label(256, 0, True)], "convergence")
    assert conv.curve_settings(planted()) == ([conv.setting_label(256, 0, True)], "sweep")


def test_the_summary_names_what_its_settings_are_and_takes_the_loss_as_a8_does(monkeypatch):
    """The paper profile's curves are its training-quality part, not the 2018 post's convergence runs; each arm's
    final train loss is the geometric mean over seeds, so two arms' losses give A8's ratio (a geometric-mean ratio
    over the same trials), and a dataset the figure has no room for is named."""
    import numpy as np

    from fwbench.stats import trial_ratio_ci

    imdb = planted().assign(part="quality")
    imdb["train_loss"] *= np.where(imdb.arm == MX, 1 + 0.5 * (imdb.seed - 42), 1.0)  # skewed over MXNet's seeds
    deepar = pd.DataFrame({"dataset": ["m1_yearly"], "arm": [PT], "seed": [42], "epoch": [0], "train_loss": [1.0]})
    every = pd.concat([deepar, deepar.assign(dataset="tourism_monthly")])
    monkeypatch.setattr(conv, "load_deepar", lambda results, max_datasets=None: every)
    facts = conv.summary_facts(Results(None, "paper"), imdb=imdb, deepar=deepar)
    assert facts["imdb"]["kind"] == "quality" and facts["deepar"]["not_drawn"] == ["tourism_monthly"]
    loss = dict(facts["imdb"]["finals"][0]["loss"])
    last = imdb[imdb.epoch == 3]
    a8 = trial_ratio_ci(last[last.arm == MX].train_loss, last[last.arm == PT].train_loss)["ratio"]
    assert loss[MX] / loss[PT] == pytest.approx(a8)
    medians = last.groupby("arm").train_loss.median()
    assert medians[MX] / medians[PT] != pytest.approx(a8)  # the medians' ratio is not A8's here
    text = prose.convergence_summary(Results(None, "paper"), imdb=imdb, deepar=deepar)
    assert "(its training-quality part), 4 epochs" in text[0] and "not drawn" in text[-1]
    assert "pooled over the machines, 2 thread(s) (an accuracy is not a timing)." in text[0]  # what the curves pool


def test_plots_draw_a_band_per_arm():
    from fwbench.plots import convergence as plots
    from fwbench.plots import wrap

    fig = plots.imdb_loss_figure(planted())
    ax = fig.axes[0]
    assert len(ax.lines) == 2 and len(ax.collections) == 4  # per arm: median line, min-max and IQR bands
    labels, colours = IMDB.labels(), {a.name: a.colour for a in IMDB.arms}
    expected = [wrap(f"{labels[arm]} (n=3)", 40) for arm in (PT, MX)]  # arm-table order and labels, n: 3 trials
    assert [line.get_label() for line in ax.lines] == expected
    assert [line.get_color() for line in ax.lines] == [colours[PT], colours[MX]]
    assert len(fig.axes) == 2  # train and test loss for the one setting
    partial = plots.imdb_loss_figure(planted().drop(columns="test_loss"))  # a metric without rows: no panel
    assert [a.get_ylabel() for a in partial.axes] == ["training loss (cross-entropy)"]
    with pytest.raises(FwbenchError, match="unknown arm 'mxnet'"):  # an arm the table lacks is an error
        plots.imdb_loss_figure(planted(arms=(PT, "mxnet")))


@pytest.mark.slow
def test_notebook_03_shows_what_the_store_holds(smoke_notebooks):
    store = ResultsStore(smoke_notebooks.store)
    nb = nbformat.read(smoke_notebooks.executed / "03_convergence_curves.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    markdown = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    expected = "\n\n".join(prose.convergence_summary(Results(store, "smoke")))
    assert expected in markdown
    assert "Profile full makes them" in expected  # smoke has no 30-epoch runs, and says which profile has
    for name in ("convergence_imdb_loss", "convergence_imdb_accuracy", "convergence_imdb_wallclock"):
        assert (smoke_notebooks.figures / f"{name}.png").stat().st_size > 1000
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3


def test_accuracy_bar_reads_the_quality_part_only():
    import pandas as pd

    from fwbench.analysis import convergence as conv

    def rows(part, arm, seed, acc, n_train=25000, threads=2, sharing=1):
        return [
            {
                "trial_id": f"{part}-{arm}-{seed}",
                "threads": threads,
                "trials_sharing_host": sharing,
                "part": part,
                "arm": arm,
                "seed": seed,
                "epoch": e,
                "epochs": 3,
                "n_train": n_train,
                "test_acc": acc if e == 2 else 0.5,
                "train_loss": 0.3,
                "batch_size": 64,
                "num_workers": 0,
                "lr_schedule": True,
                "setting": "batch 64",
            }
            for e in range(3)
        ]

    frame = pd.DataFrame(
        rows("quality", "torch-eager", 42, 0.87)
        + rows("quality", "torch-eager", 43, 0.86)
        + rows("quality", "mxnet-imperative", 42, 0.84)
        + rows("main", "torch-eager", 42, 0.2, 640)
        + rows("quality", "torch-sparse", 42, 0.86)
        + rows("quality", "torch-sparse", 43, 0.84)
        + rows("quality", "torch-sparse", 44, 0.87, threads=1, sharing=2)
    )
    table = conv.accuracy_bar_table(frame).set_index("arm")
    assert table.loc["torch-eager", "passes_bar"] and not table.loc["mxnet-imperative", "passes_bar"]
    assert table.loc["torch-eager", "test_acc_min"] == 0.86 and table.loc["torch-eager", "seeds"] == 2
    # the bar reads an arm's median over seeds (as A8's floor does); a seed below it is named, not hidden
    assert table.loc["torch-sparse", "passes_bar"] and table.loc["torch-sparse", "seeds_below"] == [(43, 0.84)]
    text = prose.convergence_accuracy(frame)
    assert "below the bar: mxnet-imperative;" in text
    assert "single seeds below it: mxnet-imperative seed 42 (0.840), torch-sparse seed 43 (0.840)" in text
    assert "No training-quality runs" in prose.convergence_accuracy(frame[frame.part == "main"])
    # how each seed ran, from the trials' configs and placement records (the main part's trial is not counted)
    assert conv.seed_runs(frame) == [
        {"threads": 1, "sharing": 2, "seeds": [44], "trials": 1},
        {"threads": 2, "sharing": 1, "seeds": [42, 43], "trials": 5},
    ]
    assert (
        "seed(s) 44 ran up to 2 trials at once at 1 thread each (1 trial); seed(s) 42, 43 ran one trial at a time"
        " at 2 threads (5 trials)"
    ) in text
    assert conv.curve_settings(frame) == (["batch 64"], "quality")
    # the accuracy pools CPU models, threads and trials at once (not a timing): what a page quoting it names; the
    # main part's trial (on a third model) is not the quality part's
    frame["cpu"] = ["AuthenticAMD/25/17"] * 9 + ["GenuineIntel/6/85"] * 3 + ["GenuineIntel/6/207"] * 9
    assert conv.quality_conditions(frame, ["torch-eager", "mxnet-imperative"]) == {
        "cpus": ["AMD EPYC 25/17"], "threads": [2], "sharing": 1}  # fmt: skip
    assert conv.quality_conditions(frame, ["torch-sparse", "torch-eager"]) == {
        "cpus": ["AMD EPYC 25/17", "Intel Xeon 6/207"], "threads": [1, 2], "sharing": 2}  # fmt: skip
