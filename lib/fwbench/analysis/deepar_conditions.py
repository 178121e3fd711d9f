"""What explains the gap between B's ratio here and the post's: every condition measured, both frameworks alike,
as its effect on the MXNet / PyTorch ratio (``stats.log_contrast_ci``).

- ``conditions_table``: the ``contention`` part per dataset and condition: each framework's cost per batch, its
  slowdown against its own baseline (the profile's threads, no load), the ratio and the condition's effect on it.
- ``factor_table``: one row per factor: its CPU model, each framework's slowdown, the effect on the ratio and the
  share of the gap it would close alone (``log(effect) / log(post / B)``): alternatives, not a decomposition.
- ``variants_table`` (1 thread, oneDNN off) and ``versions_table`` (the post's library versions) beside the main
  part's trials of the same seeds: they never enter B; two environments never meet in one ratio.
- ``window_model``: seconds per batch per framework as a line in the unrolled window of the main part's trials
  (the post's whole list is predicted once, from the coverage part).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..machines import CPU, MACHINE, NOT_RECORDED
from ..pages import render_markdown
from ..published.deepar2024 import CLAIMED_SPEEDUP, post_ratio
from ..quantity import Quantity
from ..stats import CONFIDENCE, log_contrast_ci
from ..studies import get_study
from . import Results
from . import deepar_prediction as prediction
from .cpu_models import Condition
from .deepar import STUDY, csv_arguments, framework_names, load_trials, reference_arms
from .deepar_coverage import DEFAULT_THREADS, cost_rows

# -- the variants and versions parts, the window line of the main part -------------------------------------------
VARIANT_PARTS = ("main", "threads", "onednn")  # each one's setting in words: template thread_condition
VARIANT_COLUMNS = ["dataset", "window", "setting", "part", "threads", "n_seeds", "mxnet_train_s", "torch_train_s",
                   "train_ratio", "total_ratio", "mxnet_vs_main", "torch_vs_main", "seed_spread"]  # fmt: skip
VERSION_COLUMNS = ["dataset", "window", "env", "n_seeds", "mxnet_train_s", "torch_train_s", "train_ratio"]


def _medians(trials: pd.DataFrame, columns=("train_time_s", "total_time_s")) -> pd.DataFrame:
    """Each reference arm's median of ``columns`` over ``trials`` (rows: MXNet's arm, PyTorch's; NaN where none)."""
    return trials.groupby("arm")[list(columns)].median().reindex(list(reference_arms()))


def variants_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per dataset of the variants part and setting (the main part's trials of the same seeds, 1 thread, oneDNN
    off): each reference arm's median training seconds, the MXNet / PyTorch ratios and each framework's time
    against its own main-part time (>1: slower). ``seed_spread``: the largest max/min - 1 of the main part's
    training times over seeds per arm, the run-to-run yardstick a setting's change should clear."""
    if trials.empty or "part" not in trials:
        return pd.DataFrame(columns=VARIANT_COLUMNS)
    trials = trials[trials.part.isin(VARIANT_PARTS)]  # the versions part is another environment's
    rows = []
    for dataset, g in trials.groupby("dataset") if (trials.part != "main").any() else ():
        variant_seeds = set(g.loc[g.part != "main", "seed"])
        if not variant_seeds:
            continue
        main = g[g.part == "main"]
        spread = main.groupby("arm").train_time_s.agg(lambda v: v.max() / v.min() - 1 if len(v) > 1 else np.nan).max()
        main = main[main.seed.isin(variant_seeds)]
        mx_base, pt_base = _medians(main).train_time_s
        for part in VARIANT_PARTS:
            sub = g[g.part == part] if part != "main" else main
            if sub.empty:
                continue
            med = _medians(sub)
            (mx_train, pt_train), (mx_total, pt_total) = med.train_time_s, med.total_time_s
            threads = int(sub.threads.iloc[0])
            setting = render_markdown("thread_condition", part=part, threads=threads)
            ratios = [mx_train / pt_train, mx_total / pt_total, mx_train / mx_base, pt_train / pt_base]
            window, n_seeds = int(g.window.iloc[0]), int(sub.seed.nunique())
            rows.append([dataset, window, setting, part, threads, n_seeds, mx_train, pt_train, *ratios, spread])
    table = pd.DataFrame(rows, columns=VARIANT_COLUMNS)
    return table.sort_values(["window", "dataset"], kind="stable").reset_index(drop=True)


