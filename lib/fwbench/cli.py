"""The ``fwbench`` command: the notebooks' work without notebooks, for headless and cluster use.

    fwbench run imdb --profile quick [--set batch_sizes=[64,256]] [--timeout 3600] [--memory-limit-mb 8192]
    fwbench run imdb --profile full --scheduler tcp://HOST:8786 [--trials-per-host 1] [--tls-ca-file ...]
    fwbench estimate imdb --workers 8 [--profile full]
    fwbench status [--study imdb] [--profile quick] [--adaptive]
    fwbench export [--format csv|parquet ...] [-o DIR] [--study imdb]   (or -o FILE.csv: the single wide CSV)
    fwbench bench [harness|harness-paired|deepar|data]
    fwbench ledger [-o ledger.csv] [--profile quick|all] [--compare STORE_A STORE_B]
    fwbench time-reproduce [--profile quick] [--cold-only] [--build-venv] [--record FILE]   (alone on the machine)

Errors in the input are one line (``fwbench: error: ...``) with exit status 2; a sweep in which any trial
failed ends with exit status 1 after its summary.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from .errors import FwbenchError


def parse_assignment(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise FwbenchError(f"--set expects KEY=VALUE (e.g. --set epochs=3), got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw  # a bare word is a string
    return key.strip(), value


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, like every other input error (argparse prints usage + message)
        self.exit(2, f"fwbench: error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fwbench", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run or resume a study's sweep")
    run.add_argument("study")
    run.add_argument("--profile", default="quick")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile option (Python literal), repeatable",
    )
    run.add_argument("--timeout", type=float, default=None, help="seconds per trial before it is failed")
    run.add_argument(
        "--stop-file",
        default=None,
        metavar="PATH",
        help="once PATH exists, stop after the trial that completes its setting's repeat block "
        "(a run in pieces never splits a block); rerun to resume",
    )
    run.add_argument(
        "--rerun-busy",
        action="store_true",
        help="also rerun finished trials flagged busy_machine (other processes took the CPU while "
        "they were timed); their rows are replaced",
    )
    run.add_argument("--progress", choices=["auto", "lines", "bar", "none"], default="auto")
    run.add_argument(
        "--dataset",
        dest="datasets",
        action="append",
        default=None,
        metavar="NAME",
        help="deepar: run only this Monash dataset (repeatable; narrows the profile)",
    )
    run.add_argument(
        "--seed",
        dest="seeds",
        action="append",
        type=int,
        default=None,
        metavar="N",
        help="deepar: run only this seed (repeatable; narrows the profile)",
    )
    run.add_argument(
        "--memory-limit-mb",
        type=int,
        default=None,
        help="cap each trial's address space (RLIMIT_AS); a trial going over is failed",
    )
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the trials on a Dask cluster (tcp://HOST:8786, tls://..., or a scheduler file)",
    )
    run.add_argument(
        "--trials-per-host",
        type=int,
        default=1,
        help="with --scheduler: trials allowed to share one machine (default 1: timings alone)",
    )
    for flag, env in (
        ("--tls-ca-file", "FWBENCH_TLS_CA_FILE"),
        ("--tls-cert", "FWBENCH_TLS_CERT"),
        ("--tls-key", "FWBENCH_TLS_KEY"),
    ):
        run.add_argument(flag, default=None, help=f"with a tls:// scheduler (or set {env})")

    estimate = sub.add_parser("estimate", help="how long a profile takes on N workers, from the stored trials")
    estimate.add_argument("study", nargs="?")
    estimate.add_argument("--workers", type=int, default=None, help="required unless --check")
    estimate.add_argument("--profile", default="full")
    estimate.add_argument(
        "--save",
        default=None,
        metavar="FILE",
        help="also write the per-trial prediction to FILE (JSON), to check after the run",
    )
    estimate.add_argument(
        "--check",
        default=None,
        metavar="FILE",
        help="instead: set a saved prediction against what the store measured since",
    )

    status = sub.add_parser("status", help="what is done / missing / failed")
    status.add_argument("--study", default=None)
    status.add_argument("--profile", default=None, help="also count the trials of this profile still missing")
    status.add_argument(
        "--adaptive",
        action="store_true",
        help="with --profile using adaptive repeats: the per-setting table (blocks, CI, CPU saved)",
    )

    export = sub.add_parser("export", help="the results as tables: measurements, trials, environments")
    export.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        help="folder for measurements/trials/environments.<format> (default with --format: the "
        "store's folder); a FILE.csv writes the single wide CSV instead (so does no -o and no "
        "--format, on standard output)",
    )
    export.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=["csv", "parquet"],
        default=None,
        help="table format, repeatable (--format csv --format parquet); default csv",
    )
    export.add_argument("--study", default=None)
    export.add_argument("--profile", default=None, help="only this profile's trials (e.g. paper, for results/paper)")

    ledger = sub.add_parser("ledger", help="the claims ledger: one verdict per claim, computed from the store")
    ledger.add_argument("-o", "--output", default=None, help="CSV file to write (default: a table on standard output)")
    ledger.add_argument("--profile", default="quick", help="whose trials to judge ('all': every row of the store)")
    ledger.add_argument(
        "--compare",
        nargs=2,
        metavar=("STORE_A", "STORE_B"),
        default=None,
        help="stability check: two independent runs of one profile; exit 1 if a verdict differs",
    )

    bench = sub.add_parser("bench", help="benchmarks of the harness itself")
    bench.add_argument("what", nargs="?", default="all", choices=["all", "harness", "harness-paired", "deepar", "data"])
    envs = sub.add_parser("envs", help="the declared environments (envs/NAME/): state, build, lock")
    envs.add_argument("names", nargs="*", help="environments to act on (default: every declared one but main)")
    envs.add_argument("--build", action="store_true", help="build the missing and stale ones from their locks")
    envs.add_argument("--rebuild", action="store_true", help="build them even when built and current")
    envs.add_argument("--lock", action="store_true", help="regenerate their locks from requirements.in (uv)")
    envs.add_argument("--tool", choices=["auto", "uv", "pip"], default="auto", help="builder (auto: uv if installed)")
    envs.add_argument("--profile", default=None, help="only the environments this profile's plans need")

    timing = sub.add_parser(
        "time-reproduce",
        help="time `make reproduce` cold then warm in a fresh clone of HEAD; append to results/benchmarks/",
    )
    from .reproduce_timing import add_arguments

    add_arguments(timing)
    migrate = sub.add_parser(
        "migrate-fingerprints", help="carry stored trials across a code change that changed no trial's work"
    )
    migrate.add_argument(
        "--from-commit",
        required=True,
        help="the git commit whose code measured the trials (its fingerprints are recomputed)",
    )
    migrate.add_argument("--reason", required=True, help="which change, and why it changes no trial's work")
    migrate.add_argument("--store", default=None, help="the results store (default: FWBENCH_RESULTS)")
    return parser


def cmd_migrate(args) -> int:
    from .migrate import current_fingerprints, fingerprints_at, migrate_fingerprints
    from .paths import results_path

    store = args.store or results_path()
    old, new = fingerprints_at(args.from_commit), current_fingerprints()
    moved = migrate_fingerprints(store, old, new, from_commit=args.from_commit, reason=args.reason)
    for study, count in moved.items():
        if count:
            print(f"{study}: {count} trial(s) moved from {old[study]} to {new[study]}")
    if not any(moved.values()):
        print(f"nothing to move: the migration from {args.from_commit} is already on record in {store}")
    return 0


def cmd_run(args) -> int:
    from .runner import run_sweep

    overrides = dict(parse_assignment(s) for s in args.overrides)
    for name in ("datasets", "seeds"):  # --dataset / --seed map to the study options of the same name
        if getattr(args, name):
            overrides[name] = getattr(args, name)
    security = None
    if args.scheduler is not None:
        from .cluster import make_security

        security = make_security(args.tls_ca_file, args.tls_cert, args.tls_key)
    summary = run_sweep(
        args.study,
        args.profile,
        overrides,
        progress=args.progress,
        timeout_s=args.timeout,
        memory_limit_mb=args.memory_limit_mb,
        scheduler=args.scheduler,
        trials_per_host=args.trials_per_host,
        security=security,
        rerun_busy=args.rerun_busy,
        stop_file=args.stop_file,
    )
    for failure in summary.failed:
        print(f"FAILED {failure['label']} [{failure['trial_id']}]: {failure['error']}", file=sys.stderr)
    return 0 if summary.ok else 1


def cmd_status(args) -> int:
    from .paths import results_path
    from .status import status_lines
    from .store import ResultsStore

    if args.adaptive and not args.profile:
        raise FwbenchError("--adaptive needs --profile (a profile with adaptive repeats)")
    print("\n".join(status_lines(ResultsStore.open_read(results_path()), args.study, args.profile, args.adaptive)))
    return 0


def cmd_export(args) -> int:
    from . import export
    from .paths import results_path
    from .store import ResultsStore

    output, formats = args.output, args.formats
    if output and output.lower().endswith(".parquet"):
        raise FwbenchError(f"-o {output}: the export is three tables; name a folder (-o results)")
    single_csv = bool(output and output.lower().endswith(".csv"))
    if single_csv and formats and set(formats) != {"csv"}:
        raise FwbenchError(f"-o {output} writes the single wide CSV; for Parquet name a folder (-o results)")
    store = ResultsStore.open_read(results_path())
    if single_csv or (output is None and not formats):  # the former wide table: a file, or standard output
        frame = export.wide(store, args.study)
        if output:
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            frame.to_csv(output, index=False)
            print(f"wrote {len(frame)} rows to {output}", file=sys.stderr)
        else:
            frame.to_csv(sys.stdout, index=False)
        return 0
    out = output or results_path().parent
    files = export.write_tables(store, out, formats or ["csv"], args.study, args.profile)
    print(f"wrote {', '.join(p.name for p in files)} to {out}", file=sys.stderr)
    return 0


def cmd_estimate(args) -> int:
    from .estimate import estimate_full_runtime
    from .paths import results_path
    from .store import ResultsStore

    path = results_path()
    if args.check is None and (args.study is None or args.workers is None):
        raise FwbenchError(
            "fwbench estimate needs a study and --workers (e.g. `fwbench estimate imdb --workers 8`), or --check FILE"
        )
    if not path.exists():
        raise FwbenchError(
            f"no results store at {path}; run `fwbench run {args.study or 'imdb'} --profile quick` "
            "first or set FWBENCH_RESULTS"
        )
    store = ResultsStore.open_read(path)
    if args.check is not None:
        from .analysis.estimate_check import check_markdown, check_prediction

        print(check_markdown(check_prediction(Path(args.check), store)))
        return 0
    estimate = estimate_full_runtime(store, args.study, args.workers, args.profile)
    print("\n".join(estimate.lines()))
    if args.save:
        from .analysis.estimate_check import save_prediction

        save_prediction(estimate, Path(args.save), store)
        print(f"prediction written to {args.save}", file=sys.stderr)
    return 0


def cmd_ledger(args) -> int:
    from . import ledger

    if args.compare:
        return _compare(args)

    table = ledger.build(profile=args.profile)
    if args.output:
        table.to_csv(args.output, index=False)
        print(f"wrote {len(table)} claims to {args.output}", file=sys.stderr)
    else:
        print(
            table[
                ["claim_id", "verdict", "estimate", "ci_low", "ci_high", "n", "our_hardware", "verdict_band10"]
            ].to_string(index=False)
        )
    return 0


def _compare(args) -> int:
    from pathlib import Path

    from .ledger.stability import compare, summary_lines
    from .store import ResultsStore

    for path in args.compare:
        if not Path(path).is_file():
            raise FwbenchError(f"no results store at {path}; give two stores of independent runs of one profile")
    table, summary = compare(*(ResultsStore.open_read(p) for p in args.compare), profile=args.profile)
    if args.output:
        table.to_csv(args.output, index=False)
        print(f"wrote {len(table)} parts to {args.output}", file=sys.stderr)
    print("\n".join(summary_lines(summary)))
    return 0 if not summary["disagreeing_claims"] else 1


def cmd_envs(args) -> int:
    from . import environments as E

    declared = E.all_environments()
    names = list(args.names) or [n for n in declared if n != E.MAIN]
    if args.profile:
        names = [n for n in names if n in E.needed_by(profile=args.profile)]
    chosen = [E.get_environment(n) for n in names]
    if args.lock:
        for env in chosen:
            E.lock(env)
    if args.build or args.rebuild:
        for env in chosen:
            if env.name != E.MAIN and (args.rebuild or env.state() != "built"):
                wall = E.build(env, tool=args.tool)
                print(f"{env.name}: built in {wall:.1f} s")
    if not (args.build or args.rebuild or args.lock) or not args.names:
        shown = declared.values() if not (args.names or args.profile) else chosen
        for env in shown:
            lock = env.lock_hash() if env.lock.exists() else "no lock"
            print(f"{env.name:<16} {env.state():<8} lock {lock}  {env.purpose}")
    return 0


def cmd_bench(args) -> int:
    if args.what == "harness-paired":  # not in "all": up to 45 minutes of a quiet machine
        from . import bench_paired

        return bench_paired.main()
    from . import bench

    return bench.main(args.what)


def cmd_time_reproduce(args) -> int:
    """Measure and record; with the default record (the checkout's own), also refresh the two blocks that state
    its durations (docs/benchmarks.md's ``timings``, the README's ``reproduce-time``), so the pages never lag it."""
    from .generated_blocks import write_block
    from .readme_timings import render_reproduce_phrase, render_reproduce_timings
    from .reproduce_timing import run

    code = run(args)
    if args.record is None:
        repo = Path(args.repo).resolve()
        record = repo / "results" / "benchmarks" / "reproduce.csv"
        for name, render in (("timings", render_reproduce_timings), ("reproduce-time", render_reproduce_phrase)):
            page = write_block(name, render(record), repo / "README.md")
            print(f"time-reproduce: refreshed the {name} block in {page}")
    return code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {
            "run": cmd_run,
            "status": cmd_status,
            "export": cmd_export,
            "bench": cmd_bench,
            "estimate": cmd_estimate,
            "ledger": cmd_ledger,
            "migrate-fingerprints": cmd_migrate,
            "envs": cmd_envs,
            "time-reproduce": cmd_time_reproduce,
        }[args.command](args)
    except FwbenchError as exc:
        print(f"fwbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fwbench: interrupted; finished trials are in the store, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
