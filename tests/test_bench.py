"""The harness-overhead benchmark (``tools/harness_bench.py``, ``make bench``): bare loops written from scratch (no
fwbench code near the clock), epochs of at least 20 batches, fresh processes interleaved in a random order per
block, a ratio over processes with its CI; the block ``bench`` rendered from the store's rows."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import math
import os
import re
import textwrap
from pathlib import Path

import pytest
from conftest import load_tool

from fwbench.studies import get_study

bench = load_tool("harness_bench")


def _source(fn) -> str:
    return fn if isinstance(fn, str) else textwrap.dedent(inspect.getsource(fn))


def _globals_used(fn) -> set[str]:
    """Names a function (or its source) reads from its module (not its own locals, imports, parameters or
    builtins)."""
    tree = ast.parse(_source(fn))
    local = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            local.add(node.name)
        if isinstance(node, ast.FunctionDef):
            local |= {a.arg for a in node.args.args + node.args.kwonlyargs}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            local |= {(a.asname or a.name).split(".")[0] for a in node.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return used - local - set(dir(builtins))


def _imports(fn) -> set[str]:
    tree = ast.parse(_source(fn))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


REFERENCE_ARMS = list(get_study("imdb").reference.values())


def _bare_loop_source(arm: str) -> str:
    """The source of ``bare_loop`` in the arm's backend, read from its file (no framework imported here)."""
    text = Path(importlib.util.find_spec(get_study("imdb").arm(arm).backend).origin).read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "bare_loop")
    return ast.get_source_segment(text, node)


@pytest.mark.parametrize("arm", REFERENCE_ARMS)
def test_bare_loops_use_nothing_of_fwbench(arm):
    source, framework = _bare_loop_source(arm), get_study("imdb").framework_of(arm)
    assert _globals_used(source) <= {"time"}, _globals_used(source)  # the stdlib clock, nothing of the module
    assert {m.split(".")[0] for m in _imports(source)} <= {framework, "time"}, _imports(source)


def test_the_checks_catch_a_loop_that_calls_the_harness():
    def leaky(spec, x, y):
        from fwbench.sentiment import torch as be

        return bench.median(be.train_one_epoch(spec, x, y))

    assert _globals_used(leaky) == {"bench"} and "fwbench.sentiment" in _imports(leaky)


def test_harness_epochs_have_at_least_20_batches_and_match_the_bare_setting():
    c = bench.HARNESS_CONFIG
    assert c["n_train"] // c["batch_size"] >= 20 and c["n_train"] % c["batch_size"] == 0
    assert c["epochs"] >= 3  # at least 2 timed epochs per process after the excluded first
    study = get_study("imdb")
    for framework in ("torch", "mxnet"):
        config = bench.harness_trial(study.reference_arm(framework)).config
        assert (
            config["batch_size"],
            config["n_train"],
            config["epochs"],
            config["num_workers"],
            config["threads"],
        ) == (c["batch_size"], c["n_train"], c["epochs"], c["num_workers"], c["threads"])
        assert config["encoding"]["maxlen"] == c["seq_len"] and config["part"] == "main"


def test_overhead_is_a_ratio_over_interleaved_processes(monkeypatch):
    """A planted 5 % harness overhead is found, with a CI over processes; sides run in a random order per block."""
    calls, state = [], {"i": 0}

    def noise():
        state["i"] += 1
        return 1 + 0.002 * ((state["i"] * 7) % 5 - 2)

    def fake_execute(trial):
        calls.append((trial.config["arm"], "harness"))
        return {"status": "done", "measurements": [[e, "train_time_s", 1.05 * noise()] for e in range(4)]}

    def fake_child(mode, payload, env):
        calls.append((payload["config"]["arm"], "bare"))
        assert set(payload) == {"config"}  # the child finds the bare loop from the config's arm
        return {"times": [noise() for _ in range(4)]}

    monkeypatch.setattr(bench, "execute", fake_execute)
    monkeypatch.setattr(bench, "_run_child", fake_child)
    rows = bench.harness_overhead(min_blocks=6, max_blocks=6, log=lambda msg: None)
    assert len(calls) == 6 * 4 and len(set(calls)) == 4
    blocks = [calls[i : i + 4] for i in range(0, 24, 4)]
    assert all(len(set(b)) == 4 for b in blocks) and len({tuple(b) for b in blocks}) > 1  # shuffled per block
    for row in rows:
        assert len(row["runner_times"]) == len(row["bare_times"]) == 6
        assert row["overhead_pct"] == pytest.approx(5.0, abs=0.5)
        assert row["ci_low_pct"] > 0 and row["half_width_pct"] < 2


@pytest.mark.slow
@pytest.mark.parametrize("arm", REFERENCE_ARMS)
def test_bare_loop_child_runs(arm):
    config = dict(bench.harness_trial(arm).config, n_train=64, epochs=2)
    env = bench.child_env(config["threads"])
    env.setdefault("FWBENCH_DATA_DIR", os.environ.get("FWBENCH_DATA_DIR", ""))
    times = bench._run_child("bare", {"config": config}, env)["times"]
    assert len(times) == 2 and all(t > 0 for t in times)


