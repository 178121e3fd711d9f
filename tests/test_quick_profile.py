"""The default profile (`quick`, `make reproduce`) is sized for time (issue 22: within 10 minutes cold), and a
smaller profile must still feed every table, figure and ledger row of the post. These tests read the plans only:
what each study's quick grid holds, never how long it takes."""

from __future__ import annotations

from collections import Counter

from fwbench.planning import plan
from fwbench.published.borealis2018 import LOSS_SETTING
from fwbench.studies import deepar, imdb, imdb_profiles, vgg16


def configs(study):
    return [t.config for t in plan(study, "quick")]


def test_imdb_quick_feeds_every_table_and_figure():
    quick = configs("imdb")
    main = [c for c in quick if c["part"] == "main"]
    # the ratio figure and the ledger's analogues: a CI over >= 2 trials for every arm and setting
    per_setting = Counter((c["arm"], c["batch_size"], c["num_workers"]) for c in main)
    assert set(a for a, _, _ in per_setting) == set(imdb_profiles.CORE_ARMS) and min(per_setting.values()) >= 2
    assert {c["num_workers"] for c in main} >= {0, 2}  # A4 / A7: workers vs none
    assert LOSS_SETTING in {(c["batch_size"], c["num_workers"]) for c in main}  # A8 reads the main grid there
    assert min(c["epochs"] for c in quick if c["part"] != "scaling") >= 3  # 2 timed epochs; convergence curves
    # the variant table (hybridized MXNet, torch.compile) with a CI; the oneDNN table with its pairs
    extra = Counter(c["arm"] for c in quick if c["part"] == "extra")
    assert set(extra) == {"mxnet-hybrid-partial", "mxnet-hybrid-full", "torch-compile"} and min(extra.values()) >= 2
    off = Counter(c["arm"] for c in quick if not c["onednn"])
    assert set(off) == set(imdb.ONEDNN_ARMS) and min(off.values()) >= 2
    # the cost-growth figure: a line per arm over at least two sequence lengths
    scaling = [c for c in quick if c["part"] == "scaling"]
    assert {c["arm"] for c in scaling} == set(imdb.SCALING_ARMS)
    assert len({c["encoding"]["maxlen"] for c in scaling}) >= 2


def test_vgg16_quick_keeps_c1s_setting_both_onednn_settings_and_every_compiled_arm():
    quick = configs("vgg16")
    main = Counter((c["arm"], c["onednn"]) for c in quick if c["part"] == "main")
    assert set(main) == {(a, flag) for a in ("torch-eager", "mxnet-imperative") for flag in (True, False)}
    assert min(main.values()) >= 2  # a CI over trials for the latency table and C3's on/off ratio
    assert {(c["image_size"], c["batch_size"]) for c in quick if c["part"] == "main"} == {(224, 1)}  # C1's setting
    assert {c["arm"] for c in quick if c["part"] == "compiled"} == set(vgg16.TORCH_COMPILED)


def test_deepar_quick_spans_three_windows_with_the_breakdown():
    from fwbench.data import monash

    quick = configs("deepar")
    windows = {monash.info(c["dataset"]).context_length + monash.info(c["dataset"]).horizon for c in quick}
    assert len(windows) >= 3  # the ratio-by-window table and the gap analysis need three
    assert {c["arm"] for c in quick} == set(deepar.CORE_ARMS) and all(c["breakdown"] for c in quick)
    assert "covid_deaths" in {c["dataset"] for c in quick}  # the series MASE leaves out, shown under quick


def test_every_study_runs_under_quick():
    from fwbench.studies import all_studies

    for study in all_studies():
        if study.name != "selftest":
            assert plan(study.name, "quick"), f"{study.name} has no quick trials"
