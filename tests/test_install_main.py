"""Building ``.venv`` (``tools/install_main.py``, what ``make setup`` runs before anything is installed): uv from
the lock's own pin, pip only where uv cannot be had. The real build is what CI's clean clone does; here the steps
are checked without installing anything."""

from __future__ import annotations

from pathlib import Path

from conftest import load_tool

REPO = Path(__file__).resolve().parents[1]


def test_uv_comes_from_the_locks_own_pin_and_pip_only_where_it_cannot_be_had(tmp_path, monkeypatch):
    tool = load_tool("install_main")
    assert tool.uv_pin(REPO / "requirements.lock").startswith("uv==")  # the lock pins uv: the build is uv's
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==1.23.5\n")
    assert tool.uv_pin(lock) is None
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setattr(tool.shutil, "which", lambda name: None)
    assert tool.find_uv(venv, lock) is None  # no uv on PATH, none in the venv, none pinned: pip builds it
    (venv / "bin" / "uv").write_text("")
    assert tool.find_uv(venv, lock) == str(venv / "bin" / "uv")  # one already in the venv is used
    monkeypatch.setattr(tool.shutil, "which", lambda name: "/usr/bin/uv" if name == "uv" else None)
    monkeypatch.setattr(tool.Path, "exists", lambda self: True)
    assert tool.find_uv(venv, lock) == "/usr/bin/uv"  # uv on PATH comes first


def test_the_makefile_builds_the_venv_with_the_tool():
    rule = (REPO / "Makefile").read_text()
    assert "tools/install_main.py --venv $(VENV) --lock requirements.lock --constraints constraints.txt" in rule
    assert "pip install --quiet -r requirements.lock" not in rule  # no second, pip-only path beside it
