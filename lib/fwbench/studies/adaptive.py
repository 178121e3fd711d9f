"""Adaptive repeat blocks: a setting gets another repeat block only while the ratio it feeds is still too vague.

A profile's ``adaptive`` option is ``False`` (fixed repeats) or ``{"min_blocks": m, "max_blocks": M, "target":
t}``. The grid is then planned with ``M`` blocks (``Study.resolve`` sets the study's block option), and the runner
goes block by block:

- blocks ``0 .. m-1`` run for every setting (``m >= 2``: a CI over trials needs two per side, and the held-out
  rule of the "best setting" claims needs a block to choose and one to judge);
- block ``k >= m`` runs only while some pair of ``Study.adaptive_pairs`` in that setting has a CI half-width over
  blocks ``< k`` wider than ``t`` (or a side with fewer than 2 trials), and ``k < M``. The CI is the verdict's
  own (``fwbench.stats.trial_ratio_ci`` on ``Study.adaptive_metric(summary)``), so a setting stops exactly when
  its claim is resolved to +-t. A stopped setting stays stopped; a setting with no pair runs the minimum only.
- a setting of ``Study.fixed_block_parts`` (imdb's training-quality part: its blocks are seeds of an accuracy, not
  repeats of a timing) runs every block it plans.
- with ``"futility"`` (optional, default True) a setting also stops once the widest pair's half-width projected
  to ``M`` trials a side (the same Welch t-interval, at the spread stored so far) is still wider than ``t``: with
  a 10-16 % process-to-process spread a +-3 % target needs dozens of trials a side, and without this rule every
  setting would run to the cap for a slightly narrower interval at up to ``M / m`` times the cost.

Decisions are a pure function of the plan and the stored trials, so a sweep stopped anywhere and rerun makes
the same decisions and reruns nothing. Blocks are numbered from 0 in configs (``Study.block_field``); reasons
count from 1 ("block 1 of the minimum 3").
"""

from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass

import pandas as pd

from ..machines import adjust_records, machine_of
from ..stats import CONFIDENCE, half_width, half_width_at, log_variance, trial_ratio_ci
from .blocks import _setting_key
from .options import adaptive_option

BLOCK_VARYING = ("seed",)  # config fields that change with the block (imdb: seed = BASE_SEED + repeat)


@dataclass(frozen=True)
class AdaptiveSpec:
    min_blocks: int
    max_blocks: int
    target: float  # CI half-width on the ratio (0.03: +-3 %)
    futility: bool = True  # also stop a setting whose CI cannot reach the target by max_blocks

    def line(self) -> str:
        return (
            f"adaptive repeats: {self.min_blocks} to {self.max_blocks} blocks, target CI half-width "
            f"+-{100 * self.target:.1f} %" + (", futile settings stop at the minimum" if self.futility else "")
        )


def spec_of(options: dict) -> AdaptiveSpec | None:
    """The adaptive rule of resolved options (None for fixed repeats)."""
    value = options.get("adaptive")
    return AdaptiveSpec(**adaptive_option("adaptive", value)) if value else None


def setting_key(study, config: dict) -> str:
    """The setting a trial belongs to: its config without the arm, the part, the block and what varies with it."""
    drop = {study.block_field, *BLOCK_VARYING}
    return _setting_key({k: v for k, v in config.items() if k not in drop}, study.arm_field)


def block_of(study, config: dict) -> int:
    return int(config.get(study.block_field, 0))


def setting_label(study, config: dict) -> str:
    """A trial's label (``Study.describe``) without its arm and block tokens (``seed=43``, ``block=2``): names the
    setting."""
    label = study.describe(config).replace(str(config[study.arm_field]), "", 1)
    label = re.sub(rf"\b({'|'.join(map(re.escape, (study.block_field, *BLOCK_VARYING)))})=\S+", "", label)
    return " ".join(label.split())


def percent(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.1f} %"


@dataclass(frozen=True)
class TrialRecord:
    """One planned trial found in the store: where it sits in the plan and what it measured."""

    trial_id: str
    setting: str
    block: int
    arm: str
    status: str
    value: float  # the per-trial number of ``Study.adaptive_metric`` (NaN: none)
    seconds: float  # the trial's duration (NaN: not known)
    reason: str | None  # the stored ``block_reason``
    machine: str = "not recorded"  # ``provenance.boot_id``: values are compared within machines (fwbench.machines)


@dataclass(frozen=True)
class BlockDecision:
    run: bool
    reason: str


def _finite(value) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) and value > 0 else math.nan


