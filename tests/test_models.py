"""The IMDB twin backends at run time: same parameter count, same init ranges, one framework per process (their
public names are checked in ``test_twins``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
print(json.dumps({"params": be.count_parameters(model), "loss": loss, "seen": seen, "acc": acc,
                  "emb_absmax": float(abs(emb).max()), "framework": be.FRAMEWORK,
                  "frameworks": sorted(m for m in ("torch", "mxnet") if m in sys.modules)}))
"""
STUDY = get_study("imdb")
ARMS = (STUDY.reference_arm("torch"), STUDY.reference_arm("mxnet"))


@pytest.fixture(scope="module")
def probes():
    env_threads = {"OMP_NUM_THREADS": "2"}
    out = {}
    for arm in ARMS:
        proc = subprocess.run([sys.executable, "-c", PROBE, arm], capture_output=True, text=True,
                              env={**os.environ, **env_threads}, timeout=300)
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
