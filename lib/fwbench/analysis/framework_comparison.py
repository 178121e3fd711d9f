"""If you are leaving MXNet today: per workload, the three frameworks side by side, from the store.

What each row reads, and why:
- **IMDB LSTM training**: the IMDB beside part (``analysis.imdb_jax``): JAX and both reference arms timed in
  the same blocks on one machine (one boot of one CPU model: every row names the models of its trials). Epoch
  time per 25k reviews at each batch size (median over trials), and each framework's time over MXNet's pooled
  over the batch sizes, with a 95 % CI over trials.
- **Wait before the first batch**: the IMDB beside trials' ``prepare_time_s`` (JAX: compiling its training and
  evaluation steps; the eager arms prepare nothing: 0), median over trials; process start and imports are not in
  it (for every framework alike).
- **IMDB test accuracy**: the quality part (all 25k reviews in, all 25k scored), median over seeds.
- **VGG16 inference**: the VGG16 beside part (eager PyTorch, imperative MXNet, jitted JAX, the same blocks on one
  machine): median latency per batch size and each framework over MXNet with a 95 % CI over trials; JAX's compile
  time is its first call's.
- **GEMM peak**: the best median fp32 GFLOP/s at 2 threads (``inference.gemm_peak``) on the beside rows' CPU
  model where GEMM trials of it are stored, else on the model that ran most of them (``other_cpu``: the template
  says so).
- **Code**: the lines of each framework's backend modules (the twins ``sentiment/``, ``vision/``, ``forecast/``,
  ``frameworks/``): lines holding code, without blank lines, comments or docstrings.
- **DeepAR**: GluonTS has no JAX backend; the study does not write one (a third DeepAR would be ours, not
  GluonTS's, and measure our port).
A framework without a number for a row shows "-" (not measured in this profile).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import numpy as np
import pandas as pd

from ..frameworks import all_frameworks, get_framework
from ..machines import cpu_model_of
from ..quantity import Quantity
from ..stats import trial_medians, trial_ratio_ci
from ..studies import get_study
from . import Results, imdb_jax
from . import imdb as imdb_analysis
from .convergence import accuracy_bar_table
from .cpu_models import Condition
from .inference import gemm_peak, gemm_results
from .vgg16 import vgg16_compile_times, vgg16_latencies

LEAVING = get_framework("mxnet").name  # the framework the reader leaves: the first column, every ratio's reference
BACKEND_PACKAGES = ("sentiment", "vision", "forecast", "frameworks")
GEMM_THREADS = 2
LIB = Path(__file__).resolve().parents[1]


def frameworks() -> list[str]:
    """The frameworks of the IMDB study's arms, the one being left first, then in the framework table's order."""
    used = {a.framework for a in get_study("imdb").arms}
    return [LEAVING] + [f.name for f in all_frameworks() if f.name in used and f.name != LEAVING]


def arm_of(study: str, framework: str) -> str | None:
    """The arm that stands for ``framework`` in ``study``: its reference arm, else its only arm (JAX's ``jax-jit``);
    None where the study has none."""
    s = get_study(study)
    if framework in s.reference:
        return s.reference_arm(framework)
    arms = [a.name for a in s.arms if a.framework == framework]
    return arms[0] if len(arms) == 1 else None


def code_lines(path: Path) -> int:
    """Lines of ``path`` that hold code: not blank, not only a comment, not part of a docstring."""
    source = path.read_text(encoding="utf-8")
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


def backend_lines(lib: Path = LIB) -> pd.DataFrame:
    """Per backend package and framework: the code lines of ``<package>/<framework>.py`` (0 where it has none)."""
    rows = [
        {
            "package": package,
            "framework": fw,
            "lines": code_lines(lib / package / f"{fw}.py") if (lib / package / f"{fw}.py").exists() else 0,
        }
        for package in BACKEND_PACKAGES
        for fw in frameworks()
    ]
    return pd.DataFrame(rows)


def _pooled_over_settings(frame: pd.DataFrame, setting: list[str], arm_col: str, value: str, arm: str, ref: str):
    """``arm`` / ``ref`` over every setting: each trial over its setting's ``ref`` geometric mean, then
    ``trial_ratio_ci`` (a 95 % CI over trials)."""
    mine, theirs = [], []
    for _, group in frame.groupby(setting):
        a = trial_medians(group[group[arm_col] == arm], value).to_numpy(float)
        b = trial_medians(group[group[arm_col] == ref], value).to_numpy(float)
        if len(a) and len(b):
            scale = float(np.exp(np.mean(np.log(b))))
            mine += list(a / scale)
            theirs += list(b / scale)
    return trial_ratio_ci(mine, theirs)


def cpu_models_of(results: Results, study: str, trial_ids) -> list[str]:
    """The CPU models (vendor/family/model) the given trials of ``study`` ran on."""
    trials = results.trials(study)
    if trials.empty or "provenance.cpu_id" not in trials:
        return []
    return sorted(set(trials[trials.trial_id.isin(set(trial_ids))]["provenance.cpu_id"].map(cpu_model_of)))


def cpu_names(models) -> list[str]:
    return [Condition(m).cpu_name for m in models]


def _ratio(name: str, r: dict) -> Quantity:
    return Quantity(name, r["ratio"], r["ci_low"], r["ci_high"], n=f"{r['n_num']} + {r['n_den']} trials")


def facts(results: Results) -> dict:
    """Everything the section shows (template ``framework_comparison``; default store: the results store): the
    frameworks in column order with their labels, the one being left (``leaving``: every ratio's reference) and
    ``rows``, each ``{"kind", "key", "values": {framework: value}}`` in the section's order:

    - ``imdb_epoch`` (key: batch size): median seconds per 25k-review epoch;
    - ``imdb_ratio``: epoch time over MXNet's, a ``Quantity`` pooled over the batch sizes;
    - ``imdb_wait``: median seconds before the first batch;
    - ``imdb_accuracy``: ``{"accuracy", "seeds"}``, the median final test accuracy over seeds;
    - ``vgg_latency`` (key: batch size): median milliseconds;
    - ``vgg_ratio``: latency over MXNet's, a ``Quantity`` pooled over the batch sizes;
    - ``vgg_compile``: median seconds of the first (compiling) call; ``eager`` lists the frameworks that compile
      nothing (0);
    - ``gemm_peak`` (key: threads): GFLOP/s;
    - ``code_lines`` (key: the backend package): lines of code (0: none).
    A framework without a value in a row was not measured in this profile. Each measured row has ``cpus``, the CPU
    models of its trials by name (an accuracy may pool models: it is not a timing); ``gemm_peak`` has
    ``other_cpu``: True where no GEMM trial ran on the beside rows' model."""
    rows: list[dict] = []

    def add(kind: str, values: dict, key=None, cpus=(), **more) -> None:
        rows.append({"kind": kind, "key": key, "values": values, "cpus": cpu_names(cpus), **more})

    imdb = imdb_analysis.load_sweep(results)
    beside = imdb_analysis.timed_epochs(imdb_analysis.part(imdb, imdb_jax.BESIDE))
    mx_imdb = arm_of("imdb", LEAVING)
    beside_cpus = cpu_models_of(results, "imdb", beside.trial_id) if not beside.empty else []
    if not beside.empty:
        for batch, group in beside.groupby("batch_size"):
            add(
                "imdb_epoch",
                {
                    fw: float(trial_medians(group[group.arm == arm_of("imdb", fw)], "epoch_25k_s").median())
                    for fw in frameworks()
                    if (group.arm == arm_of("imdb", fw)).any()
                },
                key=int(batch),
                cpus=cpu_models_of(results, "imdb", group.trial_id),
            )
        add(
            "imdb_ratio",
            {
                fw: _ratio(
                    f"leaving.imdb_epoch.{fw}",
                    _pooled_over_settings(beside, imdb_jax.SETTING, "arm", "epoch_25k_s", arm_of("imdb", fw), mx_imdb),
                )
                for fw in frameworks()
                if fw != LEAVING and (beside.arm == arm_of("imdb", fw)).any()
            },
            cpus=beside_cpus,
        )
        waits = imdb_jax.prepare_table(imdb).set_index("arm")
        add(
            "imdb_wait",
            {
                fw: float(waits.loc[arm_of("imdb", fw), "prepare_s_median"])
                for fw in frameworks()
                if arm_of("imdb", fw) in waits.index
            },
            cpus=beside_cpus,
        )
    accuracy = accuracy_bar_table(imdb) if not imdb.empty else pd.DataFrame()
    if len(accuracy):
        acc = accuracy.set_index("arm")
        add(
            "imdb_accuracy",
            {
                fw: {
                    "accuracy": float(acc.loc[arm_of("imdb", fw), "test_acc_median"]),
                    "seeds": int(acc.loc[arm_of("imdb", fw), "seeds"]),
                }
                for fw in frameworks()
                if arm_of("imdb", fw) in acc.index
            },
            cpus=cpu_models_of(results, "imdb", imdb_analysis.part(imdb, "quality").trial_id),
        )
    vgg = vgg16_latencies(results, beside=True)
    vgg_cpus = cpu_models_of(results, "vgg16", vgg.trial_id) if not vgg.empty else []
    if not vgg.empty:
        for batch, group in vgg.groupby("batch_size"):
            add(
                "vgg_latency",
                {
                    fw: float(trial_medians(group[group.framework == fw], "latency_ms").median())
                    for fw in frameworks()
                    if (group.framework == fw).any()
                },
                key=int(batch),
                cpus=cpu_models_of(results, "vgg16", group.trial_id),
            )
        add(
            "vgg_ratio",
            {
                fw: _ratio(
                    f"leaving.vgg16_latency.{fw}",
                    _pooled_over_settings(vgg, ["batch_size"], "framework", "latency_ms", fw, LEAVING),
                )
                for fw in frameworks()
                if fw != LEAVING and (vgg.framework == fw).any()
            },
            cpus=vgg_cpus,
        )
        compiles = vgg16_compile_times(results, beside=True)
        if len(compiles):  # an eager arm compiles nothing: 0, not "not measured"
            compiled = {fw: float(g.compile_s.median()) for fw, g in compiles.groupby("framework")}
            eager = sorted(set(vgg.framework) - set(compiled))
            add("vgg_compile", {**{fw: 0.0 for fw in eager}, **compiled}, eager=eager, cpus=vgg_cpus)
    # a peak is a CPU's: the beside rows' model where it has GEMM trials, else the one most of them ran on
    beside_models = set(beside_cpus) | set(vgg_cpus)
    gemm_cpu = next(iter(beside_models)) if len(beside_models) == 1 else None
    peak = gemm_peak(results, cpu=gemm_cpu)
    peak = peak[peak.threads == GEMM_THREADS]
    other_cpu = peak.empty and gemm_cpu is not None
    if other_cpu:
        peak = gemm_peak(results)
        peak = peak[peak.threads == GEMM_THREADS]
    if len(peak):
        gemm = gemm_results(results, None if other_cpu else gemm_cpu)
        values = {r.framework: float(r.gflops) for r in peak.itertuples()}
        add("gemm_peak", values, key=GEMM_THREADS, cpus=sorted(set(gemm.cpu)), other_cpu=other_cpu)
    lines = backend_lines()
    for package, group in lines.groupby("package", sort=False):
        add("code_lines", {r.framework: int(r.lines) for r in group.itertuples()}, key=package)
    names = frameworks()
    return {
        "profile": results.profile,
        "frameworks": names,
        "labels": {fw: get_framework(fw).label for fw in names},
        "leaving": LEAVING,
        "rows": rows,
    }
