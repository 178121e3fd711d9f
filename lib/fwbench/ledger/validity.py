"""What could make the answer wrong (the post's closing section, template ``threats``): the facts of the threats to
validity, from the store's provenance and the sources' own conditions, never typed in: the sources' framework
versions and hardware against ours, and the math libraries (BLAS / oneDNN) each framework used here, as its facts
module in ``fwbench.frameworks`` describes them.
"""

from __future__ import annotations

import pandas as pd

from ..frameworks import get_framework
from ..published import borealis2018, deepar2024
from .data import Data
from .render import framework_versions
from .sources import CLAIMS


def _first(trials: pd.DataFrame, column: str):
    if trials.empty or column not in trials:
        return None
    values = trials[column].dropna()
    return values.iloc[0] if len(values) else None


def _builds(d: Data) -> list[tuple[str, str]]:
    """Per framework (first study first): the math libraries its trials ran with."""
    builds: dict[str, str] = {}
    for study in ("imdb", "deepar", "vgg16"):
        t = d.study_trials(study)
        if t.empty or "provenance.framework" not in t:
            continue
        t = t[t.status == "done"]
        for framework, g in t.groupby("provenance.framework"):
            if framework not in builds:
                builds[framework] = get_framework(framework).describe_build(
                    lambda field, rows=g: _first(rows, f"provenance.{field}")
                )
    return list(builds.items())


def _machines(done: pd.DataFrame) -> dict | None:
    """When the trials ran on more than one machine (a run made in pieces): how many, and their CPUs."""
    boots = set(done["provenance.boot_id"].dropna()) if "provenance.boot_id" in done else set()
    if len(boots) <= 1:
        return None
    cpus = sorted(set(done["provenance.cpu_id"].dropna())) if "provenance.cpu_id" in done else []
    return {"n": len(boots), "cpus": cpus}


def threats_facts(d: Data) -> dict:
    """The sources' versions and hardware, ours (``versions``: (framework, versions); the CPU model and cores, None
    without finished trials), the GPU claims, the machines (None: one), each framework's build and the profile."""
    trials = pd.concat([d.study_trials(s) for s in ("imdb", "deepar", "vgg16")], ignore_index=True)
    done = trials[trials.status == "done"] if not trials.empty else trials
    cores = _first(done, "provenance.cpu_count")
    return {
        "source_versions": {
            "2018": borealis2018.CONDITIONS.split("; ")[1],
            "2024": deepar2024.CONDITIONS.split("; ")[1],
        },
        "source_hardware": {"2018": borealis2018.HARDWARE, "2024": deepar2024.HARDWARE},
        "versions": list(framework_versions(done).items()),
        "cpu": _first(done, "provenance.cpu_model"),
        "cores": int(cores) if cores is not None else None,
        "gpu_claims": sorted({c.id for c in CLAIMS if c.hardware == "gpu"}),
        "machines": _machines(done),
        "builds": _builds(d),
        "profile": d.profile,
    }