def _nested(row: dict, prefix: str) -> dict:
    """A flattened JSON column group (``summary.a``, ``summary.b.c``) back to a dict; missing values dropped."""
    out: dict = {}
    for column, value in row.items():
        if not column.startswith(prefix) or value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        node, (*parents, leaf) = out, column[len(prefix) :].split(".")
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[leaf] = value
    return out


def _seconds(row: dict) -> float:
    """The trial's duration: its own wall clock (``provenance.trial_wall_s``), else ended_at - started_at."""
    wall = _finite(row.get("provenance.trial_wall_s"))
    if not math.isnan(wall):
        return wall
    try:
        start, end = pd.Timestamp(row.get("started_at")), pd.Timestamp(row.get("ended_at"))
        return max((end - start).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return math.nan


def observe(study, planned, trials) -> list[TrialRecord]:
    """The stored rows (``ResultsStore.trials`` frame, any status) of the planned trials, as records."""
    if trials is None or trials.empty:
        return []
    by_id = {t.trial_id: t for t in planned}
    out = []
    for row in trials[trials.trial_id.isin(set(by_id))].to_dict("records"):
        config = by_id[row["trial_id"]].config
        value = math.nan
        if row["status"] == "done" and study.adaptive_metric is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError):  # no usable number: NaN
                value = _finite(study.adaptive_metric(_nested(row, "summary.")))
        reason, boot = row.get("provenance.block_reason"), row.get("provenance.boot_id")
        out.append(
            TrialRecord(
                row["trial_id"],
                setting_key(study, config),
                block_of(study, config),
                config[study.arm_field],
                row["status"],
                value,
                _seconds(row),
                reason if isinstance(reason, str) else None,
                machine_of(boot),
            )
        )
    return out


def observe_store(store, study, planned) -> list[TrialRecord]:
    """``observe`` on what ``store`` holds now for the planned trials."""
    return observe(study, planned, store.trials(study.name, {t.trial_id for t in planned}))


def pairs_in(study, arms) -> list[tuple]:
    """The declared arm pairs with both arms in ``arms``."""
    return [p for p in (study.adaptive_pairs or ()) if p[0] in arms and p[1] in arms]


def _sides(pair, values: dict, before: float) -> list[list]:
    """Each arm's values of blocks ``< before``."""
    return [[v for (arm, block), vs in values.items() if arm == a and block < before for v in vs] for a in pair]


def widest_half_width(study, pairs, values: dict, before: float) -> tuple[float, str, int]:
    """(widest half-width, pair label, fewest trials on a side) over blocks ``< before``; NaN: some pair has no
    interval yet (fewer than 2 trials on a side, or values a CI cannot use)."""
    worst = (-1.0, "", 0)
    for pair in pairs:
        sides = _sides(pair, values, before)
        fewest = min(len(s) for s in sides)
        width = math.nan
        if fewest >= 2:
            ci = trial_ratio_ci(sides[0], sides[1], CONFIDENCE)
            width = half_width(ci["ci_low"], ci["ci_high"])
        rank = math.inf if math.isnan(width) else width
        if rank > worst[0]:
            worst = (rank, f"{pair[0]}/{pair[1]}", fewest)
    return (math.nan if worst[0] == math.inf else worst[0]), worst[1], worst[2]


def projected_half_width(pairs, values: dict, before: float, n: int) -> float:
    """The widest pair's half-width with ``n`` trials a side, at the spread of the trials of blocks ``< before``
    (NaN: some pair has fewer than 2 trials on a side)."""
    widest = -1.0
    for pair in pairs:
        sides = _sides(pair, values, before)
        if min(len(s) for s in sides) < 2:
            return math.nan
        widest = max(widest, half_width_at(log_variance(sides[0]), log_variance(sides[1]), n))
    return widest if widest >= 0 else math.nan


def _layout(study, planned) -> tuple[dict, dict, set]:
    """Per setting of the plan: its block numbers and its arms; and the settings of ``Study.fixed_block_parts``
    (every planned block of them runs)."""
    blocks: dict[str, set] = {}
    arms: dict[str, set] = {}
    fixed: set[str] = set()
    for t in planned:
        key = setting_key(study, t.config)
        blocks.setdefault(key, set()).add(block_of(study, t.config))
        arms.setdefault(key, set()).add(t.config[study.arm_field])
        if in_fixed_part(study, t.config):
            fixed.add(key)
    return blocks, arms, fixed


def in_fixed_part(study, config: dict) -> bool:
    """Whether a trial belongs to a part that declares its own blocks (``Study.fixed_block_parts``)."""
    return config.get("part") in study.fixed_block_parts


