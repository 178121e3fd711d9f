"""Same seed, same loss curve: each framework's IMDB smoke trial, run twice in fresh processes on CPU,
must store bit-identical per-epoch training losses (and test accuracy).

Where a framework cannot promise that, the test says so with an xfail that carries the measured difference.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fwbench.execute import execute
from fwbench.planning import plan
from fwbench.studies import get_study

REPO = Path(__file__).resolve().parents[1]
EVIDENCE = REPO / "build" / "test-evidence"
IMDB = get_study("imdb")
ARMS = (IMDB.reference_arm("torch"), IMDB.reference_arm("mxnet"))


def curve(outcome: dict, metric: str) -> list[float]:
    assert outcome["status"] == "done", outcome["error"] + "\n" + (outcome["stderr_tail"] or "")
    return [v for step, k, v in sorted(outcome["measurements"]) if k == metric]


@pytest.mark.slow
@pytest.mark.parametrize("arm", ARMS)
def test_same_seed_same_loss_curve(arm, monkeypatch, tmp_path):
    from fwbench.data.imdb import find_source
    from fwbench.errors import DataUnavailable

    if not os.environ.get("FWBENCH_DATA_DIR"):
        pytest.skip("FWBENCH_DATA_DIR is unset: the IMDB trial needs the staged archive")
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")  # the trial processes find the data through FWBENCH_DATA_DIR only
    try:
        find_source()
    except DataUnavailable as exc:
        pytest.skip(f"no IMDB archive under FWBENCH_DATA_DIR: {exc}")
    # small enough to be cheap on a busy 2-core CI box (seq_len 50: the smoke profile's scaling part uses it too,
    # so the encoded-data cache is shared); the property does not depend on the size
    trial = next(
        t
        for t in plan(
            "imdb", "smoke", {"arms": [arm], "workers": [0], "n_train": 16, "n_test": 16, "seq_len": 50, "epochs": 2}
        )
        if t.config["arm"] == arm and t.config["part"] == "main"
    )
    first, second = execute(trial), execute(trial)  # one after the other: a trial owns the CPU
    loss1, loss2 = curve(first, "train_loss"), curve(second, "train_loss")
    acc1, acc2 = curve(first, "test_acc"), curve(second, "test_acc")
    assert len(loss1) == trial.config["epochs"]
    assert first["provenance"]["pid"] != second["provenance"]["pid"]  # two fresh processes
    max_diff = max(abs(a - b) for a, b in zip(loss1, loss2))
    EVIDENCE.mkdir(parents=True, exist_ok=True)
    (EVIDENCE / f"reproducibility_{arm}.json").write_text(
        json.dumps(
            {
                "arm": arm,
                "seed": trial.config["seed"],
                "epochs": trial.config["epochs"],
                "train_loss_run1": loss1,
                "train_loss_run2": loss2,
                "identical": loss1 == loss2 and acc1 == acc2,
                "max_abs_diff": max_diff,
            },
            indent=2,
        )
    )
    if loss1 != loss2 and IMDB.framework_of(arm) == "mxnet":
        pytest.xfail(f"MXNet CPU training is not bit-reproducible here: max |diff| of train_loss {max_diff:.3g}")
    assert loss1 == loss2, f"{arm}: train_loss differs between runs with the same seed (max {max_diff:.3g})"
    assert acc1 == acc2
