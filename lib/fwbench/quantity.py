"""A named quantity: one number with its interval, computed once and written the same way on every page.

Every number the pages and the ledger share is a ``Quantity`` with a stable ``name`` (``"claim.B"``,
``"imdb.accuracy.torch-eager"``, ...). Pages never format such a number themselves: ``markup`` wraps its text in a
``<span class="q" data-q=NAME data-v=VALUE ...>`` carrying the exact value, interval and level, plain inline HTML
that reads the same in the post, a notebook's output and GitHub's README; ``tools/check_pages.py`` reads the spans
back from every page and fails when one name carries two values.

Shown the other way round (``inverse=True``: 1 / value, the interval flipped), the span says so and still carries
the stored orientation's values. A quantity measured under other conditions than the headline's declares them
(``conditions``: what -> the words a page names it by) and the ``label`` a reader sees it under, so the check can
ask each page that shows it to name them. A level above ``stats.CONFIDENCE`` is a Bonferroni-widened part of a
claim with several parts (``ledger.judge``): the text says "95 % family-wise CI", the level the claim holds at.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from .stats import CONFIDENCE


def significant(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits; from 10**digits on, a whole number with thousands separators."""
    return f"{x:.{digits}g}" if abs(x) < 10**digits else f"{x:,.0f}"


@dataclass(frozen=True)
class Quantity:
    """One named number: ``value`` with its interval at ``confidence`` over ``n`` (what was counted), in ``unit``."""

    name: str
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    confidence: float = CONFIDENCE
    n: str = ""
    unit: str = ""
    digits: int = 3
    label: str = ""  # what a reader sees it called, shared by its siblings under other conditions
    conditions: Mapping[str, str] = field(default_factory=dict, hash=False)  # e.g. {"cpu": "Intel Xeon 6/207"}

    @property
    def has_ci(self) -> bool:
        return not (math.isnan(self.ci_low) or math.isnan(self.ci_high))

    def level_text(self) -> str:
        """'95 %' or '95 % family-wise' (see the module docstring)."""
        family = " family-wise" if self.confidence > CONFIDENCE + 1e-9 else ""
        return f"{CONFIDENCE:.0%}".replace("%", " %") + family

    def shown(self, inverse: bool = False) -> tuple[float, float, float]:
        """(value, low, high) as shown: the stored orientation, or its inverse."""
        if not inverse:
            return self.value, self.ci_low, self.ci_high

        def inv(x: float) -> float:
            return 1 / x if x else math.nan

        return inv(self.value), inv(self.ci_high), inv(self.ci_low)

    def text(self, inverse: bool = False, ci: bool = True) -> str:
        """'2.29 (95 % CI 2.04-2.51)'; 'no CI' where there is none; only the value with ``ci=False``."""
        value, low, high = self.shown(inverse)
        if math.isnan(value):
            return "n/a"
        head = f"{significant(value, self.digits)}{self.unit}"
        if not ci:
            return head
        if not self.has_ci:
            return f"{head} (no CI)"
        return f"{head} ({self.level_text()} CI {significant(low, self.digits)}-{significant(high, self.digits)})"

    def markup(self, inverse: bool = False, ci: bool = True) -> str:
        """The text in a ``<span>`` that carries the quantity's name and stored values (see the module docstring)."""
        attrs = {
            "class": "q",
            "data-q": self.name,
            "data-v": repr(float(self.value)),
            "data-lo": repr(float(self.ci_low)),
            "data-hi": repr(float(self.ci_high)),
            "data-level": repr(float(self.confidence)),
        }
        if inverse:
            attrs["data-form"] = "inverse"
        if not ci:
            attrs["data-ci"] = "hidden"
        if self.label:
            attrs["data-label"] = self.label
        if self.conditions:
            attrs["data-conditions"] = json.dumps(dict(self.conditions), sort_keys=True)
        inner = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
        return f"<span {inner}>{html.escape(self.text(inverse, ci), quote=False)}</span>"


def missing(value) -> bool:
    """None or NaN: a value not measured."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def from_row(
    name: str, estimate: float, ci_low: float, ci_high: float, confidence: float | None, n: str = ""
) -> Quantity:
    """A quantity from a table row's estimate columns (a ledger row, a ratio table's row)."""
    level = CONFIDENCE if missing(confidence) else confidence
    return Quantity(name, float(estimate), float(ci_low), float(ci_high), float(level), str(n or ""))
