"""MXNet backend: ``gluonts.mx.DeepAREstimator`` (Gluon trainer), same public names as ``fwbench.forecast.torch``.

Backend option ``hybridize`` (default True, the gluonts default): the *training* network is hybridized; False runs
it imperatively (the arm ``mxnet-imperative``). Forecasting is a separate network: gluonts 0.17's
``DeepAREstimator.create_predictor`` builds a fresh ``DeepARPredictionNetwork``, copies the trained weights into it
and wraps it in a ``RepresentableBlockPredictor`` without hybridizing it, so by default forecasting runs
imperatively whatever ``hybridize`` says. ``predict(..., hybridize=True)`` hybridizes that prediction network
first (``prediction_net.hybridize(active=True)``, what ``GluonPredictor.hybridize`` does; the graph is built on
the first forecast batch, inside the timed call); ``predictor_hybridized`` says whether a cached graph ran.
"""

from __future__ import annotations

import random
import time

import mxnet as mx
import numpy as np

# Imported with the backend, not inside make_estimator, so the import is not part of the timed training.
from gluonts.mx import DeepAREstimator
from gluonts.mx.distribution import StudentTOutput
from gluonts.mx.trainer import Trainer

from ..frameworks import mxnet as mxnet_facts
from . import HYPERPARAMETERS, EpochRecord

FRAMEWORK = "mxnet"
__all__ = [
    "FRAMEWORK",
    "framework_info",
    "set_seed",
    "configure_threads",
    "synchronize",
    "make_estimator",
    "train",
    "predict",
    "predictor_hybridized",
    "time_data_pipeline",
    "onednn",
    "onednn_enabled",
]
# oneDNN is fixed at import by these (the study sets both before importing this module; 0 = off)
ONEDNN_ENV = ("MXNET_MKLDNN_ENABLED", "MXNET_USE_MKLDNN_RNN")


def framework_info() -> dict:
    import gluonts

    return {**mxnet_facts.info(), "gluonts_version": gluonts.__version__}


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    mx.random.seed(seed)


def configure_threads(n: int | None) -> None:
    """MXNet reads OMP_NUM_THREADS (set by the runner before this process started, or left unset for None: MXNet's
    own choice); nothing to do at run time."""
    import logging

    logging.getLogger("gluonts").setLevel(logging.WARNING)


def synchronize() -> None:
    mx.nd.waitall()


def onednn(enabled: bool):
    """MXNet fixes oneDNN use at import (``ONEDNN_ENV``): this only checks the process matches."""
    return mxnet_facts.onednn(enabled, ONEDNN_ENV)


def onednn_enabled() -> bool:
    return mxnet_facts.onednn_enabled(ONEDNN_ENV)


def _epoch_callback(records: list[EpochRecord]):
    from gluonts.mx.trainer.callback import Callback

    class EpochLog(Callback):
        def on_train_epoch_start(self, training_network) -> None:
            self.t0 = time.perf_counter()

        def on_train_epoch_end(
            self, epoch_no, epoch_loss, training_network, trainer, best_epoch_info=None, ctx=None
        ) -> bool:
            mx.nd.waitall()
            records.append(EpochRecord(int(epoch_no), float(epoch_loss), time.perf_counter() - self.t0))
            return True

    return EpochLog()


def make_estimator(
    *,
    freq: str,
    prediction_length: int,
    context_length: int,
    lags_seq: list[int],
    epochs: int,
    num_batches_per_epoch: int,
    records: list[EpochRecord] | None = None,
    hybridize: bool = True,
    **_unused,
):
    hp = HYPERPARAMETERS
    trainer = Trainer(
        ctx=mx.cpu(),
        epochs=epochs,
        num_batches_per_epoch=num_batches_per_epoch,
        learning_rate=hp["learning_rate"],
        clip_gradient=hp["gradient_clip"],
        weight_decay=hp["weight_decay"],
        hybridize=hybridize,
        callbacks=[_epoch_callback(records)] if records is not None else None,
    )
    return DeepAREstimator(
        freq=freq,
        prediction_length=prediction_length,
        context_length=context_length,
        lags_seq=lags_seq,
        trainer=trainer,
        num_layers=hp["num_layers"],
        num_cells=hp["hidden_size"],
        dropout_rate=hp["dropout_rate"],
        distr_output=StudentTOutput(),
        scaling=hp["scaling"],
        num_parallel_samples=hp["num_parallel_samples"],
        batch_size=hp["batch_size"],
    )


def train(train_data: list[dict], **estimator_kwargs):
    records: list[EpochRecord] = []
    estimator = make_estimator(records=records, **estimator_kwargs)
    predictor = estimator.train(train_data)  # GluonTS defaults: no data caching
    synchronize()
    return predictor, records


def predict(predictor, data: list[dict], hybridize: bool = False) -> list:
    """Forecasts of every window (synchronized); ``hybridize``: hybridize the prediction network first."""
    if hybridize:
        predictor.prediction_net.hybridize(active=True)
    forecasts = list(predictor.predict(data))
    synchronize()
    return forecasts


def predictor_hybridized(predictor) -> bool:
    """Whether the predictor's network ran as a hybridized graph (active and a cached graph was built)."""
    net = predictor.prediction_net
    return bool(getattr(net, "_active", False) and getattr(net, "_cached_op", None) is not None)


def time_data_pipeline(train_data: list[dict], n_batches: int, **estimator_kwargs) -> float:
    """Seconds to draw ``n_batches`` training batches through the estimator's own transformation and loader,
    without the network: the data-pipeline share of training."""
    est = make_estimator(**estimator_kwargs)
    t0 = time.perf_counter()
    transformed = est.create_transformation().apply(train_data, is_train=True)
    loader = est.create_training_data_loader(transformed)
    for drawn, _batch in enumerate(loader, start=1):
        if drawn >= n_batches:
            break
    synchronize()
    return time.perf_counter() - t0
