"""Adaptive repeats (issue 14): a setting gets another repeat block only while the CI of its ratio is wider than
the target, up to a cap; reasons stored per trial; resume-safe; the report's CPU saved; the estimate's two times.

A framework-free toy study declared here: settings ``tight`` (the ratio is resolved after the minimum blocks),
``noisy`` (it never is: runs to the cap) and ``solo`` (one arm, no pair: the minimum only). Most tests run its
trials in this process (``InProcess``: the executor interface, one ``run`` call per block); one goes through the
real CLI and child processes.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from fwbench import cli, prose, runner, stats
from fwbench.analysis.adaptive import adaptive_report
from fwbench.errors import FwbenchError
from fwbench.estimate import estimate_full_runtime
from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.store import ResultsStore
from fwbench.studies import Arm, Study, adaptive, get_study, register
from fwbench.studies import options as opt
from fwbench.studies.blocks import interleave

RULE = {"min_blocks": 2, "max_blocks": 5, "target": 0.05, "futility": False}  # the pure rule: noisy runs to the cap
SECONDS = {"toy-a": 2.0, "toy-b": 4.0}  # each trial's stored duration (in-process runs)


def _grid(options):
    configs = []
    for repeat in range(options["repeats"]):
        block = [
            {
                "arm": arm,
                "setting": s,
                "repeat": repeat,
                "seed": 100 + repeat,
                "threads": 1,
                "part": "solo" if s == "solo" else "main",
            }
            for s in options["settings"]
            for arm in (("toy-a",) if s == "solo" else ("toy-a", "toy-b"))
        ]
        configs += interleave(block, seed=repeat)
    return configs


def _value(config) -> float:
    """Deterministic per config: ``tight`` varies by 0.1 %, ``noisy`` by ~40 % (so a resumed run sees the same)."""
    z = random.Random(f"{config['setting']}:{config['arm']}:{config['repeat']}").gauss(0, 1)
    spread = {"tight": 0.001, "noisy": 0.4, "solo": 0.4}[config["setting"]]
    return {"toy-a": 1.0, "toy-b": 2.0}[config["arm"]] * math.exp(spread * z)


def _trial(config, report=None):
    return {
        "summary": {"time_s": _value(config)},
        "measurements": [(0, "train_time_s", _value(config))],
        "provenance": {"framework": "none"},
    }


TOY = register(
    Study(
        name="adaptive-toy",
        title="Adaptive repeats toy (tests)",
        module=__name__,
        profiles={
            "fixed": {"settings": ["tight", "noisy", "solo"], "repeats": 3, "adaptive": False},
            "adaptive": {"settings": ["tight", "noisy", "solo"], "repeats": 3, "adaptive": RULE},
            "e2e": {"settings": ["tight"], "repeats": 1, "adaptive": {**RULE, "max_blocks": 3}},
        },
        options={
            "settings": opt.list_of(opt.string, ["tight", "noisy", "solo"]),
            "repeats": opt.int_range(1, 100),
            "adaptive": opt.adaptive_option,
        },
        grid=_grid,
        run_trial=_trial,
        describe=lambda c: f"toy {c['arm']} {c['setting']} repeat={c['repeat']}",
        arms=(Arm("toy-a", "none", None, "a", "Toy A", "#000000"), Arm("toy-b", "none", None, "b", "Toy B", "#888888")),
        hidden=True,
        adaptive_pairs=(("toy-a", "toy-b"),),
        adaptive_metric=lambda summary: summary["time_s"],
    )
)


class InProcess:
    """An executor running toy trials here; ``stop_after`` trials it raises KeyboardInterrupt (a killed sweep)."""

    def __init__(self, stop_after: int | None = None):
        self.stop_after, self.calls, self.ran = stop_after, [], []

    def require_environments(self, trials):
        assert {t.env for t in trials} <= {"main"}

    def require_preflight(self, study, options):
        pass  # the toy needs no data

    def run(self, trials, record, bar):
        self.calls.append([t.config for t in trials])
        for t in trials:
            if self.stop_after is not None and len(self.ran) >= self.stop_after:
                raise KeyboardInterrupt
            out = _trial(t.config)
            self.ran.append(t.trial_id)
            record(
                t,
                {
                    "status": "done",
                    "summary": out["summary"],
                    "measurements": out["measurements"],
                    "provenance": {"trial_wall_s": SECONDS[t.config["arm"]]},
                    "error": None,
                    "stderr_tail": None,
                    "started_at": "2026-01-01T00:00:00+00:00",
                    "ended_at": "2026-01-01T00:00:01+00:00",
                },
                {"runner": "in-process"},
            )

    def close(self):
        pass


def sweep(store, profile="adaptive", overrides=None, executor=None, monkeypatch=None):
    executor = executor or InProcess()
    monkeypatch.setattr(runner, "LocalExecutor", lambda **kwargs: executor)
    return run_sweep("adaptive-toy", profile, overrides, store=store, progress="none"), executor


def blocks_by_setting(store) -> dict:
    t = store.trials("adaptive-toy")
    return {s: sorted(set(g["config.repeat"])) for s, g in t[t.status == "done"].groupby("config.setting")}


@pytest.fixture
def store(tmp_path):
    return ResultsStore(tmp_path / "results.sqlite")


# -- the rule ---------------------------------------------------------------------------------------------------
def test_noisy_setting_runs_to_the_cap_and_tight_one_stops_at_the_minimum(store, monkeypatch):
    summary, executor = sweep(store, monkeypatch=monkeypatch)
    assert blocks_by_setting(store) == {"tight": [0, 1], "noisy": [0, 1, 2, 3, 4], "solo": [0, 1]}
    assert summary.ok and summary.planned == 25 and summary.done == 16 and summary.not_needed == 9
    assert "9 not needed (adaptive blocks)" in summary.line()
    # one executor.run per block; after the minimum only the unresolved setting's trials go out
    assert len(executor.calls) == 5
    assert [{c["setting"] for c in call} for call in executor.calls[2:]] == [{"noisy"}] * 3


def test_fixed_repeats_behave_as_before(store, monkeypatch):
    summary, executor = sweep(store, profile="fixed", monkeypatch=monkeypatch)
    assert len(executor.calls) == 1 and summary.done == 15 and "not needed" not in summary.line()
    assert blocks_by_setting(store) == {"tight": [0, 1, 2], "noisy": [0, 1, 2], "solo": [0, 1, 2]}
    assert "provenance.block_reason" not in store.trials("adaptive-toy")


def test_repeats_follow_max_blocks_only_when_adaptive():
    assert {t.config["repeat"] for t in plan("adaptive-toy", "adaptive")} == set(range(5))
    assert {t.config["repeat"] for t in plan("adaptive-toy", "fixed")} == set(range(3))
    widened = plan("adaptive-toy", "fixed", {"adaptive": {**RULE, "max_blocks": 7}})
    assert {t.config["repeat"] for t in widened} == set(range(7))


def test_reasons_are_stored_with_every_trial(store, monkeypatch):
    sweep(store, monkeypatch=monkeypatch)
    t = store.trials("adaptive-toy").set_index(["config.setting", "config.arm", "config.repeat"])
    reason = t["provenance.block_reason"]
    assert reason[("tight", "toy-a", 0)] == "block 1 of the minimum 2"
    assert reason[("solo", "toy-a", 1)] == "block 2 of the minimum 2"
    later = reason[("noisy", "toy-b", 2)]
    assert later.startswith("pair toy-a/toy-b CI half-width ") and later.endswith("> target 5.0 % after 2 blocks")
    assert reason[("noisy", "toy-a", 4)].endswith("after 4 blocks")


def test_decisions_name_why_settings_stop(store, monkeypatch):
    sweep(store, monkeypatch=monkeypatch)
    planned = plan("adaptive-toy", "adaptive")
    records = adaptive.observe_store(store, TOY, planned)
    decisions = adaptive.decide(TOY, planned, records, adaptive.AdaptiveSpec(**RULE))
    by_setting = {adaptive.setting_key(TOY, t.config): t.config["setting"] for t in planned}
    stop = {by_setting[k]: next(d for d in v.values() if not d.run).reason for k, v in decisions.items()}
    assert stop["tight"].startswith("resolved: widest half-width ")
    assert stop["tight"].endswith("<= 5.0 % after 2 blocks")
    assert stop["noisy"].startswith("cap reached (5 block(s) planned): pair toy-a/toy-b CI half-width")
    assert stop["solo"] == "no arm pair in this setting: the minimum 2 blocks only"


FUTILE = {**RULE, "futility": True}


def test_futility_is_the_default():
    assert adaptive.spec_of({"adaptive": {k: RULE[k] for k in opt.ADAPTIVE_KEYS}}).futility is True
    assert adaptive.spec_of({"adaptive": RULE}).futility is False


def test_futility_stops_a_setting_whose_ci_cannot_reach_the_target_by_the_cap(store, monkeypatch):
    summary, _ = sweep(store, overrides={"adaptive": FUTILE}, monkeypatch=monkeypatch)
    # noisy (log-sd 0.4 a side) would need far more than 5 trials a side for +-5 %: it stops at the minimum
    assert blocks_by_setting(store) == {"tight": [0, 1], "noisy": [0, 1], "solo": [0, 1]}
    assert summary.done == 10 and summary.not_needed == 15
    planned = plan("adaptive-toy", "adaptive", {"adaptive": FUTILE})
    decisions = adaptive.decide(
        TOY, planned, adaptive.observe_store(store, TOY, planned), adaptive.AdaptiveSpec(**FUTILE)
    )
    by_setting = {adaptive.setting_key(TOY, t.config): t.config["setting"] for t in planned}
    stop = {by_setting[k]: next(d for d in v.values() if not d.run).reason for k, v in decisions.items()}
    assert stop["noisy"].startswith("futile: pair toy-a/toy-b CI half-width ")
    assert stop["noisy"].endswith("> 5.0 % at the cap of 5 blocks")
    assert stop["tight"].startswith("resolved: ")  # a resolved setting is still "resolved"
    report = adaptive_report(store, "adaptive-toy", "adaptive", {"adaptive": FUTILE}).set_index("setting")
    assert report.loc["toy noisy"].state == "futile" and report.loc["toy noisy"].saved_cpu_s == 3 * 2 * 3.0


def test_futility_lets_a_reachable_target_run_on(store, monkeypatch):
    reachable = {**FUTILE, "target": 0.9}  # +-90 %: 5 trials a side of log-sd 0.4 get there, 2 do not
    sweep(store, overrides={"adaptive": reachable}, monkeypatch=monkeypatch)
    assert len(blocks_by_setting(store)["noisy"]) > 2


def test_projected_half_width_follows_the_welch_interval():
    assert stats.half_width_at(0.0, 0.0, 5) == 0.0 and math.isnan(stats.half_width_at(0.1, 0.1, 1))
    wide, narrow = stats.half_width_at(0.16, 0.16, 3), stats.half_width_at(0.16, 0.16, 30)
    assert wide > narrow > 0
    # n = 30 a side, sd 0.4 a side: t(58) * sqrt(0.32 / 30) = 0.2067 on the log scale
    assert narrow == pytest.approx(math.expm1(2.0017 * math.sqrt(0.32 / 30)), rel=1e-3)


# -- resume ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stop_after", [1, 5, 8, 10, 13])
def test_a_resumed_run_makes_the_same_decisions_and_runs_nothing_twice(tmp_path, monkeypatch, stop_after):
    whole = ResultsStore(tmp_path / "whole.sqlite")
    sweep(whole, monkeypatch=monkeypatch)
    resumed = ResultsStore(tmp_path / "resumed.sqlite")
    first = InProcess(stop_after=stop_after)
    with pytest.raises(KeyboardInterrupt):
        sweep(resumed, executor=first, monkeypatch=monkeypatch)
    _, second = sweep(resumed, monkeypatch=monkeypatch)
    assert len(first.ran) == stop_after and not set(first.ran) & set(second.ran)
    assert len(first.ran) + len(second.ran) == 16 == len(set(first.ran + second.ran))

    def reasons(s):
        t = s.trials("adaptive-toy")
        return dict(zip(t.trial_id, t["provenance.block_reason"]))

    assert reasons(resumed) == reasons(whole)
    _, third = sweep(resumed, monkeypatch=monkeypatch)  # everything decided is done: nothing runs
    assert third.ran == []


# -- the report ------------------------------------------------------------------------------------------------
def test_report_counts_blocks_cpu_spent_and_saved(store, monkeypatch):
    sweep(store, monkeypatch=monkeypatch)
    report = adaptive_report(store, "adaptive-toy", "adaptive").set_index("setting")
    tight, noisy, solo = (report.loc[f"toy {s}"] for s in ("tight", "noisy", "solo"))
    assert (tight.blocks_run, tight.state, tight.cpu_s, tight.skipped_trials) == (2, "resolved", 12.0, 6)
    assert tight.saved_cpu_s == 6 * 3.0 and tight.widest_half_width <= 0.05  # 3 skipped blocks x 2 trials x 3 s
    assert (noisy.blocks_run, noisy.state, noisy.cpu_s, noisy.saved_cpu_s) == (5, "capped", 30.0, 0.0)
    assert noisy.widest_half_width > 0.05
    assert (solo.blocks_run, solo.state, solo.cpu_s, solo.saved_cpu_s) == (2, "minimum only", 4.0, 6.0)
    text = prose.adaptive_table(report.reset_index())
    assert "| toy tight | toy-a, toy-b | 2 | 5 | resolved |" in text and "saved 24 s" in text


def test_the_widest_half_width_is_the_one_the_rule_read_where_a_trial_ran_on_another_machine(store, monkeypatch):
    """A trial rerun alone on another machine leaves its (setting, machine) cell incomplete: the rule reads the
    machine-adjusted values without it, and the report's widest half-width must be that same number (its stop
    reason's), not one over the raw values."""
    sweep(store, monkeypatch=monkeypatch)
    observe = adaptive.observe_store

    def one_moved(*args):
        records = observe(*args)
        i = next(i for i, r in enumerate(records) if r.block == 1 and r.arm == "toy-a" and "noisy" in r.setting)
        records[i] = replace(records[i], machine="another boot", value=records[i].value * 1.5)
        return records

    monkeypatch.setattr(adaptive, "observe_store", one_moved)
    noisy = adaptive_report(store, "adaptive-toy", "adaptive").set_index("setting").loc["toy noisy"]
    assert "CI half-width" in noisy.stop_reason and adaptive.percent(noisy.widest_half_width) in noisy.stop_reason


