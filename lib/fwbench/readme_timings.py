"""The README's blocks about what things cost in time: the harness benchmarks (``bench``) and the runtime
estimates of the ``paper`` and ``full`` profiles (``paper-estimate``, ``estimate``), each computed from the results
store, and the wall times of ``make reproduce`` (``timings``, ``reproduce-time``) from the runs ``fwbench
time-reproduce`` recorded (``fwbench.reproduce_timing``). ``fwbench.readme`` lists them among its blocks and writes
them where they live."""

from __future__ import annotations

from .bench_paired import log_ratio_ci, order_balanced_ci, order_effect_words
from .errors import FwbenchError
from .estimate import _human, estimate_full_runtime, stored_cpu_models
from .paths import results_path
from .planning import plan
from .provenance import OTHER_BUSY_LIMIT
from .reproduce_timing import GOALS_S, RECORD, cpus_measured, latest_measurement, machine_of, read_records
from .stats import trial_ratio_ci
from .store import ResultsStore
from .studies import all_studies


def bench_lines(store: ResultsStore) -> list[str]:
    trials = store.trials("bench")
    if trials.empty:
        return ["- no benchmark rows yet (`make bench`)"]
    keys = ["config.benchmark"] + (["config.arm"] if "config.arm" in trials else [])
    latest = trials.sort_values("ended_at").groupby(keys, dropna=False).tail(1)
    m = store.measurements("bench")
    lines = []
    for _, row in latest.iterrows():
        values = m[m.trial_id == row.trial_id]

        def metric(name, values=values):
            return values[values.metric == name].value

        if row["config.benchmark"] == "data_prep":
            lines.append(
                f"- IMDB preparation: encoding all 50k reviews from the archive took "
                f"{metric('cold_s').median():.1f} s cold (goal <= 30 s); the cached load "
                f"{metric('cached_s').median():.2f} s (median of {len(metric('cached_s'))}; goal <= 1 s)"
            )
        elif row["config.benchmark"] in ("harness_overhead", "deepar_overhead"):
            imdb = row["config.benchmark"] == "harness_overhead"
            runner, bare = ("runner_epoch_s", "bare_epoch_s") if imdb else ("runner_fit_s", "bare_fit_s")
            r = trial_ratio_ci(metric(runner), metric(bare))  # one value per process
            what = (
                "IMDB epoch time vs a bare training loop"
                if imdb
                else "one DeepAR fit vs calling the GluonTS estimator directly"
            )
            lines.append(
                f"- harness overhead, {row['config.arm']}, {what}: "
                f"{100 * (r['ratio'] - 1):+.1f} % (95 % CI {100 * (r['ci_low'] - 1):+.1f} to "
                f"{100 * (r['ci_high'] - 1):+.1f} %; goal <= 2 %), {r['n_num']} vs {r['n_den']} "
                + ("fresh processes" if imdb else "fits")
            )
        elif row["config.benchmark"] == "harness_overhead_paired":
            ratios, first = list(metric("process_ratio")), [bool(f) for f in metric("harness_first")]
            r = order_balanced_ci(ratios, first) if len(first) == len(ratios) else log_ratio_ci(ratios)
            lines.append(
                f"- harness overhead, {row['config.arm']}, IMDB epoch time vs a bare training loop, both "
                f"in each fresh process: {100 * (r['ratio'] - 1):+.1f} % (95 % CI "
                f"{100 * (r['ci_low'] - 1):+.1f} to {100 * (r['ci_high'] - 1):+.1f} %; goal <= 2 %), "
                f"{r['n']} processes"
                + (
                    f", stratified by loop order (the loop run second is {order_effect_words(r['order_effect'])})"
                    if r.get("stratified")
                    else ""
                )
            )
    return lines


