"""Timing an environment's build (``tools/env_build_timing.py``): what is built where, the record, the README
sentence. The real builds are the benchmark (``make time-envs``); here the builder is replaced by one that records
what it was asked, so the test checks the measurement's procedure, not a duration."""

from __future__ import annotations

import os

import pytest
from conftest import load_tool

from fwbench import environments, generated_blocks
from fwbench.errors import FwbenchError

env_build_timing = load_tool("env_build_timing")


@pytest.fixture
def declared(tmp_path):
    folder = tmp_path / "decl" / "toy-env"
    folder.mkdir(parents=True)
    (folder / "requirements.in").write_text("# purpose: a test's\nsix\n")
    (folder / "requirements.lock").write_text("six==1.16.0\n")
    env = environments.register_environment(folder)
    yield env
    environments._EXTRA.pop(env.name, None)


def test_each_tool_builds_a_copy_cold_then_warm_with_its_own_cache(declared, monkeypatch):
    calls = []

    def fake_build(env, tool="auto", log=print):
        cache = os.environ[env_build_timing.CACHE_VARIABLE[tool]]
        calls.append((tool, env.folder, cache, sorted(p.name for p in env.folder.iterdir())))
        return 1.5

    monkeypatch.setattr(environments, "build", fake_build)
    monkeypatch.setattr(environments, "uv_path", lambda: "/usr/bin/uv")
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    rows = env_build_timing.measure("toy-env", tools=("uv", "pip"), log=lambda line: None)
    assert [(r["tool"], r["cache"]) for r in rows] == [("uv", "cold"), ("uv", "warm"), ("pip", "cold"), ("pip", "warm")]
    assert all(r["wall_s"] == 1.5 and r["lock"] == declared.lock_hash() and r["env"] == "toy-env" for r in rows)
    assert all(folder != declared.folder for _, folder, _, _ in calls)  # a copy, never the declared folder
    assert calls[0][3] == ["requirements.in", "requirements.lock"]
    assert calls[0][2] == calls[1][2] != calls[2][2] == calls[3][2]  # warm reuses the cold build's cache, per tool
    assert "UV_CACHE_DIR" not in os.environ  # restored
    assert not (declared.folder / ".venv").exists()


def test_bad_requests_are_refused_in_one_line(declared, monkeypatch):
    with pytest.raises(FwbenchError, match="'main' is built by 'make setup'"):
        env_build_timing.measure("main")
    with pytest.raises(FwbenchError, match="unknown tool 'conda'"):
        env_build_timing.measure("toy-env", tools=("conda",))
    monkeypatch.setattr(environments, "uv_path", lambda: None)
    with pytest.raises(FwbenchError, match="uv is not installed"):
        env_build_timing.measure("toy-env", tools=("uv",))


def test_the_readme_sentence_is_the_latest_measurement(tmp_path):
    record = tmp_path / "env-build.csv"
    old = {"date": "2026-01-01", "commit": "aaaaaaa", "cpu": "Old CPU", "cores": 2, "env": "gluonts-0.13"}
    new = {"date": "2026-02-01", "commit": "bbbbbbb", "cpu": "New CPU", "cores": 2, "env": "gluonts-0.13"}
    env_build_timing.append_record(
        [
            {**old, "tool": "uv", "cache": "cold", "wall_s": 99.0},
            {**new, "tool": "uv", "cache": "cold", "wall_s": 20.4, "other_cpu_pct": 1.2},
            {**new, "tool": "uv", "cache": "warm", "wall_s": 9.6, "other_cpu_pct": 0.8},
            {**new, "tool": "pip", "cache": "cold", "wall_s": 70.2, "other_cpu_pct": 2.0},
        ],
        record,
    )
    text = env_build_timing.render_phrase(record)
    assert "20 s with uv (empty cache, 10 s with its cache filled) and 70 s with pip (empty cache)" in text
    assert "New CPU (2 cores), 2026-02-01 at commit bbbbbbb" in text and "99" not in text
    assert "at most 2 % of the CPUs" in text and "not alone" not in text
    env_build_timing.append_record(
        [{**new, "commit": "ccccccc", "tool": "uv", "cache": "cold", "wall_s": 30.0, "other_cpu_pct": 60.0}], record
    )
    assert "**not alone on the machine**" in env_build_timing.render_phrase(record)
    assert "not been timed" in env_build_timing.render_phrase(record, name="jax")


