"""The ``fwbench`` command's arguments: every subcommand, its options and their help (``build_parser``), and the
``--set option=value`` parser. ``fwbench.cli`` holds what each command does."""

from __future__ import annotations

import argparse
import ast

from .cluster_connect import TLS_ENV
from .errors import FwbenchError

DESCRIPTION = "The ``fwbench`` command: the notebooks' work without notebooks, for headless and cluster use."


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
    """Options without a ``default`` default to None (argparse's own), ``action="append"`` ones included."""
    parser = _Parser(prog="fwbench", description=DESCRIPTION)
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
    run.add_argument("--timeout", type=float, help="seconds per trial before it is failed")
    run.add_argument(
        "--stop-file",
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
        metavar="NAME",
        help="deepar: run only this Monash dataset (repeatable; narrows the profile)",
    )
    run.add_argument(
        "--part",
        dest="parts",
        action="append",
        metavar="PART",
        help="run only the planned trials of this part (repeatable; e.g. deepar's coverage): a piece of the plan",
    )
    run.add_argument(
        "--seed",
        dest="seeds",
        action="append",
        type=int,
        metavar="N",
        help="deepar: run only this seed (repeatable; narrows the profile)",
    )
    run.add_argument(
        "--memory-limit-mb", type=int, help="cap each trial's address space (RLIMIT_AS); a trial going over is failed"
    )
    run.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the trials on a Dask cluster (tcp://HOST:8786, tls://..., or a scheduler file)",
    )
    run.add_argument(
        "--trials-per-host",
        type=int,
        default=1,
        help="with --scheduler: trials allowed to share one machine (default 1: timings alone)",
    )
    for key, env in TLS_ENV.items():  # --tls-ca-file, --tls-cert, --tls-key
        run.add_argument(f"--{key.replace('_', '-')}", help=f"with a tls:// scheduler (or set {env})")

    estimate = sub.add_parser("estimate", help="how long a profile takes on N workers, from the stored trials")
    estimate.add_argument("study", nargs="?")
    estimate.add_argument("--workers", type=int, help="required unless --check")
    estimate.add_argument("--profile", default="full")
    estimate.add_argument(
        "--cpu",
        metavar="VENDOR/FAMILY/MODEL",
        help="predict for this CPU model from its stored trials ('this': this machine's; default: the model most "
        "of the study's trials ran on)",
    )
    estimate.add_argument(
        "--save", metavar="FILE", help="also write the per-trial prediction to FILE (JSON), to check after the run"
    )
    estimate.add_argument(
        "--check", metavar="FILE", help="instead: set a saved prediction against what the store measured since"
    )

    status = sub.add_parser("status", help="what is done / missing / failed")
    status.add_argument("--study")
    status.add_argument("--profile", help="also count the trials of this profile still missing")
    status.add_argument(
        "--adaptive",
        action="store_true",
        help="with --profile using adaptive repeats: the per-setting table (blocks, CI, CPU saved)",
    )

    export = sub.add_parser("export", help="the results as tables: measurements, trials, environments")
    export.add_argument(
        "-o",
        "--output",
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
        help="table format, repeatable (--format csv --format parquet); default csv",
    )
    export.add_argument("--study")
    export.add_argument("--profile", help="only this profile's trials (e.g. paper, for results/paper)")

    ledger = sub.add_parser("ledger", help="the claims ledger: one verdict per claim, computed from the store")
    ledger.add_argument("-o", "--output", help="CSV file to write (default: a table on standard output)")
    ledger.add_argument("--profile", default="quick", help="whose trials to judge ('all': every row of the store)")
    ledger.add_argument(
        "--by-cpu",
        action="store_true",
        help="judge the timed studies' claims once per stored CPU model and fp mode (columns cpu, fp_mode)",
    )
    ledger.add_argument(
        "--compare",
        nargs=2,
        metavar=("STORE_A", "STORE_B"),
        help="stability check: two independent runs of one profile; exit 1 if a verdict differs",
    )

    envs = sub.add_parser("envs", help="the declared environments (envs/NAME/): state, build, lock")
    envs.add_argument("names", nargs="*", help="environments to act on (default: every declared one but main)")
    envs.add_argument("--build", action="store_true", help="build the missing and stale ones from their locks")
    envs.add_argument("--rebuild", action="store_true", help="build them even when built and current")
    envs.add_argument("--lock", action="store_true", help="regenerate their locks from requirements.in (uv)")
    envs.add_argument("--tool", choices=["auto", "uv", "pip"], default="auto", help="builder (auto: uv if installed)")
    envs.add_argument("--profile", help="only the environments this profile's plans need")
    migrate = sub.add_parser(
        "migrate-fingerprints", help="carry stored trials across a code change that changed no trial's work"
    )
    migrate.add_argument(
        "--from-commit",
        required=True,
        help="the git commit whose code measured the trials (its fingerprints are recomputed)",
    )
    migrate.add_argument("--reason", required=True, help="which change, and why it changes no trial's work")
    migrate.add_argument(
        "--study",
        action="append",
        help="move only this study's trials (repeatable; default: every study whose fingerprint changed)",
    )
    migrate.add_argument("--store", help="the results store (default: FWBENCH_RESULTS)")
    return parser
