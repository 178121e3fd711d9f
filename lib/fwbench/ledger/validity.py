"""What could make the answer wrong (the post's closing section): the threats to validity, stated from the store's
provenance and the sources' own conditions, never typed in as numbers.

- the version gap: the sources' framework versions (``published.*.CONDITIONS``) against the versions the trials ran;
- hardware: each source's hardware against this machine's CPU (claims measured on other hardware than their
  source's are labelled analogues, not verdicts);
- the math libraries: which BLAS / oneDNN build each framework used here (recorded and described by each
  framework's facts module in ``fwbench.frameworks``);
- choices where the sources are silent (the README's Assumptions section lists them with the reasons).
"""

from __future__ import annotations

import pandas as pd

from ..frameworks import get_framework
from ..published import borealis2018, deepar2024
from .data import Data
from .render import framework_versions
from .sources import CLAIMS

CHOICES = (
    "model sizes, learning rate, padding side and the classifier's time step (the 2018 post names none of them: "
    "the Keras IMDB LSTM example's are used)",
    "weight initialisation and no gradient clipping (the same in both frameworks; see the Assumptions in "
    "docs/methods.md): unclipped, either framework's training can meet a loss spike in a late epoch, so with few "
    "seeds a final loss or accuracy ratio (A8) is as much the seeds' luck as the frameworks'",
    "GluonTS defaults for the MXNet DeepAR script the 2024 post did not publish",
    "the DeepAR datasets staged here (some rebuilt from upstream sources, each row says which)",
)


def _first(trials: pd.DataFrame, column: str):
    if trials.empty or column not in trials:
        return None
    values = trials[column].dropna()
    return values.iloc[0] if len(values) else None


def _builds(d: Data) -> list[str]:
    """One line per framework: the math libraries its trials ran with (from their provenance)."""
    lines = []
    for study in ("imdb", "deepar", "vgg16"):
        t = d.study_trials(study)
        if t.empty or "provenance.framework" not in t:
            continue
        t = t[t.status == "done"]
        for framework, g in t.groupby("provenance.framework"):
            if any(line.startswith(f"  - {framework}:") for line in lines):
                continue
            text = get_framework(framework).describe_build(lambda field, rows=g: _first(rows, f"provenance.{field}"))
            lines.append(f"  - {framework}: {text}")
    return lines


def _machines(done: pd.DataFrame) -> list[str]:
    """A bullet when the trials ran on more than one machine (a run made in pieces): how many, which CPUs."""
    boots = set(done["provenance.boot_id"].dropna()) if "provenance.boot_id" in done else set()
    if len(boots) <= 1:
        return []
    cpus = sorted(set(done["provenance.cpu_id"].dropna())) if "provenance.cpu_id" in done else []
    return [
        f"- **Machines.** The trials ran on {len(boots)} machines (CPU family/model: {', '.join(cpus) or '?'}), "
        "whose speed can differ by 1.6x under one name. IMDB timing ratios are taken within a machine, setting "
        "by setting (`fwbench/machines.py`); a block split across machines is left out. Other studies' "
        "ratios pool their trials."
    ]


def threats_markdown(d: Data) -> str:
    """The closing section of the post, from the loaded rows (``Data``) and the sources."""
    trials = pd.concat([d.study_trials(s) for s in ("imdb", "deepar", "vgg16")], ignore_index=True)
    done = trials[trials.status == "done"] if not trials.empty else trials
    versions = ", ".join(f"{fw} {v}" for fw, v in framework_versions(done).items()) or "no finished trials"
    cpu = _first(done, "provenance.cpu_model") or "no finished trials"
    other_hw = sorted({c.id for c in CLAIMS if c.hardware == "gpu"})
    cores = _first(done, "provenance.cpu_count")
    cores = int(cores) if cores is not None else "?"
    parts = [
        "## What could make this answer wrong",
        f"- **Versions.** The 2018 post ran {borealis2018.CONDITIONS.split('; ')[1]}; the 2024 post does not give "
        f"its versions ({deepar2024.CONDITIONS.split('; ')[1]}). Here: {versions}. Eight years of framework "
        "releases lie between the 2018 numbers and ours: a ratio that differs may be the versions, not the "
        "frameworks' designs.",
        f"- **Hardware.** The sources measured on {borealis2018.HARDWARE} (2018), {deepar2024.HARDWARE} (2024); "
        f"this run on {cpu} ({cores} cores). Claims "
        f"{', '.join(other_hw)} depend on a GPU: on this CPU they are labelled analogues, not verdicts. B compares "
        "two CPUs, of which the post names neither the model nor the thread count.",
        *_machines(done),
        "- **Math libraries.** Each framework brings its own BLAS, oneDNN and OpenMP builds, tuned differently for "
        "this CPU; a kernel that is fast here may be slow on the sources' machines. As recorded by the trials:",
        *(_builds(d) or ["- (no finished trials record their builds)"]),
        "- **Choices where the sources are silent** (the same for both frameworks; the Assumptions in "
        "docs/methods.md give each reason): " + "; ".join(CHOICES) + ".",
        f"- **Scale.** Profile `{d.profile or 'all'}`: each claim states the smallest run that can support a "
        'verdict; below it the ledger says "below scale" and names what is missing.',
    ]
    return "\n".join(parts)
