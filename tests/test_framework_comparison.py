"""JAX beside PyTorch and MXNet (issue 25): the beside parts' tables and the "leaving MXNet" section, on planted
stores whose answers are known."""

from __future__ import annotations

import re

import pytest
from conftest import load_tool
from test_ledger import MX, PT, _record, _template, add_imdb, add_other

from fwbench import prose
from fwbench.analysis import Results, framework_comparison, imdb_jax
from fwbench.analysis import imdb as imdb_analysis
from fwbench.analysis.convergence import accuracy_bar_table
from fwbench.analysis.vgg16 import vgg16_latencies
from fwbench.planning import plan
from fwbench.store import ResultsStore

JAX = "jax-jit"
BLOCKS = (0, 1, 2)
TIMES = {PT: 1.0, MX: 1.5, JAX: 0.8}  # seconds per epoch; JAX / MXNet = 0.533, JAX / PyTorch = 0.8


def plant_beside(store, machine="boot-b", cpu_id=None, times=TIMES, config_extra=None):
    for arm, t in times.items():
        for batch in (32, 128):
            for block in BLOCKS:
                add_imdb(
                    store,
                    arm,
                    batch,
                    0,
                    t * batch / 32,
                    block=block,
                    device="cpu",
                    part="beside",
                    beside=True,
                    provenance={"boot_id": machine, **({"cpu_id": cpu_id} if cpu_id else {})},
                    summary={},
                    config_extra=config_extra,
                )


