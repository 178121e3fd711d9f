"""The 2018 post's deployment proposal, measured: PyTorch -> ONNX -> (onnxruntime, MXNet).

Three steps, each a trial in its own process, so no two runtimes share a timed process:

- ``torch-export`` (imports torch + onnx): trains the IMDB sentiment LSTM (``fwbench.sentiment.torch``, 5000 words,
  128/128, 2 classes) briefly on a subsample, exports it with ``torch.onnx.export(dynamo=False)`` twice --
  ``model.onnx`` (``opset``, the file a deployment would ship) and ``model-legacy.onnx`` (opset 11, initializers
  listed as graph inputs: the form MXNet 1.9.1's importer, written for ONNX IR 3, expects) -- and writes the
  test tokens, labels and PyTorch's logits next to them. It times PyTorch inference (``no_grad``) too.
- ``onnxruntime`` (imports onnxruntime only): runs ``model.onnx``; parity with PyTorch's logits; latency.
- ``mxnet-import`` (imports mxnet + onnx): ``mx.contrib.onnx.import_model`` on the legacy file (then on
  ``model.onnx``); parity and latency where the import works. Where a step cannot work, the trial is stored as
  done with ``step_status`` ``step_failed`` (or ``unavailable`` when a package is missing) and the exact error.

The steps are the study's arms (``arm_field="step"``): their code is in ``onnx_steps``, the files they share
are handled by ``onnx_artifacts``. Artifacts live in
``<FWBENCH_ARTIFACTS or the results store's folder/artifacts>/onnx/<export trial id>/``. A runtime step that
finds them missing (another machine, a cleaned folder) rebuilds them by running the export step in a separate
process first (recorded as ``artifacts_rebuilt``).
Latency: per batch size, ``warmup`` calls (stored, excluded) then ``repeats`` timed calls on the first rows
of the test subsample (cycled when the batch is larger than the subsample).
"""

from __future__ import annotations

from . import options as opt
from .onnx_steps import run_trial
from .registry import Arm, Study, register

ARM_TABLE = (
    Arm(
        "torch-export",
        "torch",
        "fwbench.sentiment.torch",
        "export",
        "PyTorch (exports ONNX; torch inference)",
        "#1f77b4",
    ),
    Arm("onnxruntime", "onnxruntime", None, "runtime", "ONNX Runtime (CPU provider)", "#2ca02c"),
    Arm("mxnet-import", "mxnet", None, "onnx-import", "MXNet (mx.contrib.onnx import)", "#d62728"),
)
STEPS = tuple(arm.name for arm in ARM_TABLE)
MODEL = {"num_words": 5000, "embed_dim": 128, "hidden_size": 128, "num_classes": 2}
LEGACY_OPSET = 11

PROFILES = {
    "smoke": {
        "steps": list(STEPS),
        "seq_len": 500,
        "n_train": 64,
        "n_test": 64,
        "epochs": 1,
        "train_batch": 32,
        "batch_sizes": [1, 16],
        "warmup": 1,
        "repeats": 2,
        "threads": 2,
        "opset": 17,
    },
    "quick": {
        "steps": list(STEPS),
        "seq_len": 500,
        "n_train": 512,
        "n_test": 256,
        "epochs": 1,
        "train_batch": 64,
        "batch_sizes": [1, 256],
        "warmup": 1,
        "repeats": 5,
        "threads": 2,
        "opset": 17,
    },
    # the paper profile: A10 asks whether the model crosses (each step works or fails), not how fast, so
    # quick's scale already answers it
    "paper": {
        "steps": list(STEPS),
        "seq_len": 500,
        "n_train": 512,
        "n_test": 256,
        "epochs": 1,
        "train_batch": 64,
        "batch_sizes": [1, 256],
        "warmup": 1,
        "repeats": 5,
        "threads": 2,
        "opset": 17,
    },
    "full": {
        "steps": list(STEPS),
        "seq_len": 500,
        "n_train": 25000,
        "n_test": 5000,
        "epochs": 3,
        "train_batch": 64,
        "batch_sizes": [1, 256],
        "warmup": 3,
        "repeats": 20,
        "threads": 2,
        "opset": 17,
    },
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
    return {
        "step": "torch-export",
        "model": dict(MODEL),
        "encoding": encoding,
        "n_train": options["n_train"],
        "n_test": options["n_test"],
        "epochs": options["epochs"],
        "train_batch": options["train_batch"],
        "lr": 1e-3,
        "seed": SEED,
        "opset": options["opset"],
        "legacy_opset": LEGACY_OPSET,
        "batch_sizes": list(options["batch_sizes"]),
        "warmup": options["warmup"],
        "repeats": options["repeats"],
        "threads": options["threads"],
    }


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
            configs.append(
                {
                    "step": step,
                    "export": export,
                    "batch_sizes": export["batch_sizes"],
                    "warmup": export["warmup"],
                    "repeats": export["repeats"],
                    "threads": export["threads"],
                }
            )
    return configs


def describe(config: dict) -> str:
    export = config if config["step"] == "torch-export" else config["export"]
    return (
        f"onnx {config['step']:<12} seq={export['encoding']['maxlen']} n_train={export['n_train']} "
        f"batches={config['batch_sizes']}"
    )


STUDY = register(
    Study(
        name="onnx",
        title="PyTorch -> ONNX -> onnxruntime / MXNet (the 2018 post's deployment proposal)",
        module=__name__,
        profiles=PROFILES,
        options=OPTIONS,
        grid=grid,
        run_trial=run_trial,
        describe=describe,
        preflight=preflight,
        arms=ARM_TABLE,
        arm_field="step",
        reference={"torch": "torch-export", "mxnet": "mxnet-import"},
        code=("fwbench.studies.onnx_artifacts", "fwbench.sentiment", "fwbench.data.imdb", "fwbench.measure"),
        figure_prefix="onnx_",
    )
)
