"""What adaptive repeats did, per setting: blocks run, the widest CI half-width reached, why the setting stopped,
the CPU time its trials took and the CPU time saved against fixed repeats at ``max_blocks``.

Time here is trial wall time on a machine that runs one trial at a time (the store's ``provenance.trial_wall_s``,
else ``ended_at - started_at``): the CPU-host seconds the estimate also counts. Saved = the planned trials of the
blocks the rule skipped, times the mean time of that setting's done trials (its blocks' trials: all its arms).
A setting whose next block is decided but not yet run is ``running``: nothing is counted as saved for it.
"""

from __future__ import annotations

import math

import pandas as pd

from ..errors import FwbenchError
from ..machines import adjust_records
from ..planning import plan
from ..studies import adaptive, get_study
from ..studies import options as opt

COLUMNS = (
    "setting arms blocks_run planned_blocks state widest_half_width stop_reason block_to_run cpu_s skipped_trials "
    "saved_cpu_s"
).split()
# a setting's state by how the rule's reason for stopping begins; none of these: ``running``
STATES = {"resolved": "resolved", "cap reached": "capped", "futile": "futile", "no arm pair": "minimum only"}


def _state(reason: str) -> str:
    return next((state for prefix, state in STATES.items() if reason.startswith(prefix)), "running")


def adaptive_report(store, study: str, profile: str, overrides: dict | None = None) -> pd.DataFrame:
    """One row per setting of an adaptive profile's plan (see the module docstring for the columns' meaning)."""
    s = get_study(study)
    spec = adaptive.spec_of(s.resolve(profile, overrides))
    if spec is None:
        raise FwbenchError(
            f"{study}/{profile} does not use adaptive repeats (its adaptive option is False); "
            f"e.g. --set adaptive={opt.ADAPTIVE_EXAMPLE}"
        )
    planned = plan(study, profile, overrides)
    records = adaptive.observe_store(store, s, planned)
    decisions = adaptive.decide(s, planned, records, spec)
    stored = {r.trial_id: r for r in records}
    settings: dict[str, list] = {}
    for t in planned:
        settings.setdefault(adaptive.setting_key(s, t.config), []).append(t)
    # the widest half-width from the values the rule reads (machine-adjusted), so it matches the stop reason's
    adjusted = adjust_records(records, {k: {t.config[s.arm_field] for t in ts} for k, ts in settings.items()})
    rows = []
    for key, trials in settings.items():
        mine = [stored[t.trial_id] for t in trials if t.trial_id in stored]
        stop, reason, to_run = math.inf, "", 0  # the first block skipped (inf: none), why, a block decided, not run
        for block in sorted(decisions[key]):
            decision = decisions[key][block]
            if not decision.run:
                stop, reason = block, decision.reason
                break
            members = [t for t in trials if adaptive.block_of(s, t.config) == block]
            if not all(t.trial_id in stored for t in members):  # decided, not (all) run yet
                to_run, reason = block + 1, decision.reason
                break
        skipped = [t for t in trials if adaptive.block_of(s, t.config) >= stop and t.trial_id not in stored]
        done_s = [r.seconds for r in mine if r.status == "done" and not math.isnan(r.seconds)]
        mean_s = sum(done_s) / len(done_s) if done_s else math.nan
        rows.append(
            {
                "setting": adaptive.setting_label(s, trials[0].config),
                "arms": ", ".join(sorted({str(t.config[s.arm_field]) for t in trials})),
                "blocks_run": len({r.block for r in mine}),
                "planned_blocks": len({adaptive.block_of(s, t.config) for t in trials}),
                "state": "running" if to_run else _state(reason),
                "widest_half_width": _final_width(s, trials, adjusted, key),
                "stop_reason": reason,
                "block_to_run": to_run,
                "cpu_s": float(sum(r.seconds for r in mine if not math.isnan(r.seconds))),
                "skipped_trials": len(skipped),
                "saved_cpu_s": len(skipped) * mean_s if skipped else 0.0,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _final_width(study, trials, records, key: str) -> float:
    """The widest CI half-width over every stored block of the setting, from ``records`` as the rule reads them
    (NaN: no interval yet)."""
    pairs = adaptive.pairs_in(study, {t.config[study.arm_field] for t in trials})
    values: dict = {}
    for r in records:
        if r.setting == key and r.status == "done" and not math.isnan(r.value):
            values.setdefault((r.arm, r.block), []).append(r.value)
    return adaptive.widest_half_width(study, pairs, values, math.inf)[0] if pairs else math.nan


def status_facts(frame: pd.DataFrame) -> dict:
    """What ``fwbench status`` says of an adaptive profile (template ``adaptive_status``): settings by state (most
    first), setting-blocks run of planned, CPU seconds spent and saved, trials skipped; the totals of the
    per-setting table too (template ``adaptive_table``)."""
    return {
        "n_settings": len(frame),
        "states": [(state, int(n)) for state, n in frame.state.value_counts().items()],
        "blocks_run": int(frame.blocks_run.sum()),
        "planned_blocks": int(frame.planned_blocks.sum()),
        "cpu_s": float(frame.cpu_s.sum()),
        "saved_cpu_s": float(frame.saved_cpu_s.sum()),
        "skipped_trials": int(frame.skipped_trials.sum()),
    }
