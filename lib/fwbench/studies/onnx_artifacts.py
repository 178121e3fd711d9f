"""Where the ``onnx`` study keeps the export step's files, and their rebuild when a runtime step finds them
missing (another machine, a cleaned folder): the export step runs in a separate (torch) process first.

Artifacts live in ``<FWBENCH_ARTIFACTS or the results store's folder/artifacts>/onnx/<export trial id>/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def artifacts_root() -> Path:
    from ..paths import results_path

    env = os.environ.get("FWBENCH_ARTIFACTS")
    return Path(env).expanduser() if env else results_path().parent / "artifacts"


def artifacts_dir(export: dict) -> Path:
    """One folder per export config and code version (files made by other code are never reused)."""
    from ..store import trial_id
    from .registry import get_study

    return artifacts_root() / "onnx" / trial_id("onnx", export, get_study("onnx").code_version())


ARTIFACT_FILES = ("model.onnx", "model-legacy.onnx", "tokens.npy", "labels.npy", "torch_logits.npy", "meta.json")


def _have_artifacts(directory: Path) -> bool:
    return all((directory / name).exists() for name in ARTIFACT_FILES)


def _ensure_artifacts(export: dict, report=None) -> bool:
    """The export step's files; rebuilt in a separate (torch) process when missing. True if rebuilt."""
    directory = artifacts_dir(export)
    if _have_artifacts(directory):
        return False
    if report:
        report(f"artifacts missing in {directory}: running the export step in a separate process")
    proc = subprocess.run(
        [sys.executable, "-m", "fwbench.studies.onnx_steps", "export", json.dumps(export)],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0 or not _have_artifacts(directory):
        raise RuntimeError(f"could not rebuild the ONNX artifacts in {directory}: {proc.stderr[-2000:]}")
    return True
