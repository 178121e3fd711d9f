"""Results as tables: the store exported as three tidy tables linked by ids, in CSV and/or Parquet.

- ``measurements``: ``trial_id, step, metric, value, unit``: one row per raw value (``step`` -1 = whole trial).
- ``trials``: one row per stored trial: ``TRIAL_COLUMNS`` (``superseded``: a rerun replaced it) and ``config.*``.
- ``environments``: ``environment_id`` and every provenance field that describes the machine, software and data,
  stored once per distinct environment instead of once per value.

Decisions:
- ``environment_id`` is the first 12 hex digits of the SHA-256 of the environment fields as canonical JSON:
  the same machine, software and data give the same id in every export, and any change gives a new one.
- Per-trial provenance (``PER_TRIAL_KEYS``: load average, pid, wall time, ...) stays out of the environment,
  else every trial would have an environment of its own. ``loadavg_1m`` goes to ``trials``: it says how busy
  the machine was when the trial started (trials run side by side show it).
- Nested values (lists such as ``build_config``, dicts the flattening leaves) become JSON text, and columns whose
  values mix types become text, so CSV and Parquet hold the same cells and Parquet gets one type per column;
  integer config values stay integers where another study has no such key (nullable ``Int64``).
- Parquet is written by pyarrow with zstd compression and without pandas' schema metadata (which alone doubled
  the size of a small export).
- The three tables come from one read transaction of the store (``ResultsStore.snapshot``), so they agree even
  while sweeps are writing; each file is written beside its final name and renamed into place.
- ``fwbench export -o FILE.csv``, and ``fwbench export`` with neither ``-o`` nor ``--format`` (standard output: a
  pipe holds one table), write the single wide CSV (every value with its trial's config and provenance; ``wide``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd

from . import stale
from .errors import FwbenchError
from .quantity import missing
from .store import ResultsStore, canonical_json
from .studies import get_study

FORMATS = ("csv", "parquet")
TABLES = ("measurements", "trials", "environments")
# Provenance fields of one trial (not of its environment); framework and code_version get columns of their own.
PER_TRIAL_KEYS = {"loadavg_1m", "loadavg_5m", "pid", "trial_wall_s", "framework", "code_version", "frameworks_imported"}
TRIAL_COLUMNS = [
    "trial_id",
    "study",
    "arm",
    "framework",
    "status",
    "superseded",
    "profile",
    "code_version",
    "started_at",
    "ended_at",
    "trial_wall_s",
    "loadavg_1m",
    "error",
    "environment_id",
]


def unit_of(metric: str) -> str:
    """The unit of a metric, from its name ("" for losses, accuracies, MASE, counts)."""
    name = metric.lower()
    if "gflops" in name:
        return "GFLOP/s"
    for suffix, unit in (("_per_s", "1/s"), ("_ms", "ms"), ("_pct", "%"), ("_s", "s")):
        if name.endswith(suffix):
            return unit
    return ""


def _from_arm_table(trial_row, attribute: str, recorded: str) -> str:
    """``attribute`` of the trial's arm in its study's arm table; for a study or arm this checkout does not declare
    (old rows, benchmarks), the trial's own ``recorded`` column ("" when none)."""
    try:
        study = get_study(trial_row.get("study"))
        arm = study.arm(trial_row.get(f"config.{study.arm_field}"))
    except FwbenchError:
        arm = None
    value = getattr(arm, attribute) if arm is not None else trial_row.get(recorded)
    return value if isinstance(value, str) else ""


def arm_of(trial_row) -> str:
    """The trial's arm: its study's arm field (``arm``; the onnx study's ``step``, the self-test's ``mode``)."""
    return _from_arm_table(trial_row, "name", "config.arm")


def framework_of(trial_row) -> str:
    """The framework of a trial's arm, or the one its trial process recorded."""
    return _from_arm_table(trial_row, "framework", "provenance.framework")


def environment_of(provenance: dict) -> dict:
    """The environment fields of one trial's provenance (``PER_TRIAL_KEYS`` and empty values left out)."""
    return {k: v for k, v in provenance.items() if k not in PER_TRIAL_KEYS and not missing(v)}


def environment_id(environment: dict) -> str:
    return hashlib.sha256(canonical_json(environment).encode()).hexdigest()[:12]


