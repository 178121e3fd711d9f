"""Validation of profile overrides (CLI flags and papermill-injected notebook parameters): every check raises
``FwbenchError`` with one line naming the option, what was given, and what is accepted, before any trial starts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import FwbenchError

Validator = Callable[[str, Any], Any]


def int_range(minimum: int, maximum: int) -> Validator:
    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FwbenchError(
                f"{name} must be an integer, got {value!r} ({type(value).__name__}); e.g. {name}={minimum}"
            )
        if not minimum <= value <= maximum:
            raise FwbenchError(f"{name} must be >= {minimum} and <= {maximum}, got {value}")
        return value

    return check


def optional(validator: Validator) -> Validator:
    return lambda name, value: None if value is None else validator(name, value)


def positive_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise FwbenchError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise FwbenchError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return value


def list_of(
    item: Validator, choices: Iterable | None = None, allow_empty: bool = False, distinct: bool = True
) -> Validator:
    """A list of ``item`` values (a single value is a one-element list); ``distinct`` (a grid axis) refuses a value
    listed twice, which a per-block list (one value per seed) may repeat."""
    allowed = None if choices is None else list(choices)

    def check(name: str, value: Any) -> list:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)) or (not value and not allow_empty):
            raise FwbenchError(f"{name} must be a non-empty list, got {value!r}")
        out = [item(name, v) for v in value]
        if allowed is not None:
            bad = [v for v in out if v not in allowed]
            if bad:
                raise FwbenchError(f"unknown {name} value(s) {bad}; choose from {allowed}")
        if distinct and len(set(map(repr, out))) != len(out):
            raise FwbenchError(f"{name} lists a value twice: {value!r}")
        return out

    return check


def one_or_per_key(item: Validator, keys: Iterable) -> Validator:
    """One ``item`` value, or a dict giving one per key (each key one of ``keys``)."""
    allowed = list(keys)

    def check(name: str, value: Any) -> Any:
        if not isinstance(value, dict):
            return item(name, value)
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise FwbenchError(f"unknown {name} key(s) {unknown}; choose from {allowed}")
        return {k: item(f"{name}.{k}", v) for k, v in value.items()}

    return check


def choice(choices: Iterable) -> Validator:
    allowed = list(choices)

    def check(name: str, value: Any) -> Any:
        if value not in allowed:
            raise FwbenchError(f"{name} must be one of {allowed}, got {value!r}")
        return value

    return check


def part_spec(**keys: Validator) -> Validator:
    """A grid part: False for none, or a dict with exactly ``keys``, each checked by its validator (None, like
    every None override, keeps the profile's)."""

    def check(name: str, value: Any) -> dict | bool:
        if value is False:
            return False
        if not isinstance(value, dict) or set(value) != set(keys):
            raise FwbenchError(f"{name} must be a dict with keys {sorted(keys)} or False, got {value!r}")
        return {k: keys[k](f"{name}.{k}", v) for k, v in value.items()}

    return check


def string(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise FwbenchError(f"{name} must be a non-empty string, got {value!r}")
    return value


def resolve(study: str, profiles: dict, validators: dict, profile: str, overrides: dict | None) -> dict:
    """Profile defaults updated with validated overrides (None values mean 'keep the profile's')."""
    if not isinstance(profile, str) or profile not in profiles:
        raise FwbenchError(f"unknown profile {profile!r} for {study}; choose one of: {', '.join(profiles)}")
    options = dict(profiles[profile])
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        if name not in validators:
            raise FwbenchError(f"unknown option {name!r} for {study}; known: {', '.join(sorted(validators))}")
        options[name] = validators[name](name, value)
    return options


# the adaptive repeats option, apart from its rule (fwbench.studies.adaptive), whose statistics no trial imports
MAX_ADAPTIVE_BLOCKS = 100
ADAPTIVE_EXAMPLE = "{'min_blocks': 3, 'max_blocks': 10, 'target': 0.03}"
ADAPTIVE_KEYS = ("min_blocks", "max_blocks", "target")


def adaptive_option(name: str, value) -> dict | bool:
    """The ``adaptive`` option (its rule: ``fwbench.studies.adaptive``): ``min_blocks`` >= 2, ``target`` in (0, 1)."""
    if value is False:
        return False
    if not isinstance(value, dict):
        raise FwbenchError(f"{name} must be False or a dict like {ADAPTIVE_EXAMPLE}, got {value!r}")
    missing, unknown = sorted(set(ADAPTIVE_KEYS) - value.keys()), sorted(value.keys() - {*ADAPTIVE_KEYS, "futility"})
    if missing or unknown:
        raise FwbenchError(
            f"{name} needs exactly the keys min_blocks, max_blocks, target, and optionally futility "
            f"(missing {missing}, unknown {unknown}); e.g. {name}={ADAPTIVE_EXAMPLE}"
        )
    low = int_range(2, MAX_ADAPTIVE_BLOCKS)(f"{name}.min_blocks", value["min_blocks"])
    high = int_range(low, MAX_ADAPTIVE_BLOCKS)(f"{name}.max_blocks", value["max_blocks"])
    target = value["target"]
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1:
        raise FwbenchError(
            f"{name}.target must be a number in (0, 1) (the CI half-width on the ratio, 0.03 = +-3 %), got {target!r}"
        )
    out = {"min_blocks": low, "max_blocks": high, "target": float(target)}
    if "futility" in value:
        if not isinstance(value["futility"], bool):
            raise FwbenchError(f"{name}.futility must be True or False, got {value['futility']!r}")
        out["futility"] = value["futility"]
    return out
