"""How long a profile takes, extrapolated from the trials already in the store (``fwbench estimate``)."""

from __future__ import annotations

import heapq
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import conditions, stale
from .analysis.deepar import unrolled_window
from .analysis.deepar_coverage import batch_cost, or_zero, trial_epochs
from .data import monash
from .errors import FwbenchError
from .floatmode import DEFAULT
from .machines import cpu_model_of, models_by_own_run
from .pages import render_markdown
from .planning import plan
from .provenance import this_cpu
from .studies import adaptive, get_study


@dataclass
class Estimate:
    study: str
    profile: str
    n_workers: int
    n_trials: int  # in the profile's grid
    estimated_trials: int  # of those, the ones the model covers (see not_estimated)
    measured_trials: int
    total_s: float  # sum of predicted trial times (one machine, one trial at a time)
    makespan_s: float  # on n_workers, one trial each at a time, longest trials first
    by_group: dict = field(default_factory=dict)  # seconds per arm (or per study-specific group)
    model: str = ""
    not_estimated: dict = field(default_factory=dict)  # group -> trials left out (nothing stored to go on)
    per_trial: dict = field(default_factory=dict)  # trial id -> predicted seconds
    adaptive: dict | None = None  # adaptive repeats: the rule and the expected times (``_adaptive_expectation``)
    cpu: str | None = None  # the CPU model whose stored trials it extrapolates from (None: every model, not recorded)
    fp_mode: str = DEFAULT  # the fp mode whose trials on that model it extrapolates from, where any ran in it
    set_aside: dict = field(default_factory=dict)  # trials on that model not extrapolated from: superseded, fp_mode

    @property
    def expected_s(self) -> float:
        """The expected total: with adaptive repeats the rule's (``adaptive``), else the capped one."""
        return self.adaptive["expected_s"] if self.adaptive else self.total_s

    def lines(self) -> list[str]:
        """``fwbench estimate``'s report (template ``estimate_lines``)."""
        return render_markdown("estimate_lines", e=self).split("\n")


def makespan(durations: list[float], n_workers: int) -> float:
    """Longest-processing-time-first greedy schedule on ``n_workers`` identical machines."""
    loads = [0.0] * n_workers
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads) if durations else 0.0


def _nearest(rows: list[dict], key: str, value) -> list[dict]:
    """The rows whose ``key`` is the stored value nearest to ``value`` (ties: the smaller)."""
    best = min({r[key] for r in rows}, key=lambda x: (abs(x - value), x))
    return [r for r in rows if r[key] == best]


