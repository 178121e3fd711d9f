"""PyTorch backend: ``gluonts.torch.DeepAREstimator`` (Lightning), same public names as ``fwbench.forecast.mxnet``."""

from __future__ import annotations

import importlib.abc
import logging
import random
import sys
import tempfile
import time

import numpy as np
import torch

from ..frameworks import torch as torch_facts
from . import HYPERPARAMETERS, EpochRecord

FRAMEWORK = "torch"
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


class _NoMXNet(importlib.abc.MetaPathFinder):
    """gluonts 0.17's ``forecast_generator.make_predictions`` does ``import mxnet`` on every batch, for any predictor,
    to check whether the network is a Gluon block; where MXNet is installed that loads it into a PyTorch trial
    (breaking the one-framework-per-process rule and adding its import time to the prediction timing). In this
    process that import fails, so gluonts takes its ``except ImportError`` path and calls the PyTorch network."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "mxnet" or fullname.startswith("mxnet."):
            raise ImportError("fwbench: MXNet is not importable in a PyTorch trial process")
        return None


if "mxnet" not in sys.modules and not any(isinstance(f, _NoMXNet) for f in sys.meta_path):
    sys.meta_path.insert(0, _NoMXNet())

# Imported with the backend, not inside make_estimator: the import of gluonts.torch and Lightning (seconds) must
# not land inside the timed training (the harness benchmark found it there: +380 % on a short fit).
from gluonts.torch import DeepAREstimator  # noqa: E402
from gluonts.torch.distributions import StudentTOutput  # noqa: E402


def _lightning():
    """The Lightning that gluonts.torch trains with: ``lightning.pytorch`` (gluonts 0.17) or ``pytorch_lightning``
    (gluonts 0.13.3, the post's, in the ``gluonts-0.13`` environment)."""
    from gluonts.torch.model import estimator

    return estimator.pl


def framework_info() -> dict:
    import gluonts

    return {**torch_facts.info(), "gluonts_version": gluonts.__version__, "lightning_version": _lightning().__version__}


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def configure_threads(n: int | None) -> None:
    """``n`` intra-op threads; None keeps PyTorch's own choice (the post's conditions: no thread setting)."""
    if n is not None:
        torch.set_num_threads(n)
    for name in ("lightning", "lightning.pytorch", "pytorch_lightning", "gluonts"):
        logging.getLogger(name).setLevel(logging.WARNING)


def synchronize() -> None:
    """CPU PyTorch runs eagerly: nothing is pending when a call returns."""


def onednn(enabled: bool):
    """Context in which oneDNN is on or off for this process's CPU ops (the LSTM's included)."""
    return torch.backends.mkldnn.flags(enabled=enabled)


def onednn_enabled() -> bool:
    return bool(torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled)


def _epoch_callback(records: list[EpochRecord]):
    pl = _lightning()

    class EpochLog(pl.Callback):
        def on_train_epoch_start(self, trainer, pl_module):
            self.t0 = time.perf_counter()

        def on_train_epoch_end(self, trainer, pl_module):
            loss = trainer.callback_metrics.get("train_loss")
            records.append(
                EpochRecord(
                    trainer.current_epoch,
                    float(loss) if loss is not None else float("nan"),
                    time.perf_counter() - self.t0,
                )
            )

    return EpochLog()


def make_estimator(
    *,
    freq: str,
    prediction_length: int,
    context_length: int,
    lags_seq: list[int],
    epochs: int,
    num_batches_per_epoch: int,
    root_dir: str,
    records: list[EpochRecord] | None = None,
    **_backend_options,
):
    """DeepAR with the protocol's hyperparameters; Lightning writes only under ``root_dir`` (no logger)."""
    hp = HYPERPARAMETERS
    callbacks = [_epoch_callback(records)] if records is not None else []
    return DeepAREstimator(
        freq=freq,
        prediction_length=prediction_length,
        context_length=context_length,
        lags_seq=lags_seq,
        num_layers=hp["num_layers"],
        hidden_size=hp["hidden_size"],
        dropout_rate=hp["dropout_rate"],
        lr=hp["learning_rate"],
        weight_decay=hp["weight_decay"],
        distr_output=StudentTOutput(),
        scaling=hp["scaling"],
        num_parallel_samples=hp["num_parallel_samples"],
        batch_size=hp["batch_size"],
        num_batches_per_epoch=num_batches_per_epoch,
        trainer_kwargs={
            "max_epochs": epochs,
            "gradient_clip_val": hp["gradient_clip"],
            "accelerator": "cpu",
            "devices": 1,
            "logger": False,
            "enable_progress_bar": False,
            "enable_model_summary": False,
            "default_root_dir": root_dir,
            "callbacks": callbacks,
        },
    )


def train(train_data: list[dict], **estimator_kwargs):
    """(predictor, per-epoch records); checkpoints go to a temporary directory that is removed afterwards."""
    records: list[EpochRecord] = []
    with tempfile.TemporaryDirectory(prefix="fwbench-lightning-") as root:
        estimator = make_estimator(root_dir=root, records=records, **estimator_kwargs)
        predictor = estimator.train(train_data)  # GluonTS defaults: no data caching
    return predictor, records


def predict(predictor, data: list[dict], hybridize: bool = False) -> list:
    """Forecasts of every window; ``hybridize`` is an MXNet (Gluon) notion: asking for it here is an error."""
    if hybridize:
        raise ValueError("hybridize=True: a gluonts.torch predictor has no Gluon network to hybridize")
    forecasts = list(predictor.predict(data))
    synchronize()
    return forecasts


def predictor_hybridized(predictor) -> bool:
    """Always False: PyTorch runs the prediction network eagerly (twin of the MXNet backend's check)."""
    return False


def time_data_pipeline(train_data: list[dict], n_batches: int, **estimator_kwargs) -> float:
    """Seconds to draw ``n_batches`` training batches through the estimator's own transformation and loader,
    without the network: the data-pipeline share of training."""
    with tempfile.TemporaryDirectory(prefix="fwbench-lightning-") as root:
        est = make_estimator(root_dir=root, **estimator_kwargs)
        t0 = time.perf_counter()
        transformed = est.create_transformation().apply(train_data, is_train=True)
        module = est.create_lightning_module()
        loader = est.create_training_data_loader(transformed, module)
        drawn = 0
        while drawn < n_batches:
            for _batch in loader:
                drawn += 1
                if drawn >= n_batches:
                    break
        return time.perf_counter() - t0