def variants_facts(table: pd.DataFrame) -> dict:
    """What the variants page shows (template ``deepar_variants``): the table and the main part's spread over seeds
    per dataset (the run-to-run yardstick)."""
    spread = table.groupby("dataset").seed_spread.first() if len(table) else pd.Series(dtype=float)
    return {"table": table, "spread": [(d, float(v)) for d, v in spread.items() if not np.isnan(v)]}


def versions_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per dataset with ``versions`` trials and per environment (``main`` first): the median MXNet and PyTorch
    training seconds over the seeds both environments ran, and their ratio within that environment."""
    if trials.empty or "part" not in trials or not (trials.part == "versions").any():
        return pd.DataFrame(columns=VERSION_COLUMNS)
    rows = []
    for dataset, g in trials[trials.part.isin(["main", "versions"])].groupby("dataset"):
        seeds = set(g.loc[g.part == "versions", "seed"]) & set(g.loc[g.part == "main", "seed"])
        for env, sub in g[g.seed.isin(seeds)].groupby("env", sort=False):
            mx_train, pt_train = _medians(sub, ["train_time_s"]).train_time_s
            window, n_seeds = int(g.window.iloc[0]), int(sub.seed.nunique())
            rows.append([dataset, window, env, n_seeds, mx_train, pt_train, mx_train / pt_train])
    table = pd.DataFrame(rows, columns=VERSION_COLUMNS).assign(main_first=lambda t: t.env != "main")
    table = table.sort_values(["window", "dataset", "main_first"], kind="stable").drop(columns="main_first")
    return table.reset_index(drop=True)


def _per_batch(trials: pd.DataFrame) -> pd.DataFrame:
    main = trials[trials.part == "main"] if "part" in trials else trials
    return main.assign(per_batch_s=main.train_time_s / (main.epochs * main.num_batches_per_epoch))


def window_model(trials: pd.DataFrame) -> dict:
    """Per reference arm: seconds per training batch = a + b x window, from the main part's trials (2+ windows)."""
    return prediction.window_lines(_per_batch(trials), "per_batch_s")


def window_facts(trials: pd.DataFrame) -> dict:
    """The per-batch line of each framework, fitted on the main-part ``trials`` (template ``deepar_window``): each
    line, the windows it was fitted on and the trials' CPU."""
    mx, pt = reference_arms()
    model, frame, nan = window_model(trials), _per_batch(trials), (math.nan, math.nan)
    windows = (int(frame.window.min()), int(frame.window.max())) if len(frame) else None
    n_datasets = int(frame.dataset.nunique()) if len(frame) else 0
    lines = {"mx_line": model.get(mx, nan), "pt_line": model.get(pt, nan)}
    return {**lines, "fitted_windows": windows, "n_datasets": n_datasets, "cpu": cpu_names(frame)}


def cpu_names(rows: pd.DataFrame) -> str:
    """'AMD EPYC 25/17': the CPU model names of the rows' CPU ids (column ``machines.CPU``), as the pages print
    them; empty where the rows have none."""
    cpus = rows[CPU].dropna().unique() if CPU in rows else ()
    return ", ".join(sorted({Condition(str(c)).cpu_name for c in cpus}))


# -- the contention part and the factor table ---------------------------------------------------------------------
BASELINE_LOAD = 0
WIDE_SPREAD = 2.0  # a condition's slowest trial of a dataset at twice its fastest: what ran beside it mattered
CONDITION_COLUMNS = ["dataset", "window", "threads", "background_load", "condition", "n_trials", "mxnet_ms",
                     "pytorch_ms", "mxnet_slowdown", "mxnet_slowdown_low", "mxnet_slowdown_high",
                     "pytorch_slowdown", "pytorch_slowdown_low", "pytorch_slowdown_high", "ratio", "ratio_low",
                     "ratio_high", "effect", "effect_low", "effect_high", "mxnet_cpus_busy", "pytorch_cpus_busy",
                     "burner_cpu_frac"]  # fmt: skip
