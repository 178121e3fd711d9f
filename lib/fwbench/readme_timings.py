"""The README's blocks about what things cost in time: the harness benchmarks (``bench``) and the runtime
estimates of the ``paper`` and ``full`` profiles (``paper-estimate``, ``estimate``), each computed from the results
store. ``fwbench.readme`` lists them among its blocks and writes them where they live. The wall times of
``make reproduce`` (``timings``, ``reproduce-time``) and of building an environment (``env-build-time``) measure
the repository itself: the tools ``tools/reproduce_timing.py`` and ``tools/env_build_timing.py`` record and
render them."""

from __future__ import annotations

from .bench_paired import log_ratio_ci, order_balanced_ci, order_effect_words
from .errors import FwbenchError
from .estimate import _human, estimate_full_runtime, stored_cpu_models
from .paths import results_path
from .planning import plan
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
