"""The results store: one SQLite file holding every raw measurement with its config and provenance.

Schema (version 1): ``meta(key, value)`` holds ``schema_version``; ``trials`` one row per trial (``trial_id`` is a
hash of the study and its config) with its status (``done`` or ``failed``), config/provenance/summary as JSON, and
error and stderr tail for failures; ``measurements`` the long-format raw values ``(trial_id, step, metric,
value)``, ``step`` the epoch (or -1 for whole-trial values).

A trial is written in a single transaction when it ends, so a crash or a kill never leaves a partial row that
looks finished; finished trials are skipped on rerun and failed ones are retried.

One store, many users at once (decisions):
- Only writers (``ResultsStore(path)``) create a store. They switch it to SQLite's WAL journal, so readers never
  block writers and writers block readers only for an instant; only after the file proved to be an fwbench store.
- Every write is one ``BEGIN IMMEDIATE`` transaction (the write lock taken up front, so two writers never deadlock
  upgrading a read lock). Beyond SQLite's busy timeout (``BUSY_TIMEOUT_S``), an operation that still fails with
  "locked"/"busy" (WAL recovery, a checkpoint) is retried with backoff (``sqlite_access.retrying``).
- Sweeps of different studies, readers and an export can share one store at once (``tests/test_concurrency.py``);
  the same trial run by two sweeps at once is run twice and stored once (the later row replaces the earlier).

Reads never write (``ResultsStore.open_read(path)``):
- The file is opened through an SQLite ``file:...?mode=ro`` URI: a missing store raises ``FwbenchError`` and
  creates nothing; a corrupt or foreign file raises it and stays byte-identical.
- A read-only connection may create a WAL store's ``-wal`` and ``-shm`` files beside it and cannot delete them:
  empty ones left next to a store are harmless.
- In a folder the reader cannot write, SQLite cannot create the ``-shm`` file and refuses a WAL store. With the
  ``-wal`` missing or empty, every committed row is in the main file, so the store is then read with
  ``immutable=1`` (no locking: rows a writer adds meanwhile are not seen, and a checkpoint during the read could
  tear it; rerun the read then). A non-empty ``-wal`` holds rows not yet in the main file: the error says what to
  do (copy the store with its ``-wal`` somewhere writable, or let its owner checkpoint it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pandas as pd

from .errors import FwbenchError
from .sqlite_access import header_says_wal, is_busy, retrying

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0
T = TypeVar("T")

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS trials (
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
)""",
    """CREATE TABLE IF NOT EXISTS measurements (
    trial_id TEXT NOT NULL REFERENCES trials(trial_id) ON DELETE CASCADE,
    step     INTEGER NOT NULL,
    metric   TEXT NOT NULL,
    value    REAL,
    PRIMARY KEY (trial_id, step, metric)
)""",
]


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def trial_id(study: str, config: dict, code_version: str) -> str:
    """Stable identity of a trial: same study, config and trial code (``Study.code_version``) -> same id,
    whatever the profile that asked. Rows measured with other code keep their old ids: they stay in the store
    but are no longer part of any plan (``fwbench status`` counts them as stale)."""
    key = {"study": study, "config": config, "code_version": code_version}
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()[:16]


