"""Reaching an SQLite file that others may be using: an operation retried while SQLite says it is busy (beyond its
own busy timeout: WAL recovery, a checkpoint, a busy handler not being called), and whether a file's header says
it is in WAL mode. ``fwbench.store`` builds the results store on these."""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

RETRY_DEADLINE_S = 120.0
T = TypeVar("T")


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "database table is locked" / "busy" errors: worth another try."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def retrying(operation: Callable[[], T], deadline_s: float = RETRY_DEADLINE_S) -> T:
    """Run ``operation``, again after a jittered, growing pause while SQLite says the store is busy."""
    stop, pause = time.monotonic() + deadline_s, 0.05
    while True:
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= stop:
                raise
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 2.0)


def header_says_wal(path: Path) -> bool:
    """Bytes 18-19 of an SQLite file are 2 in WAL mode."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[18] == 2 and head[19] == 2
