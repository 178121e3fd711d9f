"""Study registry. A study module defines (framework-free, importable in the parent):

- ``PROFILES``: ``{profile: {option: value}}``;
- ``OPTIONS``: ``{option: validator}`` for the overrides users may pass (CLI flags, notebook parameters);
- ``grid(options) -> list[config]``: the trials of a profile, each config a JSON-able dict;
- ``describe(config) -> str``: a short label for progress lines;
- ``run_trial(config) -> dict``: executed in a fresh child process only (it imports one framework);
- optionally ``preflight(options)``: run in the parent before any trial (data present and readable).
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import FwbenchError

STUDIES = {"imdb": "fwbench.studies.imdb", "deepar": "fwbench.studies.deepar"}
STUDIES.update(vgg16="fwbench.studies.vgg16", gemm="fwbench.studies.gemm", onnx="fwbench.studies.onnx")  # issue 6
STUDIES["selftest"] = "fwbench.studies.selftest"  # harness self-test (tests only), not part of the study


def get_study(name: str) -> ModuleType:
    if name not in STUDIES:
        raise FwbenchError(f"unknown study {name!r}; choose one of: {', '.join(sorted(STUDIES))}")
    return importlib.import_module(STUDIES[name])
