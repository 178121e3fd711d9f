"""The pinned environment: one lock file, mirrored in environment.yml, with the versions the study needs."""

from __future__ import annotations

import re

from conftest import REPO


def _pins(lines):
    matches = (re.match(r"\s*-?\s*([A-Za-z0-9_.\-]+)==(\S+)", line) for line in lines)
    return {m.group(1).lower(): m.group(2) for m in matches if m}


def test_lock_pins_everything_exactly_with_the_study_versions():
    text = (REPO / "requirements.lock").read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    pins = _pins(lines)
    assert len(pins) == len(lines), "every line of requirements.lock is NAME==VERSION"
    assert pins["numpy"] == "1.23.5" and pins["mxnet"] == "1.9.1" and pins["torch"] == "2.13.0"
    assert pins["gluonts"] == "0.17.0"
    for name in ("papermill", "nbconvert", "jupyterlab", "pandas", "matplotlib", "seaborn", "distributed"):
        assert name in pins


def test_environment_yml_mirrors_the_lock():
    lock = _pins((REPO / "requirements.lock").read_text().splitlines())
    env_text = (REPO / "environment.yml").read_text()
    assert "python=3.11" in env_text
    assert _pins(env_text.splitlines()) == lock


def test_installed_numpy_is_the_pinned_one():
    import numpy

    assert numpy.__version__ == "1.23.5"
