"""`make reproduce`'s wall times: the record `tools/reproduce_timing.py` (`make time-reproduce`) appends to, the
blocks rendered from it, and the measuring loop on a stand-in repository (its make does no work: nothing here is
timed or judged by time)."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import load_tool

from fwbench import generated_blocks
from fwbench.errors import FwbenchError

ROOT = Path(__file__).resolve().parents[1]
rt = load_tool("reproduce_timing")


def record(run="cold", wall=472.3, measurement="2026-11-25T10:00:00+00:00", **kw) -> rt.Record:
    values = {
        "measurement": measurement,
        "date": measurement if run == "cold" else "2026-11-25T10:08:00+00:00",
        "commit": "abcdef1234567890abcdef1234567890abcdef12",
        "source_dirty": False,
        "profile": "quick",
        "run": run,
        "venv": "reused",
        "exit_code": 0,
        "wall_s": wall,
        "notebooks_s": {"01_imdb_sweep": 250.0, "02_deepar_monash": 90.5, "05_claims_ledger": 12.0}
        if run == "cold"
        else {"01_imdb_sweep": 12.0, "02_deepar_monash": 8.0, "05_claims_ledger": 10.0},
        "trials_done": 62,
        "trials_run": 62 if run == "cold" else 0,
        "host": "vm",
        "cpu_model": "AMD EPYC 7B13",
        "cores": 2,
        "mem_gib": 23.5,
        "load_before": "0.05/0.10/0.08",
        "load_after": "1.90/1.70/1.20",
        "other_cpu_pct": 1.2,
        "steal_pct": 0.0,
    }
    values.update(kw)
    return rt.Record(**values)


def test_records_round_trip_through_the_csv(tmp_path):
    path = tmp_path / "benchmarks" / "reproduce.csv"
    assert rt.read_records(path) == []  # no file: no record, no error
    runs = [record(), record("warm", 41.0, other_cpu_pct=None, trials_done=None, trials_run=None)]
    rt.append_records(runs[:1], path)
    rt.append_records(runs[1:], path)  # appending keeps one header
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == list(rt.FIELDS) and len(lines) == 3
    back = rt.read_records(path)
    assert [r.run for r in back] == ["cold", "warm"]
    assert back[0].notebooks_s == {"01_imdb_sweep": 250.0, "02_deepar_monash": 90.5, "05_claims_ledger": 12.0}
    assert list(back[0].notebooks_s) == ["01_imdb_sweep", "02_deepar_monash", "05_claims_ledger"]  # run order
    assert back[0].wall_s == pytest.approx(472.3) and back[0].cores == 2 and back[0].source_dirty is False
    assert back[1].other_cpu_pct is None and back[1].trials_done is None


def test_a_record_missing_a_column_or_a_malformed_notebook_entry_is_an_error(tmp_path):
    path = tmp_path / "reproduce.csv"
    path.write_text("date,commit,profile,run,wall_s\n2026-11-25,abc,quick,cold,400\n")
    with pytest.raises(FwbenchError, match="lacks the column.*measurement"):
        rt.read_records(path)
    with pytest.raises(FwbenchError, match="not NAME=SECONDS"):
        rt.parse_notebooks("01_imdb_sweep:250")
    assert rt.parse_notebooks("") == {}


def test_a_record_from_before_the_cpu_column_is_migrated_and_each_cpu_model_is_shown(tmp_path):
    """Rows written before ``cpu`` existed read as "" and are rewritten under the current header on the next
    append; the docs block shows the latest measurement of each CPU model, the README phrase names the others."""
    path = tmp_path / "reproduce.csv"
    old_fields = [f for f in rt.FIELDS if f != "cpu"]
    path.write_text(",".join(old_fields) + "\n" + ",".join(str(record().row()[f]) for f in old_fields) + "\n")
    (old,) = rt.read_records(path)
    assert old.cpu == "" and old.wall_s == pytest.approx(472.3)
    intel = record(wall=530.0, measurement="2026-11-26T10:00:00+00:00", cpu_model="Intel(R) Xeon(R)", cpu="I/6/207")
    rt.append_records([intel], path)
    assert path.read_text().splitlines()[0].split(",") == list(rt.FIELDS)
    assert [r.cpu for r in rt.read_records(path)] == ["", "I/6/207"]
    assert rt.cpus_measured(rt.read_records(path), "quick") == ["I/6/207", "AMD EPYC 7B13"]
    text = rt.render_reproduce_timings(path)
    assert "Intel(R) Xeon(R) I/6/207 (2 cores" in text and "AMD EPYC 7B13, model not recorded (2 cores" in text
    phrase = rt.render_reproduce_phrase(path)
    assert "**8 min 50 s** cold" in phrase
    assert "On AMD EPYC 7B13, model not recorded (2 cores, 23.5 GiB): **7 min 52 s** cold (62 trials; 2026" in phrase


def test_a_run_of_an_older_profile_version_says_so_with_its_trial_count(tmp_path):
    """A profile whose grid changed since (another trial count than the latest run's) times other work: each
    run names its trials, and the older ones are marked."""
    path = tmp_path / "reproduce.csv"
    old = record(wall=376.0, measurement="2026-11-24T10:00:00+00:00", trials_done=52, trials_run=52)
    new = record(wall=512.0, measurement="2026-11-26T10:00:00+00:00", trials_done=66, trials_run=66, cpu="I/6/207")
    rt.append_records([old, new], path)
    phrase = rt.render_reproduce_phrase(path)
    assert "**8 min 32 s** cold (66 trials, a fresh clone" in phrase
    assert "**6 min 16 s** cold (52 trials: an older version of the profile, now 66; 2026-11-24" in phrase
    text = rt.render_reproduce_timings(path)
    assert "(2 cores, 23.5 GiB); 66 trials. Cold run" in text
    assert "model not recorded (2 cores, 23.5 GiB); 52 trials: an older version of the profile, now 66." in text


def test_the_latest_successful_measurement_is_the_one_shown():
    old = [record(wall=900.0, measurement="2026-11-20T10:00:00+00:00")]
    new = [record(), record("warm", 41.0)]
    failed = [record(wall=30.0, measurement="2026-11-26T10:00:00+00:00", exit_code=2)]
    runs = rt.latest_measurement(old + new + failed, "quick")
    assert runs["cold"].wall_s == 472.3 and runs["warm"].wall_s == 41.0  # the failed newer one is skipped
    assert rt.latest_measurement(old + new, "smoke") == {}
    broken_warm = [record(), record("warm", 41.0, exit_code=1)]
    assert set(rt.latest_measurement(broken_warm, "quick")) == {"cold"}


def test_the_docs_block_renders_the_latest_measurement(tmp_path):
    path = tmp_path / "reproduce.csv"
    rt.append_records(
        [record(wall=900.0, measurement="2026-11-20T10:00:00+00:00"), record(), record("warm", 41.0)], path
    )
    text = rt.render_reproduce_timings(path)
    assert "**`make reproduce PROFILE=quick`**, measured by `make time-reproduce PROFILE=quick` on 2026-11-25" in text
    assert "commit abcdef1234" in text and "AMD EPYC 7B13, model not recorded (2 cores, 23.5 GiB); 62 trials" in text
    assert "| cold | **7 min 52 s** (472 s) | <= 10 min | 62 run |" in text
    assert "| warm | **41 s** (41 s) | <= 1 min | all 62 reused |" in text
    assert "01_imdb_sweep 250 s, 02_deepar_monash 90 s, 05_claims_ledger 12 s" in text
    assert "| 2 min |" in text and "| 11 s |" in text  # the rest: 472.3 - 352.5 s, 41 - 30 s outside the notebooks
    assert "(900 s)" not in text  # the older measurement is not shown
    assert "other processes used 1.2 % of the CPUs" in text and "not alone" not in text
    assert "the existing `.venv` reused, not rebuilt" in text
    assert "](../results/benchmarks/reproduce.csv)" in text


def test_a_run_beside_other_work_or_from_a_dirty_checkout_says_so(tmp_path):
    path = tmp_path / "reproduce.csv"
    rt.append_records([record(other_cpu_pct=40.0, source_dirty=True, venv="built")], path)
    text = rt.render_reproduce_timings(path)
    assert "**not alone on the machine**: other processes used 40.0 % of the CPUs" in text
    assert "uncommitted changes; they were not measured" in text and "No warm run is recorded" in text
    assert "`.venv` built inside the cold run" in text
    phrase = rt.render_reproduce_phrase(path)
    assert "**7 min 52 s** cold (62 trials, a fresh clone and results store including building `.venv`)" in phrase
    assert "other work took 40 % of the CPUs meanwhile, so this overstates it." in phrase


def test_without_a_record_the_blocks_state_no_duration(tmp_path):
    absent = tmp_path / "absent.csv"
    text = rt.render_reproduce_timings(absent)
    assert text.startswith("No run of `make reproduce` is recorded yet") and "make time-reproduce" in text
    phrase = rt.render_reproduce_phrase(absent)
    assert phrase.count("no wall time is recorded yet") == len(rt.REPRODUCE_PROFILES)
    for words in (" min ", "minutes", " s cold"):
        assert words not in text and words not in phrase  # no invented number


def test_the_readme_phrase_names_the_measurement(tmp_path):
    path = tmp_path / "reproduce.csv"
    rt.append_records([record(), record("warm", 41.0)], path)
    lines = rt.render_reproduce_phrase(path).splitlines()
    quick = next(line for line in lines if line.startswith("- `PROFILE=quick`"))
    assert "**7 min 52 s** cold (62 trials, a fresh clone and results store, `.venv` already built) and 41 s" in quick
    assert "on AMD EPYC 7B13, model not recorded (2 cores, 23.5 GiB)" in quick
    assert "measured by `make time-reproduce` on 2026-11-25 at commit abcdef1234" in quick
    assert "(docs/benchmarks.md#wall-times-of-make-reproduce)" in quick
    smoke = next(line for line in lines if line.startswith("- `PROFILE=smoke`"))
    assert "no wall time is recorded yet" in smoke


def test_the_pages_state_the_recorded_durations():
    """The README and docs/benchmarks.md say what the committed record says (`make readme` after
    `make time-reproduce`): a duration typed by hand, or a record added without `make readme`, fails here."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert rt.BLOCKS == {"timings": rt.render_reproduce_timings, "reproduce-time": rt.render_reproduce_phrase}
    for name, render in rt.BLOCKS.items():
        page = generated_blocks.find_block(name, pages)
        start, end = generated_blocks.markers(name)
        content = page.read_text()
        block = content[content.index(start) + len(start) : content.index(end)].strip("\n")
        assert block == render(ROOT / "results" / "benchmarks" / "reproduce.csv"), f"run `make readme` ({name})"


def test_notebook_durations_come_from_papermill_metadata_of_this_run(tmp_path):
    def executed(name, duration, mtime):
        path = tmp_path / f"{name}.ipynb"
        meta = {"papermill": {"duration": duration}} if duration is not None else {}
        path.write_text(json.dumps({"cells": [], "metadata": meta}))
        os.utime(path, (mtime, mtime))

    executed("02_deepar_monash", 80.25, 2000)
    executed("01_imdb_sweep", 300.0, 2000)
    executed("03_convergence_curves", None, 2000)  # papermill stopped in it
    executed("05_claims_ledger", 9.0, 500)  # left by an earlier run
    assert rt.notebook_durations(tmp_path, since=1000) == {"01_imdb_sweep": 300.0, "02_deepar_monash": 80.25}


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True)


