"""Measurement helpers shared by every study: one clock loop and one median.

``time_calls`` reads ``time.perf_counter`` after the framework's ``synchronize`` (MXNet is asynchronous: its
``mx.nd.waitall``), so a timed call includes the work it queued. ``median`` is ``statistics.median`` (the mean
of the two middle values for an even count), used everywhere a summary median is stored.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable


def median(values: Iterable[float]) -> float:
    """The median (``statistics.median``); raises on no values."""
    return statistics.median(list(values))


def time_calls(
    call: Callable[[], object], synchronize: Callable[[], object], warmup: int, repeats: int
) -> tuple[list[float], list[float]]:
    """Wall time of ``call()``, ``warmup`` times then ``repeats`` times, each read after ``synchronize()``;
    returns (warm-up seconds, timed seconds). Warm-up values are kept for the store, never used in statistics."""

    def once() -> float:
        t0 = time.perf_counter()
        call()
        synchronize()
        return time.perf_counter() - t0

    synchronize()
    warm = [once() for _ in range(warmup)]
    timed = [once() for _ in range(repeats)]
    return warm, timed
