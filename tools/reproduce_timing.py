"""How long ``make reproduce`` takes, measured in a fresh clone (``make time-reproduce``).

    .venv/bin/python tools/reproduce_timing.py --profile quick [--cold-only] [--build-venv] [--record FILE]
    .venv/bin/python tools/reproduce_timing.py --pages      # only re-render the blocks from the committed record

A tool of the repository, not part of the package ``fwbench``: it measures the repository itself. The durations
the README and docs/benchmarks.md state for ``make reproduce`` are rendered from the records this writes
(``render_reproduce_timings`` and ``render_reproduce_phrase`` below, the blocks ``BLOCKS`` names), never typed in:
a measurement with the default record refreshes them, and so does ``--pages`` (which ``make readme`` runs).

One measurement:

1. clones the checkout's committed ``HEAD`` (``git clone --no-hardlinks``, then a detached checkout of that
   commit) into a new temporary folder. Uncommitted changes are not in the clone: the record names the commit, and
   ``source_dirty`` says whether the checkout had uncommitted changes (which were then not measured).
2. the environment: by default the checkout's existing ``.venv`` is **reused through a symlink**
   (``<clone>/.venv -> <checkout>/.venv``) and make is told not to rebuild it (``make -o .venv/.installed``), so
   pip never runs and the shared environment is not touched; ``PYTHONPATH=<clone>/lib`` puts the clone's own code
   ahead of the editable install in every process (the notebooks' kernels and the trial processes inherit it).
   ``--build-venv`` instead lets the clone build its own ``.venv`` inside the cold run (truly cold; pip installs
   from the registry or its local cache, so that run also measures the network).
3. a fresh results store, derived-data cache, figures folder and ONNX artefacts: ``FWBENCH_RESULTS`` and
   ``FWBENCH_CACHE_DIR`` point into the temporary folder, the figures and the artefacts live in the clone. The
   datasets are read where they are (``FWBENCH_DATA_DIR`` as set, else the checkout's ``../shared/data`` when it
   exists, else the default), never copied. Caches outside the project (matplotlib's font cache, pip's) are not
   cleared.
4. runs ``make reproduce PROFILE=<profile>`` twice: **cold**, then **warm** (nothing changed: every trial is
   reused, the figures and the post are rebuilt). For each run it records the wall time of the whole make
   (``time.perf_counter``), each notebook's duration as papermill stored it in the executed notebook's metadata,
   the trials in the store, the load average before and after, and the share of the CPUs other processes used
   while it ran (``provenance.MachineLoad``: the machine's busy CPU time minus this process tree's).
5. appends one row per run to ``results/benchmarks/reproduce.csv`` (``RECORD``, committed), then removes the
   temporary folder (``--keep`` keeps it; a failed run always keeps it and says where).

Timed work must run alone: ``other_cpu_pct`` and the load averages say afterwards whether it did.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fwbench.errors import FwbenchError
from fwbench.generated_blocks import write_block
from fwbench.paths import REPO_ROOT
from fwbench.provenance import OTHER_BUSY_LIMIT, MachineLoad, cpu_model, this_cpu

RECORD = REPO_ROOT / "results" / "benchmarks" / "reproduce.csv"
FIELDS = (
    "measurement",  # the start of the invocation (UTC): a cold row and its warm row share it
    "date",  # when this run started (UTC)
    "commit",
    "source_dirty",
    "profile",
    "run",  # cold | warm
    "venv",  # reused (symlink, not rebuilt) | built (inside the cold run)
    "exit_code",
    "wall_s",
    "notebooks_s",  # name=seconds;name=seconds (papermill's durations, in run order)
    "trials_done",  # finished trials in the store after the run
    "trials_run",  # of those, run by this run (the rest were reused)
    "host",
    "cpu_model",
    "cores",
    "mem_gib",
    "load_before",  # 1/5/15-minute load averages
    "load_after",
    "other_cpu_pct",  # % of all CPUs other processes kept busy during the run
    "steal_pct",
    "thread_env",  # the OpenMP/BLAS/MXNet thread variables the run was given (K=V;K=V), empty when none
    "cpu",  # the CPU model (vendor/family/model): a wall time is a CPU's; empty in rows written before it
)
OPTIONAL_FIELDS = ("cpu",)  # columns added after rows were recorded: read as empty, written on the next append
_THREAD_PREFIXES = ("OMP_", "KMP_", "MKL_", "OPENBLAS_", "MXNET_CPU_", "GOMP_")
# What the README promises for each run of a profile (the default cold run within 10 minutes)
GOALS_S = {("quick", "cold"): 600, ("quick", "warm"): 60}


@dataclass
class Record:
    measurement: str
    date: str
    commit: str
    source_dirty: bool
    profile: str
    run: str
    venv: str
    exit_code: int
    wall_s: float
    notebooks_s: dict = field(default_factory=dict)
    trials_done: int | None = None
    trials_run: int | None = None
    host: str = ""
    cpu_model: str = ""
    cores: int | None = None
    mem_gib: float | None = None
    load_before: str = ""
    load_after: str = ""
    other_cpu_pct: float | None = None
    steal_pct: float | None = None
    thread_env: str = ""
    cpu: str = ""

    def row(self) -> dict:
        out = {name: getattr(self, name) for name in FIELDS}
        out["notebooks_s"] = ";".join(f"{k}={v:.1f}" for k, v in self.notebooks_s.items())
        out["wall_s"] = f"{self.wall_s:.1f}"
        for key in ("other_cpu_pct", "steal_pct"):
            out[key] = "" if out[key] is None else f"{out[key]:.1f}"
        out["source_dirty"] = str(bool(self.source_dirty)).lower()
        return {k: "" if v is None else v for k, v in out.items()}


# -- the record file ---------------------------------------------------------------------------------------------


def _optional(cast, text: str):
    return cast(text) if text not in ("", None) else None


def parse_notebooks(text: str) -> dict:
    """``"01_imdb_sweep=312.5;02_deepar_monash=80.1"`` -> ``{"01_imdb_sweep": 312.5, ...}`` (order kept)."""
    out = {}
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        name, sep, seconds = part.partition("=")
        if not sep:
            raise FwbenchError(f"notebooks_s entry {part!r} is not NAME=SECONDS")
        out[name.strip()] = float(seconds)
    return out


def read_records(path: Path = RECORD) -> list[Record]:
    """Every run recorded in ``path`` (oldest first); none when the file does not exist. A row missing a column
    of ``FIELDS`` is an error naming the file and the column."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in FIELDS if name not in (reader.fieldnames or []) and name not in OPTIONAL_FIELDS]
        if missing:
            raise FwbenchError(f"{path} lacks the column(s) {', '.join(missing)}; expected {', '.join(FIELDS)}")
        for row in reader:
            records.append(
                Record(
                    measurement=row["measurement"],
                    date=row["date"],
                    commit=row["commit"],
                    source_dirty=row["source_dirty"].strip().lower() == "true",
                    profile=row["profile"],
                    run=row["run"],
                    venv=row["venv"],
                    exit_code=int(row["exit_code"]),
                    wall_s=float(row["wall_s"]),
                    notebooks_s=parse_notebooks(row["notebooks_s"]),
                    trials_done=_optional(int, row["trials_done"]),
                    trials_run=_optional(int, row["trials_run"]),
                    host=row["host"],
                    cpu_model=row["cpu_model"],
                    cores=_optional(int, row["cores"]),
                    mem_gib=_optional(float, row["mem_gib"]),
                    load_before=row["load_before"],
                    load_after=row["load_after"],
                    other_cpu_pct=_optional(float, row["other_cpu_pct"]),
                    steal_pct=_optional(float, row["steal_pct"]),
                    thread_env=row["thread_env"],
                    cpu=row.get("cpu") or "",
                )
            )
    return records


