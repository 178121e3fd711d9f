"""The SQLite results store."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from fwbench import sqlite_access
from fwbench import store as store_module
from fwbench.errors import FwbenchError
from fwbench.store import SCHEMA_VERSION, ResultsStore, trial_id


def _record(store, tid="t1", status="done", values=((0, "train_time_s", 1.5), (1, "train_time_s", 1.2))):
    store.record(
        trial_id=tid,
        study="imdb",
        status=status,
        config={"arm": "mxnet-imperative", "batch_size": 64},
        provenance={"host": "h1", "git_sha": "abc"},
        summary={"median_epoch_s": 1.2},
        measurements=values,
        profile="smoke",
        error=None if status == "done" else "boom",
    )


def test_trial_id_depends_on_config_not_key_order():
    assert trial_id("imdb", {"a": 1, "b": 2}, "c1") == trial_id("imdb", {"b": 2, "a": 1}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("imdb", {"a": 2}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("deepar", {"a": 1}, "c1")
    assert trial_id("imdb", {"a": 1}, "c1") != trial_id("imdb", {"a": 1}, "c2")  # other code, other trial


def test_round_trip_flattens_config_and_keeps_raw_values(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    _record(store)
    m = store.measurements("imdb")
    assert sorted(m.value) == [1.2, 1.5]
    assert set(m["config.arm"]) == {"mxnet-imperative"} and set(m["provenance.git_sha"]) == {"abc"}
    assert store.status_of(["t1", "nope"]) == {"t1": "done"}


def test_rerecording_a_trial_replaces_it(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    _record(store, status="failed", values=())
    _record(store)
    trials = store.trials()
    assert len(trials) == 1 and trials.status.iloc[0] == "done"
    assert len(store.measurements()) == 2


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    ResultsStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(FwbenchError, match="schema version"):
        ResultsStore(path)


def test_foreign_files_are_refused(tmp_path):
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database at all" * 100)
    with pytest.raises(FwbenchError, match="not an fwbench results store"):
        ResultsStore(text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE x (a)")
    with pytest.raises(FwbenchError, match="not an fwbench results store"):
        ResultsStore(other)


# -- many users at once, and reads that never write --------------------------------------------------------------
def test_writers_switch_the_store_to_wal_and_readers_see_every_row(tmp_path):
    store = ResultsStore(tmp_path / "s.sqlite")
    with sqlite3.connect(tmp_path / "s.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    _record(store)
    reader = ResultsStore.open_read(tmp_path / "s.sqlite")
    assert len(reader.measurements("imdb")) == 2
    with pytest.raises(FwbenchError, match="read-only"):
        _record(reader, tid="t2")


def test_a_foreign_sqlite_file_is_not_switched_to_wal(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE x (a)")
    conn.close()
    before = other.read_bytes()
    with pytest.raises(FwbenchError):
        ResultsStore(other)
    assert other.read_bytes() == before


def test_reading_a_missing_store_creates_nothing(tmp_path):
    path = tmp_path / "no" / "s.sqlite"
    with pytest.raises(FwbenchError, match="no results store at"):
        ResultsStore.open_read(path)
    assert list(tmp_path.iterdir()) == []


_NOISE = random.Random(20261125).randbytes(8192)  # fixed: a corrupt file that passes once passes always
_SQLITE_HEADER = b"SQLite format 3\x00"
# Bytes 18-19 of the header are the read/write versions: 1 is a rollback journal, 2 is WAL (SQLite then
# opens -wal/-shm files beside the store, even read-only).
_ROLLBACK_HEADER_NOISE = _SQLITE_HEADER + b"\x10\x00\x01\x01" + _NOISE[:4000]
_WAL_HEADER_NOISE = _SQLITE_HEADER + b"\x10\x00\x02\x02" + _NOISE[:4000]


@pytest.mark.parametrize(
    "content",
    [_NOISE, b"", _ROLLBACK_HEADER_NOISE, _WAL_HEADER_NOISE],
    ids=["random", "empty", "bad-pages", "bad-pages-wal-header"],
)
def test_reading_a_corrupt_store_changes_nothing(tmp_path, content):
    path = tmp_path / "s.sqlite"
    path.write_bytes(content)
    with pytest.raises(FwbenchError) as err:
        ResultsStore.open_read(path).trials()
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert path.read_bytes() == content and sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]


def test_retrying_waits_out_a_locked_store():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "ok"

    assert sqlite_access.retrying(flaky, deadline_s=10) == "ok" and len(calls) == 3
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        sqlite_access.retrying(lambda: (_ for _ in ()).throw(sqlite3.OperationalError("no such table: x")))


def test_a_write_blocked_past_the_busy_timeout_is_retried(tmp_path, monkeypatch):
    """Another process holds the write lock longer than SQLite's busy timeout: the record still lands."""
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.05)
    store = ResultsStore(tmp_path / "s.sqlite")
    blocker = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: blocker.execute("COMMIT"))
    release.start()
    t0 = time.perf_counter()
    _record(store)
    release.join()
    blocker.close()
    assert time.perf_counter() - t0 >= 0.9 and len(store.measurements()) == 2


