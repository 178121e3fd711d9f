"""Is ``fwbench estimate`` right? A prediction saved before a run (``fwbench estimate ... --save FILE``) set
against what the run then measured (``fwbench estimate --check FILE``).

The prediction file is written before the trials it predicts exist, so the comparison cannot be fitted after the
fact. The check joins it with the store's done trials by trial id (so a trial measured with other code does not
match). Trials flagged ``busy_machine`` are counted apart and left out of the error: they measure the neighbours.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path

import pandas as pd

from ..errors import FwbenchError
from ..planning import plan
from ..studies import get_study

FORMAT = "fwbench-estimate-prediction/1"
COLUMNS = ["study", "group", "planned_trials", "measured_trials", "busy_trials", "predicted_s", "measured_s", "error",
           "median_trial_error"]  # fmt: skip


def save_prediction(estimate, path: Path, store) -> dict:
    """Add ``estimate`` (an ``estimate.Estimate``) to the prediction file at ``path`` (one entry per study and
    profile; an older entry of the same pair is replaced). Returns the entry."""
    arm_field = get_study(estimate.study).arm_field
    arms = {t.trial_id: str(t.config[arm_field]) for t in plan(estimate.study, estimate.profile)}
    trials = store.trials(estimate.study)
    done = trials[trials.status == "done"] if not trials.empty else trials
    shas = sorted(set(done["provenance.git_sha"].dropna())) if "provenance.git_sha" in done else []
    entry = {
        "study": estimate.study,
        "profile": estimate.profile,
        "made_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "fitted_on": {"store": str(store.path), "trials": int(len(done)), "git_shas": shas},
        "model": estimate.model,
        "capped_s": estimate.total_s,
        "expected_s": estimate.expected_s,
        "per_trial": {
            tid: {"predicted_s": round(float(s), 3), "arm": arms.get(tid, "")} for tid, s in estimate.per_trial.items()
        },
    }
    path = Path(path)
    data = _read(path) if path.exists() else {"format": FORMAT, "predictions": []}
    others = [p for p in data["predictions"] if (p["study"], p["profile"]) != (estimate.study, estimate.profile)]
    data["predictions"] = others + [entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return entry


def _read(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise FwbenchError(
            f"no prediction file at {path}; write one with `fwbench estimate STUDY --workers 1 "
            f"--profile PROFILE --save {path}` before the run"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FwbenchError(f"{path} is not a prediction file (not JSON: {e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("predictions"), list):
        raise FwbenchError(f"{path} is not a prediction file (format {FORMAT!r} expected)")
    return data


def check_prediction(path: Path, store) -> pd.DataFrame:
    """One row per study and arm of the prediction file, one ``all`` row per study, and, where the trials record
    their machine (``provenance.boot_id``), one row per machine that ran them, its ``group`` (CPU id, boot id's
    first 8 characters; both empty where not recorded): the same VM name can be 1.6x faster on one day than on
    another (columns ``COLUMNS``)."""
    rows = []
    for entry in _read(path)["predictions"]:
        study, predicted = entry["study"], entry["per_trial"]
        frame = pd.DataFrame(
            {
                "trial_id": list(predicted),
                "predicted_s": [p["predicted_s"] for p in predicted.values()],
                "group": [p["arm"] for p in predicted.values()],
            }
        )
        trials = _under_predicted_ids(store.trials(study), set(predicted))
        if not trials.empty:
            trials = trials[(trials.status == "done") & trials["provenance.trial_wall_s"].notna()]
        machines = not trials.empty and "provenance.boot_id" in trials
        if trials.empty:
            frame = frame.assign(measured_s=math.nan, busy=False)
        else:
            busy = trials["provenance.busy_machine"].eq(True) if "provenance.busy_machine" in trials else False
            measured = pd.DataFrame(
                {"trial_id": trials.trial_id, "measured_s": trials["provenance.trial_wall_s"], "busy": busy}
            )
            if machines:
                cpu = trials["provenance.cpu_id"] if "provenance.cpu_id" in trials else [None] * len(trials)
                boot = [b[:8] if isinstance(b, str) else "" for b in trials["provenance.boot_id"]]
                measured["machine"] = [(c if isinstance(c, str) and b else "", b) for c, b in zip(cpu, boot)]
            frame = frame.merge(measured, on="trial_id", how="left")
        groups = [*frame.groupby("group"), ("all", frame)]
        if machines:
            groups += list(frame[frame.measured_s.notna()].groupby("machine"))
        rows += [_check_row(study, group, part) for group, part in groups]
    return pd.DataFrame(rows, columns=COLUMNS)


def _under_predicted_ids(trials: pd.DataFrame, predicted: set) -> pd.DataFrame:
    """The trials a prediction named, under the ids it named them by: a trial whose fingerprint was migrated
    since (``fwbench.migrate``) is found by any id it had (``provenance.migrated_from``)."""
    if trials.empty:
        return trials
    column = "provenance.migrated_from"
    history = trials[column] if column in trials else [None] * len(trials)

    def predicted_id(current: str, earlier) -> str:
        known = [current, *(step["trial_id"] for step in (earlier if isinstance(earlier, list) else []))]
        return next((tid for tid in known if tid in predicted), current)

    trials = trials.assign(trial_id=[predicted_id(t, h) for t, h in zip(trials.trial_id, history)])
    return trials[trials.trial_id.isin(predicted)]


def _check_row(study: str, group: str, part: pd.DataFrame) -> list:
    """One row of ``COLUMNS``: the trials of ``part`` measured on a quiet machine against their prediction."""
    clean = part[part.measured_s.notna() & ~part.busy.eq(True)]
    busy = int((part.measured_s.notna() & part.busy.eq(True)).sum())
    predicted, measured = float(clean.predicted_s.sum()), float(clean.measured_s.sum())
    error = (predicted - measured) / measured if measured > 0 else math.nan
    per_trial = (clean.predicted_s - clean.measured_s) / clean.measured_s
    median = float(per_trial.median()) if len(per_trial) else math.nan
    return [study, group, len(part), len(clean), busy, predicted, measured, error, median]
