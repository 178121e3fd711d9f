"""The study's timings per CPU model and subnormal mode: each condition read on its own trials, never pooled.

A condition (``fwbench.conditions``) is a CPU model and an fp mode. Trials that name neither are the default
condition on the CPU model their provenance records. Contrasts between conditions (the CPU's effect, the subnormal
mode's) are ratios over independent trials of the two at the same setting (``stats.trial_ratio_ci``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import pandas as pd

from ..conditions import of_run, study_overrides
from ..floatmode import DEFAULT, FLUSH
from ..machines import CPU, MACHINE, NOT_RECORDED, cpu_model_of, cpu_name
from ..quantity import Quantity
from ..stats import log_contrast_ci, trial_ratio_ci
from ..studies import get_study
from . import Results, deepar_coverage, inference
from . import deepar as deepar_analysis
from . import imdb as imdb_analysis

IMDB, DEEPAR, VGG16, GEMM = "imdb", "deepar", "vgg16", "gemm"
# the IMDB setting every CPU piece times (a setting of the paper grid: batch 128, 0 loader workers)
IMDB_SETTING = {"batch_size": 128, "num_workers": 0}
SETTING_PARTS = ("main", "beside")  # the parts that time it: the main grid, and the beside part with JAX's arm


@dataclass(frozen=True)
class Condition:
    """One CPU model and fp mode; ``named``: the trials' configs name the CPU (a piece run for it)."""

    cpu: str
    fp_mode: str = DEFAULT
    named: bool = False

    def overrides(self) -> dict:
        """The overrides that select this condition's trials of a profile's plan: the fp mode always (a profile's
        own may be the other: the quick profile's IMDB trials flush), the CPU where the trials name it."""
        return {**({"cpu": self.cpu} if self.named else {}), "fp_mode": self.fp_mode}

    def select(self, results: Results, study: str) -> Results:
        """``results`` narrowed to this condition's trials of ``study``: its overrides over the study's own (a
        notebook's parameters), whose condition keys it replaces."""
        own = study_overrides(results.overrides_of(study)) or {}
        return results.with_overrides(study, {**own, **self.overrides()})

    @property
    def cpu_name(self) -> str:
        return cpu_name(self.cpu)  # machines.cpu_name: 'Intel Xeon 6/207'

    @property
    def key(self) -> str:
        """A short stable name for quantities: 'GenuineIntel-6-207.flush' ('...named' for a piece that names its
        CPU, so it never shares a name with the unnamed trials of the same model and mode)."""
        return f"{self.cpu.replace('/', '-')}.{self.fp_mode}" + (".named" if self.named else "")


