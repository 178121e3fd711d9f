"""The harness overhead measured paired within fresh processes (``fwbench bench harness-paired``).

``fwbench bench harness`` compares fresh processes of the runner with fresh processes of a bare loop; on this
VM two fresh processes running the same loop differ by 10-16 %, so its CI stays near +-10 % however the blocks
fall. Here each fresh process runs both loops, one after the other, in a seeded order balanced over processes:
the bare loop written from scratch (the sentiment backends' ``bare_loop``) and the IMDB study's own
``run_trial`` (what a trial process runs, with its epoch timing), on the same arrays and the same
``bench.HARNESS_CONFIG``. What makes one process fast or slow (where its memory landed, how its threads were
placed) is shared by both loops and cancels in the process's ratio (median timed epoch of the harness / of the
bare loop, first epochs excluded). The CI is over independent processes, never over epochs. The loop that runs
second is slower (measured on 2026-11-24: by about 2 % in PyTorch and 4 % in MXNet), so each arm alternates
the order process by process and the estimate is stratified by order (``order_balanced_ci``: the mean of the two
orders' mean log ratios, a Welch interval), which the order effect cannot bias even when the two orders' counts
differ (busy processes left out; the first run, which balanced orders over processes but not per arm, had 17
and 23). One framework per process, as everywhere. Blocks (one
process per arm still running, arms in a seeded random order) go on until every arm's half-width is under 2 %
(an arm stops once its own is, after ``MIN_BLOCKS``), or ``MAX_BLOCKS`` / ``BUDGET_S`` (45 minutes): the 40
processes of the first run gave half-widths of 2.7 % (PyTorch) and 3.9 % (MXNet), i.e. about 70 and 120 processes
for 2 %. A process whose machine was busy with other work (other
processes above 25 % of the CPUs) is counted and left out.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path

from .measure import median
from .stats import t_quantile

MIN_BLOCKS, MAX_BLOCKS, BUDGET_S = 6, 200, 2700.0
TARGET = 0.02
BUSY_FRAC = 0.25  # as provenance.busy_machine


def paired_child(spec: dict) -> dict:
    """Runs in a fresh child process: both loops on the same arrays, in ``spec["order"]``."""
    from .bench import bare_loop
    from .data.imdb import Encoding, load_imdb
    from .provenance import MachineLoad
    from .studies import get_study

    config = spec["config"]
    data = load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])
    load = MachineLoad()
    out = {"order": spec["order"]}
    for side in spec["order"]:
        if side == "bare":
            out["bare"] = bare_loop(config["arm"])(config, data.x_train, data.y_train)
        else:
            result = get_study("imdb").run_trial(config)
            out["harness"] = [v for step, k, v in sorted(result["measurements"]) if k == "train_time_s" and step >= 0]
    out.update(load.stop())
    return out


def process_ratio(out: dict) -> float:
    """harness / bare of one process: the medians of its timed epochs (first excluded)."""
    return median(out["harness"][1:]) / median(out["bare"][1:])


def log_ratio_ci(ratios: list[float]) -> dict:
    """Geometric mean of the per-process ratios with a 95 % one-sample t-interval on their logs."""
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return {"ratio": math.exp(mean), "ci_low": math.nan, "ci_high": math.nan, "half_width": math.inf, "n": n}
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    h = t_quantile(n - 1) * sd / math.sqrt(n)
    return {
        "ratio": math.exp(mean),
        "ci_low": math.exp(mean - h),
        "ci_high": math.exp(mean + h),
        "half_width": math.expm1(h),
        "n": n,
    }


def order_effect_words(effect: float) -> str:
    """``0.017`` -> "1.7 % slower", ``-0.009`` -> "0.9 % faster" (of the loop that runs second)."""
    return f"{abs(100 * effect):.1f} % {'slower' if effect >= 0 else 'faster'}"


def order_balanced_ci(ratios: list[float], harness_first: list[bool]) -> dict:
    """The per-process ratios stratified by which loop ran first: the geometric mean of the two orders' geometric
    means, with a 95 % Welch t-interval (each order's log ratios a sample); ``order_effect``: how much slower the
    loop that runs second is (from the two orders' means). Falls back to ``log_ratio_ci`` over all processes
    when an order has fewer than 2 processes."""
    groups = [[math.log(r) for r, f in zip(ratios, harness_first) if f == first] for first in (False, True)]
    if min(len(g) for g in groups) < 2:
        return {**log_ratio_ci(ratios), "order_effect": math.nan, "stratified": False}
    means = [sum(g) / len(g) for g in groups]
    var_of_mean = [sum((x - m) ** 2 for x in g) / (len(g) - 1) / len(g) for g, m in zip(groups, means)]
    se = 0.5 * math.sqrt(sum(var_of_mean))
    df = sum(var_of_mean) ** 2 / sum(v**2 / (len(g) - 1) for v, g in zip(var_of_mean, groups))
    mean, h = sum(means) / 2, t_quantile(df) * se
    return {
        "ratio": math.exp(mean),
        "ci_low": math.exp(mean - h),
        "ci_high": math.exp(mean + h),
        "half_width": math.expm1(h),
        "n": len(ratios),
        "order_effect": math.expm1((means[0] - means[1]) / 2),
        "stratified": True,
    }


def harness_overhead_paired(
    arms=None,
    min_blocks: int = MIN_BLOCKS,
    max_blocks: int = MAX_BLOCKS,
    budget_s: float = BUDGET_S,
    seed: int = 0,
    log=print,
) -> list[dict]:
    """One row per arm: per-process ratios, the overhead and its CI (percent), the processes left out as busy."""
    from .bench import _reference_arms, _run_child, harness_trial
    from .execute import child_env

    trials = {arm: harness_trial(arm) for arm in arms or _reference_arms("imdb")}
    raw: dict[str, list] = {arm: [] for arm in trials}
    rng, t0, rows, active = random.Random(seed), time.perf_counter(), [], sorted(trials)
    for block in range(max_blocks):
        order = list(active)
        rng.shuffle(order)
        for arm in order:
            config = trials[arm].config
            first = ("bare", "harness") if len(raw[arm]) % 2 == 0 else ("harness", "bare")  # alternates per arm
            out = _run_child(
                "paired", {"config": config, "order": first}, child_env(config["threads"]), module=__name__
            )
            raw[arm].append(out)
        rows = [_row(arm, trials[arm].config, raw[arm]) for arm in trials]
        log(
            f"[paired block {block + 1}] "
            + "; ".join(
                f"{r['arm']} {r['overhead_pct']:+.1f} % +-{r['half_width_pct']:.1f} % ({r['n']} processes)"
                for r in rows
            )
        )
        # an arm whose CI is resolved (after min_blocks) gets no more processes; the others go on
        active = [r["arm"] for r in rows if not (block + 1 >= min_blocks and r["half_width_pct"] < 100 * TARGET)]
        spent = time.perf_counter() - t0
        if not active or (block + 1 >= 2 and spent * (block + 2) / (block + 1) > budget_s):
            break
    return rows


def _row(arm: str, config: dict, outs: list[dict]) -> dict:
    clean = [o for o in outs if not o.get("other_busy_frac", 0.0) > BUSY_FRAC]
    ratios = [process_ratio(o) for o in clean]
    harness_first = [o["order"][0] == "harness" for o in clean]
    ci = (
        order_balanced_ci(ratios, harness_first)
        if ratios
        else {
            "ratio": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "half_width": math.inf,
            "n": 0,
            "order_effect": math.nan,
        }
    )
    return {
        "arm": arm,
        "ratios": ratios,
        "harness_first": harness_first,
        "n": ci["n"],
        "order_effect_pct": 100 * ci["order_effect"],
        "busy_left_out": len(outs) - len(clean),
        "overhead_pct": 100 * (ci["ratio"] - 1),
        "ci_low_pct": 100 * (ci["ci_low"] - 1),
        "ci_high_pct": 100 * (ci["ci_high"] - 1),
        "half_width_pct": 100 * ci["half_width"],
        "config": config,
        "harness_raw": [o["harness"] for o in clean],
        "bare_raw": [o["bare"] for o in clean],
    }


def main() -> int:
    """``fwbench bench harness-paired``: measure, record each arm's row in the results store, print it."""
    from .bench import HARNESS_CONFIG, _record
    from .paths import results_path
    from .store import ResultsStore

    store = ResultsStore(results_path())
    for row in harness_overhead_paired():
        _record(
            store,
            "harness_overhead_paired",
            {"arm": row["arm"], "processes": row["n"], "target_half_width_pct": 100 * TARGET, **HARNESS_CONFIG},
            {
                "process_ratio": row["ratios"],
                "harness_first": [float(f) for f in row["harness_first"]],
                "overhead_pct": row["overhead_pct"],
                "order_effect_pct": row["order_effect_pct"],
                "ci_low_pct": row["ci_low_pct"],
                "ci_high_pct": row["ci_high_pct"],
                "half_width_pct": row["half_width_pct"],
                "busy_left_out": row["busy_left_out"],
            },
        )
        print(
            f"harness overhead, IMDB epoch, both loops in each process, {row['arm']}: "
            f"{row['overhead_pct']:+.1f} % (95 % CI {row['ci_low_pct']:+.1f} to {row['ci_high_pct']:+.1f} %; "
            f"goal <= 2 %) over {row['n']} processes ({row['busy_left_out']} busy, left out); the loop run second "
            f"is {order_effect_words(row['order_effect_pct'] / 100)}"
        )
    return 0


if __name__ == "__main__":  # the child process: python -m fwbench.bench_paired paired SPEC.json
    print(json.dumps(paired_child(json.loads(Path(sys.argv[2]).read_text()))))