def test_blocks_go_on_until_the_overhead_is_resolved(monkeypatch):
    """Noisy processes need more blocks than quiet ones; the loop stops once every CI half-width is under 2 %."""

    def run(spread, budget_s=1e9):
        state = {"i": 0}

        def noise():
            state["i"] += 1
            return 1 + spread * ((state["i"] * 7) % 5 - 2)

        monkeypatch.setattr(
            bench,
            "execute",
            lambda trial: {"status": "done", "measurements": [[e, "train_time_s", 1.01 * noise()] for e in range(4)]},
        )
        monkeypatch.setattr(bench, "_run_child", lambda mode, payload, env: {"times": [noise() for _ in range(4)]})
        return bench.harness_overhead(min_blocks=3, max_blocks=40, budget_s=budget_s, log=lambda msg: None)

    quiet, noisy, out_of_time = run(0.001), run(0.02), run(0.02, budget_s=0)
    assert len(quiet[0]["runner_times"]) == 3 and all(r["half_width_pct"] < 2 for r in quiet)
    assert len(noisy[0]["runner_times"]) > 3 and all(r["half_width_pct"] < 2 for r in noisy)
    assert len(out_of_time[0]["runner_times"]) == 2 and out_of_time[0]["half_width_pct"] > 2  # reported unresolved


# -- both loops in each fresh process ------------------------------------------------------------------------------
def test_paired_overhead_cancels_the_process_effect(monkeypatch):
    """Processes differ by up to +-20 % (the same for both loops in a process); a planted 1 % harness overhead
    is found with a CI far narrower than the process spread, and the loop order alternates over processes."""
    calls, state = [], {"i": 0}

    def fake_child(mode, payload, env):
        assert mode == "paired" and set(payload) == {"config", "order"}
        state["i"] += 1
        process = 1 + 0.2 * math.sin(state["i"])  # this process's speed: both loops share it
        wobble = [1 + 0.003 * math.cos(state["i"] * k) for k in range(5)]
        calls.append((payload["config"]["arm"], tuple(payload["order"])))
        return {
            "order": payload["order"],
            "other_busy_frac": 0.5 if state["i"] == 3 else 0.0,
            "bare": [process * w for w in wobble],
            "harness": [1.01 * process * w for w in wobble[::-1]],
        }

    monkeypatch.setattr(bench, "_run_child", fake_child)
    rows = bench.harness_overhead_paired(min_blocks=6, max_blocks=6, log=lambda msg: None)
    assert len(calls) == 12 and sum(order == ("bare", "harness") for _, order in calls) == 6
    for row in rows:
        assert row["overhead_pct"] == pytest.approx(1.0, abs=0.3) and row["half_width_pct"] < 1
        assert row["ci_low_pct"] < row["overhead_pct"] < row["ci_high_pct"]
    assert sum(r["busy_left_out"] for r in rows) == 1 and sum(r["n"] for r in rows) == 11


def test_a_resolved_arm_stops_while_the_other_goes_on(monkeypatch):
    """torch's processes agree to 0.5 %, mxnet's spread 10 %: torch stops after the minimum blocks, mxnet runs on
    to the cap, and the loop order still alternates within each arm."""
    calls = []

    def fake_child(mode, payload, env):
        arm = payload["config"]["arm"]
        calls.append((arm, tuple(payload["order"])))
        spread = 0.005 if arm.startswith("torch") else 0.10
        k = sum(a == arm for a, _ in calls)
        return {"order": payload["order"], "bare": [1.0] * 4, "harness": [1.0 + spread * math.sin(k)] * 4}

    monkeypatch.setattr(bench, "_run_child", fake_child)
    rows = {r["arm"]: r for r in bench.harness_overhead_paired(min_blocks=6, max_blocks=12, log=lambda msg: None)}
    torch_arm = get_study("imdb").reference_arm("torch")
    mxnet_arm = get_study("imdb").reference_arm("mxnet")
    assert rows[torch_arm]["n"] == 6 and rows[torch_arm]["half_width_pct"] < 2
    assert rows[mxnet_arm]["n"] == 12 and rows[mxnet_arm]["half_width_pct"] > 2
    for arm in (torch_arm, mxnet_arm):
        orders = [order for a, order in calls if a == arm]
        assert all(o != p for o, p in zip(orders, orders[1:]))


def test_paired_ci_is_over_processes():
    one = bench.log_ratio_ci([1.02])
    assert one["n"] == 1 and math.isnan(one["ci_low"]) and one["half_width"] == math.inf
    ci = bench.log_ratio_ci([1.0, 1.1, 0.9, 1.05])
    assert ci["ci_low"] < ci["ratio"] < ci["ci_high"] and ci["n"] == 4
    assert bench.process_ratio({"harness": [9.0, 2.0, 2.2, 2.1], "bare": [5.0, 2.0, 2.0, 2.0]}) == 1.05