def append_records(records: list[Record], path: Path = RECORD) -> None:
    """Append ``records``; a file whose header lacks a column of ``FIELDS`` (written before it existed) is
    rewritten first with every earlier row under the current header (the new column empty in them)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        with path.open(newline="") as handle:
            header = next(csv.reader(handle), [])
        if tuple(header) != FIELDS:
            earlier = read_records(path)
            path.unlink()
            append_records(earlier, path)
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        if new:
            writer.writeheader()
        for record in records:
            writer.writerow(record.row())


def machine_of(record: Record) -> str:
    """The CPU a run is grouped by: its model (vendor/family/model), or for rows recorded before that column its
    CPU's name (which tells AMD from Intel, not one model from another)."""
    return record.cpu or record.cpu_model


def cpus_measured(records: list[Record], profile: str) -> list[str]:
    """The CPUs (``machine_of``) ``profile`` has a successful cold run on, the latest measured first."""
    cold = sorted(
        (r for r in records if r.profile == profile and r.run == "cold" and r.exit_code == 0),
        key=lambda r: (r.measurement, r.date),
        reverse=True,
    )
    return list(dict.fromkeys(machine_of(r) for r in cold))


def latest_measurement(records: list[Record], profile: str, cpu: str | None = None) -> dict[str, Record]:
    """The latest measurement of ``profile`` (on CPU ``cpu``, as ``machine_of`` names it, when given) whose cold
    run succeeded: ``{"cold": ..., "warm": ...}`` (warm only when it ran and
    succeeded too); empty when there is none."""
    cold = [
        r
        for r in records
        if r.profile == profile and r.run == "cold" and r.exit_code == 0 and (cpu is None or machine_of(r) == cpu)
    ]
    if not cold:
        return {}
    latest = max(cold, key=lambda r: (r.measurement, r.date))
    out = {"cold": latest}
    warm = [r for r in records if r.measurement == latest.measurement and r.run == "warm" and r.profile == profile]
    if warm and warm[-1].exit_code == 0:
        out["warm"] = warm[-1]
    return out


