"""Declared environments (issue 23): a trial runs with its environment's interpreter and says so in its
provenance; a missing, stale or unknown environment stops the run with one line before any trial."""

from __future__ import annotations

import importlib
import json
import re
import sqlite3

import pytest
from conftest import REPO

from fwbench import cli, environments
from fwbench.errors import FwbenchError
from fwbench.planning import plan
from fwbench.runner import run_sweep
from fwbench.studies import get_study

# the tiny environment: what a trial process imports, pinned as in main's lock, but another platformdirs
TINY_PACKAGES = ("numpy", "pandas", "scipy", "psutil", "python-dateutil", "pytz", "tzdata", "six")
TINY_PLATFORMDIRS = "4.2.0"

DECLARATION = """
from fwbench.studies.registry import Arm, Study, register


def run_trial(config, report=None):
    import platformdirs

    return {{"summary": {{"platformdirs": platformdirs.__version__}}, "measurements": [(-1, "value", 1.0)],
            "provenance": {{}}}}


STUDY = register(Study(
    name="{name}", title="environment toy", module=__name__, profiles={{"smoke": {{}}}}, options={{}},
    grid=lambda options: [{{"arm": "only", "threads": 1}}], run_trial=run_trial, describe=str,
    arms=(Arm("only", "none", None, "plain", "toy", "#000000", env="{env}"),), hidden=True))
"""


def _main_pins() -> dict:
    text = (REPO / "requirements.lock").read_text()
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"^([A-Za-z0-9_.\-]+)==(\S+)", text, re.M)}


def _declare_env(tmp_path, name="tiny"):
    folder = tmp_path / "envs" / name
    folder.mkdir(parents=True)
    pins = _main_pins()
    assert pins["platformdirs"] != TINY_PLATFORMDIRS  # it differs from main in this one package
    (folder / "requirements.in").write_text(
        "# purpose: a test's environment: main's pins, another platformdirs\n"
        "# check: import numpy, pandas, platformdirs\n"
        + "".join(f"{p}\n" for p in TINY_PACKAGES)
        + f"platformdirs=={TINY_PLATFORMDIRS}\n"
    )
    (folder / "requirements.lock").write_text(
        "".join(f"{p}=={pins[p]}\n" for p in TINY_PACKAGES) + f"platformdirs=={TINY_PLATFORMDIRS}\n"
    )
    return environments.register_environment(folder)


def _declare_study(tmp_path, monkeypatch, name, env):
    package = f"envtoy_{name.replace('-', '_')}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "declaration.py").write_text(DECLARATION.format(name=name, env=env))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(f"{package}.declaration")
    return get_study(name)


@pytest.fixture(autouse=True)
def _forget_registered_envs():
    yield
    environments._EXTRA.clear()