@pytest.fixture
def stand_in(tmp_path):
    """A repository whose `make reproduce` writes one executed notebook and what it was given, and a `.venv` that
    must survive the measurement."""
    repo = tmp_path / "src"
    repo.mkdir()
    (repo / "Makefile").write_text(
        textwrap.dedent(
            """\
            reproduce:
            \tmkdir -p build/executed
            \techo '{"metadata": {"papermill": {"duration": 1.5}}}' > build/executed/01_x.ipynb
            \techo "$$FWBENCH_RESULTS|$$FWBENCH_CACHE_DIR|$$PYTHONPATH|$(PROFILE)" > $$GIVEN
            \ttest "$(FAIL)" != 1
            """
        )
    )
    (repo / ".gitignore").write_text(".venv/\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "stand-in")
    (repo / ".venv").mkdir()
    (repo / ".venv" / ".installed").write_text("")
    return repo


def test_measure_clones_head_reuses_the_venv_and_cleans_up(stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("GIVEN", str(tmp_path / "given.txt"))
    monkeypatch.setenv("FWBENCH_RESULTS", str(tmp_path / "someone-elses.sqlite"))  # never the run's store
    work = tmp_path / "work"
    runs = rt.measure("smoke", stand_in, work)
    assert [(r.run, r.exit_code, r.venv, r.profile) for r in runs] == [
        ("cold", 0, "reused", "smoke"),
        ("warm", 0, "reused", "smoke"),
    ]
    sha = subprocess.run(["git", "-C", str(stand_in), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert {r.commit for r in runs} == {sha.stdout.strip()} and runs[0].measurement == runs[1].measurement
    assert all(r.notebooks_s == {"01_x": 1.5} for r in runs) and runs[0].cores == os.cpu_count()
    assert not work.exists()  # the clone, store and log are removed
    assert (stand_in / ".venv" / ".installed").exists()  # the shared environment was not followed into
    results, cache, pythonpath, profile = (tmp_path / "given.txt").read_text().strip().split("|")
    assert results == str(work / "store.sqlite") and cache == str(work / "cache") and profile == "smoke"
    assert pythonpath.split(os.pathsep)[0] == str(work / "repo" / "lib")  # the clone's code first


def test_a_failed_run_is_recorded_and_its_folder_kept(stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "1")
    monkeypatch.setenv("GIVEN", str(tmp_path / "given.txt"))
    work = tmp_path / "work"
    runs = rt.measure("quick", stand_in, work)
    assert len(runs) == 1 and runs[0].exit_code != 0  # no warm run after a failed cold one
    assert (work / "make.log").exists() and (work / "repo" / ".venv").is_symlink()
    assert rt.latest_measurement(runs, "quick") == {}  # never shown as the duration


def test_measure_refuses_to_reuse_an_environment_that_is_not_built(stand_in, tmp_path):
    (stand_in / ".venv" / ".installed").unlink()
    with pytest.raises(FwbenchError, match="make setup"):
        rt.measure("quick", stand_in, tmp_path / "work")


def pages_with_old_blocks(repo: Path) -> None:
    (repo / "README.md").write_text("# r\n<!-- reproduce-time:start -->\nold\n<!-- reproduce-time:end -->\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "benchmarks.md").write_text("# b\n<!-- timings:start -->\nold\n<!-- timings:end -->\n")


def test_the_command_records_into_the_checkout_and_refreshes_its_pages(stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("GIVEN", str(tmp_path / "given.txt"))
    pages_with_old_blocks(stand_in)
    code = rt.main(["--profile", "quick", "--repo", str(stand_in), "--workdir", str(tmp_path / "w")])
    assert code == 0
    runs = rt.read_records(stand_in / "results" / "benchmarks" / "reproduce.csv")
    assert [r.run for r in runs] == ["cold", "warm"]
    readme = (stand_in / "README.md").read_text()
    assert "\nold\n" not in readme and "- `PROFILE=quick` (the default)" in readme and ", a fresh clone" in readme
    assert "| cold | **" in (stand_in / "docs" / "benchmarks.md").read_text()


def test_pages_only_renders_the_committed_record_and_measures_nothing(stand_in, tmp_path, monkeypatch):
    """``--pages`` (what `make readme` runs) writes the blocks from the checkout's record: no clone, no make."""
    monkeypatch.setenv("GIVEN", str(tmp_path / "given.txt"))
    pages_with_old_blocks(stand_in)
    rt.append_records([record(), record("warm", 41.0)], stand_in / "results" / "benchmarks" / "reproduce.csv")
    assert rt.main(["--pages", "--repo", str(stand_in)]) == 0
    assert not (tmp_path / "given.txt").exists()  # make reproduce never ran
    assert len(rt.read_records(stand_in / "results" / "benchmarks" / "reproduce.csv")) == 2  # nothing appended
    readme = (stand_in / "README.md").read_text()
    assert "\nold\n" not in readme and "**7 min 52 s** cold" in readme and "41 s warm" in readme
    assert "| cold | **7 min 52 s** (472 s) | <= 10 min |" in (stand_in / "docs" / "benchmarks.md").read_text()
    with pytest.raises(SystemExit):  # --pages renders the committed record only
        rt.main(["--pages", "--record", str(tmp_path / "other.csv")])


def test_the_command_says_a_refused_measurement_in_one_line(stand_in, tmp_path, capsys):
    (stand_in / ".venv" / ".installed").unlink()
    assert rt.main(["--repo", str(stand_in), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reproduce_timing: error: ") and "make setup" in err and len(err.splitlines()) == 1


def test_the_self_measurement_is_a_tool_not_part_of_fwbench():
    """The repository's measurements of itself live in tools/ (scripts that import fwbench), never in the package:
    `fwbench.reproduce_timing` and the others are gone, and no module of fwbench imports a tool."""
    for name in ("reproduce_timing", "env_build_timing", "first_screen"):
        assert importlib.util.find_spec(f"fwbench.{name}") is None, f"fwbench.{name} is importable again"
        assert (ROOT / "tools" / f"{name}.py").is_file()
    tools = {path.stem for path in (ROOT / "tools").glob("*.py")}
    importers = []
    for path in sorted((ROOT / "lib" / "fwbench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(n.split(".")[0] == "tools" or n.split(".")[0] in tools for n in names):
                importers.append(str(path.relative_to(ROOT)))
    assert not importers, f"fwbench imports a tool: {importers}"


def test_the_test_timeline_sums_each_workers_tests_by_module(tmp_path):
    """tools/pytest_timeline.py: a worker's span runs from its first start to its last end; its modules' times sum
    each test's start-to-end (a test left without an end, as in a killed run, counts nothing)."""
    timeline = load_tool("pytest_timeline")
    rows = [
        ("start", 100.0, "tests/test_a.py::x"),
        ("end", 103.5, "tests/test_a.py::x"),
        ("start", 104.0, "tests/test_b.py::y[1]"),
        ("end", 110.0, "tests/test_b.py::y[1]"),
        ("start", 110.0, "tests/test_a.py::z"),
        ("end", 111.0, "tests/test_a.py::z"),
        ("start", 111.0, "tests/test_c.py::killed"),
    ]
    (tmp_path / "gw0.tsv").write_text("".join(f"{k}\t{t:.2f}\t{n}\n" for k, t, n in rows))
    lines = timeline.summary(tmp_path)
    assert lines[0] == "gw0: span 11 s, tests summed 10 s"
    assert [line.split() for line in lines[1:]] == [["6.0", "s", "tests/test_b.py"], ["4.5", "s", "tests/test_a.py"]]
