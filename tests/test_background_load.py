"""The controlled background load of contention trials: burners that run, get their CPU recorded, and never
outlive the block that started them."""

import os
import time

import psutil
import pytest

from fwbench.background_load import BackgroundLoad
from fwbench.errors import FwbenchError


def test_no_burner_records_zeros():
    with BackgroundLoad(0) as load:
        pass
    assert load.procs == [] and load.record == {
        "burners": 0.0, "burner_cpu_s": 0.0, "burner_wall_s": 0.0, "burner_cpu_frac": 0.0
    }  # fmt: skip


def test_a_burner_spins_on_one_pinned_cpu_and_is_gone_after_the_block():
    with BackgroundLoad(1) as load:
        (proc,) = load.procs
        assert psutil.Process(proc.pid).cpu_affinity() == [max(os.sched_getaffinity(0))]
        time.sleep(0.5)
    assert proc.poll() is not None  # killed and reaped
    assert load.record["burners"] == 1.0 and load.record["burner_wall_s"] >= 0.5
    # it spun: well over a third of a CPU over the block even on a loaded test machine (1.0 when never preempted)
    assert 0.3 < load.record["burner_cpu_frac"] <= 1.05
    assert load.record["burner_cpu_s"] == pytest.approx(load.record["burner_cpu_frac"] * load.record["burner_wall_s"])


def test_burners_are_killed_when_the_block_raises():
    with pytest.raises(RuntimeError, match="inside"):
        with BackgroundLoad(1) as load:
            (proc,) = load.procs
            raise RuntimeError("inside")
    assert proc.poll() is not None


def test_bad_burner_counts_are_refused():
    with pytest.raises(FwbenchError, match=">= 0"):
        BackgroundLoad(-1)
    with pytest.raises(FwbenchError, match="CPUs in this process"):
        BackgroundLoad(len(os.sched_getaffinity(0)) + 1)
