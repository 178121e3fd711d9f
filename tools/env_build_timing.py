"""How long a declared environment takes to build from its lock, with uv and with pip (``make time-envs``).

    .venv/bin/python tools/env_build_timing.py gluonts-0.13 [--tools uv,pip] [--record FILE]
    .venv/bin/python tools/env_build_timing.py --pages      # only re-render the README's sentence from the record

A tool of the repository, not part of the package ``fwbench``. The README's sentence on it (the block
``env-build-time``) is rendered from the record this writes (``render_phrase``): a measurement with the default
record refreshes it, and so does ``--pages`` (which ``make readme`` runs).

One measurement of one environment and one tool:

1. the environment's declaration (``requirements.in``, ``requirements.lock`` and its constraints/overrides) is
   copied into a new temporary folder, so the environment the study uses is never touched, and built there by
   ``environments.build`` (a new venv, the lock installed with ``--no-deps``, then the ``# check:`` imports).
2. **cold**: the tool's download cache is a new empty folder (``UV_CACHE_DIR`` / ``PIP_CACHE_DIR``), so every
   package comes from the registry (or a local wheel folder pip is configured with, such as the CPU torch wheel:
   the record's note says so). **warm**: the same build again with the cache the cold build filled.
3. the wall time (``time.perf_counter``) and the share of the CPUs other processes used meanwhile
   (``provenance.MachineLoad``) are appended as a row of ``results/benchmarks/env-build.csv`` (committed).

Timed work runs alone: ``other_cpu_pct`` says afterwards whether it did.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from fwbench import environments
from fwbench.errors import FwbenchError
from fwbench.generated_blocks import write_block
from fwbench.paths import REPO_ROOT
from fwbench.provenance import OTHER_BUSY_LIMIT, MachineLoad, cpu_model

RECORD = REPO_ROOT / "results" / "benchmarks" / "env-build.csv"
README = REPO_ROOT / "README.md"  # the front page: the block is looked for there and on the docs/ pages beside it
COLUMNS = [
    "date",
    "commit",
    "host",
    "cpu",
    "cores",
    "env",
    "lock",
    "tool",
    "cache",
    "wall_s",
    "other_cpu_pct",
    "note",
]
CACHE_VARIABLE = {"uv": "UV_CACHE_DIR", "pip": "PIP_CACHE_DIR"}
DECLARATION_FILES = ("requirements.in", "requirements.lock", "constraints.txt", "overrides.txt")
NOTE = (
    "tools/env_build_timing.py: a copy of the declaration built by environments.build (venv, install --no-deps "
    "from the lock, the check imports); cold = an empty download cache, warm = the same build again"
)


@contextmanager
def _variables(**values: str):
    """Set environment variables for the builds' subprocesses, restoring them afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _copy_declaration(env: environments.Environment, folder: Path) -> environments.Environment:
    target = folder / env.name
    target.mkdir(parents=True)
    for name in DECLARATION_FILES:
        if (env.folder / name).exists():
            shutil.copy2(env.folder / name, target / name)
    return environments.Environment(env.name, target, target / ".venv")


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def measure(name: str, tools=("uv", "pip"), log=print) -> list[dict]:
    """Build environment ``name`` cold then warm with each tool; the record's rows (not yet written)."""
    env = environments.get_environment(name)
    if env.name == environments.MAIN:
        raise FwbenchError("'main' is built by 'make setup'; time a declared environment (envs/NAME/)")
    for tool in tools:
        if tool not in CACHE_VARIABLE:
            raise FwbenchError(f"unknown tool {tool!r}; choose from {', '.join(CACHE_VARIABLE)}")
        if tool == "uv" and environments.uv_path() is None:
            raise FwbenchError("uv is not installed; 'pip install uv' (it is in requirements.lock) or --tools pip")
    base = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "commit": _commit(),
        "host": os.uname().nodename,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "env": env.name,
        "lock": env.lock_hash(),
        "note": NOTE,
    }
    rows = []
    with tempfile.TemporaryDirectory(prefix="fwbench-env-build-") as tmp:
        for tool in tools:
            cache = Path(tmp) / f"{tool}-cache"
            cache.mkdir()
            copy = _copy_declaration(env, Path(tmp) / tool)
            with _variables(**{CACHE_VARIABLE[tool]: str(cache)}):
                for state in ("cold", "warm"):
                    load = MachineLoad()
                    wall = environments.build(copy, tool=tool, log=lambda line: None)
                    other = 100 * load.stop()["other_busy_frac"]
                    log(f"{env.name} {tool} {state}: {wall:.1f} s (other processes {other:.1f} % of the CPUs)")
                    rows.append(
                        {
                            **base,
                            "tool": tool,
                            "cache": state,
                            "wall_s": round(wall, 1),
                            "other_cpu_pct": round(other, 1),
                        }
                    )
    return rows