FACTOR_COLUMNS = ["key", "factor", "cpu", "source", "kind", "n", "mxnet_slowdown", "pytorch_slowdown", "effect",
                  "effect_low", "effect_high", "gap_share", "limited_to", "mxnet_spread", "pytorch_spread",
                  "trials_at_once", "datasets_measured", "dataset_effects"]  # fmt: skip


def _by_arm(g: pd.DataFrame, column: str = "c_batch") -> dict[str, np.ndarray]:
    return {arm: g.loc[g.arm == arm, column].to_numpy(float) for arm in reference_arms()}


def _contrast(cond: dict, base: dict, weight: float = 1.0) -> list[tuple[float, np.ndarray]]:
    """The terms of (MXNet_cond / PyTorch_cond) / (MXNet_base / PyTorch_base), each weighted ``weight``."""
    mx, pt = reference_arms()
    return [(weight, cond[mx]), (-weight, cond[pt]), (-weight, base[mx]), (weight, base[pt])]


def conditions_table(rows: pd.DataFrame, baseline: int, confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per dataset (by window) and condition (threads, background load), ``CONDITION_COLUMNS``: see the module
    docstring; ``condition`` in the words of template ``thread_condition``."""
    mx, pt = reference_arms()
    out = []
    for dataset, g in rows.groupby("dataset") if not rows.empty else ():
        base = _by_arm(g[(g.threads == baseline) & (g.background_load == BASELINE_LOAD)])
        for (threads, load), c in g.groupby(["threads", "background_load"]):
            cond = _by_arm(c)
            slow = [log_contrast_ci([(1, cond[arm]), (-1, base[arm])], confidence) for arm in (mx, pt)]
            ratio = log_contrast_ci([(1, cond[mx]), (-1, cond[pt])], confidence)
            effect = log_contrast_ci(_contrast(cond, base), confidence)
            cis = [x for r in (*slow, ratio, effect) for x in (r["ratio"], r["ci_low"], r["ci_high"])]
            busy = c.groupby("arm").cpus_busy.median()
            busy = [float(busy.get(arm, math.nan)) for arm in (mx, pt)]
            n = int(min(len(cond[mx]), len(cond[pt])))
            ms = [1000 * prediction.gmean(cond[arm]) for arm in (mx, pt)]
            label = render_markdown("thread_condition", threads=int(threads), load=int(load), baseline=baseline)
            burner = float(c.burner_cpu_frac.median()) if load else math.nan
            out.append([dataset, int(c.window.iloc[0]), int(threads), int(load), label, n, *ms, *cis, *busy, burner])
    table = pd.DataFrame(out, columns=CONDITION_COLUMNS)
    return table.sort_values(["window", "dataset", "background_load", "threads"], kind="stable").reset_index(drop=True)


def _pooled(cond: pd.DataFrame, base: pd.DataFrame, confidence: float, column: str = "c_batch") -> dict | None:
    """Per framework the slowdown of the ``cond`` rows against the ``base`` rows of the same dataset, and the effect
    on the ratio, each dataset weighted alike (the mean of their log effects), over the ``datasets`` where both
    reference arms ran on both sides; None where none did; ``spread``: per framework, a dataset's slowest / fastest
    ``cond`` trial, the largest over the datasets; ``by_dataset``: each dataset's effect alone, sorted."""
    mx, pt = reference_arms()
    per_dataset = {
        d: (_by_arm(c, column), _by_arm(base[base.dataset == d], column)) for d, c in cond.groupby("dataset")
    }
    per_dataset = {d: (c, b) for d, (c, b) in per_dataset.items() if all(len(c[a]) and len(b[a]) for a in (mx, pt))}
    if not per_dataset:
        return None
    w, pairs = 1 / len(per_dataset), per_dataset.values()
    slowdowns = {
        f"{side}_slowdown": log_contrast_ci([t for c, b in pairs for t in ((w, c[arm]), (-w, b[arm]))], confidence)
        for side, arm in zip(prediction.sides(), (mx, pt))
    }
    return {"n_datasets": len(per_dataset), "datasets": sorted(per_dataset), **slowdowns,
            "n_trials": [int(sum(min(len(s[mx]), len(s[pt])) for s in side)) for side in zip(*pairs)],
            "spread": tuple(max(float(c[arm].max() / c[arm].min()) for c, _ in pairs) for arm in (mx, pt)),
            "by_dataset": sorted(log_contrast_ci(_contrast(c, b), confidence)["ratio"] for c, b in pairs),
            "effect": log_contrast_ci([t for c, b in pairs for t in _contrast(c, b, w)], confidence)}  # fmt: skip


def runs_together(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """One row per group of ``k`` trials run at once (seeds k at a time: ``studies.deepar.post_condition_configs``)
    at their geometric mean cost: trials sharing the cores move together, so the groups are the interval's units."""
    group = ((rows.seed - rows.seed.min()) // k).rename("group")  # by seed, not rank: a failed seed shifts nothing
    logs = rows.assign(c_batch=np.log(rows.c_batch)).groupby(["dataset", "arm", group]).c_batch.mean()
    return np.exp(logs).reset_index()


def _pooled_parts(trials: pd.DataFrame, part: str, confidence: float) -> dict | None:
    """``_pooled`` for a part of whole trials (training seconds) against the main part's of the same seeds."""
    mine, main = trials[trials.part == part], trials[trials.part == "main"]
    both = set(zip(mine.dataset, mine.seed)) & set(zip(main.dataset, main.seed))
    same = [f.loc[[k in both for k in zip(f.dataset, f.seed)]] for f in (mine, main)]
    return _pooled(*same, confidence, "train_time_s")


def factor_table(
    trials: pd.DataFrame,
    coverage: pd.DataFrame,
    contention: pd.DataFrame,
    baseline: int,
    confidence: float = CONFIDENCE,
    other_cpus: dict | None = None,
    post: dict | None = None,
    measured_conditions: list | None = None,
) -> tuple[pd.DataFrame, dict]:
    """(the factor table, B's judged subset total it is read against). ``trials``: ``load_trials(...,
    parts=None)``; ``coverage``/``contention``: the parts' cost rows; ``other_cpus``: ``{CPU model name: its
    coverage cost rows}`` (a measured factor each, and the post's machine inferred again beyond it); ``post``:
    ``deepar_prediction.predictions`` and ``measured_conditions`` its ``prediction_conditions`` (each CPU's default
    threads against its coverage part, each k of runs at once against one run, the chosen condition and the
    residual). ``kind``: measured (a CI where every group has 2 or more trials), modelled, inferred or predicted.

    Runs at once: each k over the datasets it ran, and where the ks ran different datasets, each k again over the
    datasets every k ran (``limited_to``; never the measured factor ``factor_facts`` names), so that rows a
    reader sets side by side are over the same datasets; a row names its datasets where they are not the 1-run row's.

    The gap is the post's ratio from its totals (``published.deepar2024.post_ratio``) over B. Decision: three rows
    chain from B to the post and share nothing, so their shares add up to the whole gap: the datasets not staged
    here (the coverage part's whole-list prediction over B), the chosen condition (its whole-list prediction over
    the coverage part's, both on the same 41 datasets with the same window-line fill-in) and the residual."""
    # each CPU's coverage comparison as ``predictions`` built it (computed once), else built here
    built = {id(own): post["tables"][c.key] for c, cov, own in measured_conditions or [] if own is cov} if post else {}

    def comparison(rows: pd.DataFrame) -> pd.DataFrame:
        return built[id(rows)] if id(rows) in built else prediction.comparison(rows)

    total = {"ratio": math.nan, "n_datasets": 0}
    total = prediction.weighted_total(coverage, confidence) if not coverage.empty else total
    gap = post_ratio() / total["ratio"] if total["ratio"] > 0 else math.nan
    rows, slugs = [], {name: name.replace(" ", "_").replace("/", "_") for name in other_cpus or {}}

    def add(what, cpu, kind, mxnet, pytorch, effect, n="", low=math.nan, high=math.nan, key=None, **words):
        factor, source = render_markdown("deepar_factor", what=what, baseline=baseline, **words).split("\n")
        share = math.log(effect) / math.log(gap) if effect > 0 and gap > 0 and gap != 1 else math.nan
        limited, spread = " ".join(words.get("limited_to", ())), words.get("spread", (math.nan, math.nan))
        values = [key or what, factor, cpu, source, kind, n, mxnet, pytorch, effect, low, high, share, limited, *spread,
                  words.get("k", 1), " ".join(words.get("ran", ())), words.get("by_dataset", [])]  # fmt: skip
        rows.append(dict(zip(FACTOR_COLUMNS, values)))

    def measured(what, cpu, pooled, **words):
        if pooled:
            e, (a, b), d = pooled["effect"], pooled["n_trials"], pooled["n_datasets"]  # a: this side's, b: the base's
            k = words.get("k", 1)  # k > 1: a's are groups of k that ran at once (``runs_together``)
            side = f"{a} groups of {k} run at once and {b} trials alone" if k > 1 else f"{a} and {b} trials"
            alike = k == 1 and a == b
            n = f"{f'{a} trials a side' if alike else f'{side} per framework'}, {d} dataset(s)"
            slowdowns = pooled["mxnet_slowdown"]["ratio"], pooled["pytorch_slowdown"]["ratio"]
            add(what, cpu, "measured", *slowdowns, e["ratio"], n, e["ci_low"], e["ci_high"],
                n_datasets=pooled["n_datasets"], spread=pooled["spread"], ran=pooled["datasets"],
                by_dataset=pooled["by_dataset"], **words)  # fmt: skip

    def inferred(what, cpu, table, **words):
        s = prediction.against_chart_summary(prediction.against_chart(table, prediction.chart()))
        if s["n_measured"]:
            mxnet, pytorch = s["post_over_ours_mxnet"], s["post_over_ours_pytorch"]
            add(what, cpu, "inferred", mxnet, pytorch, mxnet / pytorch, f"{s['n_measured']} charted datasets",
                n_charted=s["n_charted"], n_measured=s["n_measured"], **words)  # fmt: skip

    if not trials.empty and "part" in trials:
        envs = ", ".join(sorted(set(trials.loc[trials.part == "versions", "env"].dropna())))
        for part, what in (("versions", "versions"), ("onednn", "onednn_off"), ("threads", "threads_part")):
            boots = [set(trials.loc[trials.part == p, MACHINE]) for p in (part, "main")]  # another boot: its speed too
            mine = trials[trials.part == part]
            measured(what, cpu_names(mine), _pooled_parts(trials, part, confidence), envs=envs,
                     threads=int(mine.threads.min()) if len(mine) and "threads" in mine else None,
                     other_boot=not boots[0] & boots[1] and NOT_RECORDED not in boots[0] | boots[1])  # fmt: skip
    for (threads, load), cond in contention.groupby(["threads", "background_load"]) if not contention.empty else ():
        if (threads, load) != (baseline, BASELINE_LOAD):
            base = contention[(contention.threads == baseline) & (contention.background_load == BASELINE_LOAD)]
            key = f"threads_{threads}" + (f"_load_{load}" if load else "")
            measured("threads", cpu_names(contention), _pooled(cond, base, confidence), key=key, threads=int(threads),
                     load=int(load))  # fmt: skip
    for name, other in (other_cpus or {}).items() if not coverage.empty else ():
        measured("cpu", name, _pooled(other, coverage, confidence), key=f"cpu_{slugs[name]}", cpu_model=name)
    default = [m for m in measured_conditions or [] if m[0].threads == DEFAULT_THREADS]
    omp = {c: _medians(own, ["omp_max_threads"]).omp_max_threads.tolist() for c, _, own in default}  # as recorded
    for c, base, alone in (m for m in default if m[0].trials_at_once == 1):  # neither is empty (prediction_conditions)
        pooled = _pooled(alone, base, confidence)
        epochs = [int(r.epochs.max()) for r in (alone, base)]
        measured("default_threads", c.cpu_name, pooled, key=f"default_threads_{c.key}", epochs=epochs, threads=omp[c])
        crowded = [m for m in default if m[0].cpu == c.cpu and m[0].trials_at_once > 1]  # by k, as measured
        every = sorted(set.intersection(*(set(own.dataset) for *_, own in crowded))) if crowded else []
        for k, _, own in crowded:
            for limited in (False, True) if set(every) < set(own.dataset) else (False,):
                ran = own[own.dataset.isin(every)] if limited else own
                mine = _pooled(runs_together(ran, k.trials_at_once), alone, confidence)
                if mine:  # how far apart the trials themselves lie, not their groups
                    mine["spread"] = _pooled(ran, alone, confidence)["spread"]
                named = mine["datasets"] if mine and pooled and mine["datasets"] != pooled["datasets"] else []
                key = f"at_once_{k.key}" + (f".on_{'+'.join(every)}" if limited else "")
                measured("at_once", k.cpu_name, mine, key=key, k=k.trials_at_once, datasets=named, threads=omp[k],
                         limited_to=every if limited else [])  # fmt: skip
    archive = {"ratio": math.nan}
    if not coverage.empty:
        table = comparison(coverage)
        archive = prediction.archive_estimate(table)
        if archive["n_modelled"] and total["ratio"] > 0:
            add("unstaged_datasets", cpu_names(coverage), "modelled", math.nan, math.nan,
                archive["ratio"] / total["ratio"], f"{archive['n_datasets']} datasets",
                n_modelled=archive["n_modelled"], beyond=archive["n_beyond"], staged=archive["staged"])  # fmt: skip
        inferred("post_machine", cpu_names(coverage), table)
        for name, other in (other_cpus or {}).items():
            key = f"post_machine_{slugs[name]}"
            inferred("post_machine_cpu", name, comparison(other), key=key, cpu_model=name)
    chosen = post["chosen"] if post else None
    if chosen is not None and archive["ratio"] > 0:
        fit, condition = post["fits"].set_index("key").loc[chosen], post["conditions"][chosen]
        given = int(prediction.against_chart(post["tables"][chosen], prediction.chart()).measured.sum())
        estimate = prediction.archive_estimate(post["tables"][chosen])
        add("chosen", condition.cpu_name, "predicted", math.nan, math.nan, estimate["ratio"] / archive["ratio"],
            f"{estimate['n_datasets']} datasets", condition=condition, n_given=int(fit.n), given=given,
            base_cpu=cpu_names(coverage))  # fmt: skip
        add("residual", condition.cpu_name, "residual", math.nan, math.nan, post_ratio() / estimate["ratio"],
            claimed=post_ratio())  # fmt: skip
    return pd.DataFrame(rows, columns=FACTOR_COLUMNS), {**total, "gap": gap, "baseline": baseline}


def factor_facts(table: pd.DataFrame, total: dict) -> dict:
    """The factor table's page (template ``deepar_factors``): each effect as a ``Quantity``
    (``deepar.gap_factor.<key>``, under its row's CPU model and part), B and the gap, the measured factor that moves
    the ratio most (``top``; a row limited to another's datasets is not another factor), the post's machine as its
    chart implies it over top's CPU's costs where measured (``post_machine``), with whether both slow MXNet more
    (``same_pattern``), whether a framework's trials in a measured row lie ``WIDE_SPREAD`` apart (``apart_rows``),
    the largest spread of every other row and framework (``narrow``), the contention row alone closest to the gap
    (``closing``: ``deepar_prediction`` ranks no contention condition). A reading of the table, not a fit."""
    factors = table.assign(effect_q=[
        Quantity(f"deepar.gap_factor.{r.key}", r.effect, r.effect_low, r.effect_high, n=r.n, label=r.factor,
                 conditions={k: v for k, v in (("cpu", r.cpu), ("part", r.source)) if v}) for r in table.itertuples()
    ]) if len(table) else table  # fmt: skip
    out = {"factors": factors, "total": total, "claimed": post_ratio(), "stated": CLAIMED_SPEEDUP, "top": None,
           "post_machine": None, "same_pattern": False, "wide": WIDE_SPREAD, "closing": None}  # fmt: skip
    if table.empty:
        return out
    spread = factors.loc[factors.kind == "measured", ["mxnet_spread", "pytorch_spread"]].stack()  # each cell apart
    out |= {"narrow": spread[spread < WIDE_SPREAD].max(), "apart_rows": bool((spread >= WIDE_SPREAD).any())}
    measured = factors[
        (factors.kind == "measured") & np.isfinite(factors.effect.astype(float)) & ~factors.limited_to.astype(bool)
    ]
    if measured.empty:
        return out
    top = measured.loc[measured.effect.map(lambda e: abs(math.log(e))).idxmax()]
    post = factors[factors.key.str.startswith("post_machine")]  # the chart's figures on the top row's CPU, else ours
    post = post[post.cpu == top.cpu] if (post.cpu == top.cpu).any() else post[post.key == "post_machine"]
    p = post.iloc[0] if len(post) else None
    same = p is not None and (top.mxnet_slowdown > top.pytorch_slowdown) == (p.mxnet_slowdown > p.pytorch_slowdown)
    contention = measured[measured.key.str.startswith("threads_") & measured.gap_share.notna()]
    closing = contention.loc[(contention.gap_share - 1).abs().idxmin()] if len(contention) else None
    return {**out, "top": top, "post_machine": p, "same_pattern": bool(same), "closing": closing}


def contention_facts(table: pd.DataFrame, rows: pd.DataFrame | None = None) -> dict:
    """What the contention part's page shows: ``conditions_table`` and, beside the background load, each
    framework's slowest later epoch per batch against its median (``stalls``: a stall of seconds would show)."""
    loaded = rows[rows.background_load > 0] if rows is not None and not rows.empty else pd.DataFrame(columns=["arm"])
    stalls = [
        {"framework": fw, "worst": float(g.c_batch_worst.max()), "median": float(g.c_batch.median())}
        for arm, fw in zip(reference_arms(), framework_names())
        if len(g := loaded[loaded.arm == arm])
    ]
    return {"table": table, "stalls": stalls}


def load(results: Results) -> dict:
    """Everything the notebook, README and post show of the conditions, from one computation (kept in
    ``results``: every page of one build reads the same)."""
    return results.frame((STUDY, "conditions"), lambda: _load(results))


def _load(results: Results) -> dict:
    trials = load_trials(results, parts=None)
    contention = cost_rows(results, part=prediction.CONTENTION)
    baseline = int(get_study(STUDY).resolve(results.profile, results.overrides_of(STUDY))["threads"])
    # each CPU's coverage rows read once: the unnamed condition's is B's base, a named CPU's a factor of its own
    measured = prediction.prediction_conditions(results)
    bases = [(c, cov) for c, cov, own in measured if own is cov]
    base = next((c for c, cov in bases if not c.named), None)
    coverage = cost_rows(results) if base is None else next(cov for c, cov in bases if c is base)
    other_cpus = {c.cpu_name: cov for c, cov in bases if c.named}
    post = prediction.predictions(results, measured=measured)
    factors, total = factor_table(
        trials, coverage, contention, baseline, other_cpus=other_cpus, post=post, measured_conditions=measured
    )
    conditions = conditions_table(contention, baseline)
    post["unranked"]["closing"] = factor_facts(factors, total)["closing"]  # the answer names it beside the ranking
    # B's base: the coverage part's comparison, as ``predictions`` built it where it has the condition
    table = prediction.comparison(coverage) if base is None and not coverage.empty else None
    table = post["tables"][base.key] if base is not None else table
    spread = prediction.dataset_range(table) if table is not None else None  # B's datasets
    return dict(rows=contention, conditions=conditions, factors=factors, total=total, baseline=baseline, post=post,
                spread=spread, base_table=table)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """``python -m fwbench.analysis.deepar_conditions --profile paper -o results/paper/deepar_gap_factors.csv``:
    the factor table, and beside it (``..._conditions.csv``) the contention part per dataset and condition."""
    args, results = csv_arguments("what explains B's gap to the post: the factor table", argv)
    result = load(results)
    if result["factors"].empty:
        print(f"no factor of B's gap measured in profile {args.profile!r}: {args.output} not written")
        return 0
    result["factors"].to_csv(args.output, index=False, float_format="%.6g")
    beside = args.output.removesuffix(".csv").removesuffix("_factors") + "_conditions.csv"
    result["conditions"].to_csv(beside, index=False, float_format="%.6g")
    print(f"wrote {len(result['factors'])} factors to {args.output}, {len(result['conditions'])} rows to {beside}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