def test_two_writers_creating_one_store_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    errors = []

    def create(i):
        try:
            _record(ResultsStore(path), tid=f"t{i}")
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ResultsStore.open_read(path).trials()) == 6


NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to become nobody")
def test_a_wal_store_in_a_folder_the_reader_cannot_write(tmp_path):
    """As root chmod proves nothing, so the reader runs as nobody: SQLite cannot create the -shm file there, and
    the store (closed by its writers: no -wal, or an empty one) is read immutable; with a non-empty -wal it is a
    one-line error."""
    folder = Path(tempfile.mkdtemp(prefix="fwbench-ro-"))  # pytest's tmp_path is private to root
    try:
        _check_read_only_folder(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_read_only_folder(folder: Path) -> None:
    _record(ResultsStore(folder / "s.sqlite"))
    folder.chmod(0o755)
    (folder / "s.sqlite").chmod(0o644)
    script = (
        "import sys; from fwbench.store import ResultsStore; from fwbench.errors import FwbenchError\n"
        "try: print(len(ResultsStore.open_read(sys.argv[1]).measurements()))\n"
        "except FwbenchError as e: print('error:', e)\n"
    )

    def read_as_nobody():
        proc = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                sys.executable,
                "-c",
                script,
                str(folder / "s.sqlite"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    if (
        "Permission denied"
        in subprocess.run(["setpriv", f"--reuid={NOBODY}", "ls", str(folder)], capture_output=True, text=True).stderr
    ):
        pytest.skip("nobody cannot reach the temporary folder")
    assert read_as_nobody() == "2"
    assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]
    (folder / "s.sqlite-wal").write_bytes(b"")  # an empty -wal, as readers leave it: nothing pending
    (folder / "s.sqlite-wal").chmod(0o644)
    assert read_as_nobody() == "2"
    (folder / "s.sqlite-wal").write_bytes(b"\0" * 4096)  # frames a writer has not copied into the store yet
    out = read_as_nobody()
    assert out.startswith("error: cannot read results store") and "-wal" in out


def test_a_trial_is_flagged_busy_by_other_processes_not_by_the_load_average():
    """Another process burning a CPU during the trial flags it; the trial's own workers do not, and neither does
    the load average (left by the sweep's own previous trial, about the thread count on a 2-core box). The split
    is checked on the process tree's own CPU time: the machine-wide fractions also hold whatever the suite's other
    worker runs meanwhile, so comparing them between the two windows would test that worker's load."""
    import subprocess
    import sys
    import time

    from fwbench.provenance import MachineLoad

    burn = "import time\nend = time.perf_counter() + {s}\nwhile time.perf_counter() < end: pass"

    def measure(other: bool) -> tuple[dict, float]:
        load = MachineLoad()
        if other:  # sh starts the burner in the background and exits: the burner is nobody's child here
            subprocess.run(["sh", "-c", f"{sys.executable} -c '{burn.format(s=2.0)}' &"], check=True)
        else:  # a child of this process: a data-loader worker's CPU is the trial's own
            subprocess.run([sys.executable, "-c", burn.format(s=1.5)], check=True)
        time.sleep(1.5 if other else 0.0)
        return load.stop(), load.own_cpu_s() - load.own0

    (own, own_cpu), (other, other_cpu) = measure(False), measure(True)
    time.sleep(0.6)  # let the burner end
    assert other["busy_machine"] and "other processes used" in other["busy_reasons"][0]
    assert own_cpu > 1.2 and other_cpu < 0.5  # the child's 1.5 s burn is the tree's own; the stranger's is not
    assert not any("load average" in r for r in own["busy_reasons"] + other["busy_reasons"])