def _cell(value):
    """JSON text for lists and dicts; everything else as it is."""
    return json.dumps(value, sort_keys=True, default=str) if isinstance(value, (list, dict, tuple)) else value


def _one_type_per_column(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for col in [c for c in frame.columns if c.startswith("config.") and frame[c].dtype == float]:
        values = frame[col].dropna()
        if len(values) and (values == values.round()).all():  # integers made floats by another study's gaps
            frame[col] = frame[col].astype("Int64")
    for col in frame.select_dtypes(include="object").columns:
        values = frame[col].map(_cell)
        kinds = {type(v) for v in values if not missing(v)}
        if len(kinds) > 1:
            values = values.map(lambda v: str(v) if not missing(v) else None)
        frame[col] = values
    return frame


def tables(store: ResultsStore, study: str | None = None, profile: str | None = None) -> dict[str, pd.DataFrame]:
    """The three tables of the store (of ``study`` and ``profile`` when given), from one consistent snapshot."""
    raw, measurements = store.snapshot(study, flatten=False)
    if profile is not None:  # a profile's rows only (e.g. the paper run committed under results/paper/)
        raw = raw[raw.profile == profile].reset_index(drop=True)
        measurements = measurements[measurements.trial_id.isin(set(raw.trial_id))]
    trials = ResultsStore.flatten(raw)
    m = measurements[["trial_id", "step", "metric", "value"]].copy()
    m["unit"] = m.metric.map(unit_of) if len(m) else pd.Series(dtype=str)
    m = m.sort_values(["trial_id", "step", "metric"]).reset_index(drop=True)
    if trials.empty:
        return {
            "measurements": m,
            "trials": pd.DataFrame(columns=TRIAL_COLUMNS),
            "environments": pd.DataFrame(columns=["environment_id"]),
        }
    provenance = [json.loads(s) for s in raw.provenance]  # as stored: flattened columns would retype values
    envs = [environment_of(p) for p in provenance]
    env_ids = [environment_id(e) for e in envs]
    rows = [
        {
            "trial_id": row.trial_id,
            "study": row.study,
            "arm": arm_of(row),
            "framework": framework_of(row),
            "status": row.status,
            "profile": row.profile,
            "code_version": prov.get("code_version") or "",
            "started_at": row.started_at,
            "ended_at": row.ended_at,
            "trial_wall_s": prov.get("trial_wall_s"),
            "loadavg_1m": prov.get("loadavg_1m"),
            "error": row.error,
            "environment_id": env_id,
        }
        for (_, row), prov, env_id in zip(trials.iterrows(), provenance, env_ids)
    ]
    config = trials[[c for c in trials.columns if c.startswith("config.")]].reset_index(drop=True)
    t = pd.concat([pd.DataFrame(rows, columns=TRIAL_COLUMNS), config], axis=1)
    t["arm"] = t["arm"].fillna("")
    t["superseded"] = t.trial_id.isin(stale.stale_trials(trials).query("superseded").trial_id)  # a rerun replaced it
    unique = {i: e for i, e in zip(env_ids, envs)}
    e = pd.json_normalize([{"environment_id": i, **env} for i, env in sorted(unique.items())])
    return {
        "measurements": m,
        "trials": _one_type_per_column(t.sort_values("trial_id").reset_index(drop=True)),
        "environments": _one_type_per_column(e),
    }


def _write_atomic(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        else:  # without pandas' metadata (see the module docstring; the tables have no index to restore)
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table.replace_schema_metadata(None), tmp, compression="zstd")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_tables(
    store: ResultsStore, out_dir: str | Path, formats=("csv",), study: str | None = None, profile: str | None = None
) -> list[Path]:
    """Write ``measurements``, ``trials`` and ``environments`` in each format into ``out_dir``; returns the files."""
    formats = list(dict.fromkeys(formats))
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise FwbenchError(f"unknown export format {bad[0]!r}; choose csv or parquet")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FwbenchError(
            f"{out} is a file; the tables need a folder (-o DIR), or name a .csv file for the single wide CSV"
        )
    frames = tables(store, study, profile)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        for name in TABLES:
            path = out / f"{name}.{fmt}"
            _write_atomic(frames[name], path, fmt)
            written.append(path)
    return written
