"""The 2018 post's deployment proposal, measured: PyTorch -> ONNX -> (onnxruntime, MXNet).

Three steps, each a trial in its own process, so no two runtimes share a timed process:

- ``export`` (imports torch + onnx): trains the IMDB sentiment LSTM (``fwbench.sentiment.torch``, 5000 words,
  128/128, 2 classes) briefly on a subsample, exports it with ``torch.onnx.export(dynamo=False)`` twice --
  ``model.onnx`` (``opset``, the file a deployment would ship) and ``model-legacy.onnx`` (opset 11, initializers
  listed as graph inputs: the form MXNet 1.9.1's importer, written for ONNX IR 3, expects) -- and writes the
  test tokens, labels and PyTorch's logits next to them. It times PyTorch inference (``no_grad``) too.
- ``ort`` (imports onnxruntime only): runs ``model.onnx``; parity with PyTorch's logits; latency.
- ``mxnet`` (imports mxnet + onnx): ``mx.contrib.onnx.import_model`` on the legacy file (then on
  ``model.onnx``); parity and latency where the import works. Where a step cannot work, the trial is stored as
  done with ``step_status`` ``step_failed`` (or ``unavailable`` when a package is missing) and the exact error.

Artifacts live in ``<FWBENCH_ARTIFACTS or the results store's folder/artifacts>/onnx/<export trial id>/``. A
runtime step that finds them missing (another machine, a cleaned folder) rebuilds them by running the export
step in a separate process first (recorded as ``artifacts_rebuilt``).
Latency: per batch size, ``warmup`` calls (stored, excluded) then ``repeats`` timed calls on the first rows
of the test subsample (cycled when the batch is larger than the subsample).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from . import options as opt
from .registry import Arm, Study, register

STEPS = ("torch-export", "onnxruntime", "mxnet-import")
ARM_TABLE = (
    Arm("torch-export", "torch", "fwbench.sentiment.torch", "export", "PyTorch (exports ONNX; torch inference)",
        "#1f77b4"),
    Arm("onnxruntime", "onnxruntime", None, "runtime", "ONNX Runtime (CPU provider)", "#2ca02c"),
    Arm("mxnet-import", "mxnet", None, "onnx-import", "MXNet (mx.contrib.onnx import)", "#d62728"),
)
MODEL = {"num_words": 5000, "embed_dim": 128, "hidden_size": 128, "num_classes": 2}
LEGACY_OPSET = 11

PROFILES = {
    "smoke": {"steps": list(STEPS), "seq_len": 500, "n_train": 64, "n_test": 64, "epochs": 1, "train_batch": 32,
              "batch_sizes": [1, 16], "warmup": 1, "repeats": 2, "threads": 2, "opset": 17},
    "quick": {"steps": list(STEPS), "seq_len": 500, "n_train": 512, "n_test": 256, "epochs": 1,
              "train_batch": 64, "batch_sizes": [1, 256], "warmup": 1, "repeats": 5, "threads": 2, "opset": 17},
    "full": {"steps": list(STEPS), "seq_len": 500, "n_train": 25000, "n_test": 5000, "epochs": 3,
             "train_batch": 64, "batch_sizes": [1, 256], "warmup": 3, "repeats": 20, "threads": 2, "opset": 17},
}

OPTIONS = {
    "steps": opt.list_of(opt.string, STEPS),
    "seq_len": opt.int_range(1, 500),
    "n_train": opt.int_range(2, 25000),
    "n_test": opt.int_range(1, 25000),
    "epochs": opt.int_range(0, 100),
    "train_batch": opt.int_range(1, 4096),
    "batch_sizes": opt.list_of(opt.int_range(1, 4096)),
    "warmup": opt.int_range(0, 100),
    "repeats": opt.int_range(1, 1000),
    "threads": opt.int_range(1, 256),
    "opset": opt.int_range(9, 23),
}

SEED = 42


def preflight(options: dict) -> None:
    from .imdb import preflight as imdb_preflight

    imdb_preflight(options)


def export_config(options: dict) -> dict:
    from ..data.imdb import Encoding

    encoding = vars(Encoding(num_words=MODEL["num_words"], maxlen=options["seq_len"])).copy()
    return {"step": "torch-export", "model": dict(MODEL), "encoding": encoding, "n_train": options["n_train"],
            "n_test": options["n_test"], "epochs": options["epochs"], "train_batch": options["train_batch"],
            "lr": 1e-3, "seed": SEED, "opset": options["opset"], "legacy_opset": LEGACY_OPSET,
            "batch_sizes": list(options["batch_sizes"]), "warmup": options["warmup"],
            "repeats": options["repeats"], "threads": options["threads"]}


def grid(options: dict) -> list[dict]:
    """The export step, then the runtimes that read its files (the runner runs them in this order)."""
    export = export_config(options)
    configs = []
    for step in STEPS:
        if step not in options["steps"]:
            continue
        if step == "torch-export":
            configs.append(export)
        else:
            configs.append({"step": step, "export": export, "batch_sizes": export["batch_sizes"],
                            "warmup": export["warmup"], "repeats": export["repeats"], "threads": export["threads"]})
    return configs


def describe(config: dict) -> str:
    export = config if config["step"] == "torch-export" else config["export"]
    return (f"onnx {config['step']:<12} seq={export['encoding']['maxlen']} n_train={export['n_train']} "
            f"batches={config['batch_sizes']}")


# -- artifacts ------------------------------------------------------------------------------------------------
def artifacts_root() -> Path:
    from ..paths import results_path

    env = os.environ.get("FWBENCH_ARTIFACTS")
    return Path(env).expanduser() if env else results_path().parent / "artifacts"


def artifacts_dir(export: dict) -> Path:
    """One folder per export config and code version (files made by other code are never reused)."""
    from ..store import trial_id

    return artifacts_root() / "onnx" / trial_id("onnx", export, STUDY.code_version())


ARTIFACT_FILES = ("model.onnx", "model-legacy.onnx", "tokens.npy", "labels.npy", "torch_logits.npy", "meta.json")


def _have_artifacts(directory: Path) -> bool:
    return all((directory / name).exists() for name in ARTIFACT_FILES)


def _ensure_artifacts(export: dict, report=None) -> bool:
    """The export step's files; rebuilt in a separate (torch) process when missing. True if rebuilt."""
    directory = artifacts_dir(export)
    if _have_artifacts(directory):
        return False
    if report:
        report(f"artifacts missing in {directory}: running the export step in a separate process")
    proc = subprocess.run([sys.executable, "-m", "fwbench.studies.onnx_steps", "export", json.dumps(export)],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0 or not _have_artifacts(directory):
        raise RuntimeError(f"could not rebuild the ONNX artifacts in {directory}: {proc.stderr[-2000:]}")
    return True


def run_trial(config: dict, report=None) -> dict:
    from . import onnx_steps

    step = {"torch-export": onnx_steps.run_export, "onnxruntime": onnx_steps.run_ort,
            "mxnet-import": onnx_steps.run_mxnet}[config["step"]]
    return step(config, report)


STUDY = register(Study(
    name="onnx", title="PyTorch -> ONNX -> onnxruntime / MXNet (the 2018 post's deployment proposal)",
    module=__name__, profiles=PROFILES, options=OPTIONS, grid=grid, run_trial=run_trial, describe=describe,
    preflight=preflight, arms=ARM_TABLE, arm_field="step", reference={"torch": "torch-export", "mxnet": "mxnet-import"},
    code=("fwbench.studies.onnx_steps", "fwbench.sentiment", "fwbench.data.imdb"), figure_prefix="onnx_"))
