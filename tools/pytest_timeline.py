"""A pytest plugin that writes when each test started and ended, per xdist worker: the summed worker-seconds and
the balance of the two workers behind docs/benchmarks.md's `make test` rows.

    PYTHONPATH=tools make test PYTEST_ARGS="--durations=25 -p pytest_timeline"
    .venv/bin/python tools/pytest_timeline.py                # per worker: span, summed test time, longest modules

A tool of the repository, not part of the package ``fwbench``. Each worker appends tab-separated lines
(``start``/``end``, a Unix time, the test's node id) to ``build/timeline/<worker>.tsv`` (``FWBENCH_TIMELINE_DIR``
elsewhere); the report reads them back. A test's time is setup, call and teardown together, so a session fixture
counts in the first test that uses it."""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timeline_dir() -> Path:
    return Path(os.environ.get("FWBENCH_TIMELINE_DIR") or REPO / "build" / "timeline")


_out = None
_relay = False  # xdist's controller: it sees every worker's tests again as reports, so it writes nothing


def pytest_configure(config):
    global _relay
    _relay = not hasattr(config, "workerinput") and bool(config.getoption("numprocesses", None))


def _write(kind: str, nodeid: str) -> None:
    global _out
    if _relay:
        return
    if _out is None:
        folder = timeline_dir()
        folder.mkdir(parents=True, exist_ok=True)
        _out = open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.tsv", "a", buffering=1)  # noqa: SIM115
    _out.write(f"{kind}\t{time.time():.2f}\t{nodeid}\n")


def pytest_runtest_logstart(nodeid, location):
    _write("start", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _write("end", nodeid)


def summary(folder: Path, top: int = 8) -> list[str]:
    """Per worker file: its span (first start to last end), its tests' summed time and its longest modules."""
    lines = []
    for path in sorted(folder.glob("*.tsv")):
        started, modules, first, last = {}, defaultdict(float), None, None
        for row in path.read_text().splitlines():
            kind, stamp, nodeid = row.split("\t", 2)
            t = float(stamp)
            first, last = min(first or t, t), max(last or t, t)
            if kind == "start":
                started[nodeid] = t
            elif nodeid in started:
                modules[nodeid.split("::", 1)[0]] += t - started.pop(nodeid)
        lines.append(f"{path.stem}: span {last - first:.0f} s, tests summed {sum(modules.values()):.0f} s")
        longest = sorted(modules.items(), key=lambda kv: -kv[1])[:top]
        lines += [f"  {seconds:7.1f} s  {module}" for module, seconds in longest]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=None, help="default: build/timeline")
    parser.add_argument("--top", type=int, default=8, help="modules listed per worker")
    args = parser.parse_args()
    folder = args.folder or timeline_dir()
    if not any(folder.glob("*.tsv")):
        raise SystemExit(f"no timeline in {folder}: run make test with -p pytest_timeline first")
    print("\n".join(summary(folder, args.top)))


if __name__ == "__main__":
    main()