def test_the_beside_table_sets_jax_against_each_reference_on_the_beside_trials_only(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    plant_beside(store)
    for block in BLOCKS:  # the main grid on another machine, PyTorch 5x slower there: never in a JAX ratio
        for arm, t in ((PT, 5.0), (MX, 6.0)):
            add_imdb(store, arm, 32, 0, t, block=block, device="cpu", provenance={"boot_id": "boot-a"})
    frame = imdb_analysis.load_sweep(Results(store))
    assert frame.attrs["machine_dropped_trials"] == []  # the beside trials are their own machine cell
    assert set(frame.loc[frame.part == "main", "arm"]) == {PT, MX}
    table = imdb_jax.beside_table(frame)
    assert len(table) == 4 and set(table.arm) == {JAX}
    for r in table.itertuples():
        expected = TIMES[JAX] / TIMES[r.reference]
        assert r.ratio == pytest.approx(expected, rel=0.02)
        assert r.ci_low < r.ratio < r.ci_high and r.ci_high / r.ci_low < 1.1
        assert r.n_arm == r.n_reference == len(BLOCKS)
    md = prose.imdb_beside(frame)
    assert md.count("data-q=") == 4 and "JAX" in md


def test_quality_rows_are_kept_whichever_machines_their_arms_ran_on(tmp_path):
    """Accuracy is not a timing: JAX's quality seeds on a later machine neither drop nor move the others'."""
    store = ResultsStore(tmp_path / "s.sqlite")
    for arm, machine, acc in ((PT, "boot-a", 0.87), (MX, "boot-a", 0.85), (JAX, "boot-b", 0.86)):
        for block in (0, 1):
            add_imdb(
                store,
                arm,
                64,
                0,
                10.0,
                block=block,
                epochs=4,
                device="cpu",
                part="quality",
                acc=acc,
                provenance={"boot_id": machine},
            )
    frame = imdb_analysis.load_sweep(Results(store))
    table = accuracy_bar_table(frame).set_index("arm")
    assert set(table.index) == {PT, MX, JAX}
    assert table.loc[JAX, "test_acc_median"] == pytest.approx(0.86) and table.loc[JAX, "seeds"] == 2


def plant_vgg(store, arm, latency_s, beside):
    for block in BLOCKS:
        config = {
            **_template("vgg16"),
            "arm": arm,
            "batch_size": 1,
            "image_size": 224,
            "onednn": True,
            "block": block,
            "part": "beside" if beside else "main",
            **({"beside": True} if beside else {}),
        }
        metrics = {"latency_s": [latency_s] * 5}
        if arm == JAX:
            metrics["compile_time_s"] = [2.5]
        add_other(store, "vgg16", config, metrics)


def test_vgg16_beside_trials_stay_out_of_every_other_table(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    plant_vgg(store, "torch-eager", 0.030, beside=False)
    plant_vgg(store, "torch-eager", 0.060, beside=True)
    main = vgg16_latencies(Results(store))
    beside = vgg16_latencies(Results(store), beside=True)
    assert main.latency_ms.median() == pytest.approx(30, rel=0.02)
    assert beside.latency_ms.median() == pytest.approx(60, rel=0.02)


def test_the_leaving_section_reads_the_beside_parts_and_says_deepar_has_no_jax(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    plant_beside(store)
    for arm, latency in (("torch-eager", 0.030), ("mxnet-imperative", 0.020), (JAX, 0.040)):
        plant_vgg(store, arm, latency, beside=True)
    facts = framework_comparison.facts(Results(store))
    rows = {(r["kind"], r["key"]): r for r in facts["rows"]}
    epoch = rows[("imdb_ratio", None)]["values"]
    assert epoch["jax"].value == pytest.approx(TIMES[JAX] / TIMES[MX], rel=0.02)
    assert epoch["torch"].value == pytest.approx(TIMES[PT] / TIMES[MX], rel=0.02)
    assert epoch["jax"].has_ci and "mxnet" not in epoch
    latency = rows[("vgg_ratio", None)]["values"]
    assert latency["jax"].value == pytest.approx(2.0, rel=0.02) and latency["torch"].value == pytest.approx(
        1.5, rel=0.02
    )
    compile_s = rows[("vgg_compile", None)]
    assert compile_s["values"] == pytest.approx({"jax": 2.5, "torch": 0.0, "mxnet": 0.0}, abs=0.05)  # 2.5 at 0.1 s
    assert compile_s["eager"] == ["mxnet", "torch"]
    assert rows[("code_lines", "forecast")]["values"]["jax"] == 0  # GluonTS has no JAX DeepAR: none written
    md = prose.framework_comparison_section(Results(store))
    cells = {"jax": "2.5", "torch": "0 (eager)", "mxnet": "0 (eager)"}
    assert "| VGG16 compile, first call (s) | " + " | ".join(cells[fw] for fw in facts["frameworks"]) + " |" in md
    forecast = next(line for line in md.splitlines() if line.startswith("| Backend code lines: forecast/ |"))
    assert forecast.split(" | ")[1 + facts["frameworks"].index("jax")].strip(" |") == "none"
    assert "DeepAR has no JAX backend in GluonTS" in md and "1 (the reference)" in md
    assert re.search(r'data-q="leaving.imdb_epoch.jax" data-v="0\.5[0-9]+', md)


def test_the_timing_cells_are_the_ratios_estimator_so_each_ratio_follows_from_its_cells(tmp_path):
    """A slow block in MXNet's trials parts the median from the geometric mean: the cells are the geometric mean
    over trials (``trial_ratio_ci``'s estimator), and the pooled ratio is the geometric mean of the cells' ratios."""
    store = ResultsStore(tmp_path / "s.sqlite")
    slow = {0: 1.0, 1: 1.0, 2: 3.0}  # MXNet's block 2 runs 3x slower: median 1.5 s at batch 32, mean 2.16 s
    for arm, t in TIMES.items():
        for batch in (32, 128):
            for block in BLOCKS:
                seconds = t * batch / 32 * (slow[block] if arm == MX else 1)
                add_imdb(
                    store,
                    arm,
                    batch,
                    0,
                    seconds,
                    block=block,
                    device="cpu",
                    part="beside",
                    beside=True,
                    provenance={"boot_id": "boot-b"},
                    summary={},
                    epoch_times=[seconds] * 3,
                )
    rows = {(r["kind"], r["key"]): r for r in framework_comparison.facts(Results(store))["rows"]}
    cells = {batch: rows[("imdb_epoch", batch)]["values"] for batch in (32, 128)}
    per_25k = 25_000 / imdb_analysis.load_sweep(Results(store)).n_train.iloc[0]
    assert cells[32]["mxnet"] == pytest.approx(1.5 * 3 ** (1 / 3) * per_25k)
    assert cells[32]["torch"] == pytest.approx(TIMES[PT] * per_25k)
    for fw in ("torch", "jax"):
        from_cells = (cells[32][fw] / cells[32]["mxnet"] * cells[128][fw] / cells[128]["mxnet"]) ** 0.5
        assert rows[("imdb_ratio", None)]["values"][fw].value == pytest.approx(from_cells)


def plant_gemm(store, cpu_id, gflops, n):
    for arm in ("torch-eager", "mxnet-imperative"):
        config = {**_template("gemm"), "arm": arm, "threads": framework_comparison.GEMM_THREADS, "n": n}
        _record(store, "gemm", config, "done", [(k, "gflops", gflops) for k in range(3)], {"cpu_id": cpu_id})


def test_each_row_names_the_cpu_of_its_trials_and_gemm_is_the_beside_rows_cpu_where_stored(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    plant_beside(store, cpu_id="AuthenticAMD/25/1/1")
    plant_gemm(store, "AuthenticAMD/25/17/1", 100.0, 512)
    plant_gemm(store, "AuthenticAMD/25/17/1", 100.0, 1024)  # the model most GEMM trials ran on
    rows = {(r["kind"], r["key"]): r for r in framework_comparison.facts(Results(store))["rows"]}
    assert rows[("imdb_ratio", None)]["cpus"] == rows[("imdb_epoch", 32)]["cpus"] == ["AMD EPYC 25/1"]
    assert rows[("gemm_peak", 2)]["cpus"] == ["AMD EPYC 25/17"] and rows[("gemm_peak", 2)]["other_cpu"]
    md = prose.framework_comparison_section(Results(store))
    assert "| AMD EPYC 25/17 (no GEMM trial ran on the beside rows' CPU), the libraries' default fp mode |" in md
    plant_gemm(store, "AuthenticAMD/25/1/1", 50.0, 256)
    rows = {(r["kind"], r["key"]): r for r in framework_comparison.facts(Results(store))["rows"]}
    gemm = rows[("gemm_peak", 2)]
    assert gemm["cpus"] == ["AMD EPYC 25/1"] and not gemm["other_cpu"] and gemm["values"]["torch"] < 60


def test_a_cpu_model_measured_in_pieces_gets_its_own_rows_named_by_cpu_and_fp_mode(tmp_path):
    """The profile's own beside trials (an AMD) keep their rows; a named Intel piece adds its own, read on its
    flushed trials where both fp modes ran (the unflushed ones, MXNet 10x slower, in no row), its ratios under
    their own names and conditions, each row naming its CPU and mode."""
    beside = {"arms": [JAX, PT, MX], "batch_sizes": [128], "workers": [0], "blocks": 3}
    grid = {"repeats": 3, "batch_sizes": [128], "workers": [0], "extra_arms": [], "beside_part": beside}
    intel = "GenuineIntel/6/207"
    pieces = [({}, "AuthenticAMD/25/1/1", TIMES)]  # (overrides, cpu_id, seconds per arm)
    pieces += [
        ({"cpu": intel, "fp_mode": mode}, f"{intel}/1", {**TIMES, MX: s}) for mode, s in (("flush", 3), ("default", 10))
    ]
    store = ResultsStore(tmp_path / "s.sqlite")
    for named, cpu_id, seconds in pieces:
        for t in plan("imdb", "smoke", {**grid, **named}):
            c = t.config
            if c["part"] == "beside":
                rows = [(e, "train_time_s", seconds[c["arm"]] * (1 + 0.01 * c["repeat"])) for e in range(c["epochs"])]
                provenance = {"host": "planted", "cpu_id": cpu_id, "boot_id": cpu_id, "framework": "torch"}
                early = named.get("fp_mode") == "flush" and c["arm"] == JAX and c["repeat"] == 0  # a day before
                store.record(trial_id=t.trial_id, study="imdb", status="done", config=c, provenance=provenance,
                             summary={}, measurements=rows, profile="smoke",
                             started_at=f"2026-01-0{1 if early else 2}T00:00:00+00:00")  # fmt: skip
    results = Results(store, "smoke", {"imdb": grid})
    ratios = [r for r in framework_comparison.facts(results)["rows"] if r["kind"] == "imdb_ratio"]
    assert [r["cpus"] for r in ratios] == [["AMD EPYC 25/1"], ["Intel Xeon 6/207"]]
    amd, on_intel = ratios[0]["values"]["torch"], ratios[1]["values"]["torch"]
    assert amd.value == pytest.approx(TIMES[PT] / TIMES[MX], rel=0.02) and amd.conditions == {"part": "beside"}
    assert on_intel.value == pytest.approx(TIMES[PT] / 3.0, rel=0.02) and ratios[1]["fp_mode"] == "flush"
    assert on_intel.label == amd.name != on_intel.name
    assert on_intel.conditions == {"part": "beside", "cpu": "Intel Xeon 6/207", "fp_mode": "flush"}
    md = prose.framework_comparison_section(results)
    # the Intel piece's first block: its JAX trial ran a day before the others, so not back to back
    assert "| Intel Xeon 6/207, beside part (batch 128: a block's trials not back to back), subnormals flushed |" in md
    assert "| AMD EPYC 25/1, beside part, subnormals flushed |" in md  # the smoke profile's own IMDB trials flush
    check = load_tool("check_pages")
    assert not check.unnamed_conditions(check.mentions(md, "section.md"))


def test_code_lines_leave_out_blank_lines_comments_and_docstrings(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        '"""Module\ndocstring."""\n\n# a comment\nimport os  # why\n\n\ndef f(x):\n    """Doc."""\n'
        "    return (x +\n            1)\n"
    )
    assert framework_comparison.code_lines(source) == 4  # import, def, and the two lines of the return
    twins = framework_comparison.backend_lines()
    assert set(twins.framework) == {"torch", "mxnet", "jax"} and (twins.lines > 0).sum() >= 11