class ResultsStore:
    """The results store at ``path``; ``readonly=True`` (or ``open_read``) opens an existing store for reading only."""

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self._immutable = False
        if self.path.exists() and self.path.is_dir():
            raise FwbenchError(f"results store {self.path} is a directory; point FWBENCH_RESULTS at a .sqlite file")
        if readonly:
            if not self.path.exists():
                raise FwbenchError(
                    f"no results store at {self.path}; run a study first (fwbench run imdb "
                    "--profile smoke, or a notebook) or set FWBENCH_RESULTS to an existing store"
                )
            self._check_readable_leaving_no_trace()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._check_and_init()

    @classmethod
    def open_read(cls, path: str | Path) -> ResultsStore:
        """An existing store, read-only: never creates, converts or changes a file."""
        return cls(path, readonly=True)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode: transactions are explicit (``BEGIN IMMEDIATE`` to write)."""
        if self.readonly:
            uri = self.path.resolve().as_uri() + ("?mode=ro&immutable=1" if self._immutable else "?mode=ro")
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        else:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection, kind: str = "") -> Iterator[sqlite3.Connection]:
        conn.execute(f"BEGIN {kind}")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _tables(self, conn: sqlite3.Connection) -> set:
        """The file's tables, once it proved to be an fwbench store of this schema version."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if tables and "meta" not in tables:
            raise FwbenchError(
                f"{self.path} is an SQLite file but not an fwbench results store; set FWBENCH_RESULTS to a new path"
            )
        if "meta" in tables:
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(row[0]) if row else None
            if version != SCHEMA_VERSION:
                raise FwbenchError(
                    f"results store {self.path} has schema version {version}, this fwbench reads "
                    f"{SCHEMA_VERSION}; upgrade fwbench or set FWBENCH_RESULTS to a new path"
                )
        return tables

    def _not_a_store(self, exc: Exception) -> FwbenchError:
        return FwbenchError(
            f"{self.path} is not an fwbench results store ({exc}); move it away or set FWBENCH_RESULTS to a new path"
        )

    def _check_and_init(self) -> None:
        def init() -> None:
            with self._connect() as conn:
                tables = self._tables(conn)  # a foreign file is refused before anything is written
                conn.execute("PRAGMA journal_mode=WAL")  # persistent; a no-op when the store is WAL already
                if "meta" in tables:
                    return
                with self._transaction(conn, "IMMEDIATE"):  # two writers creating one store: one creates it
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self._tables(conn)

        try:
            retrying(init)
        except sqlite3.DatabaseError as exc:
            raise self._not_a_store(exc) from None

    def _check_readable_leaving_no_trace(self) -> None:
        """``_check_readable``; a file that fails it keeps no -wal/-shm this read created (SQLite creates them beside
        a file whose header says WAL, even read-only; a corrupt file can carry that header; reading changes nothing)."""
        side_files = [self.path.with_name(self.path.name + suffix) for suffix in ("-wal", "-shm")]
        existed = {side: side.exists() for side in side_files}
        try:
            self._check_readable()
        except FwbenchError:
            for side in side_files:
                if not existed[side]:
                    side.unlink(missing_ok=True)
            raise

    def _check_readable(self) -> None:
        def check() -> None:
            with self._connect() as conn:
                tables = self._tables(conn)
            if not tables:
                raise FwbenchError(
                    f"{self.path} is empty, not an fwbench results store yet; run a study first "
                    "or set FWBENCH_RESULTS to an existing store"
                )

        try:
            retrying(check)
        except sqlite3.OperationalError as exc:
            wal = self.path.with_name(self.path.name + "-wal")
            pending = wal.exists() and wal.stat().st_size > 0  # frames not yet copied into the store
            if self._immutable or is_busy(exc) or not header_says_wal(self.path) or pending:
                raise FwbenchError(
                    f"cannot read results store {self.path} ({exc}); a WAL store is read through its -wal/-shm "
                    "files, which need a folder you can write: copy the store with its -wal file to such a "
                    "folder, or ask its owner to run a sweep or `sqlite3 STORE 'PRAGMA wal_checkpoint'`"
                ) from None
            self._immutable = True  # read-only folder, no writer: everything committed is in the main file
            self._check_readable()
        except sqlite3.DatabaseError as exc:
            raise self._not_a_store(exc) from None

    def _read(self, reader: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``reader`` in one read transaction (one consistent snapshot, even while writers commit)."""

        def attempt() -> T:
            with self._connect() as conn, self._transaction(conn):
                return reader(conn)

        return retrying(attempt)

    def backup(self, dest: str | Path) -> Path:
        """A consistent copy of the whole store at ``dest`` (SQLite's backup API: one snapshot, even while a
        sweep writes), in rollback-journal mode so the copy is one self-contained file. Only reads this store."""
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            with self._connect() as conn:
                copy = sqlite3.connect(tmp)
                try:
                    conn.backup(copy)
                    copy.execute("PRAGMA journal_mode=DELETE")
                finally:
                    copy.close()
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return dest

    # -- writing ---------------------------------------------------------------------------------
    def record(
        self,
        *,
        trial_id: str,
        study: str,
        status: str,
        config: dict,
        provenance: dict,
        summary: dict,
        measurements: Iterable[tuple[int, str, float]] = (),
        profile: str | None = None,
        error: str | None = None,
        stderr_tail: str | None = None,
        started_at: str | None = None,
        ended_at: str | None = None,
    ) -> None:
        """Write one finished (or failed) trial and all its raw values atomically, replacing any earlier row."""
        if self.readonly:
            raise FwbenchError(f"results store {self.path} was opened read-only; open it with ResultsStore(path)")
        rows = [
            (trial_id, int(step), metric, None if value is None else float(value))
            for step, metric, value in measurements
        ]
        trial = (
            trial_id,
            study,
            status,
            profile,
            canonical_json(config),
            canonical_json(provenance),
            canonical_json(summary),
            error,
            stderr_tail,
            provenance.get("host"),
            started_at,
            ended_at,
        )

        def write() -> None:
            with self._connect() as conn, self._transaction(conn, "IMMEDIATE"):
                conn.execute("DELETE FROM trials WHERE trial_id = ?", (trial_id,))
                conn.execute("INSERT INTO trials VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", trial)
                conn.executemany("INSERT INTO measurements VALUES (?,?,?,?)", rows)

        retrying(write)

    # -- reading ---------------------------------------------------------------------------------
    def status_of(self, ids: Iterable[str]) -> dict[str, str]:
        ids = list(ids)

        def read(conn: sqlite3.Connection) -> dict[str, str]:
            out: dict[str, str] = {}
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                q = f"SELECT trial_id, status FROM trials WHERE trial_id IN ({','.join('?' * len(chunk))})"
                out.update(dict(conn.execute(q, chunk).fetchall()))
            return out

        return self._read(read)

    @staticmethod
    def flatten(raw: pd.DataFrame, trial_ids: set | None = None) -> pd.DataFrame:
        """Stored trial rows (JSON text in ``config``, ``provenance``, ``summary``) with those three flattened
        to dotted columns (``config.arm``, ``provenance.thread_env.OMP_NUM_THREADS``, ...)."""
        if trial_ids is not None:
            raw = raw[raw.trial_id.isin(trial_ids)].reset_index(drop=True)
        if raw.empty:
            return raw
        flat = [
            pd.json_normalize([json.loads(s) for s in raw[col]]).add_prefix(f"{col}.")
            for col in ("config", "provenance", "summary")
        ]
        return pd.concat([raw.drop(columns=["config", "provenance", "summary"])] + flat, axis=1)

    def trials(self, study: str | None = None, trial_ids: set | None = None) -> pd.DataFrame:
        """One row per trial (of ``study``, of ``trial_ids`` when given); config, provenance and summary
        flattened to dotted columns."""
        q = "SELECT * FROM trials" + (" WHERE study = ?" if study else "")
        raw = self._read(lambda conn: pd.read_sql_query(q, conn, params=(study,) if study else None))
        return self.flatten(raw, trial_ids)

    def snapshot(
        self, study: str | None = None, trial_ids: set | None = None, flatten: bool = True
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(trials, measurements)`` read in one transaction, so they agree even while sweeps write: the trials
        (flattened as ``trials`` returns them, or as stored with ``flatten=False``) and the raw
        ``(trial_id, step, metric, value)`` rows of those trials."""
        where = " WHERE study = ?" if study else ""
        params = (study,) if study else None
        m_query = "SELECT m.* FROM measurements m" + (
            " JOIN trials t USING (trial_id) WHERE t.study = ?" if study else ""
        )

        def read(conn):
            return (
                pd.read_sql_query("SELECT * FROM trials" + where, conn, params=params),
                pd.read_sql_query(m_query, conn, params=params),
            )

        raw, m = self._read(read)
        if trial_ids is not None:
            raw = raw[raw.trial_id.isin(trial_ids)].reset_index(drop=True)
        trials = self.flatten(raw) if flatten else raw
        return trials, m[m.trial_id.isin(set(trials.trial_id))].reset_index(drop=True) if len(trials) else m.iloc[:0]

    def measurements(self, study: str | None = None, trial_ids: set | None = None) -> pd.DataFrame:
        """Tidy long table: one row per raw value, with its trial's flattened config and provenance (of
        ``study`` and ``trial_ids`` when given; only that study's values are read)."""
        trials, m = self.snapshot(study, trial_ids)
        return trials if trials.empty else trials.merge(m, on="trial_id", how="inner")