def decide(study, planned, records: list[TrialRecord], spec: AdaptiveSpec) -> dict[str, dict[int, BlockDecision]]:
    """For every setting of the plan and every block ``k`` of it (plus the block after its last), whether block
    ``k`` runs and why. Reads only the done trials of blocks ``< k``: the same store gives the same decisions."""
    blocks, arms, fixed = _layout(study, planned)
    values: dict[str, dict] = {}
    for r in adjust_records(records, arms):
        if r.status == "done" and not math.isnan(r.value):
            values.setdefault(r.setting, {}).setdefault((r.arm, r.block), []).append(r.value)
    target = percent(spec.target)
    out: dict[str, dict[int, BlockDecision]] = {}
    for key, planned_blocks in blocks.items():
        if key in fixed:  # its part declares its blocks: each runs, whatever the timings say
            out[key] = {k: BlockDecision(True, f"block {k + 1}: its part declares its blocks") for k in planned_blocks}
            out[key][max(planned_blocks) + 1] = BlockDecision(False, "every block its part declares is planned")
            continue
        pairs, decisions = pairs_in(study, arms[key]), {}
        no_pair = BlockDecision(False, f"no arm pair in this setting: the minimum {spec.min_blocks} blocks only")
        stopped = None if pairs else no_pair
        last, seen, measured = max(planned_blocks), values.get(key, {}), (None, None)
        cap = min(len(planned_blocks), spec.max_blocks)
        for k in [*sorted(planned_blocks), last + 1]:
            if k < spec.min_blocks and k in planned_blocks:
                decisions[k] = BlockDecision(True, f"block {k + 1} of the minimum {spec.min_blocks}")
                continue
            if stopped is not None:
                decisions[k] = stopped
                continue
            below = frozenset(b for _, b in seen if b < k)  # blocks not stored yet add nothing: reuse the CI
            if measured[0] != below:
                measured = (below, widest_half_width(study, pairs, seen, k))
            width, label, fewest = measured[1]
            why = (
                f"pair {label} has {fewest} trial(s) on a side after {k} blocks (a CI needs 2)"
                if math.isnan(width)
                else f"pair {label} CI half-width {percent(width)} > target {target} after {k} blocks"
            )
            project = spec.futility and not math.isnan(width) and k < cap
            projected = projected_half_width(pairs, seen, k, cap) if project else math.nan
            if not math.isnan(width) and width <= spec.target:
                decision = BlockDecision(
                    False, f"resolved: widest half-width {percent(width)} <= {target} after {k} blocks"
                )
            elif projected > spec.target:  # NaN (no projection) is never above it
                decision = BlockDecision(
                    False,
                    f"futile: pair {label} CI half-width {percent(width)} after {k} blocks would still be about "
                    f"{percent(projected)} > {target} at the cap of {cap} blocks",
                )
            elif k in planned_blocks and k < spec.max_blocks:
                decision = BlockDecision(True, why)
            else:
                decision = BlockDecision(False, f"cap reached ({len(planned_blocks)} block(s) planned): {why}")
            decisions[k] = decision
            if not decision.run:
                stopped = decision
        out[key] = decisions
    return out


def expected_blocks(study, planned, records: list[TrialRecord], spec: AdaptiveSpec) -> dict[str, int]:
    """Blocks each setting is expected to need: the minimum, or where stored trials show a pair's spread, the trials
    per side the Welch t-interval needs to reach the target (never fewer than the blocks stored), capped by the plan;
    with ``futility``, the minimum where the cap cannot reach it. ``n`` means the blocks numbered below ``n``: a
    setting whose part declares its blocks gets one past its last, since they need not start at 0 (imdb's quality
    seeds 45-46 run at other threads than 42-44, so they are a setting of blocks 3 and 4)."""
    blocks, arms, fixed = _layout(study, planned)
    logs: dict[tuple, list] = {}
    stored: dict[str, int] = {}
    for r in adjust_records(records, arms):
        if r.status == "done":
            stored[r.setting] = max(stored.get(r.setting, 0), r.block + 1)
            if not math.isnan(r.value):
                logs.setdefault((r.setting, r.arm), []).append(r.value)
    out = {}
    for key, planned_blocks in blocks.items():
        if key in fixed:
            out[key] = max(planned_blocks) + 1
            continue
        need = spec.min_blocks
        for pair in pairs_in(study, arms[key]):
            sides = [logs.get((key, a), []) for a in pair]
            if min(len(s) for s in sides) < 2:
                continue
            va, vb = (log_variance(s) for s in sides)
            n = 2
            while n < spec.max_blocks and half_width_at(va, vb, n) > spec.target:
                n += 1
            if spec.futility and half_width_at(va, vb, n) > spec.target:
                continue  # unreachable by the cap: the rule stops it at the minimum
            need = max(need, n)
        out[key] = min(max(need, stored.get(key, 0)), len(planned_blocks), spec.max_blocks)
    return out
