"""The results store: one SQLite file holding every raw measurement with its config and provenance.

Schema (version 1):
- ``meta(key, value)``: ``schema_version``.
- ``trials``: one row per trial (``trial_id`` is a hash of the study and its config), its status
  (``done`` or ``failed``), config/provenance/summary as JSON, error and stderr tail for failures.
- ``measurements``: long-format raw values, ``(trial_id, step, metric, value)``; ``step`` is the epoch
  (or -1 for whole-trial values).

A trial is written in a single transaction when it ends, so a crash or a kill never leaves a partial row
that looks finished; finished trials are skipped on rerun and failed ones are retried.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd

from .errors import FwbenchError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    trial_id    TEXT PRIMARY KEY,
    study       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    profile     TEXT,
    config      TEXT NOT NULL,
    provenance  TEXT NOT NULL,
    summary     TEXT NOT NULL,
    error       TEXT,
    stderr_tail TEXT,
    host        TEXT,
    started_at  TEXT,
    ended_at    TEXT
);
CREATE TABLE IF NOT EXISTS measurements (
    trial_id TEXT NOT NULL REFERENCES trials(trial_id) ON DELETE CASCADE,
    step     INTEGER NOT NULL,
    metric   TEXT NOT NULL,
    value    REAL,
    PRIMARY KEY (trial_id, step, metric)
);
"""


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def trial_id(study: str, config: dict, code_version: str) -> str:
    """Stable identity of a trial: same study, config and trial code (``Study.code_version``) -> same id,
    whatever the profile that asked. Rows measured with other code keep their old ids: they stay in the store
    but are no longer part of any plan (``fwbench status`` counts them as stale)."""
    key = {"study": study, "config": config, "code_version": code_version}
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()[:16]


class ResultsStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise FwbenchError(f"results store {self.path} is a directory; point FWBENCH_RESULTS at a .sqlite file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._check_and_init()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=60)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    def _check_and_init(self) -> None:
        try:
            with self._connect() as conn:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if tables and "meta" not in tables:
                    raise FwbenchError(
                        f"{self.path} is an SQLite file but not an fwbench results store; "
                        "set FWBENCH_RESULTS to a new path")
                if "meta" in tables:
                    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                    version = int(row[0]) if row else None
                    if version != SCHEMA_VERSION:
                        raise FwbenchError(
                            f"results store {self.path} has schema version {version}, this fwbench reads "
                            f"{SCHEMA_VERSION}; upgrade fwbench or set FWBENCH_RESULTS to a new path")
                    return
                with conn:
                    conn.executescript(_SCHEMA)
                    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            raise FwbenchError(
                f"{self.path} is not an fwbench results store ({exc}); move it away or set "
                "FWBENCH_RESULTS to a new path") from None

    # -- writing ---------------------------------------------------------------------------------
    def record(self, *, trial_id: str, study: str, status: str, config: dict, provenance: dict,
               summary: dict, measurements: Iterable[tuple[int, str, float]] = (), profile: str | None = None,
               error: str | None = None, stderr_tail: str | None = None, started_at: str | None = None,
               ended_at: str | None = None) -> None:
        """Write one finished (or failed) trial and all its raw values atomically, replacing any earlier row."""
        rows = [(trial_id, int(step), metric, None if value is None else float(value))
                for step, metric, value in measurements]
        with self._connect() as conn, conn:
            conn.execute("DELETE FROM trials WHERE trial_id = ?", (trial_id,))
            conn.execute(
                "INSERT INTO trials VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (trial_id, study, status, profile, canonical_json(config), canonical_json(provenance),
                 canonical_json(summary), error, stderr_tail, provenance.get("host"), started_at, ended_at))
            conn.executemany("INSERT INTO measurements VALUES (?,?,?,?)", rows)

    # -- reading ---------------------------------------------------------------------------------
    def status_of(self, ids: Iterable[str]) -> dict[str, str]:
        ids = list(ids)
        out: dict[str, str] = {}
        with self._connect() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                q = f"SELECT trial_id, status FROM trials WHERE trial_id IN ({','.join('?' * len(chunk))})"
                out.update(dict(conn.execute(q, chunk).fetchall()))
        return out

    def trials(self, study: str | None = None, trial_ids: set | None = None) -> pd.DataFrame:
        """One row per trial (of ``study``, of ``trial_ids`` when given); config, provenance and summary
        flattened to dotted columns."""
        q = "SELECT * FROM trials" + (" WHERE study = ?" if study else "")
        with self._connect() as conn:
            raw = pd.read_sql_query(q, conn, params=(study,) if study else None)
        if trial_ids is not None:
            raw = raw[raw.trial_id.isin(trial_ids)].reset_index(drop=True)
        if raw.empty:
            return raw
        flat = [
            pd.json_normalize([json.loads(s) for s in raw[col]]).add_prefix(f"{col}.")
            for col in ("config", "provenance", "summary")
        ]
        return pd.concat([raw.drop(columns=["config", "provenance", "summary"])] + flat, axis=1)

    def measurements(self, study: str | None = None, trial_ids: set | None = None) -> pd.DataFrame:
        """Tidy long table: one row per raw value, with its trial's flattened config and provenance (of
        ``study`` and ``trial_ids`` when given; only that study's values are read)."""
        trials = self.trials(study, trial_ids)
        if trials.empty:
            return trials
        q = "SELECT m.* FROM measurements m" + (" JOIN trials t USING (trial_id) WHERE t.study = ?" if study else "")
        with self._connect() as conn:
            m = pd.read_sql_query(q, conn, params=(study,) if study else None)
        return trials.merge(m, on="trial_id", how="inner")
