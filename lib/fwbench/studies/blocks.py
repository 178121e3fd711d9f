"""Repeat blocks with interleaved arms: the arms of one setting run back to back, in a seeded random order that
differs between blocks, so a busy spell on a shared machine does not land on one arm (arm is not confounded
with time) and each block gives one paired comparison of the arms. The runner records each trial's position in
the plan (``provenance.plan_position``); the block is the config's own field (``repeat``, ``seed``, ...).
"""

from __future__ import annotations

import hashlib
import json
import random


def _setting_key(config: dict, arm_field: str) -> str:
    return json.dumps({k: v for k, v in config.items() if k not in (arm_field, "part")}, sort_keys=True, default=str)


def interleave(configs: list[dict], arm_field: str = "arm", seed: int = 0) -> list[dict]:
    """``configs`` reordered: settings keep their first-appearance order; the arms of each setting are placed
    together, shuffled by a random generator seeded from ``seed`` and the setting (a deterministic plan)."""
    groups: dict[str, list[dict]] = {}
    for config in configs:
        groups.setdefault(_setting_key(config, arm_field), []).append(config)
    ordered = []
    for key, members in groups.items():
        digest = hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()
        rng = random.Random(int(digest[:16], 16))
        members = sorted(members, key=lambda c: str(c[arm_field]))
        rng.shuffle(members)
        ordered += members
    return ordered


def distinct(configs: list[dict]) -> list[dict]:
    """``configs`` without a config that differs from an earlier one only in its ``part`` (a setting two parts
    list is one trial, labelled with the part that lists it first)."""
    first: dict[str, dict] = {}
    for config in configs:
        first.setdefault(repr(sorted((k, v) for k, v in config.items() if k != "part")), config)
    return list(first.values())
