"""Tables of the IMDB sweep, computed from the results store (first epoch stored, excluded from timing stats).

Arms, their order, frameworks and labels come from the study's arm table (``get_study("imdb")``): MXNet / PyTorch
ratios put the study's MXNet reference arm over each PyTorch arm of the post (``CORE_ARMS``); a variant beyond the
post is compared with its framework's reference arm. A setting is arm x batch size x workers x worker lifetime x
oneDNN (``SETTING``); ratios over independent trials (oneDNN, worker lifetime) reduce each trial to its median
timed epoch first (``fwbench.stats.trial_ratio_ci``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.imdb import REVIEWS_PER_SPLIT
from ..machines import CPU, MACHINE, NOT_RECORDED, centre_by_machine, cpu_model_of, machine_of, one_cpu_model
from ..stats import summarize, trial_medians, trial_ratio_ci
from ..studies import get_study
from ..studies.imdb import DEFAULT_LIFETIME
from ..studies.imdb_profiles import CORE_ARMS
from . import Results, arm_order

STUDY = "imdb"
SETTING = ["arm", "batch_size", "num_workers", "worker_lifetime", "onednn"]
TIMED_PARTS = ("main", "extra", "convergence")  # the grid parts whose epoch times the tables compare
WHOLE_TRIAL = ("prepare_time_s", "peak_rss_mb")  # stored at step -1, joined to every epoch row of the trial
# the arms compared at one setting run back to back in each block: the machine's speed is taken out per setting
# (``beside``: the beside part's trials of the reference arms repeat main settings on another machine: apart), within
# one CPU model only (``machines``)
MACHINE_SETTING = [*SETTING[1:], "seq_len", "threads", "n_train", "epochs", "beside", CPU]


def post_comparison() -> tuple[str, tuple[str, ...]]:
    """(MXNet reference arm, the post's PyTorch arms): the pairs of the post's MXNet / PyTorch ratio."""
    study = get_study(STUDY)
    mx_ref = study.reference_arm("mxnet")  # the post's numerator; its denominators are the other framework's arms
    return mx_ref, tuple(a for a in CORE_ARMS if study.framework_of(a) != study.framework_of(mx_ref))


def load_sweep(results: Results) -> pd.DataFrame:
    """One row per (trial, epoch) of the profile's finished trials, metrics as columns; ``epoch_25k_s`` is the
    training pass scaled to a 25k-review epoch (time per review x 25,000: a profile may time fewer reviews, and
    sizes epochs by batches, so this is the time comparable across batch sizes)."""
    return results.frame(("imdb", "sweep"), lambda: _sweep(results.values(STUDY)))


def _sweep(long: pd.DataFrame) -> pd.DataFrame:
    if long.empty:
        return pd.DataFrame()
    config = ["part", *SETTING, "seed", "epochs", "n_train"]
    keys = {
        "trial_id": "trial_id",
        **{f"config.{c}": c for c in config},
        "config.encoding.maxlen": "seq_len",
        "config.threads": "threads",
        "config.beside": "beside",
        "provenance.trials_sharing_host": "trials_sharing_host",
        "host": "host",
        MACHINE: MACHINE,
        CPU: CPU,
        "step": "epoch",
    }
    # rows from before the options; a trial of the local runner had the machine alone (no Dask placement record)
    defaults = {"config.worker_lifetime": DEFAULT_LIFETIME, "config.onednn": True, "provenance.trials_sharing_host": 1}
    long = long.assign(**{c: long[c].fillna(v) if c in long else v for c, v in defaults.items()})
    # only the beside part's configs carry ``beside``
    long["config.beside"] = long["config.beside"].eq(True) if "config.beside" in long else False
    long[MACHINE] = long["provenance.boot_id"].map(machine_of) if "provenance.boot_id" in long else NOT_RECORDED
    long[CPU] = long["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in long else NOT_RECORDED
    long["lr_schedule"] = long["config.lr_schedule.factor"].notna() if "config.lr_schedule.factor" in long else False
    whole = long[long.metric.isin(WHOLE_TRIAL)].pivot_table(index="trial_id", columns="metric", values="value")
    long = long[long.step >= 0]  # whole-trial values (step -1) are joined as columns below
    wide = long.pivot_table(index=list(keys) + ["lr_schedule"], columns="metric", values="value").reset_index()
    wide = wide.rename(columns=keys).join(whole, on="trial_id")
    wide.columns.name = None
    if "train_time_s" in wide:
        wide["epoch_25k_s"] = wide.train_time_s * REVIEWS_PER_SPLIT / wide.n_train
        # pieces ran on machines of other speeds; the quality part is accuracy, not a timing: never centred, and
        # never dropped because its arms (JAX's seeds ran later) sit on different machines
        quality = wide.part.eq("quality")
        timed, other_cpus = one_cpu_model(wide[~quality])  # one CPU model per timed part, never pooled
        timed, dropped = centre_by_machine(timed, MACHINE_SETTING)
        wide = pd.concat([timed, wide[quality]])
        wide.attrs.update(machine_dropped_trials=dropped, other_cpu_trials=other_cpus)
    return wide.sort_values(["arm", "batch_size", "num_workers", "seed", "epoch"]).reset_index(drop=True)


def machine_adjustment(results: Results) -> dict:
    """How the timed parts' trials of several machines are compared (``machines.centre_by_machine``): ``adjusted``,
    whether a setting kept trials of more than one machine (each time divided by its (setting, machine) factor), and
    ``dropped``: per (arm, batch size, workers), the repeat blocks of the trials left out for an incomplete cell."""
    frame = load_sweep(results)
    timed = part(frame, *TIMED_PARTS)
    if timed.empty:
        return {"adjusted": False, "dropped": {}}
    trials = results.trials(STUDY).set_index("trial_id").loc[frame.attrs.get("machine_dropped_trials", [])]
    gone = trials[trials["config.part"].fillna("main").isin(TIMED_PARTS)]
    blocks = gone.groupby(["config.arm", "config.batch_size", "config.num_workers"])["config.repeat"]
    adjusted = timed.groupby(MACHINE_SETTING, dropna=False)[MACHINE].nunique().gt(1).any()
    return {"adjusted": bool(adjusted), "dropped": dict(blocks.agg(lambda b: sorted(b.astype(int))))}


def part(frame: pd.DataFrame, *names: str) -> pd.DataFrame:
    """The rows of the given grid parts (``main``, ``extra``, ``convergence``, ``scaling``)."""
    return frame[frame.part.isin(names)] if not frame.empty else frame


def final_epochs(frame: pd.DataFrame) -> pd.DataFrame:
    """Each trial's last epoch (one row per trial) of ``load_sweep``'s rows: the final loss and accuracy."""
    return frame[frame.epoch == frame.epochs - 1] if not frame.empty else frame


def failures(results: Results) -> pd.DataFrame:
    trials = results.trials(STUDY)
    if trials.empty:
        return trials
    failed = trials[trials.status == "failed"]
    return failed[["trial_id", "config.arm", "config.batch_size", "config.num_workers", "error"]]


def hybridize_table(results: Results) -> pd.DataFrame:
    """Claim A9 as stated: per MXNet hybrid-arm trial, whether hybridizing (and the first forward+backward)
    worked, the exact error if not, and the graph-building time."""
    trials = results.trials(STUDY)
    if trials.empty or "summary.hybridize_ok" not in trials:
        return pd.DataFrame()
    config = [f"config.{c}" for c in ("arm", "batch_size", "seed")]
    summary = [f"summary.{c}" for c in ("hybridize_ok", "hybridize_error", "median_epoch_s", "n_parameters")]
    rows = trials[trials["summary.hybridize_ok"].notna()]
    cols = [c for c in [*config, "status", *summary] if c in rows]
    return rows[cols].rename(columns=lambda c: c.split(".", 1)[-1]).reset_index(drop=True)


def timed_epochs(frame: pd.DataFrame) -> pd.DataFrame:
    """The epochs that count for timing: all but each trial's first (warm-up: allocators, caches, JIT)."""
    return frame[frame.epoch > 0] if not frame.empty else frame


def epoch_time_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median and IQR of ``epoch_25k_s``, throughput and CPU use per arm x batch size x workers (the main grid, the
    extra arms and the convergence runs; the cost-growth runs have their own table)."""
    timed = timed_epochs(part(frame, *TIMED_PARTS))
    if timed.empty:
        return pd.DataFrame()
    table = summarize(timed, SETTING, value="epoch_25k_s")
    cpu_cols = [c for c in ("proc_cpu_pct", "worker_cpu_pct", "sys_cpu_pct", "peak_rss_mb") if c in timed]
    medians = timed.groupby(SETTING)[["samples_per_s", *cpu_cols]].median().reset_index()
    table = table.merge(medians, on=SETTING)
    table["arm"] = pd.Categorical(table["arm"], arm_order(STUDY, table["arm"]), ordered=True)
    return table.sort_values(SETTING).reset_index(drop=True)


def ratio_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Epoch-time ratio of ``post_comparison()``'s MXNet arm over each PyTorch arm (>1: MXNet is slower) per batch
    size x workers, with a CI over independent trials (each the median of its timed epochs)."""
    numerator, denominators = post_comparison()
    timed = timed_epochs(part(frame, *TIMED_PARTS))
    rows = []
    if timed.empty:
        return pd.DataFrame(rows)
    for key, group in timed.groupby(SETTING[1:]):
        num = trial_medians(group[group.arm == numerator], "train_time_s")
        for den_arm in denominators:
            den = trial_medians(group[group.arm == den_arm], "train_time_s")
            if len(num) and len(den):
                setting = dict(zip(SETTING[1:], key))
                rows.append({**setting, "numerator": numerator, "denominator": den_arm, **trial_ratio_ci(num, den)})
    return pd.DataFrame(rows)


# -- beyond the post ---------------------------------------------------------------------------------------
def variant_effects(frame: pd.DataFrame) -> pd.DataFrame:
    """What hybridizing MXNet and compiling PyTorch buy: epoch-time ratio variant / baseline at the same setting
    (CI over independent trials; < 1 means the variant is faster), and the one-off preparation (compile) time. A
    variant is an arm beyond the post (not in ``CORE_ARMS``), its baseline its framework's reference arm; a
    framework the post did not compare (JAX) has no reference arm here, so its arm is no variant of one."""
    study, timed = get_study(STUDY), timed_epochs(part(frame, *TIMED_PARTS))
    variants = [a for a in study.arms if a.name not in CORE_ARMS and a.framework in study.reference]
    rows = []
    for variant, baseline in ((a.name, study.reference_arm(a.framework)) for a in variants):
        for key, group in timed[timed.arm == variant].groupby(SETTING[1:]):
            base = timed[(timed.arm == baseline) & (timed[SETTING[1:]] == list(key)).all(axis=1)]
            if base.empty:
                continue
            rows.append(
                {
                    "variant": variant,
                    "baseline": baseline,
                    **dict(zip(SETTING[1:], key)),
                    **trial_ratio_ci(trial_medians(group, "train_time_s"), trial_medians(base, "train_time_s")),
                    "prepare_time_s": float(group.prepare_time_s.median()),
                    "variant_epoch_s": float(group.train_time_s.median()),
                    "baseline_epoch_s": float(base.train_time_s.median()),
                }
            )
    return pd.DataFrame(rows)


def per_trial(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per trial: its setting and the median of its timed epochs (the unit of replication)."""
    timed = timed_epochs(frame)
    if timed.empty:
        return pd.DataFrame()
    keys = SETTING + ["part", "seq_len", "threads", "n_train", "epochs", "seed", "trial_id"]
    return timed.groupby(keys, observed=True).train_time_s.median().rename("epoch_s").reset_index()


def paired_settings(trials: pd.DataFrame, factor: str, numerator, denominator):
    """Yield (setting, numerator epoch times, denominator epoch times): ``per_trial`` rows with ``factor`` =
    numerator and = denominator at otherwise equal settings (any grid part), one value per trial."""
    same = [c for c in SETTING + ["seq_len", "threads", "n_train", "epochs"] if c != factor]
    for key, group in trials.groupby(same, observed=True):
        num = group.loc[group[factor] == numerator, "epoch_s"]
        den = group.loc[group[factor] == denominator, "epoch_s"]
        if len(num) and len(den):
            yield dict(zip(same, key)), num, den


def _paired_settings(trials: pd.DataFrame, factor: str, numerator, denominator, what: str) -> pd.DataFrame:
    """``paired_settings`` as a table: the ratio of per-trial median epoch times with its CI over trials."""
    rows = []
    for setting, num, den in paired_settings(trials, factor, numerator, denominator):
        medians = {"median_s": float(num.median()), "baseline_median_s": float(den.median())}
        rows.append({**setting, what: numerator, "baseline": denominator, **medians, **trial_ratio_ci(num, den)})
    return pd.DataFrame(rows)


def onednn_effect(frame: pd.DataFrame) -> pd.DataFrame:
    """Claim C3 on the LSTM: each arm's epoch time with oneDNN off over on (``ratio`` > 1: oneDNN speeds it up),
    at every setting timed both ways (the ``onednn`` grid part), with a CI over trials."""
    trials = per_trial(frame)
    if trials.empty or trials.onednn.nunique() < 2:
        return pd.DataFrame()
    out = _paired_settings(trials, "onednn", False, True, "onednn")
    if not out.empty:
        out.insert(1, "framework", out.arm.map(get_study(STUDY).framework_of))
    return out.drop(columns="onednn", errors="ignore")


def worker_lifetime_effect(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-epoch over persistent data-loader workers (``ratio`` > 1: starting workers every epoch costs time) at
    every setting with workers timed both ways, with a CI over trials."""
    trials = per_trial(frame)
    if trials.empty:
        return pd.DataFrame()
    trials = trials[trials.num_workers > 0]
    return _paired_settings(trials, "worker_lifetime", "per-epoch", "persistent", "worker_lifetime")


def training_flops_per_sample(seq_len: int, embed_dim: int = 128, hidden_size: int = 128) -> float:
    """Matrix-multiply FLOPs of one training sample through the LSTM: per step the gate GEMMs
    2*4H*(E+H) forward, about twice that backward (input and weight gradients); the embedding lookup, the
    element-wise gate maths and the 2-way dense layer are left out (an estimate, a lower bound)."""
    return 3.0 * seq_len * 2 * 4 * hidden_size * (embed_dim + hidden_size)


def scaling_table(frame: pd.DataFrame, gemm_peak: dict | None = None) -> pd.DataFrame:
    """Cost growth: median epoch time and throughput per arm x sequence length x threads, with the achieved
    GEMM GFLOP/s and, where a measured peak is given as ``{(framework, threads): GFLOP/s}``, its fraction."""
    timed = timed_epochs(part(frame, "scaling"))
    if timed.empty:
        return pd.DataFrame()
    table = summarize(timed, ["arm", "seq_len", "threads"], value="train_time_s")
    sps = timed.groupby(["arm", "seq_len", "threads"])["samples_per_s"].median().rename("samples_per_s")
    table = table.join(sps, on=["arm", "seq_len", "threads"])
    table["achieved_gflops"] = [
        training_flops_per_sample(s) * r / 1e9 for s, r in zip(table.seq_len, table.samples_per_s)
    ]
    if gemm_peak:
        framework = table.arm.map(get_study(STUDY).framework_of)
        table["gemm_peak_gflops"] = [gemm_peak.get((f, t), np.nan) for f, t in zip(framework, table.threads)]
        table["fraction_of_peak"] = table.achieved_gflops / table.gemm_peak_gflops
    return table


# What a notebook table needs from the plan, for the sentence shown where it has no rows (``absent_facts``).
ABSENT = {
    "variants": ("variant arms", lambda c: c["arm"] not in CORE_ARMS),
    "hybrid": ("hybridized MXNet trials", lambda c: get_study(STUDY).arm(c["arm"]).variant.startswith("hybrid")),
    "onednn": ("oneDNN on/off pairs", lambda c: c.get("onednn") is False),
    "lifetime": ("per-epoch/persistent pairs", lambda c: c.get("worker_lifetime") == "persistent"),
    "scaling": ("cost-growth trials", lambda c: c.get("part") == "scaling"),
}


def absent_facts(kind: str, results: Results) -> dict:
    """Where a table of ``kind`` (``ABSENT``) has no rows (template ``imdb_absent``): ``what`` it would show and
    whether the ``profile`` ``planned`` such trials (then the run is incomplete; else nothing is missing)."""
    what, wanted = ABSENT[kind]
    study = get_study(STUDY)
    plan = study.grid(study.resolve(results.profile, results.overrides_of(STUDY)))
    return {"what": what, "planned": any(wanted(c) for c in plan), "profile": results.profile}
