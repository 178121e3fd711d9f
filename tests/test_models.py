"""The IMDB twin backends at run time: same parameter count, same init ranges, one framework per process (their
public names are checked in ``test_twins``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import load_tool

import fwbench.sentiment as sentiment
from fwbench.studies import get_study

PROBE = """
import json, sys, numpy as np
from fwbench.studies import get_study
be = get_study("imdb").arm(sys.argv[1]).load_backend()
be.set_seed(0)
model = be.build_model(5000, 128, 128, 2)
x = np.random.RandomState(0).randint(0, 5000, size=(3, 500))
loader = be.make_loader(x, np.array([0, 1, 0]), batch_size=3, num_workers=0, shuffle=False, seed=0)
emb = (model.embedding.weight.detach().numpy().copy() if be.FRAMEWORK == 'torch'
       else model.embedding.weight.data().asnumpy())
trainer = be.make_trainer(model, 1e-3)
loss, seen = be.train_one_epoch(model, trainer, loader)
be.synchronize()
test_loss, acc = be.evaluate(model, loader)
out = {"params": be.count_parameters(model), "loss": loss, "seen": seen, "acc": acc,
       "emb_absmax": float(abs(emb).max()), "framework": be.FRAMEWORK}

def one_step(init, clip):  # a tiny model: the loss before and after one step at a huge learning rate
    model = be.build_model(50, 8, 6, 2, init=init, seed=3)
    x = np.random.RandomState(0).randint(0, 50, size=(4, 20))
    loader = be.make_loader(x, np.array([0, 1, 0, 1]), batch_size=4, num_workers=0, shuffle=False, seed=0)
    before, _ = be.evaluate(model, loader)
    be.train_one_epoch(model, be.make_trainer(model, 0.5, clip), loader)
    after, _ = be.evaluate(model, loader)
    return {"loss_before": before, "loss_after": after}

settings = (("keras", None), ("uniform", None), ("keras", 1e-12))
out["step"] = {f"{init} {clip}": one_step(init, clip) for init, clip in settings}
out["frameworks"] = sorted(m for m in ("torch", "mxnet") if m in sys.modules)
print(json.dumps(out))
"""
STUDY = get_study("imdb")
ARMS = (STUDY.reference_arm("torch"), STUDY.reference_arm("mxnet"))


@pytest.fixture(scope="module")
def probes():
    """One process per framework (its import is most of the cost): the study's model for one epoch, then the
    tiny model's first step under each init and clip setting."""
    out = {}
    for arm in ARMS:
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, arm],
            capture_output=True,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[arm] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def test_same_parameter_count(probes):
    # 5000*128 embedding + 4*128*(128+128) + 2*4*128 LSTM + 128*2 + 2 dense
    expected = 5000 * 128 + 4 * 128 * 256 + 8 * 128 + 128 * 2 + 2
    assert [probes[arm]["params"] for arm in ARMS] == [expected, expected]


def test_each_probe_imported_one_framework(probes):
    for arm, probe in probes.items():
        assert probe["frameworks"] == [STUDY.framework_of(arm)] == [probe["framework"]]


def test_same_embedding_init_range_and_sane_loss(probes):
    for probe in probes.values():
        assert probe["emb_absmax"] <= sentiment.EMBEDDING_INIT_RANGE
        assert probe["seen"] == 3
        assert 0.3 < probe["loss"] < 1.2  # near ln 2 for an untrained binary classifier


def test_sampler_gives_both_frameworks_one_order_per_epoch():
    sampler = sentiment.EpochPermutationSampler(10, seed=5)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(10)) and first != second
    assert list(sentiment.EpochPermutationSampler(10, seed=5)) == first