def _imdb_predictor(measured):
    """Per-arm cost model fitted on the stored IMDB trials (``measured``: store.measurements frame, done)."""
    per_epoch = measured[measured.step >= 0]  # whole-trial values (step -1, e.g. compile time) sit in the overhead
    pivot = per_epoch.pivot_table(index=["trial_id", "step"], columns="metric", values="value").reset_index()
    cfg = measured.drop_duplicates("trial_id").set_index("trial_id")
    by_arm = defaultdict(list)
    for tid, g in pivot.groupby("trial_id"):
        c = cfg.loc[tid]
        g = g.sort_values("step")
        n_train, n_test = float(c["config.n_train"]), float(c["config.n_test"])
        seq_len = int(c.get("config.encoding.maxlen", 500))
        later = g[g.step > 0]["train_time_s"]
        steady = statistics.median(later) if len(later) else float(g["train_time_s"].iloc[0])
        in_epochs = float(g["train_time_s"].sum() + g["eval_time_s"].sum())
        onednn = c.get("config.onednn", True)
        by_arm[c["config.arm"]].append(
            {
                "batch": int(c["config.batch_size"]),
                "onednn": int(True if onednn != onednn or onednn is None else bool(onednn)),
                "workers": int(c["config.num_workers"]),
                "threads": int(c["config.threads"]),
                "seq_len": seq_len,
                "c_train": steady / n_train,
                "warmup": float(g["train_time_s"].iloc[0]) / steady if len(later) else 1.0,
                "c_eval_step": float(g["eval_time_s"].median()) / n_test / seq_len,
                "overhead": max(0.0, float(c["provenance.trial_wall_s"]) - in_epochs),
            }
        )

    def like(arm, threads, seq_len, onednn):
        """The arm's stored trials nearest in oneDNN, threads and sequence length (in that order), and the
        linear seq_len factor from them to the config: the costs that change a sample's price."""
        pool = _nearest(by_arm[arm], "onednn", int(onednn))
        pool = _nearest(pool, "threads", threads)
        pool = _nearest(pool, "seq_len", seq_len)
        return pool, seq_len / pool[0]["seq_len"]

    def c_train(arm, batch, workers, threads, seq_len, onednn=True):
        pool, scale = like(arm, threads, seq_len, onednn)
        pool = _nearest(pool, "workers", workers)
        pts = defaultdict(list)
        for r in pool:
            pts[r["batch"]].append(r["c_train"])
        med = {b: statistics.median(v) for b, v in pts.items()}
        if batch in med:
            return scale * med[batch]
        if len(med) < 3:  # a line through two points extrapolates one noisy trial into hours: take the nearest
            return scale * med[min(med, key=lambda b: (abs(math.log(b / batch)), b))]
        xs = [math.log(b) for b in med]
        ys = [math.log(v) for v in med.values()]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        return scale * math.exp(my + slope * (math.log(batch) - mx))

    def predict(config):
        arm = config["arm"]
        if arm not in by_arm:
            raise FwbenchError(
                f"no stored imdb trials for arm {arm!r} to extrapolate from; run "
                f"`fwbench run imdb --profile quick --set arms=['{arm}']` first"
            )
        rs = by_arm[arm]
        seq_len = config.get("encoding", {}).get("maxlen", 500)
        threads, onednn = config.get("threads", 1), config.get("onednn", True)
        warm = statistics.median(r["warmup"] for r in rs)
        # evaluation at the same oneDNN / threads / seq_len as the trial (a 1-thread or oneDNN-off trial's eval
        # costs twice as much)
        c_eval = statistics.median(r["c_eval_step"] for r in like(arm, threads, seq_len, onednn)[0])
        return (
            statistics.median(r["overhead"] for r in rs)
            + config["n_train"]
            * c_train(arm, config["batch_size"], config["num_workers"], threads, seq_len, onednn)
            * (config["epochs"] - 1 + warm)
            + config["epochs"] * config["n_test"] * seq_len * c_eval
        )

    return predict, (lambda config: config["arm"]), set(by_arm)


def _window(config, prefix: str = "") -> int:
    """The unrolled window of a DeepAR trial config (``prefix``: ``config.`` for a stored trial's dotted keys)."""
    lengths = (int(config.get(f"{prefix}{k}_length") or 0) for k in ("context", "prediction"))
    return unrolled_window(*lengths)


def _condition(config, prefix: str = "") -> tuple[int, int, int]:
    """(threads, background load, trials at once) of a DeepAR trial config; absent: 0 (threads: no setting, the
    libraries chose), trials at once 1 (runs sharing the cores cost several times a run alone: never pooled)."""
    keys = ("threads", "background_load", "trials_at_once")
    threads, load, at_once = (int(or_zero(config.get(f"{prefix}{k}"))) for k in keys)
    return threads, load, at_once or 1