def test_the_readme_states_the_recorded_build_times():
    """The README's sentence is what the committed record says (`make time-envs` rewrites it; `make readme`, with
    `tools/env_build_timing.py --pages`, too): a time typed by hand, or a record added without it, fails here."""
    assert env_build_timing.BLOCKS == {"env-build-time": env_build_timing.render_phrase}
    readme = env_build_timing.REPO_ROOT / "README.md"
    assert env_build_timing.README == readme
    start, end = generated_blocks.markers("env-build-time")
    content = readme.read_text()
    block = content[content.index(start) + len(start) : content.index(end)].strip("\n")
    assert block == env_build_timing.render_phrase(env_build_timing.RECORD), "run `make readme` (env-build-time)"


@pytest.fixture
def pages(tmp_path, monkeypatch):
    """A README with an old ``env-build-time`` block and a record the tool takes for the committed one."""
    readme, record = tmp_path / "README.md", tmp_path / "results" / "env-build.csv"
    readme.write_text("# r\n<!-- env-build-time:start -->\nold\n<!-- env-build-time:end -->\n")
    monkeypatch.setattr(env_build_timing, "README", readme)
    monkeypatch.setattr(env_build_timing, "RECORD", record)
    return readme, record


def fake_builds(monkeypatch, seconds=2.4):
    monkeypatch.setattr(environments, "build", lambda env, tool="auto", log=print: seconds)
    monkeypatch.setattr(environments, "uv_path", lambda: "/usr/bin/uv")


def test_a_measurement_with_the_default_record_refreshes_the_readme(declared, pages, monkeypatch):
    readme, record = pages
    fake_builds(monkeypatch)
    assert env_build_timing.main(["toy-env", "--tools", "pip"]) == 0
    rows = env_build_timing.read_record(record)
    assert [(r["env"], r["tool"], r["cache"], r["wall_s"]) for r in rows] == [
        ("toy-env", "pip", "cold", "2.4"),
        ("toy-env", "pip", "warm", "2.4"),
    ]
    assert "\nold\n" not in readme.read_text()  # the block was rewritten (for gluonts-0.13, the README's)
    assert env_build_timing.render_phrase(record) in readme.read_text()


def test_a_measurement_into_another_record_leaves_the_pages_alone(declared, pages, tmp_path, monkeypatch):
    readme, record = pages
    fake_builds(monkeypatch)
    elsewhere = tmp_path / "elsewhere.csv"
    assert env_build_timing.main(["toy-env", "--tools", "uv", "--record", str(elsewhere)]) == 0
    assert [r["tool"] for r in env_build_timing.read_record(elsewhere)] == ["uv", "uv"]
    assert not record.exists() and "\nold\n" in readme.read_text()


def test_pages_only_renders_the_committed_record_and_builds_nothing(pages, monkeypatch):
    readme, record = pages
    monkeypatch.setattr(environments, "build", lambda *a, **k: pytest.fail("--pages must build nothing"))
    env_build_timing.append_record(
        [
            {
                "date": "2026-02-01",
                "commit": "bbbbbbb",
                "cpu": "New CPU",
                "cores": 2,
                "env": "gluonts-0.13",
                "tool": "uv",
                "cache": "cold",
                "wall_s": 20.4,
                "other_cpu_pct": 1.2,
            }
        ],
        record,
    )
    assert env_build_timing.main(["--pages"]) == 0
    text = readme.read_text()
    assert "\nold\n" not in text and "20 s with uv (empty cache)" in text and "New CPU (2 cores)" in text
    assert len(env_build_timing.read_record(record)) == 1  # nothing appended
    with pytest.raises(SystemExit):  # --pages renders the committed record only
        env_build_timing.main(["--pages", "--record", str(record)])


def test_the_command_says_a_refused_request_in_one_line(capsys):
    assert env_build_timing.main(["main"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("env_build_timing: error: ") and "make setup" in err and len(err.splitlines()) == 1
