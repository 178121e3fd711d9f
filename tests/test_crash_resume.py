"""Nothing lost: crash isolation, a per-trial memory cap, timeouts, retries, and SIGKILL-and-resume.

Uses the harness self-test study (``tests/selftest_study.py``: trials of ~0.1-0.3 s that sleep and write
deterministic values, or raise / abort / exit / allocate too much on purpose).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from selftest_study import METRICS, expected_value

from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.store import ResultsStore

REPO = Path(__file__).resolve().parents[1]
EVIDENCE = REPO / "build" / "test-evidence"
KILLS = int(os.environ.get("FWBENCH_TEST_KILLS", "24"))


def write_evidence(name: str, data: dict) -> None:
    EVIDENCE.mkdir(parents=True, exist_ok=True)
    (EVIDENCE / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True))


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "results.sqlite"
    monkeypatch.setenv("FWBENCH_RESULTS", str(path))
    monkeypatch.delenv("FWBENCH_SELFTEST_FAIL", raising=False)
    return path


def cli(*args, env_extra=None, timeout=120):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "fwbench.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def test_crashes_are_isolated_recorded_and_summarised(store_path):
    summary = run_sweep("selftest", "faults", progress="none", memory_limit_mb=512)
    by_mode = {}
    trials = ResultsStore(store_path).trials("selftest")
    for _, row in trials.iterrows():
        by_mode[row["config.mode"]] = row
    assert summary.planned == 6 and summary.done == 2 and len(summary.failed) == 4
    assert by_mode["ok"].status == "done" and by_mode["flaky"].status == "done"
    assert "raised on purpose" in by_mode["raise"].error and "Traceback" in by_mode["raise"].stderr_tail
    assert by_mode["abort"].error == "killed by signal SIGABRT"
    assert "aborting on purpose" in by_mode["abort"].stderr_tail
    assert by_mode["exit"].error.startswith("exit status 3")
    assert by_mode["oom"].error.startswith("exceeded the memory limit of 512 MB")
    assert "MemoryError" in by_mode["oom"].stderr_tail
    assert by_mode["oom"]["provenance.memory_limit_mb"] == 512
    assert "4 failed" in summary.line()
    # the CLI: summary line, one FAILED line per failure, exit status 1; status lists the failures
    proc = cli("run", "selftest", "--profile", "faults", "--memory-limit-mb", "512", "--progress", "lines")
    assert proc.returncode == 1
    assert "6 trials, 2 already done, 0 run now, 4 failed" in proc.stdout
    assert proc.stderr.count("FAILED selftest") == 4
    status = cli("status", "--study", "selftest")
    assert status.returncode == 0
    assert status.stdout.count("failed selftest") == 4 and "killed by signal SIGABRT" in status.stdout
    write_evidence(
        "crash_isolation",
        {
            "fault_kinds": ["raise", "abort", "exit", "oom"],
            "sweep_went_on": True,
            "failed_recorded": 4,
            "done": 2,
            "cli_exit_status": proc.returncode,
        },
    )


def test_memory_cap_spares_a_normal_trial_and_refuses_unbounded_oom(store_path):
    # the cap leaves room for the child's own imports (pandas and pyarrow reserve ~350 MB of address space; at
    # 256 MB the normal trial's imports failed now and then) and is far below the oom trial's 4 GB
    overrides = {"n_trials": 2, "modes": ["ok", "oom"], "alloc_mb": 4096}
    summary = run_sweep("selftest", "smoke", overrides, progress="none", memory_limit_mb=1024)
    assert summary.done == 1 and "exceeded the memory limit of 1024 MB" in summary.failed[0]["error"]
    # without a cap the oom trial refuses to really eat memory (it is a test of the cap, not of the host)
    summary = run_sweep("selftest", "smoke", {**overrides, "sleep_s": 0.01}, progress="none")
    assert "refuses to run without --memory-limit-mb" in summary.failed[0]["error"]


def test_timeout_fails_the_trial_and_the_sweep_goes_on(store_path):
    summary = run_sweep("selftest", "smoke", {"n_trials": 2, "sleep_s": 3.0}, progress="none", timeout_s=1)
    assert [f["error"] for f in summary.failed] == ["timed out after 1 s"] * 2
    assert summary.wall_s < 6


def test_rerun_retries_failed_trials_and_skips_done_ones(store_path, monkeypatch):
    overrides = {"n_trials": 4, "modes": ["ok", "flaky"]}
    monkeypatch.setenv("FWBENCH_SELFTEST_FAIL", "1")
    first = run_sweep("selftest", "smoke", overrides, progress="none")
    assert first.done == 2 and len(first.failed) == 2
    before = ResultsStore(store_path).trials("selftest").set_index("trial_id")
    monkeypatch.delenv("FWBENCH_SELFTEST_FAIL")
    second = run_sweep("selftest", "smoke", overrides, progress="none")
    assert second.skipped == 2 and second.done == 2 and second.ok
    after = ResultsStore(store_path).trials("selftest").set_index("trial_id")
    assert (after.status == "done").all() and len(after) == 4
    kept = before[before.status == "done"].index
    assert (after.loc[kept, "provenance.pid"] == before.loc[kept, "provenance.pid"]).all()  # not rerun


# -- SIGKILL at random points, then resume ------------------------------------------------------------------
def snapshot(path: Path) -> dict:
    """{trial_id: (status, ended_at, measurements)} read straight from SQLite (a rolled-back journal included)."""
    if not path.exists():
        return {}
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        dupes = conn.execute("SELECT trial_id FROM trials GROUP BY trial_id HAVING COUNT(*) > 1").fetchall()
        assert not dupes, f"trials stored twice: {dupes}"
        rows = conn.execute("SELECT trial_id, status, ended_at, config FROM trials").fetchall()
        out = {}
        for tid, status, ended, config in rows:
            m = tuple(
                conn.execute(
                    "SELECT step, metric, value FROM measurements WHERE trial_id=? ORDER BY step, metric", (tid,)
                ).fetchall()
            )
            out[tid] = (status, ended, json.loads(config), m)
        return out
    finally:
        conn.close()


def assert_intact(tid: str, row) -> None:
    status, _, config, m = row
    assert status == "done", f"{tid} is {status}"
    expected = tuple(
        sorted((e, k, expected_value(config["index"], e, k)) for e in range(config["epochs"]) for k in METRICS)
    )
    assert m == expected, f"{tid}: stored values differ from what the trial wrote (partial or corrupt row)"


def orphans(path: Path) -> list[int]:
    """Processes still carrying this test's store in their environment (the sweep or its trial children)."""
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            if p.environ().get("FWBENCH_RESULTS") == str(path):
                found.append(p.pid)
        except (psutil.Error, OSError):
            continue
    return found