def test_paired_estimate_is_stratified_by_loop_order():
    """The loop run second is 6 % slower and the orders' counts differ (17 / 23, as in the first real run): the
    pooled mean is pulled towards the larger order and its CI widened by the order effect; the stratified one
    recovers the planted 1 % overhead with a narrow CI."""
    first = [i < 23 for i in range(40)]  # 23 processes ran the harness first (and the bare loop second, slower)
    wobble = [0.01 * math.sin(3 * i) for i in range(40)]
    ratios = [1.01 * (1 / 1.06 if f else 1.06) * math.exp(w) for f, w in zip(first, wobble)]
    pooled = bench.log_ratio_ci(ratios)
    ci = bench.order_balanced_ci(ratios, first)
    assert ci["stratified"] and ci["ratio"] == pytest.approx(1.01, abs=0.002)
    assert ci["order_effect"] == pytest.approx(0.06, abs=0.002) and ci["ci_low"] < 1.01 < ci["ci_high"]
    assert pooled["ratio"] < 1.003 and ci["half_width"] < pooled["half_width"] / 3  # biased, and wide
    assert not bench.order_balanced_ci(ratios[:3], [True, True, False])["stratified"]  # one per order


@pytest.mark.slow
def test_paired_child_runs_both_loops_in_one_process():
    config = dict(bench.harness_trial(get_study("imdb").reference_arm("torch")).config, n_train=64, epochs=2)
    env = bench.child_env(config["threads"])
    env.setdefault("FWBENCH_DATA_DIR", os.environ.get("FWBENCH_DATA_DIR", ""))
    out = bench._run_child("paired", {"config": config, "framework": "torch", "order": ["harness", "bare"]}, env)
    assert len(out["bare"]) == len(out["harness"]) == 2 and out["order"] == ["harness", "bare"]
    assert all(t > 0 for t in out["bare"] + out["harness"]) and "other_busy_frac" in out


def test_the_readme_reports_the_paired_benchmark_from_the_store(tmp_path):
    from fwbench.store import ResultsStore

    store = ResultsStore(tmp_path / "r.sqlite")
    bench._record(
        store,
        "harness_overhead_paired",
        {"arm": "torch-eager", "processes": 4},
        {"process_ratio": [1.0, 1.02, 1.01, 0.99], "overhead_pct": 0.5},
    )
    bench._record(
        store,
        "harness_overhead_paired",
        {"arm": "mxnet-imperative", "processes": 4},
        {"process_ratio": [1.05, 1.07, 0.97, 0.99], "harness_first": [0.0, 0.0, 1.0, 1.0]},
    )
    bench._record(
        store, "harness_overhead_paired", {"arm": "torch-eager", "processes": 2}, {"process_ratio": [1.2, 1.2]}
    )
    lines = bench.bench_lines(store)  # every run, oldest first per arm, each led by when and at which commit
    stratified, line, again = lines
    assert re.match(
        r"- \d{4}-\d\d-\d\d \d\d:\d\d, commit \S+: harness overhead, torch-eager, IMDB epoch time vs a bare", line
    )
    assert "+0.5 % (95 % CI -1." in line and line.endswith("4 processes") and "+20.0 %" in again
    assert ": harness overhead, mxnet-imperative" in stratified and "+1.9 % (95 % CI" in stratified
    assert stratified.endswith("stratified by loop order (the loop run second is 4.0 % slower)")
    assert bench.order_effect_words(-0.009) == "0.9 % faster"


def test_pages_refresh_only_the_bench_block_from_the_store(tmp_path, monkeypatch):
    """``--pages`` (what ``make readme`` runs) writes the block ``bench`` from the results store and nothing else."""
    from fwbench.store import ResultsStore

    store_path = tmp_path / "r.sqlite"
    bench._record(
        ResultsStore(store_path),
        "harness_overhead_paired",
        {"arm": "torch-eager", "processes": 2},
        {"process_ratio": [1.0, 1.02]},
    )
    page = tmp_path / "README.md"
    page.write_text(
        "<!-- headline:start -->\nkept\n<!-- headline:end -->\n<!-- bench:start -->\nold\n<!-- bench:end -->\n"
    )
    monkeypatch.setenv("FWBENCH_RESULTS", str(store_path))
    monkeypatch.setattr(bench, "README", page)
    assert bench.main(["--pages"]) == 0
    text = page.read_text()
    assert "kept" in text and "old" not in text and ": harness overhead, torch-eager" in text
    with pytest.raises(SystemExit):
        bench.main(["--pages", "harness"])  # --pages measures nothing


def test_the_harness_benchmark_is_a_tool_not_part_of_fwbench():
    """`make bench` runs tools/harness_bench.py: the modules of fwbench that held it are gone, ``fwbench bench`` is
    no command, and fwbench.readme no longer writes its block."""
    from fwbench import readme
    from fwbench.cli import main as cli_main

    for name in ("bench", "bench_paired", "readme_timings"):
        assert importlib.util.find_spec(f"fwbench.{name}") is None, f"fwbench.{name} is importable again"
    with pytest.raises(SystemExit) as exc:
        cli_main(["bench"])
    assert exc.value.code == 2
    assert "bench" not in readme.BLOCKS and set(bench.BLOCKS) == {"bench"}
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert "tools/harness_bench.py $(BENCH)" in makefile and "tools/harness_bench.py --pages" in makefile
