"""The data directory is read-only to fwbench: derived files go to the user cache dir, never beside the data.

Tests run as root, so permissions prove nothing: the slow test runs real smoke trials on a data dir mirrored
from the staged one (real folders, every file a symlink: the 80 MB IMDB archive is not copied) and compares
every name, size and mtime under it before and after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from fwbench import paths


def test_cache_defaults_to_the_user_cache_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("FWBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path / "data"))
    assert paths.cache_dir() == tmp_path / "xdg" / "fwbench" / "derived"
    assert not (tmp_path / "data").exists()
    monkeypatch.setenv("FWBENCH_CACHE_DIR", str(tmp_path / "mine"))
    assert paths.cache_dir() == tmp_path / "mine" and (tmp_path / "mine").is_dir()


def mirror(src: Path, dest: Path) -> None:
    """``dest`` gets ``src``'s folders; each file is a symlink to the original."""
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        dirs[:] = [d for d in dirs if d != ".fwbench-cache"]  # an old default cache left in the staged data
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            (dest / rel / name).symlink_to(Path(root) / name)


def listing(root: Path) -> dict:
    """Every entry under ``root`` (hidden ones too): the link itself and, through it, the file it points to."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            link, target = path.lstat(), path.stat()
            out[str(path.relative_to(root))] = (link.st_mtime_ns, target.st_size, target.st_mtime_ns)
    out["."] = root.stat().st_mtime_ns
    return out


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED_DATA / "imdb").is_dir(), reason="needs the staged datasets")
def test_a_run_writes_nothing_into_the_data_dir(tmp_path):
    data = tmp_path / "data"
    mirror(SHARED_DATA, data)
    before = listing(data)
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "FWBENCH_CACHE_DIR"}
    env.update(
        FWBENCH_DATA_DIR=str(data),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        FWBENCH_RESULTS=str(tmp_path / "results.sqlite"),
        FWBENCH_OFFLINE="1",
        MPLBACKEND="agg",
    )
    runs = [
        [
            "run",
            "imdb",
            "--profile",
            "smoke",
            "--set",
            "arms=['torch-eager']",
            "--set",
            "workers=[0]",
            "--set",
            "extra_arms=[]",
            "--set",
            "scaling=False",
        ],
        # one trial: the smoke profile's versions part (the same trial under gluonts 0.13.3) is another test's
        ["run", "deepar", "--profile", "smoke", "--set", "arms=['torch-eager']", "--set", "versions_part=False"],
    ]
    for args in runs:
        proc = subprocess.run(
            [sys.executable, "-m", "fwbench.cli", *args, "--progress", "lines"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 run now, 0 failed" in proc.stdout, proc.stdout
    assert listing(data) == before, "a run changed the data directory"
    assert list((home / ".cache" / "fwbench" / "derived").glob("imdb-*.npz")), "the encoded IMDB arrays went elsewhere"