def _deepar_predictor(measured):
    """Per (arm, dataset) cost parts from the stored DeepAR trials (``measured``: their measurements)."""
    rows = defaultdict(list)
    cfg = measured.drop_duplicates("trial_id").set_index("trial_id")
    for tid, g in measured.groupby("trial_id"):
        c = cfg.loc[tid]
        whole, epochs = trial_epochs(g)
        if not len(epochs) or "train_time_s" not in whole:
            continue
        nb = float(c["config.num_batches_per_epoch"])
        breakdown = float(whole.get("data_time_s", 0.0)) + float(whole.get("cprofile_train_wall_s", 0.0))
        n_batches = nb * float(c["config.epochs"])
        forecast = "predict_time_s" in whole  # a coverage trial (``forecast`` False) trains only
        train, predict = float(whole["train_time_s"]), float(whole.get("predict_time_s", 0.0))
        rows[(c["config.arm"], c["config.dataset"], _condition(c, "config."))].append(
            {
                **batch_cost(epochs, train, nb),
                "predict": predict if forecast else None,
                "series": float(whole.get("n_series", 1.0)),
                "window": _window(c, "config."),
                "breakdown_per_batch": breakdown / n_batches if breakdown else 0.0,
                "overhead": max(float(c["provenance.trial_wall_s"]) - train - predict - breakdown, 0.0),
            }
        )
    parts = {key: {k: _median_or_none([r[k] for r in rs]) for k in rs[0]} for key, rs in rows.items()}

    def predict(config):
        arm, dataset = config["arm"], config["dataset"]
        condition = _condition(config)
        window = _window(config)
        same_arm = [k for k in parts if k[0] == arm]
        if not same_arm:
            raise FwbenchError(
                f"no stored deepar trials of arm {arm!r} to extrapolate from; run "
                f"`fwbench run deepar --profile quick --set arms=['{arm}']` first"
            )
        # the same condition (threads, background load, runs at once) first, else the same load and runs at once,
        # then the same dataset, the nearest window and threads: a condition never stored is estimated at another's
        # cost (no model of contention: the check says how far off that was)
        near = min(
            same_arm,
            key=lambda k: (k[2] != condition, k[2][1:] != condition[1:], k[1] != dataset,
                           abs(parts[k]["window"] - window), abs(k[2][0] - condition[0]), k[1], k[2]),
        )  # fmt: skip
        p = parts[near]
        if near[1] == dataset:
            scale, series_scale = 1.0, 1.0
        else:
            scale = window / p["window"] if p["window"] else 1.0
            series_scale = scale * _n_series(dataset, p["series"]) / p["series"]
        n_batches = config["epochs"] * config["num_batches_per_epoch"]
        total = p["overhead"] + p["fit_fixed"] + scale * (p["warmup"] + n_batches * p["c_batch"])
        if config.get("forecast", True):
            if p["predict"] is None:  # only coverage trials stored here: forecasting from the nearest that has it
                near = min(
                    (k for k in parts if k[0] == arm and parts[k]["predict"] is not None),
                    key=lambda k: (abs(parts[k]["window"] - window), k[1], k[2]),
                    default=None,
                )
                q = parts[near] if near else {"predict": 0.0, "window": window, "series": 1.0}
                w_scale = window / q["window"] if q["window"] else 1.0
                series_scale = w_scale * _n_series(dataset, q["series"]) / q["series"]
                p = {**p, "predict": q["predict"]}
            total += series_scale * p["predict"]
        if config.get("breakdown"):
            total += scale * n_batches * p["breakdown_per_batch"]
        return total

    return predict, (lambda config: config["arm"]), {k[0] for k in parts}


def _median_or_none(values: list):
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _n_series(dataset: str, default: float) -> float:
    try:
        value = monash.catalogue().loc[dataset].get("n_series")
        return float(value) if value == value and value else default
    except (KeyError, ValueError, TypeError):
        return default


def _generic_predictor(trials):
    walls = {tid: float(w) for tid, w in zip(trials.trial_id, trials["provenance.trial_wall_s"])}
    # per epoch only over the trials that have epochs (a study may give some steps none: ONNX's export)
    per_epoch = (trials["provenance.trial_wall_s"] / trials.get("config.epochs", math.nan)).dropna()
    per_epoch, per_trial = (statistics.median(per_epoch) if len(per_epoch) else None), statistics.median(walls.values())

    def predict(config, tid):
        if tid in walls:
            return walls[tid]
        return per_epoch * config["epochs"] if per_epoch is not None and config.get("epochs") else per_trial

    return predict


# studies with a cost model of their own (per-batch and per-trial costs apart; in words: template estimate_model);
# the others use ``_generic_predictor``
COST_MODELS = {"imdb": _imdb_predictor, "deepar": _deepar_predictor}


def on_cpu(trials, cpu: str | None, fp_mode: str):
    """(The finished trials on CPU model ``cpu`` (None: the one most trials naming no CPU ran on, the profile's own
    run, else most of all) under ``fp_mode`` where any are; the model; how many on it are in another.) Never from
    another CPU's trials (their arms do not scale together), nor another fp mode's where the asked one ran."""
    if trials.empty or "provenance.cpu_id" not in trials:
        return trials, None, 0
    models = trials["provenance.cpu_id"].map(cpu_model_of)
    cpu = cpu or models_by_own_run(trials)[0]
    mine = trials[models == cpu]
    if mine.empty:
        raise FwbenchError(
            f"no finished trials measured on CPU {cpu} to extrapolate from (stored: {', '.join(sorted(set(models)))}); "
            f"run a piece of the profile there first (fwbench run ... --set cpu=this)"
        )
    modes = mine["config.fp_mode"].fillna(DEFAULT) if "config.fp_mode" in mine else None
    if modes is not None and (modes == fp_mode).any():
        return mine[modes == fp_mode], cpu, int((modes != fp_mode).sum())
    return mine, cpu, 0