# -- claim A9 as stated: the whole MXNet model, gluon.rnn.LSTM included, hybridized ---------------------------------
HYBRID_PROBE = """
import json
import numpy as np
import mxnet as mx
from mxnet import autograd
from fwbench.studies import get_study

be = get_study("imdb").arm("mxnet-hybrid-full").load_backend()
x = mx.nd.array(np.random.RandomState(1).randint(0, 5000, size=(4, 60)))
y = mx.nd.array([0, 1, 1, 0])
models = {}
for variant in ("imperative", "hybrid-partial", "hybrid-full"):
    be.set_seed(0)
    models[variant] = be.build_model(5000, 128, 128, 2, variant=variant)
weights = [p.data().copy() for p in models["imperative"].collect_params().values()]
out = {}
for variant, model in models.items():
    for p, w in zip(model.collect_params().values(), weights):  # the same weights in every variant
        p.set_data(w)
    trainer = be.make_trainer(model, 1e-3)
    with autograd.record():
        logits = model(x)
        loss = trainer.loss(logits, y)
    loss.backward()
    mx.nd.waitall()
    out[variant] = {"params": be.count_parameters(model), "logits": logits.asnumpy().tolist(),
                    "grads": [p.grad().asnumpy().ravel()[:20000].tolist() for p in model.collect_params().values()],
                    "whole_graph": model._cached_op is not None,
                    "block_graphs": [b._cached_op is not None for b in (model.embedding, model.output)]}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def hybrid():
    proc = subprocess.run(
        [sys.executable, "-c", HYBRID_PROBE],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "2"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_fully_hybridized_model_is_the_imperative_model(hybrid):
    import numpy as np

    assert {v["params"] for v in hybrid.values()} == {772354}
    ref = hybrid["imperative"]
    for variant in ("hybrid-partial", "hybrid-full"):
        assert np.abs(np.array(hybrid[variant]["logits"]) - np.array(ref["logits"])).max() < 1e-5, variant
        for g, g_ref in zip(hybrid[variant]["grads"], ref["grads"]):
            assert np.abs(np.array(g) - np.array(g_ref)).max() < 1e-5, variant


@pytest.mark.slow
def test_each_mxnet_variant_hybridizes_what_it_says(hybrid):
    assert not hybrid["imperative"]["whole_graph"] and hybrid["imperative"]["block_graphs"] == [False, False]
    assert not hybrid["hybrid-partial"]["whole_graph"] and hybrid["hybrid-partial"]["block_graphs"] == [True, True]
    assert hybrid["hybrid-full"]["whole_graph"]  # one static graph, gluon.rnn.LSTM inside it


A9_PROBE = """
import json, sys
from fwbench.planning import plan
from fwbench.studies import get_study

config = next(t.config for t in plan("imdb", "smoke", {"arms": ["mxnet-imperative"],
              "extra_arms": ["mxnet-hybrid-full"], "workers": [0], "epochs": 1, "scaling": False})
              if t.config["arm"] == "mxnet-hybrid-full")
study = get_study("imdb")
if sys.argv[1] == "break":  # an op a symbol does not have: what a block that cannot be hybridized raises
    import fwbench.sentiment.mxnet as be
    plain = be.SentimentLSTM.hybrid_forward
    def broken(self, F, x):
        x.asnumpy()
        return plain(self, F, x)
    be.SentimentLSTM.hybrid_forward = broken
result = study.run_trial(config)
print(json.dumps({"summary": result["summary"], "metrics": sorted({m for _, m, _ in result["measurements"]})}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["as-is", "break"])
def test_a_model_that_cannot_be_hybridized_is_a_stored_result(how):
    proc = subprocess.run(
        [sys.executable, "-c", A9_PROBE, how],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "2"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    summary = out["summary"]
    if how == "as-is":
        assert summary["hybridize_ok"] is True and summary["hybridize_error"] is None
        assert "train_time_s" in out["metrics"] and summary["median_epoch_s"] is None  # 1 epoch: none timed
    else:
        assert summary["hybridize_ok"] is False
        error = summary["hybridize_error"]
        assert error.startswith("NotImplementedForSymbol") and "asnumpy" in error  # the exact error, stored
        assert out["metrics"] == ["peak_rss_mb"]  # no epochs after a failed hybridize, and no crash
    assert summary["n_parameters"] == 772354


# -- claim C3 on the LSTM: the oneDNN switch reaches the LSTM in both frameworks ----------------------------------
MXNET_ONEDNN_ENV = ("MXNET_MKLDNN_ENABLED", "MXNET_USE_MKLDNN_RNN")
ONEDNN_PROBE = """
import sys
import numpy as np
from fwbench.studies import get_study

be = get_study("imdb").arm(sys.argv[1]).load_backend()
with be.onednn(sys.argv[2] == "on"):
    print("ACTIVE", be.onednn_enabled(), flush=True)
    model = be.build_model(50, 16, 16, 2)
    x, y = np.random.RandomState(0).randint(0, 50, size=(4, 6)), np.array([0, 1, 0, 1])
    be.train_one_epoch(model, be.make_trainer(model, 1e-3), be.make_loader(x, y, 4, 0, shuffle=False, seed=0))
    be.synchronize()
"""


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["on", "off"])
@pytest.mark.parametrize("arm", ARMS)
def test_onednn_switch_decides_whether_the_lstm_runs_in_onednn(arm, flag):
    env = {
        **os.environ,
        "ONEDNN_VERBOSE": "1",
        "DNNL_VERBOSE": "1",
        "MKLDNN_VERBOSE": "1",
        "OMP_NUM_THREADS": "1",
        **dict.fromkeys(MXNET_ONEDNN_ENV, "1" if flag == "on" else "0"),
    }  # as the IMDB trial sets them
    proc = subprocess.run(
        [sys.executable, "-c", ONEDNN_PROBE, arm, flag], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    kinds = {f[f.index("cpu") + 1] for f in (line.split(",") for line in lines) if "exec" in f and "cpu" in f}
    assert f"ACTIVE {flag == 'on'}" in lines
    assert ("rnn" in kinds) == (flag == "on"), kinds


def test_mxnet_refuses_a_onednn_setting_it_was_not_imported_with():
    code = (
        "from fwbench.studies import get_study\nbe = get_study('imdb').arm('mxnet-imperative').load_backend()\n"
        "be.onednn(True).__enter__()"
    )
    for env in ({"MXNET_MKLDNN_ENABLED": "0"}, {"MXNET_USE_MKLDNN_RNN": "0"}):  # either switch off is "off"
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **env, "OMP_NUM_THREADS": "1"},
        )
        assert proc.returncode != 0 and "before importing mxnet" in proc.stderr


