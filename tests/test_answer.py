"""The answer (``fwbench.answer``): read off the ledger, oriented as the ledger states it, drawn as one figure."""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from fwbench import answer, prose
from fwbench.analysis import Results
from fwbench.pages import render_markdown
from fwbench.plots import answer as answer_plot
from fwbench.quantity import Quantity
from fwbench.store import ResultsStore
from fwbench.studies import all_studies

REPO = Path(__file__).resolve().parents[1]
PAPER_STORE = REPO / "results" / "paper" / "paper-run.sqlite"


@pytest.fixture(scope="module")
def paper_answer(paper_results):
    return answer.compute(paper_results)


def cpu_limit_text(cpus: dict) -> str:
    """The limits' CPU sentence as the answer includes it (template ``answer_cpu_limit``)."""
    return render_markdown("answer_cpu_limit", cpu=answer.cpu_limit(cpus))


@pytest.mark.parametrize(("low", "high", "expected"), [(1.1, 1.3, "den"), (0.7, 0.9, "num"), (0.9, 1.1, "neither")])
def test_who_is_faster_is_read_off_the_interval(low, high, expected):
    assert answer.reading(Quantity("x", (low + high) / 2, low, high)) == expected


def test_no_interval_is_never_read_as_a_difference():
    assert answer.reading(Quantity("x", 3.0)) == "one_trial"
    assert answer.reading(Quantity("x", math.nan)) == "unmeasured"


def test_each_speed_line_words_its_reading(paper_answer):
    """The template words each workload's reading: the denominator named faster when the interval is above 1."""
    text = prose.answer_text(paper_answer)
    words = {"den": "{den} is faster", "num": "{num} is faster", "neither": "no clear difference"}
    for s in paper_answer.speed:
        w = s["workload"]
        said = words[answer.reading(s["quantity"])].format(num=answer.label(w.num), den=answer.label(w.den))
        assert f"**{w.title}: {said}.**" in text


def test_each_workload_is_oriented_as_its_ledger_row(paper_answer):
    """A workload's declared numerator and denominator are those of the ledger's quantity ("time X / Y")."""
    framework_of = {arm.name: arm.framework for s in all_studies() for arm in s.arms}
    framework_of |= {"MXNet": "mxnet", "PyTorch": "torch"}
    assert {s["workload"].claim for s in paper_answer.speed} == {w.claim for w in answer.WORKLOADS}
    for s in paper_answer.speed:
        w = s["workload"]
        num, den = re.search(r"(\S+) / (\S+)$", s["what"]).groups()
        assert (framework_of[num], framework_of[den]) == (w.num, w.den), s["what"]
        assert w.drawn_inverse == (w.num != "mxnet")


def test_the_answer_quotes_the_ledger(paper_answer):
    for s in paper_answer.speed:
        row = paper_answer.ledger.set_index("claim_id").loc[s["workload"].claim]
        assert (s["quantity"].value, s["quantity"].ci_low) == (row.estimate, row.ci_low)
    text = prose.answer_text(paper_answer)
    assert text.startswith("## The answer") and "**Limits:**" in text and "no GPU" in text


def test_the_answer_figure_has_labels_a_legend_and_every_workload(paper_answer):
    fig = answer_plot.answer_figure(paper_answer)
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("time ratio MXNet / PyTorch") and ax.get_ylabel()
    assert ax.get_legend() is not None or fig.legends
    rows = answer_plot.rows(paper_answer)
    assert len(ax.get_yticklabels()) == len(rows) >= 3
    a7 = next(r for r in rows if "claim A7" in r["label"])  # drawn inverted: MXNet / PyTorch
    assert a7["value"] == pytest.approx(1 / paper_answer.quantity("A7").value)
    plt.close(fig)


def test_an_empty_store_gives_an_answer_without_numbers(tmp_path):
    a = answer.compute(Results(ResultsStore(tmp_path / "empty.sqlite"), "smoke"))
    assert a.speed == [] and a.trials.value == 0
    with pytest.raises(answer_plot.NothingToDraw):
        answer_plot.answer_figure(a)
    assert "0</span> finished trials" in prose.answer_text(a)


def test_where_pytorch_is_the_fastest_arm_the_best_settings_stay_and_no_ratio_is_drawn(tmp_path):
    """Which arm is fastest is a measurement: where it is PyTorch's reference arm, the study's close still lists
    every arm at its best setting and says the reference arm is fastest; the answer claims no faster arm."""
    from test_ledger import MX, PT, add_imdb

    store = ResultsStore(tmp_path / "s.sqlite")
    for block in range(3):
        for arm, seconds in ((PT, 10.0), (MX, 15.0)):
            add_imdb(store, arm, 32, 0, seconds, block=block, device="cpu")
    a = answer.compute(Results(store))
    assert a.favour["arm"] == PT and a.favour["quantity"] is None
    assert {r["arm"] for r in a.favour["table"]} == {PT, MX}
    text = prose.answer_study(a, "imdb")
    assert f"- `{MX}`: batch 32" in text and f"PyTorch's reference arm, `{PT}`, is the fastest" in text
    assert "fastest IMDB arm" not in prose.answer_text(a)
    assert not any("fastest arm" in r["label"] for r in answer_plot.rows(a))


