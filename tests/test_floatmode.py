"""Subnormal floats as a condition (``fwbench.floatmode``) and the run's conditions (``fwbench.conditions``).

- the probe's shares say what a pool does; a ``flush`` trial whose pool does not flush everywhere is refused;
- through the real runner, with real PyTorch and MXNet in the trial process: a trial that sets the mode before the
  framework starts its pool is done and records ``flush`` in every kernel; a trial whose MXNet engine threads were
  started before the mode (so they do not carry it) is refused, stored as failed with the shares in its error;
- ``fp_mode`` and ``cpu`` are config keys (another id) only when not at their defaults; a config naming another CPU
  model is refused before anything runs.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from fwbench import cli, conditions, floatmode
from fwbench.errors import FwbenchError
from fwbench.planning import plan
from fwbench.provenance import cpu_key, this_cpu
from fwbench.studies import Arm, Study, register
from fwbench.studies import options as opt

needs_x86 = pytest.mark.skipif(floatmode.mxcsr() is None, reason="MXCSR is x86-64 only")


def test_the_pool_mode_is_read_from_the_shares_of_zeros():
    assert floatmode.pool_mode({"elementwise_in": 1.0, "gemm_in": 1.0}) == "flush"
    assert floatmode.pool_mode({"elementwise_in": 0.0, "gemm_in": 0.0}) == "default"
    assert floatmode.pool_mode({"elementwise_in": 0.5, "gemm_in": 1.0}) == "mixed"  # one thread of two flushes


def test_a_flush_trial_whose_pool_is_mixed_is_refused(monkeypatch):
    monkeypatch.setattr(floatmode, "probe", lambda name: {"elementwise_in": 0.5, "gemm_in": 1.0})
    with pytest.raises(FwbenchError, match="not carried by torch's threads"):
        floatmode.verify("flush", ["torch"])
    found = floatmode.verify("default", ["torch"])  # the libraries' own choice: recorded, never refused
    assert found["fp_pool"] == "mixed" and found["fp_mode"] == "default"


def test_an_unknown_mode_is_one_line():
    with pytest.raises(FwbenchError, match="fp_mode must be one of default, flush"):
        floatmode.check_mode("ftz")


@needs_x86
def test_flush_sets_both_bits_in_a_child_process_and_its_threads():
    code = (
        "import threading, fwbench.floatmode as f; f.apply('flush'); out = []; "
        "t = threading.Thread(target=lambda: out.append(f.thread_mode(f.mxcsr()))); t.start(); t.join(); "
        "print(f.thread_mode(f.mxcsr()), out[0])"
    )
    import subprocess
    import sys

    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert printed.split() == ["flush", "flush"]  # a thread started after the mode inherits it


# -- through the runner, with real PyTorch and MXNet in the trial process --------------------------------------------
def _fp_trial(config, report=None):
    if config["arm"] == "fp-late-pool":  # MXNet's engine threads started without the mode (a pool made before it)
        floatmode.write_register(False)
        import mxnet as mx

        (mx.nd.ones((1 << 20,)) * 2).asnumpy()  # the engine's worker threads are made now, with the mode cleared
        floatmode.write_register(True)  # the main thread flushes again; the engine's threads do not
    else:
        import torch

        torch.set_num_threads(config["threads"])
        torch.full((1 << 20,), 1.0).mul_(2.0)
    return {"summary": {}, "measurements": [(0, "train_time_s", 1.0)], "provenance": {}}


FP_STUDY = register(
    Study(
        name="fp-study",
        title="PyTorch trials whose pool does or does not carry the fp mode",
        module=__name__,
        profiles={"smoke": {"arms": ["fp-carried", "fp-late-pool"]}},
        options={"arms": opt.list_of(opt.string, ["fp-carried", "fp-late-pool"])},
        grid=lambda options: [{"arm": arm, "threads": 2} for arm in options["arms"]],
        run_trial=_fp_trial,
        describe=lambda config: f"fp {config['arm']}",
        arms=(
            Arm("fp-carried", "torch", None, "carried", "mode set before the pool", "#123456"),
            Arm("fp-late-pool", "mxnet", None, "late", "pool started before the mode", "#654321"),
        ),
        reference={"torch": "fp-carried", "mxnet": "fp-late-pool"},
        hidden=True,
    )
)


def _stored(store) -> dict:
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT config, status, provenance, error FROM trials WHERE study='fp-study'").fetchall()
    return {json.loads(c)["arm"]: (json.loads(c), s, json.loads(p), e) for c, s, p, e in rows}


@needs_x86
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a pool needs 2 CPUs")
def test_a_trial_whose_pool_threads_do_not_carry_flush_is_refused(tmp_store):
    cli.main(["run", "fp-study", "--profile", "smoke", "--set", "fp_mode=flush", "--progress", "none"])
    stored = _stored(tmp_store)
    config, status, provenance, _ = stored["fp-carried"]
    assert config["fp_mode"] == "flush" and status == "done"
    assert provenance["fp_pool"] == "flush" and set(provenance["fp_probe"].values()) == {1.0}
    assert provenance["cpu"] == this_cpu() and provenance["fp_main_thread"] == "flush"
    _, status, _, error = stored["fp-late-pool"]
    assert status == "failed" and "not carried by mxnet's threads" in error, error


@needs_x86
def test_the_default_mode_records_what_pytorch_does(tmp_store):
    cli.main(["run", "fp-study", "--profile", "smoke", "--set", 'arms=["fp-carried"]', "--progress", "none"])
    config, status, provenance, _ = _stored(tmp_store)["fp-carried"]
    assert "fp_mode" not in config and status == "done"  # the default adds no key: ids stored before are kept
    assert provenance["fp_mode"] == "default" and provenance["fp_pool"] == "default"  # PyTorch keeps subnormals


# -- the run's condition ---------------------------------------------------------------------------------------------
def test_a_condition_is_in_the_id_only_when_not_default():
    base = plan("selftest", "smoke")
    same = plan("selftest", "smoke", {"fp_mode": "default"})
    flushed = plan("selftest", "smoke", {"fp_mode": "flush", "cpu": "GenuineIntel/6/85"})
    assert [t.trial_id for t in base] == [t.trial_id for t in same]
    assert not {t.trial_id for t in base} & {t.trial_id for t in flushed}
    assert all(t.config["cpu"] == "GenuineIntel/6/85" and t.config["fp_mode"] == "flush" for t in flushed)
    assert conditions.split({"cpu": "this", "epochs": 2}) == ({"cpu": this_cpu()}, {"epochs": 2})
    with pytest.raises(FwbenchError, match="cpu must be vendor/family/model"):
        conditions.split({"cpu": "Intel Xeon"})


def test_a_run_for_another_cpu_model_is_refused_before_anything_runs(tmp_store):
    other = "GenuineIntel/6/1" if this_cpu() != "GenuineIntel/6/1" else "AuthenticAMD/25/1"
    with pytest.raises(FwbenchError, match=f"this trial is for CPU {other}"):
        from fwbench.runner import run_sweep

        run_sweep("selftest", "smoke", {"cpu": other}, progress="none")
    assert not tmp_store.exists()
    assert cpu_key("GenuineIntel/6/207/2") == "GenuineIntel/6/207" and cpu_key(None) is None


def test_a_flush_trial_with_nothing_to_check_is_refused():
    """A trial process that ran no framework (its work in processes it started itself) cannot show the mode held."""
    with pytest.raises(FwbenchError, match="cannot be checked"):
        floatmode.verify("flush", [])
    assert floatmode.verify("default", [])["fp_mode"] == "default"


@needs_x86
def test_the_probe_reads_bits_so_a_flushing_main_thread_cannot_fake_a_flushed_pool():
    """Under DAZ a float comparison takes a subnormal for zero, and under FTZ converting 1e-39 to float32 gives zero:
    the probe makes its subnormals from bits and counts zeros on bits, so in a flushing main thread an unflushed
    product still counts as not flushed, and a PyTorch pool started before the mode reads as mixed."""
    code = (
        "import torch, fwbench.floatmode as f; from fwbench.floatmode import torch as ft; torch.set_num_threads(2); "
        "torch.full((1 << 20,), 1.0).mul_(2.0); f.write_register(True); "
        "print(f.zero_share(f.subnormals(8)), f.pool_mode(ft.subnormal_products(1 << 21, 256)))"
    )
    import subprocess
    import sys

    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert printed[0] == "0.0"  # subnormals are not zeros, even read in a flushing thread
    if (os.cpu_count() or 1) >= 2:
        assert printed[1] == "mixed"  # the pool's worker thread was made before the mode: it keeps subnormals