def test_main_and_the_declared_envs_are_listed(capsys):
    envs = environments.all_environments()
    assert list(envs)[0] == "main" and "gluonts-0.13" in envs and "jax" in envs
    g = envs["gluonts-0.13"]
    assert g.purpose and "gluonts" in g.packages() and g.lock_hash() == environments.lock_hash(g.lock)
    assert cli.main(["envs"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^gluonts-0\.13\s+(built|missing|stale)\s+lock [0-9a-f]{12}", out, re.M), out


def test_an_unknown_environment_in_an_arm_is_refused(tmp_path, monkeypatch):
    _declare_study(tmp_path, monkeypatch, "envtoy-unknown", "no-such-env")
    with pytest.raises(FwbenchError, match=r"arm 'only'.*unknown environment 'no-such-env'; declared: main"):
        plan("envtoy-unknown", "smoke")


def test_a_missing_environment_stops_the_run_before_any_trial(tmp_path, monkeypatch, tmp_store):
    env = _declare_env(tmp_path, "tiny-missing")
    _declare_study(tmp_path, monkeypatch, "envtoy-missing", env.name)
    assert env.state() == "missing"
    with pytest.raises(FwbenchError, match=r"environment 'tiny-missing' is not built .*run 'fwbench envs --build"):
        run_sweep("envtoy-missing", "smoke", progress="none")
    assert not tmp_store.exists()  # nothing stored: not even the store file
    assert cli.main(["run", "envtoy-missing", "--profile", "smoke", "--progress", "none"]) == 2


def test_a_stale_environment_stops_the_run(tmp_path, monkeypatch, tmp_store):
    env = _declare_env(tmp_path, "tiny-stale")
    _declare_study(tmp_path, monkeypatch, "envtoy-stale", env.name)
    (env.venv / "bin").mkdir(parents=True)
    (env.venv / "bin" / "python").symlink_to("/bin/true")
    (env.venv / environments.STAMP).write_text(env.lock_hash())
    assert env.state() == "built"
    env.lock.write_text(env.lock.read_text() + "# relocked\n")  # the lock changed since the build
    assert env.state() == "stale"
    with pytest.raises(FwbenchError, match=r"environment 'tiny-stale' is stale .*run 'fwbench envs --build"):
        run_sweep("envtoy-stale", "smoke", progress="none")
    assert not tmp_store.exists()


def test_a_non_main_environment_enters_the_trial_id_and_main_does_not(tmp_path, monkeypatch):
    env = _declare_env(tmp_path, "tiny-id")
    study = _declare_study(tmp_path, monkeypatch, "envtoy-id", env.name)
    (trial,) = plan(study.name, "smoke")
    assert trial.config["env"] == "tiny-id" and trial.config["env_lock"] == env.lock_hash()
    (selftest,) = plan("selftest", "smoke", {"n_trials": 1})
    assert "env" not in selftest.config and selftest.env == "main"  # a main trial's config (so its id) as before
    env.lock.write_text(env.lock.read_text() + "# relocked\n")
    (relocked,) = plan(study.name, "smoke")
    assert relocked.trial_id != trial.trial_id  # a relocked environment: another trial


def test_a_trial_runs_in_its_environment_and_records_its_versions(tmp_path, monkeypatch, tmp_store):
    env = _declare_env(tmp_path, "tiny")
    _declare_study(tmp_path, monkeypatch, "envtoy-run", env.name)
    environments.build(env, log=lambda line: None)
    assert env.state() == "built" and (env.venv / environments.STAMP).read_text().strip() == env.lock_hash()
    summary = run_sweep("envtoy-run", "smoke", progress="none")
    assert summary.ok and summary.done == 1, summary.failed
    with sqlite3.connect(tmp_store) as conn:
        row = conn.execute("SELECT provenance, summary FROM trials WHERE study='envtoy-run'").fetchone()
    provenance, result = row
    provenance, result = json.loads(provenance), json.loads(result)
    assert result["platformdirs"] == TINY_PLATFORMDIRS  # the trial imported the environment's package
    assert provenance["env"] == "tiny" and provenance["env_lock"] == env.lock_hash()
    assert provenance["env_versions"]["platformdirs"] == TINY_PLATFORMDIRS
    assert provenance["env_versions"]["numpy"] == _main_pins()["numpy"]


def test_hosts_whose_environment_is_not_ready_are_named_before_any_trial():
    ready = {"gluonts-0.13": ("built", "aaa")}
    environments.require_built_where({"a": ready, "b": ready}, {"gluonts-0.13": "aaa"})  # all ready: no error
    answers = {
        "a": ready,
        "b": {"gluonts-0.13": ("missing", "aaa")},
        "c": {"gluonts-0.13": ("built", "bbb")},  # built from another lock than the plan's
        "d": {},  # does not declare it
    }
    with pytest.raises(FwbenchError) as err:
        environments.require_built_where(answers, {"gluonts-0.13": "aaa"})
    line = str(err.value)
    assert "\n" not in line and "'make envs'" in line and "no trial was sent" in line
    assert "'gluonts-0.13' missing on b" in line and "locked bbb there, aaa here on c" in line
    assert "'gluonts-0.13' undeclared on d" in line and " on a" not in line


def test_each_host_reports_its_own_environment_states(tmp_path):
    env = _declare_env(tmp_path, "tiny-states")
    states = environments.states_here(["main", "tiny-states", "no-such-env"])
    assert states["main"][0] == "built" and states["tiny-states"] == ("missing", env.lock_hash())
    assert states["no-such-env"] == ("undeclared", None)


def test_a_dask_sweep_is_refused_before_any_trial_when_a_worker_lacks_the_environment(tmp_path, monkeypatch, tmp_store):
    """The environment is declared here but not on the workers (their checkout does not have it): the sweep stops
    with one line before a trial is sent, instead of the workers storing every trial as failed."""
    distributed = pytest.importorskip("distributed")
    env = _declare_env(tmp_path, "tiny-here-only")
    _declare_study(tmp_path, monkeypatch, "envtoy-dask", env.name)
    with distributed.LocalCluster(
        host="127.0.0.1", processes=True, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        with pytest.raises(
            FwbenchError,
            match=r"environment 'tiny-here-only' undeclared on 127\.0\.0\.1: run 'fwbench envs --build tiny-here-only'",
        ):
            run_sweep("envtoy-dask", "smoke", progress="none", scheduler=cluster.scheduler_address)
    assert not tmp_store.exists()  # nothing stored