def stored_cpu_models(store, study: str | None = None) -> list[str]:
    """The CPU models the finished trials (of ``study``; none a rerun replaced) ran on (``models_by_own_run``)."""
    trials = stale.without_superseded(store.trials(study))
    return models_by_own_run(trials[trials.status == "done"]) if not trials.empty else []


def estimate_full_runtime(
    store, study: str, n_workers: int, profile: str = "full", overrides: dict | None = None, cpu: str | None = None
) -> Estimate:
    """How long ``profile`` of ``study`` takes on ``n_workers`` one-trial-at-a-time workers, extrapolated from the
    trials in ``store`` that ran on one CPU model: ``cpu`` (``this``: this machine's), else the one the overrides'
    condition names, else the model of the study's own run (``on_cpu``: a page renders the same everywhere); in
    the condition's fp mode where any ran in it; never a trial a rerun of its config replaced (it would count twice)."""
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise FwbenchError(f"workers must be an integer >= 1, got {n_workers!r}; e.g. --workers 8")
    planned = full_plan = plan(study, profile, overrides)
    n_planned = len(planned)
    trials, set_aside, condition = store.trials(study), {}, conditions.of_run(study, profile, overrides)
    fp_mode = condition.get("fp_mode", DEFAULT)
    if not trials.empty:
        trials = trials[(trials.status == "done") & trials["provenance.trial_wall_s"].notna()]
        wanted = this_cpu() if cpu == conditions.THIS else cpu or condition.get("cpu")
        wanted = conditions.check_cpu(wanted) if wanted else None
        kept, cpu, set_aside["fp_mode"] = on_cpu(stale.without_superseded(trials), wanted, fp_mode)
        set_aside["superseded"] = len(on_cpu(trials, cpu, fp_mode)[0]) - len(kept)
        trials = kept
    if trials.empty:
        raise FwbenchError(
            f"no finished {study} trials in {store.path} to extrapolate from; run "
            f"`fwbench run {study} --profile quick` (or smoke) first"
        )
    by_group: dict = defaultdict(float)
    if study in COST_MODELS:
        measured = store.measurements(study)
        measured = measured[measured.trial_id.isin(set(trials.trial_id))]
        predict, group, known = COST_MODELS[study](measured)
        left_out = Counter(t.config["arm"] for t in planned if t.config["arm"] not in known)
        if len(left_out) == len({t.config["arm"] for t in planned}):
            raise FwbenchError(
                f"no stored {study} trials of arms {sorted(left_out)} to extrapolate from; run "
                f"`fwbench run {study} --profile quick` first"
            )
        planned = [t for t in planned if t.config["arm"] in known]
        durations = [predict(t.config) for t in planned]
        for t, d in zip(planned, durations):
            by_group[group(t.config)] += d
    else:
        predict = _generic_predictor(trials)
        durations = [predict(t.config, t.trial_id) for t in planned]
        left_out = {}
    return Estimate(
        study,
        profile,
        n_workers,
        n_planned,
        len(planned),
        len(trials),
        float(sum(durations)),
        makespan(durations, n_workers),
        dict(by_group),
        render_markdown("estimate_model", study=study),
        dict(left_out),
        {t.trial_id: d for t, d in zip(planned, durations)},
        _adaptive_expectation(store, study, profile, overrides, full_plan, planned, durations, n_workers),
        cpu,
        fp_mode,
        set_aside,
    )


def _adaptive_expectation(
    store, study_name, profile, overrides, full_plan, planned, durations, n_workers
) -> dict | None:
    """For an adaptive profile: the expected time (``studies.adaptive.expected_blocks`` blocks per setting, from
    the plan's trials already stored) next to the capped one (every setting at ``max_blocks``: the plan)."""
    study = get_study(study_name)
    spec = adaptive.spec_of(study.resolve(profile, overrides))
    if spec is None:
        return None
    need = adaptive.expected_blocks(study, full_plan, adaptive.observe_store(store, study, full_plan), spec)
    chosen = [
        (t.trial_id, d)
        for t, d in zip(planned, durations)
        if adaptive.block_of(study, t.config) < need[adaptive.setting_key(study, t.config)]
    ]
    kept = [d for _, d in chosen]
    rule = dict(rule=spec.line(), min_blocks=spec.min_blocks, max_blocks=spec.max_blocks, target=spec.target)
    expected = dict(
        expected_trials=len(kept), expected_s=float(sum(kept)), expected_makespan_s=makespan(kept, n_workers)
    )
    return {**rule, **expected, "expected_ids": [tid for tid, _ in chosen]}
