"""If you are leaving MXNet today: per workload, the three frameworks side by side, from the store.

What each row reads, and why:
- IMDB LSTM training and wait before the first batch: the IMDB beside part (``analysis.imdb_jax``), timed
  in the same blocks on one machine. The wait is ``prepare_time_s`` (no framework's includes process start and
  imports).
- IMDB test accuracy: the quality part (all 25k reviews in, all 25k scored), median over seeds.
- VGG16 inference: the VGG16 beside part; JAX's compile time is its first call's.
- GEMM peak: at 2 threads (``inference.gemm_peak``), on the beside rows' CPU model where GEMM trials of it are
  stored, else on the model that ran most of them (``other_cpu``).
- Code: lines holding code in each framework's backend modules (the twins ``sentiment/``, ``vision/``,
  ``forecast/``, ``frameworks/``).
- DeepAR: GluonTS has no JAX backend; the study does not write one (a third DeepAR would measure our port).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import numpy as np
import pandas as pd

from ..floatmode import DEFAULT, FLUSH
from ..frameworks import all_frameworks, get_framework
from ..machines import MACHINE, cpu_model_of
from ..quantity import Quantity
from ..stats import trial_medians, trial_ratio_ci
from ..studies import get_study
from . import Results, imdb_jax
from . import imdb as imdb_analysis
from .convergence import accuracy_bar_table
from .cpu_models import Condition, stored_conditions
from .inference import gemm_peak, gemm_results
from .vgg16 import vgg16_compile_times, vgg16_latencies

LEAVING = get_framework("mxnet").name  # the framework the reader leaves: the first column, every ratio's reference
BACKEND_PACKAGES = ("sentiment", "vision", "forecast", "frameworks")
GEMM_THREADS = 2
STUDIES = ("imdb", "vgg16", "gemm")  # the timed rows' studies
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
    paths = [(package, fw, lib / package / f"{fw}.py") for package in BACKEND_PACKAGES for fw in frameworks()]
    rows = [{"package": p, "framework": fw, "lines": code_lines(path) if path.exists() else 0} for p, fw, path in paths]
    return pd.DataFrame(rows)


def _pooled_over_settings(frame: pd.DataFrame, setting: list[str], value: str, fw: str) -> dict:
    """``fw`` / MXNet over every setting: each trial over its setting's MXNet geometric mean, then
    ``trial_ratio_ci`` (a CI over trials)."""
    mine, theirs = [], []
    for _, group in frame.groupby(setting):
        a = trial_medians(group[group.framework == fw], value).to_numpy(float)
        b = trial_medians(group[group.framework == LEAVING], value).to_numpy(float)
        if len(a) and len(b):
            scale = float(np.exp(np.mean(np.log(b))))
            mine += list(a / scale)
            theirs += list(b / scale)
    return trial_ratio_ci(mine, theirs)


def _imdb_rows(table: pd.DataFrame) -> dict:
    """Each framework's row of an IMDB table with an ``arm`` column: the row of the arm that stands for it."""
    rows = table.set_index("arm")
    return {fw: rows.loc[arm_of("imdb", fw)] for fw in frameworks() if arm_of("imdb", fw) in rows.index}


def cpu_models_of(results: Results, study: str, trial_ids) -> list[str]:
    """The CPU models (vendor/family/model) the given trials of ``study`` ran on."""
    trials = results.trials(study)
    if trials.empty or "provenance.cpu_id" not in trials:
        return []
    return sorted(set(trials[trials.trial_id.isin(set(trial_ids))]["provenance.cpu_id"].map(cpu_model_of)))


def cpu_names(models) -> list[str]:
    return [Condition(m).cpu_name for m in models]


