"""Carry a store's trials across a change of code that changed no trial's work (``fwbench migrate-fingerprints``).

A trial's id holds its study's code fingerprint (``Study.code_version``), so any edit to the fingerprinted sources
turns every stored trial of that study stale. Rerunning is the honest default; for a refactor that provably changes
no trial's work, this rewrites such trials to the current fingerprint instead, once, and says so in the store:

- the *old* fingerprints are computed by the code of a named git commit itself (its ``lib/`` unpacked into a
  temporary folder and asked in a separate process), so nothing here has to know how they were computed then;
- only trials whose recorded ``provenance.code_version`` is their study's fingerprint at that commit move, with
  their measurements, in one transaction; a trial whose new id is already stored is left alone;
- each moved trial keeps every earlier identity (``provenance.migrated_from``, oldest first), and the
  ``migrations`` table holds one row per study and migration (when, commit, fingerprints, trials moved, reason);
- it refuses, writing nothing, when no stored trial was measured with the commit's code, and says so when that
  migration was already done (running it twice changes nothing).

Decision: the migration is a deliberate, recorded act by whoever changed the code, never automatic.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from .errors import FwbenchError
from .store import ResultsStore, canonical_json, trial_id
from .studies import all_studies

REPO_ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS migrations (
    migrated_at    TEXT NOT NULL,
    study          TEXT NOT NULL,
    from_commit    TEXT NOT NULL,
    old_code       TEXT NOT NULL,
    new_code       TEXT NOT NULL,
    trials_moved   INTEGER NOT NULL,
    reason         TEXT NOT NULL
)"""
_ASK_FINGERPRINTS = (
    "import json, fwbench, sys; from fwbench.studies import all_studies; "
    "assert fwbench.__file__.startswith(sys.argv[1]), fwbench.__file__; "
    "print(json.dumps({s.name: s.code_version() for s in all_studies(hidden=True)}))"
)


def current_fingerprints() -> dict[str, str]:
    """Each registered study's fingerprint in this checkout."""
    return {study.name: study.code_version() for study in all_studies(hidden=True)}


def fingerprints_at(commit: str, repo: Path = REPO_ROOT) -> dict[str, str]:
    """Each study's fingerprint as the code of ``commit`` computes it (its ``lib/`` run in a separate process)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", commit, "lib"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise FwbenchError(
            f"cannot read commit {commit!r} of {repo} ({detail.decode(errors='replace').strip() or exc})"
        ) from None
    with tempfile.TemporaryDirectory(prefix="fwbench-fingerprints-") as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        lib = str(Path(folder) / "lib")
        env = {**os.environ, "PYTHONPATH": lib, "FWBENCH_STUDIES": ""}
        done = subprocess.run(
            [sys.executable, "-c", _ASK_FINGERPRINTS, lib], capture_output=True, text=True, env=env, cwd=folder
        )
    if done.returncode != 0:
        raise FwbenchError(
            f"the code of commit {commit} could not compute its fingerprints: {done.stderr.strip().splitlines()[-1:]}"
        )
    return json.loads(done.stdout)


def migrate_fingerprints(
    store_path: str | Path, old: dict[str, str], new: dict[str, str], *, from_commit: str, reason: str
) -> dict[str, int]:
    """Move the trials of ``store_path`` measured with fingerprint ``old[study]`` to ``new[study]``; returns the
    trials moved per study. See the module docstring for what is refused."""
    if not reason.strip():
        raise FwbenchError("say why the trials may move (--reason): which change, and why it changes no trial's work")
    ResultsStore(store_path)  # refuses a file that is not a store, before anything is written
    conn = sqlite3.connect(store_path, isolation_level=None, timeout=60)
    try:
        conn.execute(MIGRATIONS_TABLE)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("PRAGMA defer_foreign_keys = ON")  # children and parent change ids in one transaction
        moved, already_done = _move(conn, old, new, from_commit)
        if not any(moved.values()):
            conn.execute("ROLLBACK")
            if already_done:
                return moved
            raise FwbenchError(
                f"no stored trial in {store_path} was measured with the code of {from_commit} "
                f"(fingerprints {old}); nothing migrated"
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        conn.executemany(
            "INSERT INTO migrations VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (now, study, from_commit, old[study], new[study], count, reason)
                for study, count in moved.items()
                if count
            ],
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return moved


def _move(conn: sqlite3.Connection, old: dict, new: dict, from_commit: str) -> tuple[dict[str, int], bool]:
    """Rewrite the matching trials and their measurements; (moved per study, whether a same migration is on
    record)."""
    stored_ids = {row[0] for row in conn.execute("SELECT trial_id FROM trials")}
    moved = {study: 0 for study in old if study in new and old[study] != new[study]}
    rows = conn.execute("SELECT trial_id, study, config, provenance FROM trials").fetchall()
    for old_id, study, config_json, provenance_json in rows:
        provenance = json.loads(provenance_json)
        if study not in moved or provenance.get("code_version") != old[study]:
            continue
        new_id = trial_id(study, json.loads(config_json), new[study])
        if new_id in stored_ids:  # the same config measured with the current code: that trial stands
            continue
        provenance["code_version"] = new[study]
        earlier = provenance.get("migrated_from", [])
        step = {"commit": from_commit, "code_version": old[study], "trial_id": old_id}
        provenance["migrated_from"] = [*earlier, step]  # every earlier identity, oldest first
        conn.execute("UPDATE measurements SET trial_id = ? WHERE trial_id = ?", (new_id, old_id))
        conn.execute(
            "UPDATE trials SET trial_id = ?, provenance = ? WHERE trial_id = ?",
            (new_id, canonical_json(provenance), old_id),
        )
        stored_ids.add(new_id)
        moved[study] += 1
    on_record = conn.execute("SELECT COUNT(*) FROM migrations WHERE from_commit = ?", (from_commit,)).fetchone()[0]
    return moved, bool(on_record)
