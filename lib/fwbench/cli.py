"""The ``fwbench`` command: the notebooks' work without notebooks, for headless and cluster use.

    fwbench run imdb --profile quick [--set batch_sizes=[64,256]] [--timeout 3600] [--memory-limit-mb 8192]
    fwbench run imdb --profile full --scheduler tcp://HOST:8786 [--trials-per-host 1] [--tls-ca-file ...]
    fwbench estimate imdb --workers 8 [--profile full]
    fwbench status [--study imdb] [--profile quick] [--adaptive]
    fwbench export [--format csv|parquet ...] [-o DIR] [--study imdb]   (or -o FILE.csv: the single wide CSV)
    fwbench ledger [-o ledger.csv] [--profile quick|all] [--compare STORE_A STORE_B]

The repository's measurements of itself (``make bench``, ``make time-reproduce``, ``make time-envs``) are tools in
``tools/``, not commands of ``fwbench``.

Errors in the input are one line (``fwbench: error: ...``) with exit status 2; a sweep in which any trial
failed ends with exit status 1 after its summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .cli_args import build_parser, parse_assignment
from .errors import FwbenchError


def cmd_migrate(args) -> int:
    from .migrate import current_fingerprints, fingerprints_at, migrate_fingerprints
    from .paths import results_path

    store = args.store or results_path()
    old, new = fingerprints_at(args.from_commit), current_fingerprints()
    if args.study:  # only these studies move; another study's trials stay stale, to be rerun
        unknown = sorted(set(args.study) - set(new))
        if unknown:
            raise FwbenchError(f"--study {', '.join(unknown)}: no such study; known: {', '.join(sorted(new))}")
        old = {k: v for k, v in old.items() if k in args.study}
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
        from .cluster_connect import make_security

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
        parts=args.parts,
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
        frame = store.measurements(args.study)
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
        from . import prose
        from .analysis.estimate_accuracy import check_prediction

        print(prose.estimate_accuracy_table(check_prediction(Path(args.check), store)))
        return 0
    estimate = estimate_full_runtime(store, args.study, args.workers, args.profile, cpu=args.cpu)
    print("\n".join(estimate.lines()))
    if args.save:
        from .analysis.estimate_accuracy import save_prediction

        save_prediction(estimate, Path(args.save), store)
        print(f"prediction written to {args.save}", file=sys.stderr)
    return 0


def cmd_ledger(args) -> int:
    from . import ledger
    from .analysis import Results

    if args.compare:
        return _compare(args)

    results = Results.open(args.profile)
    table = ledger.build_by_condition(results) if args.by_cpu else ledger.build(results)
    if args.output:
        table.to_csv(args.output, index=False)
        print(f"wrote {len(table)} claims to {args.output}", file=sys.stderr)
    else:
        shown = ["claim_id", "verdict", "estimate", "ci_low", "ci_high", "n", "our_hardware", "verdict_band10"]
        print(table[(["cpu", "fp_mode"] if args.by_cpu else []) + shown].to_string(index=False))
    return 0


def _compare(args) -> int:
    from . import prose
    from .analysis import Results
    from .ledger.stability import compare

    for path in args.compare:
        if not Path(path).is_file():
            raise FwbenchError(f"no results store at {path}; give two stores of independent runs of one profile")
    table, summary = compare(*(Results.open(args.profile, path=p) for p in args.compare))
    if args.output:
        table.to_csv(args.output, index=False)
        print(f"wrote {len(table)} parts to {args.output}", file=sys.stderr)
    print(prose.ledger_stability(summary))
    return 0 if not summary["disagreeing_claims"] else 1


def cmd_envs(args) -> int:
    from . import environments as E
    from .planning import environments_needed

    declared = E.all_environments()
    names = list(args.names) or [n for n in declared if n != E.MAIN]
    if args.profile:
        names = [n for n in names if n in environments_needed(profile=args.profile)]
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {
            "run": cmd_run,
            "status": cmd_status,
            "export": cmd_export,
            "estimate": cmd_estimate,
            "ledger": cmd_ledger,
            "migrate-fingerprints": cmd_migrate,
            "envs": cmd_envs,
        }[args.command](args)
    except FwbenchError as exc:
        print(f"fwbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fwbench: interrupted; finished trials are in the store, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