def other_cpu_views(results: Results, stored: dict[str, list[Condition]]) -> list[tuple[dict[str, Condition], Results]]:
    """Per CPU model with named IMDB pieces, the condition chosen for each of ``STUDIES`` it ran and the view of them:
    subnormals flushed where that mode ran (unflushed, single Intel LSTM trials slow several-fold in any framework)."""
    views = []
    for cpu in sorted({c.cpu for c in stored["imdb"] if c.named}):
        view, chosen = results, {}
        for study in STUDIES:
            modes = {c.fp_mode for c in stored[study] if c.named and c.cpu == cpu}
            if modes:
                chosen[study] = Condition(cpu, FLUSH if FLUSH in modes else DEFAULT, named=True)
                view = chosen[study].select(view, study)
        views.append((chosen, view))
    return views


def facts(results: Results) -> dict:
    """Everything the section shows (template ``framework_comparison``): the frameworks in column order with their
    labels, the one being left (``leaving``) and ``rows``: each ``{"kind", "key", "values": {framework: value},
    "cpus", "fp_mode"}``, the profile's own timings, then each CPU model's pieces (``other_cpu_views``), then
    accuracy and code. Kinds
    (key): per batch size ``imdb_epoch`` (s per 25k reviews) and ``vgg_latency`` (ms); ``imdb_ratio`` and
    ``vgg_ratio`` (``Quantity``, pooled over the batch sizes); ``imdb_wait`` (s); ``imdb_accuracy``
    (``{"accuracy", "seeds"}``); ``vgg_compile`` (s; ``eager``: the frameworks that compile nothing);
    ``gemm_peak`` (threads; GFLOP/s, with ``other_cpu``); ``code_lines`` (the backend package). A framework missing
    from ``values`` was not measured."""
    rows, stored = timing_rows(results), {s: stored_conditions(results, s) for s in STUDIES}  # read once
    own = {s: {c.fp_mode for c in stored[s] if not c.named} for s in STUDIES}
    for r in rows:  # the profile's own trials: their fp mode, where they ran one
        r["fp_mode"] = next(iter(own[r["study"]])) if len(own[r["study"]]) == 1 else None
    for chosen, view in other_cpu_views(results, stored):
        more, shown = timing_rows(view, chosen), {cpu for r in rows for cpu in r["cpus"]}
        if {"imdb_ratio", "vgg_ratio"} & {r["kind"] for r in more} and chosen["imdb"].cpu_name not in shown:
            rows += more
    imdb = imdb_analysis.load_sweep(results)
    accuracy = accuracy_bar_table(imdb) if not imdb.empty else pd.DataFrame()
    if len(accuracy):
        arms = _imdb_rows(accuracy)
        accuracies = {fw: {"accuracy": float(r["test_acc_median"]), "seeds": int(r["seeds"])} for fw, r in arms.items()}
        quality = cpu_names(cpu_models_of(results, "imdb", imdb_analysis.part(imdb, "quality").trial_id))
        rows.append({"kind": "imdb_accuracy", "key": None, "values": accuracies, "cpus": quality, "fp_mode": None})
    for package, group in backend_lines().groupby("package", sort=False):
        values = {r.framework: int(r.lines) for r in group.itertuples()}
        rows.append({"kind": "code_lines", "key": package, "values": values, "cpus": [], "fp_mode": None})
    names = frameworks()
    return {
        "profile": results.profile,
        "frameworks": names,
        "labels": {fw: get_framework(fw).label for fw in names},
        "leaving": LEAVING,
        "rows": rows,
    }


APART = pd.Timedelta(hours=1)  # a beside block's three trials take minutes: more apart, they were not back to back