@pytest.mark.slow
def test_mxnet_lstm_backward_needs_both_switches_off():
    """Why the trial sets two variables: MXNet 1.9.1 with only MXNET_MKLDNN_ENABLED=0 cannot train the LSTM."""
    env = {**os.environ, "MXNET_MKLDNN_ENABLED": "0", "OMP_NUM_THREADS": "1", "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}
    env.pop("MXNET_USE_MKLDNN_RNN", None)
    proc = subprocess.run(
        [sys.executable, "-c", ONEDNN_PROBE, "mxnet-imperative", "off"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode != 0 and "in_data.size() == num_inputs" in proc.stderr


def test_keras_init_gives_both_frameworks_the_same_weights_and_uniform_does_not(probes):
    keras = [probes[arm]["step"]["keras None"]["loss_before"] for arm in ARMS]
    uniform = [probes[arm]["step"]["uniform None"]["loss_before"] for arm in ARMS]
    assert keras[0] == pytest.approx(keras[1], rel=1e-5)  # the same arrays, so the same initial loss
    assert uniform[0] != pytest.approx(uniform[1], rel=1e-5)  # the same distribution, other draws


def test_keras_init_opens_the_forget_gate_and_draws_from_the_seed():
    a = sentiment.keras_initial_weights(50, 8, 6, 2, seed=3)
    b = sentiment.keras_initial_weights(50, 8, 6, 2, seed=4)
    assert list(a["i2h_bias"][6:12]) == [1.0] * 6 and not a["i2h_bias"][:6].any() and not a["h2h_bias"].any()
    q = a["h2h_weight"].astype("float64")
    assert abs(q.T @ q - __import__("numpy").eye(6)).max() < 1e-5  # orthonormal columns
    assert (a["i2h_weight"] != b["i2h_weight"]).any()
    with pytest.raises(ValueError, match="unknown init"):
        sentiment.check_init("he")


@pytest.mark.parametrize("arm", ARMS)
def test_gradient_clipping_limits_the_step_in_both_frameworks(probes, arm):
    """A huge learning rate moves the loss far; a tiny clip norm keeps the step (Adam's first step is about lr
    per weight whatever the norm, so compare against an update with clipping that leaves the loss near)."""
    free, clipped = probes[arm]["step"]["keras None"], probes[arm]["step"]["keras 1e-12"]
    assert abs(free["loss_after"] - free["loss_before"]) > 0.05
    # Adam normalises the step: a clipped gradient still moves each weight by about lr, unless it is zeroed
    # to below eps; at clip 1e-12 the normalised gradient g/(sqrt(v)+eps) is ~1e-12/1e-8, so nothing moves
    assert clipped["loss_after"] == pytest.approx(clipped["loss_before"], abs=1e-3)


TINY_TWIN_SPEC = {
    "data": "random",
    "model": {"num_words": 50, "embed_dim": 8, "hidden_size": 6, "num_classes": 2},
    "seq_len": 20,
    "batch_size": 4,
    "steps": 25,
    "seed": 3,
    "lr": 0.01,
    "threads": 1,
}


def test_the_twins_learn_alike_step_by_step():
    """From the same arrays, on the same batches, PyTorch and MXNet take the same Adam steps: their per-step
    losses agree to float32 rounding (a twin with a gate order, a bias or a gradient scale of its own would
    part at the first steps). The check itself sees a small change of the learning rate."""
    twin_check = load_tool("twin_check")

    same = twin_check.check(TINY_TWIN_SPEC)
    assert len(same["losses"]) == 3  # PyTorch, MXNet and JAX (its own environment, numpy 2)
    for arm, answer in same["against_first"].items():
        assert answer["first_apart"] is None and max(answer["relative_difference"]) < 1e-3, arm
    jax_arm = next(a for a in same["losses"] if get_study("imdb").arm(a).framework == "jax")
    assert max(same["against_first"][jax_arm]["relative_difference"][:20]) < 1e-4  # issue 25's bar
    torch_arm = ARMS[0]
    other = twin_check.run_arm(torch_arm, {**TINY_TWIN_SPEC, "lr": 0.012})
    moved = twin_check.compare(same["losses"][torch_arm], other)
    assert moved["first_apart"] is not None and moved["first_apart"] <= 3