# -- measuring ---------------------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if out.returncode:
        raise FwbenchError(f"git {' '.join(args)} in {repo} failed: {out.stderr.strip()}")
    return out.stdout.strip()


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _mem_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def notebook_durations(executed: Path, since: float) -> dict:
    """Each notebook executed at or after ``since`` (epoch seconds) -> papermill's duration in seconds, in file
    name order (the order ``make reproduce`` runs them); a notebook papermill stopped in has no duration."""
    out = {}
    for path in sorted(Path(executed).glob("*.ipynb")):
        if path.stat().st_mtime < since:
            continue  # left by an earlier run
        meta = json.loads(path.read_text()).get("metadata", {}).get("papermill", {})
        if meta.get("duration") is not None:
            out[path.stem] = float(meta["duration"])
    return out


def _trial_counts(store: Path, since_iso: str) -> tuple[int | None, int | None]:
    """Finished trials in ``store``, and of those the ones that ended at or after ``since_iso``."""
    if not store.exists():
        return 0, 0
    import sqlite3

    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        done = conn.execute("SELECT COUNT(*) FROM trials WHERE status = 'done'").fetchone()[0]
        rows = conn.execute("SELECT ended_at FROM trials WHERE status = 'done'").fetchall()
    since = dt.datetime.fromisoformat(since_iso)
    new = 0
    for (ended,) in rows:
        try:
            when = dt.datetime.fromisoformat(ended)
        except (TypeError, ValueError):
            continue
        when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
        new += when >= since
    return done, new