def _unnamed_models(results: Results, study: str) -> tuple[list[Condition], list[Condition]]:
    """The conditions with finished trials of ``study`` (of the profile when it has one): the unnamed trials' per
    fp mode and CPU model, the model that ran most of a mode's trials first, and the named ones by CPU and mode."""
    done = results.finished(study)
    if done.empty:
        return [], []
    named = done["config.cpu"] if "config.cpu" in done else pd.Series(None, index=done.index)
    modes = done["config.fp_mode"].fillna(DEFAULT) if "config.fp_mode" in done else pd.Series(DEFAULT, done.index)
    models = done["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in done else None
    unnamed = []
    for mode in sorted(set(modes[named.isna()]), key=lambda m: m != DEFAULT):
        ran = models[named.isna() & modes.eq(mode)] if models is not None else pd.Series(dtype=object)
        counts = ran.value_counts().sort_index().sort_values(ascending=False, kind="stable")
        unnamed += [Condition(cpu, mode) for cpu in counts.index] if len(counts) else [Condition(NOT_RECORDED, mode)]
    by_cpu = done[named.notna()].groupby([named[named.notna()], modes[named.notna()]])
    named_ones = [Condition(cpu, mode, named=True) for (cpu, mode), _ in by_cpu]
    return unnamed, sorted(named_ones, key=lambda c: (c.cpu, c.fp_mode != DEFAULT))


def stored_conditions(results: Results, study: str) -> list[Condition]:
    """The conditions with finished trials of ``study`` (of the profile when it has one): the unnamed ones per fp
    mode on the CPU model that ran most of their trials, then each named one by CPU model and mode."""
    unnamed, named = _unnamed_models(results, study)
    modes = [c.fp_mode for c in unnamed]
    return [c for i, c in enumerate(unnamed) if c.fp_mode not in modes[:i]] + named


def minority_conditions(results: Results, study: str) -> list[Condition]:
    """The CPU models that ran fewer of the unnamed trials than ``stored_conditions``' model (another boot, e.g.
    the beside parts'): read on their own trials only where a table filters by CPU model (``imdb_trials``)."""
    unnamed, _ = _unnamed_models(results, study)
    return [c for c in unnamed if c not in stored_conditions(results, study)]


# -- IMDB: one setting on every condition ---------------------------------------------------------------------------
def imdb_trials(results: Results, condition: Condition) -> pd.Series:
    """Per (part, arm, trial, seed, machine) of one condition (its CPU model's trials only): the median timed epoch
    (``epoch_25k_s``, machine-adjusted by ``imdb.load_sweep``) at ``IMDB_SETTING``, from the main part and the beside
    part (which repeats main settings with JAX's arm in the same blocks, on the machine that ran it)."""
    frame = imdb_analysis.load_sweep(condition.select(results, IMDB))
    if frame.empty:
        return pd.Series(dtype=float)
    timed = imdb_analysis.part(imdb_analysis.timed_epochs(frame), *SETTING_PARTS)
    timed = timed[timed[CPU] == condition.cpu]
    for column, value in IMDB_SETTING.items():
        timed = timed[timed[column] == value]
    return timed.groupby(["part", "arm", "trial_id", "seed", MACHINE]).epoch_25k_s.median()


def _parts(values: pd.Series) -> list[str]:
    """The parts ``imdb_trials`` found, in ``SETTING_PARTS`` order (the main part first)."""
    found = set(values.index.get_level_values("part")) if len(values) else set()
    return [p for p in SETTING_PARTS if p in found]


def imdb_table(results: Results) -> pd.DataFrame:
    """One row per condition x part x arm at ``IMDB_SETTING``: the CPU model actually recorded, trials, the epoch
    time (25k reviews, s: the geometric mean over trials, the ratio's estimator), the fastest and slowest trial (and
    its seed), the machines (boots) its trials ran on, and the ratio to PyTorch's reference arm of the same part with
    its CI (over trials of that condition). Every condition: the stored ones and the unnamed trials' other CPU
    models."""
    _, torch_arms = imdb_analysis.post_comparison()
    base = torch_arms[0]
    conditions = stored_conditions(results, IMDB) + minority_conditions(results, IMDB)
    rows = []
    for c in conditions:
        values = imdb_trials(results, c)
        for name in _parts(values):
            part = values.loc[name]
            arms = imdb_analysis.arm_order(IMDB, part.index.get_level_values("arm").unique())
            for arm in arms:
                mine = part.loc[arm]
                ratio = trial_ratio_ci(mine, part.loc[base]) if base in arms and arm != base else {}
                rows.append(
                    {
                        **asdict(c),  # cpu, fp_mode, named
                        "part": name,
                        "arm": arm,
                        "n_trials": len(mine),
                        "epoch_25k_s": math.exp(sum(map(math.log, mine)) / len(mine)),
                        "fastest_s": float(mine.min()),
                        "slowest_s": float(mine.max()),
                        "slowest_seed": int(mine.idxmax()[1]),
                        "machines": mine.index.get_level_values(MACHINE).nunique(),
                        "vs": base,
                        **{k: ratio.get(k, math.nan) for k in ("ratio", "ci_low", "ci_high", "method")},
                    }
                )
    return pd.DataFrame(rows)


def imdb_fp_effect(results: Results) -> pd.DataFrame:
    """Per CPU model with both modes measured, per part and arm in both: the libraries' default time / the flushed
    time, a ratio over independent trials of each (> 1: the subnormal floats cost that factor on that CPU)."""
    conditions = stored_conditions(results, IMDB)
    values = {c: imdb_trials(results, c) for c in conditions}
    rows = []
    for flushed in (c for c in conditions if c.fp_mode == FLUSH):
        for default in (c for c in conditions if c.cpu == flushed.cpu and c.fp_mode == DEFAULT):
            num, den = values[default], values[flushed]
            for name in (p for p in _parts(num) if p in _parts(den)):
                shared = num.loc[name].index.unique("arm").intersection(den.loc[name].index.unique("arm"))
                for arm in imdb_analysis.arm_order(IMDB, shared):
                    ratio = trial_ratio_ci(num.loc[name].loc[arm], den.loc[name].loc[arm])
                    rows.append({"cpu": flushed.cpu, "part": name, "arm": arm, **ratio})
    return pd.DataFrame(rows)


def imdb_ratio_quantities(table: pd.DataFrame) -> list[tuple[Condition, Quantity]]:
    """The MXNet reference arm / PyTorch reference arm ratio of each condition (of its first part: the main one where
    it ran there), as a quantity named by it, its CPU model, fp mode and part declared as the conditions a page
    names beside it."""
    mx_ref, _ = imdb_analysis.post_comparison()
    rows = table[(table.arm == mx_ref) & table.ratio.notna()].drop_duplicates(["cpu", "fp_mode", "named"])
    out = []
    for row in rows.itertuples():
        c = Condition(row.cpu, row.fp_mode, row.named)
        conditions = {"cpu": c.cpu_name, "fp_mode": c.fp_mode, "part": row.part}
        shown = {"label": f"imdb.cpu.{mx_ref}", "conditions": conditions}
        name, n = f"imdb.cpu.{c.key}.{mx_ref}", f"{row.n_trials} trials a side"
        out.append((c, Quantity(name, row.ratio, row.ci_low, row.ci_high, n=n, **shown)))
    return out


# -- IMDB training quality on every condition: an accuracy, but flushing subnormals changes the arithmetic ----------
def _quality_finals(results: Results) -> pd.DataFrame:
    """The last epoch of each training-quality trial of ``results``' plan (one row per trial)."""
    return imdb_analysis.final_epochs(imdb_analysis.part(imdb_analysis.load_sweep(results), "quality"))


QUALITY_RATIOS = {"acc": "test_acc", "loss": "train_loss"}  # a condition's over the own run's, per arm


def _seed_spread(finals: pd.DataFrame, prefix: str) -> dict:
    """How many seeds ``finals`` has and their lowest and highest final test accuracy."""
    acc = finals.test_acc
    return {f"{prefix}_seeds": len(finals), f"{prefix}_low": float(acc.min()), f"{prefix}_high": float(acc.max())}


def imdb_quality_table(results: Results) -> pd.DataFrame:
    """Per condition other than the profile's own run (a piece run for a CPU or fp mode) with training-quality trials,
    per arm, over the seeds both ran (a seed fixes the initial weights and batches): the condition's final test
    accuracy (lowest, highest) beside the own run's (which may pool CPU models: an accuracy is not a timing), and its
    final accuracy and train loss over the own run's, paired by seed (t-interval over the seeds' log ratios)."""
    own, rows = _quality_finals(results), []
    mode = of_run(IMDB, results.profile, results.overrides_of(IMDB)).get("fp_mode", DEFAULT)  # the own run's
    # without a profile's plan there are no ids to select a condition by
    others = [c for c in stored_conditions(results, IMDB) if c.named or c.fp_mode != mode] if results.profile else []
    for c in others if len(own) else ():
        for arm, mine in _quality_finals(c.select(results, IMDB)).groupby("arm"):
            columns = list(QUALITY_RATIOS.values())
            mine, base = (f[f.arm == arm].groupby("seed")[columns].median() for f in (mine, own))
            mine, base = mine[mine.index.isin(base.index)], base[base.index.isin(mine.index)]
            if mine.empty:
                continue
            ratios = {m: log_contrast_ci([(1, mine[col] / base[col])]) for m, col in QUALITY_RATIOS.items()}
            cis = {f"{m}_{k}": r[k] for m, r in ratios.items() for k in ("ratio", "ci_low", "ci_high")}
            rows.append({**asdict(c), "arm": arm, **_seed_spread(mine, "acc"), **_seed_spread(base, "own"), **cis})
    return pd.DataFrame(rows)


# -- DeepAR: the per-batch cost on every condition --------------------------------------------------------------------
def deepar_ratios(results: Results, condition: Condition) -> pd.DataFrame:
    """Per dataset: MXNet / PyTorch per-batch cost of one condition's coverage trials (``deepar_coverage.cost_rows``),
    with its CI over them (``deepar.ratio_table`` on ``c_batch``), and the dataset's window."""
    rows = deepar_coverage.cost_rows(condition.select(results, DEEPAR))
    if rows.empty:
        return pd.DataFrame()
    ratios = deepar_analysis.ratio_table(rows, metric="c_batch")
    return ratios.merge(rows.groupby("dataset").window.first().reset_index(), on="dataset")


def deepar_cpu_table(results: Results) -> pd.DataFrame:
    """Per dataset measured on two CPU models (default fp mode): each model's MXNet / PyTorch per-batch ratio
    (``_first``: the unnamed default's model, ``_second``: the named one) and ``cpu_factor``, the second / the
    first: how much the second CPU moves the framework ratio."""
    conditions = [c for c in stored_conditions(results, DEEPAR) if c.fp_mode == DEFAULT]
    if len(conditions) < 2 or conditions[0].named:  # the first CPU is the unnamed trials' model
        return pd.DataFrame()
    base, *others = conditions
    first = deepar_ratios(results, base)
    rows = []
    for other in others:
        second = deepar_ratios(results, other)
        if first.empty or second.empty:
            continue
        both = first.merge(second, on=["dataset", "window"], suffixes=("_first", "_second"))
        both["cpu_factor"] = both.ratio_second / both.ratio_first
        rows.append(both.assign(cpu_first=base.cpu, cpu_second=other.cpu))
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    return out.sort_values(["cpu_second", "window", "dataset"]).reset_index(drop=True) if not out.empty else out


# -- GEMM: each framework's dense-product peak on every CPU model -----------------------------------------------------
def gemm_by_cpu(results: Results) -> pd.DataFrame:
    """Per CPU model with GEMM trials: each framework's fp32 peak at each thread count (``inference.gemm_peak`` of
    that model's products only), one row per (cpu, framework, threads)."""
    every = results.every_row()
    trials = every.trials(GEMM)
    if trials.empty or "provenance.cpu_id" not in trials:
        return pd.DataFrame()
    models = sorted(set(trials.loc[trials.status == "done", "provenance.cpu_id"].map(cpu_model_of)))
    tables = [inference.gemm_peak(every, cpu=m).assign(cpu=m) for m in models]
    tables = [t for t in tables if not t.empty]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


# -- what each framework's threads did with subnormals --------------------------------------------------------------
def fp_probe_table(results: Results) -> pd.DataFrame:
    """Per CPU model x framework x fp mode asked: the trials whose probe ran (``fwbench.floatmode``) and what their
    framework's own threads did (``fp_pool``: flush, default or mixed; several values if trials differ)."""
    trials = results.every_row().trials()
    cols = ["cpu", "framework", "fp_mode", "n_trials", "fp_pool"]
    if trials.empty or "provenance.fp_pool" not in trials:
        return pd.DataFrame(columns=cols)
    probed = trials[(trials.status == "done") & trials["provenance.fp_pool"].notna()].copy()
    probed["cpu"] = probed["provenance.cpu_id"].map(cpu_model_of)
    probed["fp_mode"] = probed["provenance.fp_mode"].fillna(DEFAULT)
    out = (
        probed.groupby(["cpu", "provenance.framework", "fp_mode"])
        .agg(n_trials=("trial_id", "count"), fp_pool=("provenance.fp_pool", lambda v: ", ".join(sorted(set(v)))))
        .reset_index()
        .rename(columns={"provenance.framework": "framework"})
    )
    return out[cols]


def facts(results: Results) -> dict:
    """Everything the per-CPU pages show, computed once: the conditions, the IMDB setting per condition with its
    MXNet / PyTorch ratios as quantities, the subnormal mode's effect, training quality per condition, the IMDB
    machines of one CPU model (``imdb.machine_adjustment``), DeepAR's per-batch ratio per CPU, and what each
    framework's threads did with subnormals. (The CPU's pooled effect on B is a row of B's factor table.)"""
    has = {study: results.profile in get_study(study).profiles for study in (IMDB, DEEPAR, VGG16)}  # some lack it
    imdb = imdb_table(results) if has[IMDB] else pd.DataFrame()
    deepar = deepar_cpu_table(results) if has[DEEPAR] else pd.DataFrame()
    return {
        "conditions": {study: stored_conditions(results, study) if has[study] else [] for study in has},
        "imdb_setting": IMDB_SETTING,
        "imdb": imdb,
        "imdb_ratios": imdb_ratio_quantities(imdb) if not imdb.empty else [],
        "imdb_machines": imdb_analysis.machine_adjustment(results) if has[IMDB] else {},
        "fp_effect": imdb_fp_effect(results),
        "quality": imdb_quality_table(results) if has[IMDB] else pd.DataFrame(),
        "deepar": deepar,
        "probes": fp_probe_table(results),
        "gemm": gemm_by_cpu(results),
    }