def test_an_arm_that_ran_one_setting_is_not_said_to_be_at_its_best(tmp_path):
    """A "best setting" is chosen among settings: an extra arm timed at one setting is named at that setting."""
    from test_ledger import MX, PT, add_imdb

    store = ResultsStore(tmp_path / "s.sqlite")
    for block in range(4):
        for arm, batch, seconds in ((PT, 32, 10.0), (PT, 128, 12.0), (MX, 32, 15.0), ("mxnet-hybrid-full", 128, 6.0)):
            add_imdb(store, arm, batch, 0, seconds, block=block, device="cpu")
    a = answer.compute(Results(store))
    assert a.favour["arm"] == "mxnet-hybrid-full" and a.favour["quantity"].value < 1
    settings = {r["arm"]: r["settings"] for r in a.favour["table"]}
    assert settings == {PT: 2, MX: 1, "mxnet-hybrid-full": 1}
    line = next(line for line in prose.answer_text(a).splitlines() if "fastest IMDB arm" in line)
    assert "mxnet-hybrid-full at batch 128/0 workers, the one setting it ran" in line
    assert f"vs {PT} at batch 32/0 workers, its best setting" in line and "each at its best" not in line
    assert "batch 128, 0 workers (the one setting it ran)" in prose.answer_study(a, "imdb")


def test_the_limits_name_the_cpu_and_the_ratio_where_another_condition_differs():
    """One CPU model: the limit names it. More: the setting's ratio on each condition whose interval excludes the
    headline's, as quantities (so the consistency check reads them), the others counted, the reason in one clause."""
    from fwbench.analysis.cpu_models import Condition

    amd, intel, intel_flush = (
        Condition("AuthenticAMD/25/17"),
        Condition("GenuineIntel/6/207", named=True),
        Condition("GenuineIntel/6/207", "flush", named=True),
    )
    one = {"conditions": {"imdb": [amd]}, "imdb_ratios": [(amd, Quantity("imdb.cpu.a", 1.4, 1.3, 1.5))]}
    assert cpu_limit_text(one) == (
        "The speed lines are timed on an AMD EPYC 25/17 CPU; other CPUs can move the ratios."
    )
    ratios = [
        (amd, Quantity("imdb.cpu.a", 1.4, 1.3, 1.5)),
        (intel, Quantity("imdb.cpu.b", 1.9, 1.7, 2.1)),
        (intel_flush, Quantity("imdb.cpu.c", 1.3, 1.2, 1.4)),
    ]
    text = cpu_limit_text(
        {
            "conditions": {"imdb": [amd, intel, intel_flush]},
            "imdb_ratios": ratios,
            "imdb_setting": {"batch_size": 128, "num_workers": 0},
        }
    )
    assert text.startswith("The speed lines are timed on an AMD EPYC 25/17 CPU (the parts the first line names")
    # the default Intel ratio's interval excludes the AMD one: named with its value; the flushed one overlaps: counted
    assert ratios[0][1].markup() in text and ratios[1][1].markup() in text and ratios[2][1].markup() not in text
    assert "on an Intel Xeon 6/207 with the libraries' defaults" in text and "with subnormals flushed" not in text
    assert "the interval there overlaps those of 1 other condition." in text


def test_the_first_line_names_every_cpu_model_with_its_trials_and_parts():
    """Each CPU model with its trial count, the most first; the others with the parts they ran, a part split
    between models with its share."""
    import pandas as pd

    trials = pd.DataFrame(
        {
            "study": ["imdb"] * 5 + ["gemm"],
            "config.part": ["main", "main", "main", "quality", "quality", None],
            "provenance.cpu_id": ["AuthenticAMD/25/17/1"] * 4 + ["AuthenticAMD/25/1/1", "GenuineIntel/6/207/2"],
            "provenance.cpu_count": [2] * 6,
        }
    )
    a = answer.Answer(profile="p", hardware=answer.hardware(trials), trials=Quantity("t", 6.0), ledger=None)
    from fwbench.pages import render_markdown

    text = render_markdown("answer_hardware", a=a)
    assert text == (
        "**AMD EPYC 25/17** (4 trials: the parts not named after it), **AMD EPYC 25/1** (1 trial: `imdb` quality"
        " (1 of 2)) and **Intel Xeon 6/207** (1 trial: `gemm`), 2 cores each"
    )
    one = answer.hardware(trials.iloc[:3])
    assert render_markdown("answer_hardware", a=answer.Answer("p", one, Quantity("t", 3.0), None)) == (
        "**AMD EPYC 25/17**, 2 cores"
    )


def test_the_trial_count_leaves_out_the_trials_a_rerun_replaced(paper_answer):
    """The first screen counts what the analysis uses: a stale trial, one a rerun of its config replaced included,
    is in no plan and no result (the paper store keeps such trials beside their reruns), and every CPU model's share
    adds up to that count."""
    from fwbench.stale import stale_trials

    trials = ResultsStore.open_read(PAPER_STORE).trials()
    done = trials[(trials.status == "done") & (trials.profile == "paper")]
    stale = stale_trials(done)
    assert stale.superseded.any()
    assert paper_answer.trials.value == len(done) - len(stale)
    assert sum(m["n"] for m in paper_answer.hardware["models"]) == paper_answer.trials.value


def test_the_limits_name_the_threads_and_trials_at_once_the_speed_lines_ran_under(paper_answer):
    """As each speed line's trials recorded them (config and provenance), one value each or nothing is said."""
    assert paper_answer.cpus["speed_run"] == {"threads": [2], "at_once": [1]}
    assert "25/17 CPU, 2 threads a trial, one trial at a time" in prose.answer_text(paper_answer)
    mixed = {**paper_answer.cpus, "speed_run": {"threads": [1, 2], "at_once": [1]}}
    text = cpu_limit_text(mixed)
    assert "threads a trial" not in text and "AMD EPYC 25/17 CPU" in text