def _run_make(clone: Path, args: list[str], env: dict, log: Path) -> tuple[int, float]:
    """``make ARGS`` in ``clone``, its output streamed to our stdout and appended to ``log``: (exit code, wall s)."""
    with log.open("a") as sink:
        sink.write(f"\n$ make {' '.join(args)}\n")
        start = time.perf_counter()
        proc = subprocess.Popen(
            ["make", *args], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for line in proc.stdout:
            sys.stdout.write(line)
            sink.write(line)
        code = proc.wait()
        return code, time.perf_counter() - start


def _default_data_dir(repo: Path) -> str | None:
    if os.environ.get("FWBENCH_DATA_DIR"):
        return os.environ["FWBENCH_DATA_DIR"]
    shared = repo.parent / "shared" / "data"
    return str(shared.resolve()) if shared.is_dir() else None


def measure(
    profile: str = "quick",
    repo: Path = REPO_ROOT,
    workdir: Path | None = None,
    build_venv: bool = False,
    runs: tuple[str, ...] = ("cold", "warm"),
    keep: bool = False,
) -> list[Record]:
    """Clone ``repo``'s HEAD, run ``make reproduce PROFILE=profile`` cold then warm, and return one ``Record``
    per run (the module docstring says what is fresh and what is reused)."""
    repo = Path(repo).resolve()
    venv = repo / ".venv"
    if not build_venv and not (venv / ".installed").exists():
        raise FwbenchError(f"no built environment at {venv} to reuse; run `make setup` first (or pass --build-venv)")
    commit = _git(repo, "rev-parse", "HEAD")
    dirty = bool(_git(repo, "status", "--porcelain", "--untracked-files=no"))
    base = Path(workdir or tempfile.mkdtemp(prefix="fwbench-time-reproduce-")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    clone = base / "repo"
    if clone.exists():
        raise FwbenchError(f"{clone} exists already; give an empty --workdir")
    log = base / "make.log"
    print(f"time-reproduce: cloning {repo} at {commit[:10]}{' (uncommitted changes NOT measured)' if dirty else ''}")
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(repo), str(clone)], check=True)
    _git(clone, "checkout", "--quiet", "--detach", commit)
    if not build_venv:
        (clone / ".venv").symlink_to(venv, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FWBENCH_") and k not in ("PROFILE", "MAKEFLAGS")}
    env.update(
        FWBENCH_RESULTS=str(base / "store.sqlite"),
        FWBENCH_CACHE_DIR=str(base / "cache"),
        PYTHONPATH=os.pathsep.join([str(clone / "lib"), *filter(None, [os.environ.get("PYTHONPATH")])]),
    )
    data = _default_data_dir(repo)
    if data:
        env["FWBENCH_DATA_DIR"] = data
    make_args = ["reproduce", f"PROFILE={profile}"] + ([] if build_venv else ["-o", ".venv/.installed"])
    measurement = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    records, failed = [], False
    for run in runs:
        started = dt.datetime.now(dt.UTC)
        for old in (clone / "build" / "executed").glob("*.ipynb"):
            old.unlink()  # outputs only (make reproduce reads none): what is there afterwards is this run's
        since = time.time() - 1.0  # file times are coarser than the clock
        load_before = _load()
        machine = MachineLoad()
        print(f"time-reproduce: {run} run of `make {' '.join(make_args)}` (log: {log})")
        code, wall = _run_make(clone, make_args, env, log)
        busy = machine.stop()
        done, new = _trial_counts(base / "store.sqlite", started.isoformat())
        record = Record(
            measurement=measurement,
            date=started.isoformat(timespec="seconds"),
            commit=commit,
            source_dirty=dirty,
            profile=profile,
            run=run,
            venv="built" if build_venv else "reused",
            exit_code=code,
            wall_s=wall,
            notebooks_s=notebook_durations(clone / "build" / "executed", since),
            trials_done=done,
            trials_run=new,
            host=socket.gethostname(),
            cpu_model=cpu_model(),
            cores=os.cpu_count(),
            cpu=this_cpu() or "",
            mem_gib=_mem_gib(),
            load_before=load_before,
            load_after=_load(),
            other_cpu_pct=100 * busy["other_busy_frac"],
            steal_pct=100 * busy["steal_frac"],
            thread_env=";".join(f"{k}={v}" for k, v in sorted(env.items()) if k.startswith(_THREAD_PREFIXES)),
        )
        records.append(record)
        print(f"time-reproduce: {run} run: exit {code}, {wall:.1f} s, {new} trial(s) run, {done} in the store")
        if code:
            failed = True
            break
    if failed or keep:
        print(f"time-reproduce: the clone, store and log are kept in {base}")
    else:
        if (clone / ".venv").is_symlink():
            (clone / ".venv").unlink()  # never follow the link into the shared environment
        shutil.rmtree(base)
    return records


# -- the pages: how long `make reproduce` takes, from the recorded runs ------------------------------------------

REPRODUCE_PROFILES = ("smoke", "quick")  # the profiles whose duration the README states from a record
_RECORD_LINK = "results/benchmarks/reproduce.csv"  # relative to the repository root


def _duration(seconds: float) -> str:
    """``472.3`` -> ``"7 min 52 s"``, ``600`` -> ``"10 min"``; under a minute ``"41 s"``."""
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min" + (f" {whole % 60:02d} s" if whole % 60 else "")


def _when(record) -> str:
    return f"{record.date[:10]} at commit {record.commit[:10]}"


def _how(record) -> str:
    env = (
        "`.venv` built inside the cold run (nothing installed beforehand)"
        if record.venv == "built"
        else "the existing `.venv` reused, not rebuilt"
    )
    return f"a fresh clone, a fresh results store and cache, {env}"


def _host(record) -> str:
    mem = f", {record.mem_gib:g} GiB" if record.mem_gib else ""
    model = f" {record.cpu}" if record.cpu else ", model not recorded"
    return f"{record.cpu_model or 'CPU not recorded'}{model} ({record.cores or '?'} cores{mem})"


def _version(record, latest) -> str:
    """The run's trial count, and whether its profile was an older version than the ``latest`` run's (another
    trial count: a grid changed since, so the two times time different work)."""
    if record.trials_done is None:
        return "trials not recorded"
    if latest is not None and latest.trials_done is not None and record.trials_done != latest.trials_done:
        return f"{record.trials_done} trials: an older version of the profile, now {latest.trials_done}"
    return f"{record.trials_done} trials"


def _alone(record) -> str:
    """What was running beside the run: the CPU share of other processes and the load averages."""
    load = f"load average {record.load_before or '?'} before, {record.load_after or '?'} after (1/5/15 min)"
    if record.other_cpu_pct is None:
        return load
    text = f"other processes used {record.other_cpu_pct:.1f} % of the CPUs during it; {load}"
    if record.thread_env:
        text += f"; thread variables {record.thread_env.replace(';', ', ')}"
    if record.other_cpu_pct > 100 * OTHER_BUSY_LIMIT:
        text = "**not alone on the machine**: " + text + "; this wall time overstates the run's own"
    return text


def _notebooks(record) -> str:
    return ", ".join(f"{name} {seconds:.0f} s" for name, seconds in record.notebooks_s.items()) or "-"


def _trials(record) -> str:
    if record.trials_done is None:
        return "-"
    if record.run == "warm" and not record.trials_run:
        return f"all {record.trials_done} reused"
    return f"{record.trials_run} run" + (
        f", {record.trials_done - record.trials_run} reused" if record.trials_done > (record.trials_run or 0) else ""
    )


def render_reproduce_timings(path=None) -> str:
    """docs/benchmarks.md's table of `make reproduce` wall times: the latest measurement of each profile in the
    record (``RECORD``), cold and warm, each notebook's papermill duration, the host and
    what else ran; an honest sentence when nothing is recorded."""

    records = read_records(path or RECORD)
    profiles = list(dict.fromkeys([*REPRODUCE_PROFILES[::-1], *(r.profile for r in records)]))  # quick first
    parts = []
    for profile, cpu in ((p, c) for p in profiles for c in cpus_measured(records, p)):  # each CPU model's latest
        runs = latest_measurement(records, profile, cpu)
        if not runs:
            continue
        cold = runs["cold"]
        version = _version(cold, latest_measurement(records, profile)["cold"])
        rows = [
            "| run | wall time | goal | trials | notebooks (papermill's durations) | the rest (make, the post) |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in runs.items():
            goal = GOALS_S.get((profile, name))
            rest = r.wall_s - sum(r.notebooks_s.values())
            rows.append(
                f"| {name} | **{_duration(r.wall_s)}** ({r.wall_s:.0f} s) | "
                f"{'<= ' + _duration(goal) if goal else '-'} | {_trials(r)} | {_notebooks(r)} | "
                f"{_duration(rest) if r.notebooks_s and rest >= 0 else '-'} |"
            )
        dirty = (
            " The checkout had uncommitted changes; they were not measured (the clone is of the commit)."
            if cold.source_dirty
            else ""
        )
        parts.append(
            f"**`make reproduce PROFILE={profile}`**, measured by `make time-reproduce PROFILE={profile}` on "
            f"{_when(cold)}: {_how(cold)}; on {_host(cold)}; {version}. Cold run: {_alone(cold)}."
            + (f" Warm run: {_alone(runs['warm'])}." if "warm" in runs else " No warm run is recorded.")
            + dirty
            + "\n\n"
            + "\n".join(rows)
        )
    if not parts:
        return (
            f"No run of `make reproduce` is recorded yet in [`{_RECORD_LINK}`](../{_RECORD_LINK}), so this page "
            "states no wall time: `make time-reproduce` measures one (alone on the machine) and `make readme` "
            "writes it here."
        )
    return (
        "\n\n".join(parts) + f"\n\nEvery run is a row of [`{_RECORD_LINK}`](../{_RECORD_LINK}) (the commit, the "
        "host, the load averages and the other processes' CPU share, each notebook's duration); this block shows the "
        "latest measurement of each profile on each CPU (its model where recorded, else its name), with the trials its "
        "profile had then."
    )


def render_reproduce_phrase(path=None) -> str:
    """The README's list items saying how long `make reproduce` takes under ``REPRODUCE_PROFILES``, each from the
    latest recorded measurement (``render_reproduce_timings`` has the details), or saying none is recorded."""

    records = read_records(path or RECORD)
    what = {
        "smoke": "every notebook at toy size (what the tests run)",
        "quick": "(the default) the small-scale check of every claim",
    }
    lines = []
    for profile in REPRODUCE_PROFILES:
        runs = latest_measurement(records, profile)
        head = f"- `PROFILE={profile}` {what.get(profile, '')}".rstrip()
        if not runs:
            lines.append(
                f"{head}: no wall time is recorded yet (`make time-reproduce PROFILE={profile}` measures one; "
                "[how](docs/benchmarks.md#wall-times-of-make-reproduce))."
            )
            continue
        cold = runs["cold"]
        built = " including building `.venv`" if cold.venv == "built" else ", `.venv` already built"
        warm = f" and {_duration(runs['warm'].wall_s)} warm (nothing changed)" if "warm" in runs else ""
        busy = (
            f"; other work took {cold.other_cpu_pct:.0f} % of the CPUs meanwhile, so this overstates it"
            if cold.other_cpu_pct is not None and cold.other_cpu_pct > 100 * OTHER_BUSY_LIMIT
            else ""
        )
        others = [
            latest_measurement(records, profile, cpu)["cold"]
            for cpu in cpus_measured(records, profile)
            if cpu != machine_of(cold)
        ]
        elsewhere = "".join(
            f" On {_host(r)}: **{_duration(r.wall_s)}** cold ({_version(r, cold)}; {_when(r)})." for r in others
        )
        lines.append(
            f"{head}: **{_duration(cold.wall_s)}** cold ({_version(cold, cold)}, a fresh clone and results store"
            f"{built}){warm} on "
            f"{_host(cold)}, measured by `make time-reproduce` on {_when(cold)} "
            f"([details](docs/benchmarks.md#wall-times-of-make-reproduce)){busy}.{elsewhere}"
        )
    return "\n".join(lines)


# the generated blocks this tool writes (``make readme`` leaves them to ``--pages``): name -> render(record path)
BLOCKS = {
    "timings": render_reproduce_timings,  # docs/benchmarks.md: `make reproduce` wall times
    "reproduce-time": render_reproduce_phrase,  # README: how long each profile takes, from the same record
}


def write_pages(repo: Path = REPO_ROOT, record: Path | None = None) -> list[Path]:
    """Render ``BLOCKS`` from ``record`` (default: ``repo``'s committed one) onto the pages of ``repo`` that hold
    them (the README or a docs/ page, ``fwbench.generated_blocks``); returns the pages written, in block order."""
    repo = Path(repo).resolve()
    record = Path(record) if record else repo / "results" / "benchmarks" / "reproduce.csv"
    pages = []
    for name, render in BLOCKS.items():
        pages.append(write_block(name, render(record), repo / "README.md"))
        print(f"time-reproduce: refreshed the {name} block in {pages[-1]}")
    return pages


# -- the command -------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="quick", help="the PROFILE of `make reproduce` (default quick)")
    parser.add_argument("--repo", default=str(REPO_ROOT), help="the checkout whose HEAD is cloned and timed")
    parser.add_argument("--record", default=None, help="CSV to append to (default <repo>/results/benchmarks/...)")
    parser.add_argument("--workdir", default=None, help="an empty folder for clone, store and log (default: temp)")
    parser.add_argument("--build-venv", action="store_true", help="build .venv in the cold run instead of reusing it")
    parser.add_argument("--cold-only", action="store_true", help="skip the warm rerun")
    parser.add_argument("--keep", action="store_true", help="keep the clone, store and log afterwards")
    parser.add_argument(
        "--pages",
        action="store_true",
        help="measure nothing: only re-render the blocks of <repo>'s pages from its committed record (make readme)",
    )


def run(args) -> int:
    """Measure, append the runs to the record, exit 0 when every run succeeded; with the default record (the
    checkout's own), also refresh the blocks that state its durations (``BLOCKS``), so the pages never lag it."""
    repo = Path(args.repo).resolve()
    record = Path(args.record) if args.record else repo / "results" / "benchmarks" / "reproduce.csv"
    runs = ("cold",) if args.cold_only else ("cold", "warm")
    workdir = Path(args.workdir) if args.workdir else None
    records = measure(args.profile, repo, workdir, build_venv=args.build_venv, runs=runs, keep=args.keep)
    append_records(records, record)
    print(f"time-reproduce: {len(records)} run(s) appended to {record}")
    if args.record is None:
        write_pages(repo, record)
    return 0 if records and all(r.exit_code == 0 for r in records) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/reproduce_timing.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.pages and args.record:
        parser.error("--pages renders the committed record of --repo; --record names where a measurement goes")
    try:
        if args.pages:
            write_pages(Path(args.repo))
            return 0
        return run(args)
    except FwbenchError as exc:
        print(f"reproduce_timing: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