def test_report_saves_nothing_while_a_block_is_pending_and_reads_timestamps(store, monkeypatch):
    with pytest.raises(KeyboardInterrupt):
        sweep(store, executor=InProcess(stop_after=11), monkeypatch=monkeypatch)  # blocks 1-2, half of block 3
    report = adaptive_report(store, "adaptive-toy", "adaptive").set_index("setting")
    noisy = report.loc["toy noisy"]
    assert noisy.state == "running" and noisy.saved_cpu_s == 0 and noisy.block_to_run == 3
    assert f"| block 3 to run: {noisy.stop_reason} |" in prose.adaptive_table(report.reset_index())
    # a row without trial_wall_s (e.g. a failed trial) counts ended_at - started_at
    trial = next(
        t for t in plan("adaptive-toy", "adaptive") if t.config["setting"] == "noisy" and t.config["repeat"] == 4
    )
    runner.store_outcome(
        store,
        trial,
        {
            "status": "failed",
            "summary": {},
            "measurements": [],
            "provenance": {},
            "error": "boom",
            "stderr_tail": "",
            "started_at": "2026-01-01T00:00:00+0000",
            "ended_at": "2026-01-01T00:01:30+0000",
        },
        "adaptive",
        {},
    )
    after = adaptive_report(store, "adaptive-toy", "adaptive").set_index("setting").loc["toy noisy"]
    assert after.cpu_s == noisy.cpu_s + 90


