"""Data-parallel training (claim C2's CPU analogue) from the store: one row per trial, each arm's scaling from 1 to
2 workers, and the sync sweep. The PyTorch / MXNet ratios are C2's parts: the ledger takes them of
``reference_sides`` once, and every page quotes the ledger.

Every number is per independent trial first (the median of its timed steps, of its timed syncs at one size), then
a geometric mean over trials: ``stats.trial_ratio_ci``'s ratios and the tables' cells alike, so a ratio of two cells
is the one quoted. A profile's trials run in one piece, on one boot: no machine adjustment is made.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import gmean

from ..dataparallel import parameter_count
from ..machines import cpu_model_of, one_cpu_model
from ..published.overview import MIN_GPUS, VGG16_8GPU_TRAIN_S
from ..quantity import Quantity
from ..stats import trial_ratio_ci
from ..studies import get_study
from . import Results, arm_order, cpu_models

STUDY = "dataparallel"
SYNC_PREFIX = "sync_s.n"


def per_trial(results: Results) -> pd.DataFrame:
    """One row per finished trial of the CPU model that ran most: arm, framework, world size, repeat, ``median_step_s``,
    ``samples_per_s``, ``cpus_busy_max`` (one worker's CPUs during the timed steps), ``group_cpu_s`` (all processes),
    ``final_loss``, ``busy`` (other load flagged while it ran) and ``sync_s.n<size>`` (median s of the timed syncs)."""
    long = results.values(STUDY)
    if long.empty:
        return pd.DataFrame()
    study = get_study(STUDY)
    rows = []
    for trial_id, m in long.groupby("trial_id"):
        first = m.iloc[0]
        world, batch = int(first["config.world_size"]), int(first["config.per_rank_batch"])
        steps = m.loc[m.metric == "step_s", "value"]
        losses = m[m.metric == "loss"].sort_values("step")["value"]
        row = {
            "trial_id": trial_id,
            "arm": first["config.arm"],
            "framework": study.framework_of(first["config.arm"]),
            "world_size": world,
            "threads": int(first["config.threads"]),
            "cpu": cpu_models.Condition(cpu_model_of(first.get("provenance.cpu_id"))).cpu_name,
            "per_rank_batch": batch,
            "n_parameters": parameter_count(int(first["config.hidden"])),
            "repeat": int(first["config.repeat"]),
            "median_step_s": float(steps.median()),
            "samples_per_s": world * batch / float(steps.median()),
            "cpus_busy_max": float(m.loc[m.metric == "cpus_busy_max", "value"].max()),
            "group_cpu_s": float(m.loc[m.metric.str.startswith("cpu_s."), "value"].sum()),
            "final_loss": float(losses.iloc[-1]) if not losses.empty else math.nan,
            "busy": bool(first.get("provenance.busy_machine", False) or False),
        }
        sync = m[m.metric.str.startswith(SYNC_PREFIX)]
        rows.append(row | sync.groupby("metric").value.median().to_dict())
    frame = one_cpu_model(pd.DataFrame(rows).assign(part=STUDY))[0].drop(columns="part")
    order = {a: i for i, a in enumerate(arm_order(STUDY, frame.arm))}
    return frame.sort_values(["world_size", "arm", "repeat"], key=lambda c: c.map(order) if c.name == "arm" else c)


def sync_sizes(frame: pd.DataFrame) -> list[int]:
    return sorted(int(c[len(SYNC_PREFIX) :]) for c in frame.columns if c.startswith(SYNC_PREFIX))


def reference_sides(frame: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    """PyTorch's and MXNet's per-trial values of ``column`` (the study's reference arms): what the ledger takes
    C2's ratios of."""
    study = get_study(STUDY)
    torch_arm, mxnet_arm = study.reference_arm("torch"), study.reference_arm("mxnet")
    return frame.loc[frame.arm == torch_arm, column].dropna(), frame.loc[frame.arm == mxnet_arm, column].dropna()


def scaling_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Per arm: samples/s at the largest world size over samples/s at 1 worker, divided by the world size (1:
    perfect weak scaling), with its CI over trials."""
    rows = []
    if frame.empty or 1 not in set(frame.world_size):
        return pd.DataFrame(rows)
    for arm, f in frame.groupby("arm", sort=False):
        for world in sorted(set(f.world_size) - {1}):
            r = trial_ratio_ci(f.loc[f.world_size == world, "samples_per_s"], f.loc[f.world_size == 1, "samples_per_s"])
            rows.append(
                {
                    "arm": arm,
                    "world_size": int(world),
                    "efficiency": r["ratio"] / world,
                    "ci_low": r["ci_low"] / world,
                    "ci_high": r["ci_high"] / world,
                    "n": f"{r['n_num']}/{r['n_den']}",
                }
            )
    return pd.DataFrame(rows)


def arm_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per arm and world size: trials, samples/s and step (geometric means over trials, as the ratios take them), the
    busiest worker's CPUs, the group's CPU seconds and the final loss (medians over trials)."""
    labels = get_study(STUDY).labels()
    return (
        frame.groupby(["world_size", "arm"], sort=False)
        .agg(
            trials=("trial_id", "count"),
            samples_per_s=("samples_per_s", gmean),
            median_step_s=("median_step_s", gmean),
            cpus_busy_max=("cpus_busy_max", "median"),
            group_cpu_s=("group_cpu_s", "median"),
            final_loss=("final_loss", "median"),
        )
        .reset_index()
        .assign(label=lambda t: t.arm.map(labels))
    )


def _scaling_quantity(row) -> Quantity:
    name = f"dataparallel.scaling.{row.arm}.world{row.world_size}"
    return Quantity(name, row.efficiency, row.ci_low, row.ci_high, n=f"{row.n} trials")


def section_facts(results: Results) -> dict:
    """What the section shows (template ``dataparallel``): ``per_trial`` reduced to the arm table (``arms``, with
    the threads per worker), the sync sweep (``sync``: per tensor size, the sync seconds, a geometric mean over
    trials, at each world size and arm, in ``worlds`` x ``arm_names`` order), the net and batch, each arm's weak
    scaling as a ``Quantity`` (``scaling``), and C2's GPU host and numbers (its ratios are the ledger's). ``frame``:
    None without trials."""
    frame = per_trial(results)
    facts = {"profile": results.profile, "study": STUDY, "frame": None}
    if frame.empty:
        return facts
    worlds = sorted(int(w) for w in set(frame.world_size))
    arms = arm_order(STUDY, frame.arm)

    def sync_seconds(n: int, world: int, arm: str) -> float:
        values = frame.loc[(frame.world_size == world) & (frame.arm == arm), f"{SYNC_PREFIX}{n}"].dropna()
        return float(gmean(values)) if len(values) else math.nan

    sync = [{"n": n, "seconds": [sync_seconds(n, w, a) for w in worlds for a in arms]} for n in sync_sizes(frame)]
    scaling = scaling_rows(frame)
    if not scaling.empty:
        scaling = scaling.assign(quantity=[_scaling_quantity(r) for r in scaling.itertuples()])
    return {
        **facts,
        "frame": frame,
        "labels": get_study(STUDY).labels(),
        "arms": arm_table(frame),
        "threads": int(frame.threads.iloc[0]),
        "cpus": sorted(set(frame.cpu)),
        "worlds": worlds,
        "arm_names": arms,
        "sync": sync,
        "n_parameters": int(frame.n_parameters.iloc[0]),
        "per_rank_batch": int(frame.per_rank_batch.iloc[0]),
        "scaling": scaling,
        "min_gpus": MIN_GPUS,
        "gpu_train_s": VGG16_8GPU_TRAIN_S,
    }