def timing_rows(results: Results, chosen: dict[str, Condition] | None = None) -> list[dict]:
    """The timing rows of ``facts`` from ``results``' view (``chosen``: per study the CPU piece it selects, named in
    the ratios' quantities and the rows' ``fp_mode``; None: the profile's own trials)."""
    rows: list[dict] = []
    chosen = chosen or {}

    def add(kind: str, study: str, values: dict, key=None, cpus=(), **more) -> None:
        fp_mode = chosen[study].fp_mode if study in chosen else None
        rows.append({"kind": kind, "key": key, "values": values, "cpus": cpu_names(cpus), "fp_mode": fp_mode,
                     "study": study, **more})  # fmt: skip

    def timings(study: str, kind: str, per_batch: str, frame: pd.DataFrame, value: str, setting: list[str], cpus):
        """Per batch size each framework's ``value`` (``framework``: the one a trial stands for), the geometric mean
        over trials (the ratios' estimator), then each framework over MXNet pooled over ``setting``."""
        for batch, group in frame.groupby("batch_size"):
            means = {
                fw: float(np.exp(np.log(trial_medians(group[group.framework == fw], value)).mean()))
                for fw in frameworks()
                if (group.framework == fw).any()
            }
            add(f"{kind}_{per_batch}", study, means, int(batch), cpus=cpu_models_of(results, study, group.trial_id))
        label, c = f"leaving.{study}_{per_batch}", chosen.get(study)
        name = f"leaving.{c.key}.{study}_{per_batch}" if c else label
        conditions = {"part": "beside", **({"cpu": c.cpu_name, "fp_mode": c.fp_mode} if c else {})}
        ratios = {}
        for fw in (fw for fw in frameworks() if fw != LEAVING and (frame.framework == fw).any()):
            r = _pooled_over_settings(frame, setting, value, fw)
            ratios[fw] = Quantity(f"{name}.{fw}", r["ratio"], r["ci_low"], r["ci_high"], n=f"{r['n_num']} + "
                                  f"{r['n_den']} trials", label=f"{label}.{fw}", conditions=conditions)  # fmt: skip
        add(f"{kind}_ratio", study, ratios, cpus=cpus)

    imdb = imdb_analysis.load_sweep(results)
    beside = imdb_analysis.timed_epochs(imdb_analysis.part(imdb, imdb_jax.BESIDE))
    beside_cpus = cpu_models_of(results, "imdb", beside.trial_id) if not beside.empty else []
    if not beside.empty:
        stands_for = {arm_of("imdb", fw): fw for fw in frameworks()}
        beside = beside.assign(framework=beside.arm.map(stands_for))
        timings("imdb", "imdb", "epoch", beside, "epoch_25k_s", imdb_jax.SETTING, beside_cpus)
        # a block (a seed) whose trials started hours apart or on two boots: not timed back to back
        started = pd.to_datetime(results.trials("imdb").set_index("trial_id").started_at, utc=True, format="ISO8601")
        blocks = beside.assign(started=beside.trial_id.map(started)).groupby(["batch_size", "seed"])
        apart = (blocks.started.max() - blocks.started.min()) > APART
        split = sorted({int(b) for b, _ in apart[apart | (blocks[MACHINE].nunique() > 1)].index})
        for r in rows:
            r["split"] = split if r["kind"] == "imdb_ratio" else [r["key"]] if r["key"] in split else []
        waits = _imdb_rows(imdb_jax.prepare_table(imdb))
        add("imdb_wait", "imdb", {fw: float(r["prepare_s_median"]) for fw, r in waits.items()}, cpus=beside_cpus)
    vgg = vgg16_latencies(results, beside=True)
    vgg_cpus = cpu_models_of(results, "vgg16", vgg.trial_id) if not vgg.empty else []
    if not vgg.empty:
        timings("vgg16", "vgg", "latency", vgg, "latency_ms", ["batch_size"], vgg_cpus)
        compiles = vgg16_compile_times(results, beside=True)
        if len(compiles):  # an eager arm compiles nothing: 0, not "not measured"
            compiled = {fw: float(g.compile_s.median()) for fw, g in compiles.groupby("framework")}
            eager = sorted(set(vgg.framework) - set(compiled))
            add("vgg_compile", "vgg16", {**{fw: 0.0 for fw in eager}, **compiled}, eager=eager, cpus=vgg_cpus)
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
        add("gemm_peak", "gemm", values, GEMM_THREADS, cpus=sorted(set(gemm.cpu)), other_cpu=other_cpu)
    return rows
