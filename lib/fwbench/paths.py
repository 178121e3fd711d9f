"""Where data and results live, steered by environment variables.

- ``FWBENCH_DATA_DIR``: datasets are looked up (and downloaded) here. Default: the user cache dir
  (``~/.cache/fwbench/data`` on Linux).
- ``FWBENCH_CACHE_DIR``: derived artefacts (encoded IMDB arrays). Default: the user cache dir
  (``platformdirs.user_cache_dir("fwbench")/derived``, ``~/.cache/fwbench/derived`` on Linux). Decision: the
  data directory is treated as read-only (a shared or mounted dataset), so nothing is ever written there;
  the cached files are keyed by their source's checksum, so one cache serves any data dir.
- ``FWBENCH_REFERENCE_DIR``: the published numbers the studies are checked against (``shared/reference``).
  Default: ``reference`` beside the data dir (``<data dir>/../reference``), where the project stages both.
- ``FWBENCH_RESULTS``: the SQLite results store. Default: ``results/fwbench.sqlite`` under the repo
  (or the current directory when fwbench is installed elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from .errors import FwbenchError

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    env = os.environ.get("FWBENCH_DATA_DIR")
    return Path(env).expanduser().resolve() if env else Path(platformdirs.user_cache_dir("fwbench")) / "data"


def reference_dir() -> Path:
    """The folder of published reference numbers; a missing one is a one-line error naming the path looked at."""
    env = os.environ.get("FWBENCH_REFERENCE_DIR")
    path = Path(env).expanduser().resolve() if env else (data_dir().parent / "reference").resolve()
    if not path.is_dir():
        how = "FWBENCH_REFERENCE_DIR" if env else "the data dir's sibling (FWBENCH_DATA_DIR/../reference)"
        raise FwbenchError(
            f"no reference folder at {path} (from {how}); set FWBENCH_REFERENCE_DIR to the folder "
            "holding the published numbers (shared/reference)"
        )
    return path


def cache_dir() -> Path:
    env = os.environ.get("FWBENCH_CACHE_DIR")
    path = Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("fwbench")) / "derived"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FwbenchError(
            f"cannot create the cache folder {path} ({exc.strerror}); set FWBENCH_CACHE_DIR to a folder you can write"
        ) from None
    return path


def results_path() -> Path:
    env = os.environ.get("FWBENCH_RESULTS")
    if env:
        return Path(env).expanduser().resolve()
    root = REPO_ROOT if (REPO_ROOT / "pyproject.toml").exists() else Path.cwd()
    return root / "results" / "fwbench.sqlite"


def figures_dir() -> Path:
    env = os.environ.get("FWBENCH_FIGURES")
    return Path(env).expanduser() if env else REPO_ROOT / "figures"