def read_record(path: Path = RECORD) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def append_record(rows: list[dict], path: Path = RECORD) -> None:
    """Append ``rows``; a record written before a column existed is rewritten with it (blank in old rows)."""
    old = read_record(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in old + rows:
            writer.writerow({c: row.get(c, "") for c in COLUMNS})


def render_phrase(path: Path = RECORD, name: str = "gluonts-0.13") -> str:
    """The README's sentence: the latest measurement of ``name``'s build with each tool, and how alone it ran."""
    rows = [r for r in read_record(path) if r["env"] == name]
    if not rows:
        return f"Building `{name}` has not been timed yet (`make time-envs`)."
    latest = rows[-1]["date"], rows[-1]["commit"]
    rows = [r for r in rows if (r["date"], r["commit"]) == latest]
    times = {(r["tool"], r["cache"]): float(r["wall_s"]) for r in rows}
    parts = []
    for tool in ("uv", "pip"):
        if (tool, "cold") in times:
            warm = f", {times[tool, 'warm']:.0f} s with its cache filled" if (tool, "warm") in times else ""
            parts.append(f"{times[tool, 'cold']:.0f} s with {tool} (empty cache{warm})")
    others = [float(r["other_cpu_pct"]) for r in rows if r.get("other_cpu_pct")]
    alone = (
        f"other processes used at most {max(others):.0f} % of the CPUs meanwhile"
        if others
        else "not recorded whether it ran alone"
    )
    if others and max(others) > 100 * OTHER_BUSY_LIMIT:
        alone = "**not alone on the machine**: " + alone
    host = f"{rows[-1]['cpu']} ({rows[-1]['cores']} cores)"
    return (
        f"Building `{name}` from its lock took {' and '.join(parts)} on {host}, {latest[0]} at commit {latest[1]}; "
        f"{alone} ([results/benchmarks/env-build.csv](results/benchmarks/env-build.csv), `make time-envs`)."
    )


# the generated blocks this tool writes (``make readme`` leaves them to ``--pages``): name -> render(record path)
BLOCKS = {"env-build-time": render_phrase}  # README: building an environment from its lock


def write_pages(record: Path | None = None, readme: Path | None = None) -> list[Path]:
    """Render ``BLOCKS`` from ``record`` (default ``RECORD``, the committed one) onto the page beside ``readme``
    (default ``README``) that holds each; returns the pages written."""
    record, readme = Path(record or RECORD), Path(readme or README)
    pages = []
    for name, render in BLOCKS.items():
        pages.append(write_block(name, render(record), readme))
        print(f"time-envs: refreshed the {name} block in {pages[-1]}")
    return pages


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", default="gluonts-0.13", help="the declared environment to time")
    parser.add_argument("--tools", default="uv,pip", help="comma-separated builders to time (uv, pip)")
    parser.add_argument("--record", default=None, help=f"the CSV to append to (default: {RECORD})")
    parser.add_argument(
        "--pages",
        action="store_true",
        help="measure nothing: only re-render the README's block from the committed record (make readme)",
    )


def run(args) -> int:
    """Measure and record; with the default record, also refresh the README's ``env-build-time`` block."""
    rows = measure(args.name, tools=tuple(t for t in args.tools.split(",") if t))
    append_record(rows, Path(args.record) if args.record else RECORD)
    if args.record is None:
        write_pages()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/env_build_timing.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.pages and args.record:
        parser.error("--pages renders the committed record; --record names where a measurement goes")
    try:
        if args.pages:
            write_pages()
            return 0
        return run(args)
    except FwbenchError as exc:
        print(f"env_build_timing: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