def done_count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM trials WHERE status='done'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:  # the schema is not there yet
        return 0


def has_child(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).children())
    except psutil.Error:
        return False


def test_sigkill_at_random_points_loses_nothing(store_path):
    rng = random.Random(20261122)
    overrides = ["--set", "n_trials=60", "--set", "sleep_s=0.1"]
    cmd = [
        sys.executable,
        "-m",
        "fwbench.cli",
        "run",
        "selftest",
        "--profile",
        "quick",
        *overrides,
        "--progress",
        "none",
    ]
    env = {**os.environ, "FWBENCH_RESULTS": str(store_path)}
    planned = {t.trial_id for t in plan("selftest", "quick", {"n_trials": 60, "sleep_s": 0.1})}
    kept: dict = {}
    kills = in_flight_kills = 0
    done_at_kill = []
    for _ in range(KILLS):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if rng.random() < 0.25:  # anywhere, start-up included
            time.sleep(rng.uniform(0.05, 2.0))
        else:  # after this run stored a trial (so every cycle makes progress), a random moment later:
            # inside the next trial, between trials, or during the store write
            start, deadline = done_count(store_path), time.monotonic() + 60
            while proc.poll() is None and done_count(store_path) == start and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is not None:  # finished on its own: the grid is complete
            break
        had_child = has_child(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
        in_flight_kills += had_child
        deadline = time.monotonic() + 5
        while orphans(store_path) and time.monotonic() < deadline:  # children die with the sweep
            time.sleep(0.05)
        assert not orphans(store_path), "a trial process outlived the killed sweep"
        snap = snapshot(store_path)
        for tid, row in kept.items():  # everything finished before is still there, unchanged
            assert snap.get(tid) == row, f"trial {tid} changed or vanished after kill {kills}"
        for tid, row in snap.items():  # nothing that looks finished is partial
            assert tid in planned
            assert_intact(tid, row)
        kept = snap
        done_at_kill.append(len(snap))
    assert kills >= min(KILLS, 20), f"only {kills} kills happened before the grid completed"
    final = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    snap = snapshot(store_path)
    assert set(snap) == planned
    for tid, row in snap.items():
        assert_intact(tid, row)
        if tid in kept:
            assert row == kept[tid]
    assert not orphans(store_path)
    write_evidence(
        "kill_resume",
        {
            "kills": kills,
            "kills_with_a_trial_running": in_flight_kills,
            "trials_in_grid": len(planned),
            "done_before_final_resume": len(kept),
            "done_after_each_kill": done_at_kill,
            "finished_trials_lost": 0,
            "trials_stored_twice": 0,
            "partial_rows_looking_finished": 0,
            "grid_complete_after_resume": set(snap) == planned,
        },
    )