def test_report_of_a_fixed_profile_is_an_error(store):
    with pytest.raises(FwbenchError, match="does not use adaptive repeats"):
        adaptive_report(store, "adaptive-toy", "fixed")


# -- bad input ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, message",
    [
        (True, "adaptive must be False or a dict like"),
        ({"min_blocks": 1, "max_blocks": 3, "target": 0.03}, "adaptive.min_blocks must be >= 2"),
        ({"min_blocks": 3, "max_blocks": 2, "target": 0.03}, "adaptive.max_blocks must be >= 3"),
        ({"min_blocks": 3, "max_blocks": 4, "target": 1.5}, r"adaptive.target must be a number in \(0, 1\)"),
        ({"min_blocks": 3, "max_blocks": 4, "target": 0}, r"adaptive.target must be a number in \(0, 1\)"),
        ({"min_blocks": 3.0, "max_blocks": 4, "target": 0.03}, "adaptive.min_blocks must be an integer"),
        ({"min_blocks": 3, "max_blocks": 4}, r"needs exactly the keys .* \(missing \['target'\]"),
        ({"min_blocks": 3, "max_blocks": 4, "target": 0.03, "cap": 9}, r"unknown \['cap'\]"),
        (
            {"min_blocks": 3, "max_blocks": 4, "target": 0.03, "futility": "yes"},
            "adaptive.futility must be True or False",
        ),
    ],
)
def test_bad_adaptive_values_are_one_clear_error(value, message, tmp_store, capsys):
    with pytest.raises(FwbenchError, match=message):
        plan("adaptive-toy", "fixed", {"adaptive": value})
    assert cli.main(["run", "adaptive-toy", "--profile", "fixed", "--set", f"adaptive={value!r}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fwbench: error: adaptive") and not tmp_store.exists()


def test_good_adaptive_values_pass_and_repeats_with_adaptive_is_refused():
    assert opt.adaptive_option("adaptive", False) is False
    assert opt.adaptive_option("adaptive", {"min_blocks": 2, "max_blocks": 2, "target": 1e-3})["target"] == 1e-3
    with pytest.raises(FwbenchError, match="repeats and adaptive both set"):
        plan("adaptive-toy", "adaptive", {"repeats": 4})
    assert len(plan("adaptive-toy", "adaptive", {"repeats": 4, "adaptive": False})) == 20


# -- estimate ----------------------------------------------------------------------------------------------------
def test_estimate_expected_is_below_capped(store, monkeypatch):
    sweep(store, profile="fixed", monkeypatch=monkeypatch)  # 3 stored blocks: the same trials as blocks 0-2
    est = estimate_full_runtime(store, "adaptive-toy", 1, "adaptive")
    a = est.adaptive
    planned = plan("adaptive-toy", "adaptive")
    assert est.n_trials == 25 and est.total_s == pytest.approx(sum(est.per_trial.values()))  # capped: all blocks
    # expected: tight and solo keep their 3 stored blocks (the minimum is 2), noisy needs the cap
    kept = [t for t in planned if t.config["setting"] == "noisy" or t.config["repeat"] < 3]
    assert a["expected_trials"] == len(kept) == 6 + 10 + 3
    assert sorted(a["expected_ids"]) == sorted(t.trial_id for t in kept)  # which trials: the README's per-part table
    assert a["expected_s"] == pytest.approx(sum(est.per_trial[t.trial_id] for t in kept))
    assert a["expected_s"] <= est.total_s and a["expected_makespan_s"] <= est.makespan_s
    lines = "\n".join(est.lines())
    assert "capped (every setting at 5 blocks)" in lines and "expected (2 blocks" in lines
    assert estimate_full_runtime(store, "adaptive-toy", 1, "fixed").adaptive is None
    # with futility the noisy setting cannot reach +-5 % by the cap: it is expected to stop (at its 3 stored blocks)
    futile = estimate_full_runtime(store, "adaptive-toy", 1, "adaptive", {"adaptive": FUTILE}).adaptive
    assert futile["expected_trials"] == 6 + 6 + 3


def test_expected_blocks_without_stored_trials_is_the_minimum(store):
    planned = plan("adaptive-toy", "adaptive")
    need = adaptive.expected_blocks(TOY, planned, [], adaptive.AdaptiveSpec(**RULE))
    assert set(need.values()) == {2}


# -- the studies and the real runner -----------------------------------------------------------------------------
def test_imdb_and_vgg16_declare_their_pairs_and_default_to_fixed_repeats():
    imdb, vgg16 = get_study("imdb"), get_study("vgg16")
    assert imdb.adaptive_pairs == (("torch-eager", "mxnet-imperative"), ("torch-sparse", "mxnet-imperative"))
    assert vgg16.adaptive_pairs == ((vgg16.reference_arm("torch"), vgg16.reference_arm("mxnet")),)
    assert imdb.adaptive_metric({"median_epoch_s": 1.5}) == 1.5
    assert vgg16.adaptive_metric({"median_latency_ms": 20.0}) == 20.0
    for study in (imdb, vgg16):
        assert all(p["adaptive"] is False for name, p in study.profiles.items() if name != "paper")
        assert study.profiles["paper"]["adaptive"]["min_blocks"] >= 3  # issue 14's profile is adaptive
    rule = {"adaptive": {"min_blocks": 2, "max_blocks": 4, "target": 0.03}}
    assert {t.config["repeat"] for t in plan("imdb", "quick", rule)} == set(range(4))
    assert {t.config["block"] for t in plan("vgg16", "quick", rule) if t.config["part"] == "main"} == set(range(4))
    seeds = {adaptive.setting_key(imdb, t.config) for t in plan("imdb", "quick", rule) if t.config["part"] == "main"}
    assert len(seeds) == len(
        {adaptive.setting_key(imdb, t.config) for t in plan("imdb", "quick") if t.config["part"] == "main"}
    )  # seed and repeat are not part of a setting


def test_end_to_end_through_the_cli(tmp_store, capsys):
    """Real child processes: 2 arms x 2 blocks (the tight setting stops at the minimum), then status and estimate."""
    assert cli.main(["run", "adaptive-toy", "--profile", "e2e", "--progress", "lines"]) == 0
    out = capsys.readouterr().out
    assert "adaptive block 1/3: every setting runs (block 1 of the minimum 2)" in out
    assert "adaptive block 3/3 stops for toy tight: resolved: widest half-width" in out
    assert "2 not needed (adaptive blocks)" in out
    t = ResultsStore.open_read(tmp_store).trials("adaptive-toy")
    assert len(t) == 4 and set(t.status) == {"done"} and t["provenance.block_reason"].str.startswith("block ").all()
    assert cli.main(["status", "--study", "adaptive-toy", "--profile", "e2e", "--adaptive"]) == 0
    out = capsys.readouterr().out
    assert "adaptive-toy/e2e adaptive: 1 settings (1 resolved)" in out and "| toy tight |" in out
    assert cli.main(["estimate", "adaptive-toy", "--workers", "1", "--profile", "e2e"]) == 0
    out = capsys.readouterr().out
    assert "capped (every setting at 3 blocks)" in out and "expected (2 blocks" in out
    assert cli.main(["run", "adaptive-toy", "--profile", "e2e", "--progress", "lines"]) == 0
    assert "4 already done, 0 run now, 0 failed, 2 not needed" in capsys.readouterr().out


# -- the estimate's check: a prediction saved before a run against what the run measured ---------------------------
class BusyInProcess(InProcess):
    """Marks one trial (tight, toy-a, block 0) busy_machine with a 100 s wall time: it must be left out."""

    def run(self, trials, record, bar):
        def marked(t, outcome, runner_info):
            if (t.config["setting"], t.config["arm"], t.config["repeat"]) == ("tight", "toy-a", 0):
                outcome = {**outcome, "provenance": {"trial_wall_s": 100.0, "busy_machine": True}}
            record(t, outcome, runner_info)

        super().run(trials, marked, bar)


def _busy_id(store) -> str:
    t = store.trials("adaptive-toy")
    return t[t["provenance.busy_machine"].eq(True)].trial_id.item()


def test_a_saved_prediction_is_checked_against_the_trials_run_after_it(tmp_path, monkeypatch):
    from fwbench.analysis.estimate_accuracy import check_prediction, save_prediction

    before = ResultsStore(tmp_path / "before.sqlite")
    sweep(before, profile="fixed", monkeypatch=monkeypatch)  # toy-a trials take 2 s, toy-b 4 s
    prediction = tmp_path / "prediction.json"
    entry = save_prediction(estimate_full_runtime(before, "adaptive-toy", 1, "adaptive"), prediction, before)
    assert entry["fitted_on"]["trials"] == 15 and len(entry["per_trial"]) == 25
    after = ResultsStore(tmp_path / "after.sqlite")
    monkeypatch.setitem(SECONDS, "toy-b", 8.0)  # toy-b turns out twice as slow as predicted
    sweep(after, executor=BusyInProcess(), monkeypatch=monkeypatch)
    check = check_prediction(prediction, after).set_index("group")
    ran = after.trials("adaptive-toy")
    ran = dict(zip(ran.trial_id, ran["config.arm"]))
    predicted = {
        arm: sum(p["predicted_s"] for tid, p in entry["per_trial"].items() if ran.get(tid) == arm)
        for arm in ("toy-a", "toy-b")
    }
    n_a, n_b = (sum(a == arm for a in ran.values()) for arm in ("toy-a", "toy-b"))
    a, b, both = check.loc["toy-a"], check.loc["toy-b"], check.loc["all"]
    assert (a.busy_trials, a.measured_trials, b.busy_trials, b.measured_trials) == (1, n_a - 1, 0, n_b)
    busy_prediction = next(
        p["predicted_s"]
        for tid, p in entry["per_trial"].items()
        if p["arm"] == "toy-a" and tid in ran and tid == _busy_id(after)
    )
    assert a.predicted_s == pytest.approx(predicted["toy-a"] - busy_prediction)
    assert a.measured_s == 2.0 * (n_a - 1) and b.measured_s == 8.0 * n_b
    assert b.error == pytest.approx((predicted["toy-b"] - 8.0 * n_b) / (8.0 * n_b)) and b.error < -0.3
    assert both.planned_trials == 25 and both.measured_trials == n_a - 1 + n_b
    assert both.error == pytest.approx(
        (a.predicted_s + b.predicted_s - a.measured_s - b.measured_s) / (a.measured_s + b.measured_s)
    )
    assert f"| adaptive-toy | toy-b | {n_b} of 10 (0) | " in prose.estimate_accuracy_table(check.reset_index())
    # saving again replaces the study's entry instead of adding a second one
    save_prediction(estimate_full_runtime(before, "adaptive-toy", 1, "adaptive"), prediction, before)
    assert len(check_prediction(prediction, after)) == 3


def test_the_check_refuses_what_is_not_a_prediction(tmp_path, tmp_store, capsys):
    from fwbench.analysis.estimate_accuracy import check_prediction

    with pytest.raises(FwbenchError, match="no prediction file at .*--save"):
        check_prediction(tmp_path / "missing.json", None)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(FwbenchError, match="not a prediction file"):
        check_prediction(tmp_path / "bad.json", None)
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(FwbenchError, match="not a prediction file"):
        check_prediction(tmp_path / "other.json", None)
    assert cli.main(["estimate", "--profile", "quick"]) == 2
    assert "needs a study and --workers" in capsys.readouterr().err


# -- rerunning trials a busy machine disturbed ----------------------------------------------------------------------
def test_rerun_busy_replaces_the_busy_trials_groups_and_nothing_else(store, monkeypatch):
    """The busy trial is rerun with its group's other arm (same setting and block, back to back); other rows stay."""
    sweep(store, profile="fixed", executor=BusyInProcess(), monkeypatch=monkeypatch)
    busy_id = _busy_id(store)
    before = store.trials("adaptive-toy").set_index("trial_id")
    group = before[(before["config.setting"] == "tight") & (before["config.repeat"] == 0)].index
    assert len(group) == 2 and busy_id in group
    _, again = sweep(store, profile="fixed", monkeypatch=monkeypatch)
    assert again.ran == []  # a plain resume keeps the busy row
    executor = InProcess()
    monkeypatch.setattr(runner, "LocalExecutor", lambda **kwargs: executor)
    summary = run_sweep("adaptive-toy", "fixed", None, store=store, progress="none", rerun_busy=True)
    assert sorted(executor.ran) == sorted(group) and summary.done == 2
    t = store.trials("adaptive-toy").set_index("trial_id")
    assert "provenance.busy_machine" not in t and t.loc[busy_id, "provenance.trial_wall_s"] == 2.0  # the clean rerun
    assert len(t) == 15  # replaced, not added
    assert (t.drop(group).ended_at == before.drop(group).ended_at).all()  # the other groups' rows untouched


def test_a_stop_file_stops_at_a_block_boundary_and_the_rerun_resumes(store, tmp_path, monkeypatch):
    """With the stop file present from the start, the sweep stops after the first trial that completes its
    setting's block (the two arms of a paired setting are never split); without it the rerun does the rest once."""
    stop = tmp_path / "STOP"
    stop.touch()
    executor = InProcess()
    monkeypatch.setattr(runner, "LocalExecutor", lambda **kwargs: executor)
    summary = run_sweep("adaptive-toy", "fixed", store=store, progress="none", stop_file=stop)
    assert summary.stopped and "stopped by the stop file" in summary.line()
    first = store.trials("adaptive-toy")
    settings = first.groupby(["config.setting", "config.repeat"]).size()
    assert len(settings) == 1  # one whole group: both arms of a paired setting, or the solo setting's one arm
    (((setting, _), n),) = settings.items()
    assert n == (1 if setting == "solo" else 2) and len(executor.ran) == n
    stop.unlink()
    rest = run_sweep("adaptive-toy", "fixed", store=store, progress="none", stop_file=stop)
    assert not rest.stopped and rest.skipped == n and rest.done == 15 - n
    assert len(executor.ran) == len(set(executor.ran)) == 15


def test_a_stop_file_is_for_local_runs():
    with pytest.raises(FwbenchError, match="stop file works with the local runner only"):
        run_sweep("adaptive-toy", "fixed", progress="none", stop_file="STOP", scheduler="tcp://127.0.0.1:8786")


def test_the_check_has_a_row_per_machine_where_trials_record_it(tmp_path, monkeypatch):
    """Two machines ran the trials, one twice as fast as the prediction's: each gets its own row (the old trials
    without a boot id are 'machine not recorded')."""
    from fwbench.analysis.estimate_accuracy import check_prediction, save_prediction

    before = ResultsStore(tmp_path / "before.sqlite")
    sweep(before, profile="fixed", monkeypatch=monkeypatch)
    prediction = tmp_path / "prediction.json"
    save_prediction(estimate_full_runtime(before, "adaptive-toy", 1, "adaptive"), prediction, before)
    after = ResultsStore(tmp_path / "after.sqlite")

    class TwoMachines(InProcess):
        def run(self, trials, record, bar):
            def on_machine(trial, outcome, placement):
                n = len(self.ran)
                boot = None if n <= 2 else ("fast-boot-1" if n % 2 else "slow-boot-2")
                wall = outcome["provenance"]["trial_wall_s"] * (0.5 if boot == "fast-boot-1" else 1.0)
                outcome = {
                    **outcome,
                    "provenance": {
                        **outcome["provenance"],
                        "trial_wall_s": wall,
                        "boot_id": boot,
                        "cpu_id": "AuthenticAMD/25/17/1",
                    },
                }
                record(trial, outcome, placement)

            super().run(trials, on_machine, bar)

    sweep(after, executor=TwoMachines(), monkeypatch=monkeypatch)
    check = check_prediction(prediction, after)
    by_group = {group: row for group, row in zip(check.group, check.itertuples())}
    fast, slow = by_group[("AuthenticAMD/25/17/1", "fast-boo")], by_group[("AuthenticAMD/25/17/1", "slow-boo")]
    assert fast.measured_trials >= 1 and slow.measured_trials >= 1
    assert fast.error > slow.error + 0.5  # the fast machine took half the time: the prediction is far too long there
    assert by_group[("", "")].measured_trials == 2  # no boot id: not recorded
    assert by_group["all"].measured_trials == fast.measured_trials + slow.measured_trials + 2
    text = prose.estimate_accuracy_table(check)
    assert "| machine AuthenticAMD/25/17/1, boot fast-boo |" in text and "| machine not recorded |" in text


def test_a_part_with_its_own_blocks_runs_every_block_whatever_its_timings(store, monkeypatch):
    """imdb's training-quality part: its blocks are seeds of an accuracy, so the rule never stops them (before,
    its fifth seed could have been skipped as "futile" on the spread of its epoch times)."""
    import dataclasses

    sweep(store, overrides={"adaptive": FUTILE}, monkeypatch=monkeypatch)  # noisy stops at the minimum: futile
    planned = plan("adaptive-toy", "adaptive", {"adaptive": FUTILE})
    seeds = dataclasses.replace(TOY, fixed_block_parts=("main",))  # the toy's main part declares its blocks
    spec = adaptive.AdaptiveSpec(**FUTILE)
    records = adaptive.observe_store(store, seeds, planned)
    by_setting = {adaptive.setting_key(TOY, t.config): t.config["setting"] for t in planned}
    decisions = adaptive.decide(seeds, planned, records, spec)
    runs = {by_setting[k]: sorted(b for b, d in v.items() if d.run) for k, v in decisions.items()}
    assert runs == {"tight": [0, 1, 2, 3, 4], "noisy": [0, 1, 2, 3, 4], "solo": [0, 1]}
    expected = {by_setting[k]: n for k, n in adaptive.expected_blocks(seeds, planned, records, spec).items()}
    assert expected == {"tight": 5, "noisy": 5, "solo": 2}
    assert get_study("imdb").fixed_block_parts == ("quality", "beside")


def test_the_expected_blocks_of_imdb_paper_keep_every_quality_seed():
    """The quality part's seeds 45-46 run at 1 thread, 42-44 at 2: two settings, the second of blocks 3 and 4. The
    paper estimate once expected 11 of its 15 trials, counting that setting's blocks from 0."""
    study = get_study("imdb")
    planned = plan("imdb", "paper")
    spec = adaptive.spec_of(study.resolve("paper", {}))
    need = adaptive.expected_blocks(study, planned, [], spec)
    quality = [t.config for t in planned if t.config.get("part") == "quality"]
    assert {c["threads"] for c in quality} == {1, 2}  # else this test no longer covers a split setting
    kept = [c for c in quality if adaptive.block_of(study, c) < need[adaptive.setting_key(study, c)]]
    assert len(kept) == len(quality)