def render_paper_estimate(store: ResultsStore | None = None) -> str:
    """The ``paper`` profile's wall time on one machine, per study and in total, extrapolated from the stored
    trials (``fwbench estimate``): capped and, for adaptive studies, expected. Each study from the CPU model most
    of its trials ran on (named in its row); a study's other models, where stored, in rows of their own below
    (a prediction for one CPU is made from that CPU's trials only)."""

    store = store or ResultsStore.open_read(results_path())
    rows = ["| study | CPU | trials (capped) | extrapolated from | capped | expected |", "|---|---|---|---|---|---|"]
    parts = ["| study | part | trials (expected) | expected |", "|---|---|---|---|"]
    others = ["| study | CPU | extrapolated from | capped | expected |", "|---|---|---|---|---|"]
    capped = expected = 0.0
    for study in (s.name for s in all_studies() if "paper" in s.profiles):
        try:
            est = estimate_full_runtime(store, study, 1, "paper")
        except FwbenchError as exc:  # the store's own path says nothing to a reader of the README
            rows.append(f"| {study} | - | - | - | {str(exc).replace(str(store.path), 'the store')} | - |")
            continue
        exp = est.adaptive["expected_s"] if est.adaptive else est.total_s
        kept = set(est.adaptive["expected_ids"]) if est.adaptive else set(est.per_trial)
        by_part: dict = {}
        for t in plan(study, "paper"):
            if t.trial_id in kept and t.trial_id in est.per_trial:
                n, seconds = by_part.get(t.config.get("part", "main"), (0, 0.0))
                by_part[t.config.get("part", "main")] = (n + 1, seconds + est.per_trial[t.trial_id])
        parts += [f"| {study} | {part} | {n} | {_human(seconds)} |" for part, (n, seconds) in by_part.items()]
        capped, expected = capped + est.total_s, expected + exp
        left = "".join(f"; {n} trials of {g} not estimated" for g, n in sorted(est.not_estimated.items()))
        rows.append(
            f"| {study} | {est.cpu or '-'} | {est.n_trials} | {est.measured_trials} stored trials{left} | "
            f"{_human(est.total_s)} | {_human(exp)} |"
        )
        for cpu in stored_cpu_models(store, study):
            if cpu == est.cpu:
                continue
            try:
                other = estimate_full_runtime(store, study, 1, "paper", cpu=cpu)
            except FwbenchError:
                continue
            other_exp = other.adaptive["expected_s"] if other.adaptive else other.total_s
            others.append(
                f"| {study} | {cpu} | {other.measured_trials} stored trials | {_human(other.total_s)} | "
                f"{_human(other_exp)} |"
            )
    rows.append(f"| **all** | | | | **{_human(capped)}** | **{_human(expected)}** |")
    out = (
        "Estimated wall time of `make reproduce PROFILE=paper` on one 2-core machine, one trial at a time "
        "(generated by `make readme` with `fwbench estimate` from the stored trials, each study from the CPU model "
        "most of its trials ran on; adaptive studies: capped = every setting at its most repeat blocks, expected = "
        "the blocks their CIs are predicted to need):\n\n" + "\n".join(rows)
    )
    if len(others) > 2:
        out += (
            "\n\nThe same from the trials stored for other CPU models (`fwbench estimate --cpu MODEL`; only the "
            "settings those pieces ran inform it):\n\n" + "\n".join(others)
        )
    return out + "\n\nWhere the expected time goes, by part of each study's grid:\n\n" + "\n".join(parts)


def render_estimate(store: ResultsStore | None = None, workers=(1, 4, 16)) -> str:
    """How long the ``full`` profiles take, extrapolated by ``fwbench.estimate.estimate_full_runtime`` from the
    trials in the store (every registered study that has a ``full`` profile)."""

    store = store or ResultsStore.open_read(results_path())
    rows = [
        "| study | trials in `full` | extrapolated from | one machine | "
        + " | ".join(f"{n} workers" for n in workers)
        + " | not estimated |",
        "|---|---|---|---|" + "---|" * len(workers) + "---|",
    ]
    for study in (s.name for s in all_studies() if "full" in s.profiles):
        try:
            est = [estimate_full_runtime(store, study, n) for n in workers]
        except FwbenchError as exc:
            rows.append(f"| {study} | - | - | {exc} |" + " |" * len(workers))
            continue
        left = ", ".join(f"{g} ({n})" for g, n in sorted(est[0].not_estimated.items())) or "-"
        rows.append(
            f"| {study} | {est[0].n_trials} | {est[0].measured_trials} stored trials | "
            f"{_human(est[0].total_s)} | " + " | ".join(_human(e.makespan_s) for e in est) + f" | {left} |"
        )
    return (
        "Estimated wall time of the `full` profiles (generated by `make readme` with `fwbench estimate` from "
        "the stored trials, each study from the CPU model most of its trials ran on):\n\n" + "\n".join(rows)
    )


def render_bench(store: ResultsStore | None = None) -> str:
    """The latest harness benchmarks of the store (study ``bench``), one line each."""
    return "\n".join(bench_lines(store or ResultsStore.open_read(results_path())))


# -- how long `make reproduce` takes: from the runs `fwbench time-reproduce` recorded ------------------------------

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
    model = f" {record.cpu}" if record.cpu else ""
    return f"{record.cpu_model or 'CPU not recorded'}{model} ({record.cores or '?'} cores{mem})"


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
    record (``fwbench.reproduce_timing.RECORD``), cold and warm, each notebook's papermill duration, the host and
    what else ran; an honest sentence when nothing is recorded."""

    records = read_records(path or RECORD)
    profiles = list(dict.fromkeys([*REPRODUCE_PROFILES[::-1], *(r.profile for r in records)]))  # quick first
    parts = []
    for profile, cpu in ((p, c) for p in profiles for c in cpus_measured(records, p)):  # each CPU model's latest
        runs = latest_measurement(records, profile, cpu)
        if not runs:
            continue
        cold = runs["cold"]
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
            f"{_when(cold)}: {_how(cold)}; on {_host(cold)}. Cold run: {_alone(cold)}."
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
        "latest measurement of each profile on each CPU (its model where recorded, else its name)."
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
        elsewhere = "".join(f" On {_host(r)}: **{_duration(r.wall_s)}** cold ({_when(r)})." for r in others)
        lines.append(
            f"{head}: **{_duration(cold.wall_s)}** cold (a fresh clone and results store{built}){warm} on "
            f"{_host(cold)}, measured by `make time-reproduce` on {_when(cold)} "
            f"([details](docs/benchmarks.md#wall-times-of-make-reproduce)){busy}.{elsewhere}"
        )
    return "\n".join(lines)
