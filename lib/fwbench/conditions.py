"""The conditions a whole run is measured under, beyond its profile: the CPU model and the subnormal mode.

A profile says what to run; a condition says under what. Both are config keys (so part of a trial's id), given as
overrides of any study (``--set fp_mode=flush``, ``--set cpu=this``) and split off before the study sees them:

- ``fp_mode`` (``fwbench.floatmode``): ``default`` (the libraries' own choice) or ``flush`` (FTZ and DAZ set before
  the framework's import, checked in its threads).
- ``cpu``: the CPU model the trial must run on (``vendor/family/model`` as ``provenance.cpu_key`` spells it;
  ``this``: this machine's). The trial process refuses another model's machine (the local runner refuses the
  whole run first), so a piece for an Intel Xeon never lands in the store from an AMD EPYC.

Decision (identity): at their defaults neither key is written into the config, so every trial stored before
conditions existed keeps its id; those record their CPU model in their provenance, and the analysis keeps one model
per timing comparison (``machines.one_cpu_model``). The same grid measured on another CPU model is a run with
``cpu`` named: other ids, never resumed from the first CPU's rows, and selected as a condition of its own.
"""

from __future__ import annotations

import re

from .errors import FwbenchError
from .floatmode import DEFAULT, check_mode
from .provenance import this_cpu

CONDITION_KEYS = ("cpu", "fp_mode")
# A profile's own condition, where it has one. Decision: the IMDB study's quick profile (``make reproduce``'s
# default) and smoke profile (the tests' notebooks) run flushed on every CPU. On the Intel Xeon boots the
# libraries' default (subnormals kept through the 500-step LSTM backward pass) makes their trials several times
# slower (the quick notebook took 20 min there; a smoke epoch of two batches 10-25 s), and both are meant to take
# minutes; on AMD EPYC flushing is not expected to matter (measured where that piece has run). What subnormals
# cost is measured in the paper profile, in both modes, per CPU model; the tests of the default mode name it.
PROFILE_CONDITIONS = {("imdb", "quick"): {"fp_mode": "flush"}, ("imdb", "smoke"): {"fp_mode": "flush"}}
THIS = "this"
_CPU = re.compile(r"^[A-Za-z]+/\d+/\d+$")


def check_cpu(value) -> str:
    if not isinstance(value, str) or not _CPU.match(value):
        raise FwbenchError(f"cpu must be vendor/family/model (e.g. GenuineIntel/6/85) or {THIS!r}, got {value!r}")
    return value


def split(overrides: dict | None) -> tuple[dict, dict | None]:
    """(the condition: the config keys it adds, the study's own overrides). ``cpu=this`` is resolved to this
    machine's model; a default value adds no key."""
    if not overrides:
        return {}, overrides
    condition = {}
    if overrides.get("cpu") is not None:
        cpu = overrides["cpu"]
        condition["cpu"] = check_cpu(this_cpu() if cpu == THIS else cpu)
    mode = check_mode(overrides.get("fp_mode", DEFAULT))
    if mode != DEFAULT:
        condition["fp_mode"] = mode
    rest = {k: v for k, v in overrides.items() if k not in CONDITION_KEYS}
    return condition, rest


def of_run(study: str, profile: str, overrides: dict | None) -> dict:
    """The condition of a run: the profile's own (``PROFILE_CONDITIONS``), then what the overrides name (an
    override wins: ``--set fp_mode=default`` measures the quick profile at the libraries' default)."""
    named = split(overrides)[0]
    out = {**PROFILE_CONDITIONS.get((study, profile), {}), **named}
    if overrides and check_mode(overrides.get("fp_mode", DEFAULT)) == DEFAULT and "fp_mode" in overrides:
        out.pop("fp_mode", None)  # asked for the default explicitly
    return out


def study_overrides(overrides: dict | None) -> dict | None:
    """The overrides a study resolves (the condition's keys taken out)."""
    return split(overrides)[1]


def require_cpu(config: dict) -> None:
    """Refuse a config that names another CPU model than this machine's."""
    wanted = config.get("cpu")
    if wanted is not None and wanted != this_cpu():
        raise FwbenchError(f"this trial is for CPU {wanted}; this machine is {this_cpu()}: run it on a {wanted}")
