"""The 2018 post's deployment proposal, measured: PyTorch -> ONNX -> (onnxruntime, MXNet), each step a trial in its
own process so no two runtimes share a timed process (the study's arms, ``arm_field="step"``; their code is in
``onnx_steps``, the files they share are handled by ``onnx_artifacts``):

- ``torch-export`` (torch + onnx): trains the IMDB sentiment LSTM briefly on a subsample and exports it twice,
  ``model.onnx`` (``opset``, the file a deployment would ship) and ``model-legacy.onnx`` (opset 11, initializers
  as graph inputs: what MXNet 1.9.1's importer, written for ONNX IR 3, expects), beside the test tokens, labels and
  PyTorch's logits; it times PyTorch inference too.
- ``onnxruntime`` (onnxruntime only): runs ``model.onnx``; parity with PyTorch's logits; latency.
- ``mxnet-import`` (mxnet + onnx): ``mx.contrib.onnx.import_model`` on the legacy file (then on ``model.onnx``);
  parity and latency where the import works.

A step that cannot work is stored as done with ``step_status`` ``step_failed`` (``unavailable`` when a package is
missing) and the exact error. Artifacts live in ``<FWBENCH_ARTIFACTS or the results store's folder/artifacts>/onnx/
<export trial id>/``; a runtime step that finds them missing rebuilds them in a separate export process first
(``artifacts_rebuilt``). Latency: per batch size, ``warmup`` calls (stored, excluded), then ``repeats`` timed calls
on the first rows of the test subsample (cycled when the batch is larger).
"""

from __future__ import annotations

from ..data import imdb as imdb_data
from . import options as opt
from .imdb_profiles import MODEL  # the IMDB study's model sizes
from .onnx_steps import run_trial
from .registry import Arm, Study, register

_TORCH = "fwbench.sentiment.torch"
ARM_TABLE = (
    Arm("torch-export", "torch", _TORCH, "export", "PyTorch (exports ONNX; torch inference)", "#1f77b4"),
    Arm("onnxruntime", "onnxruntime", None, "runtime", "ONNX Runtime (CPU provider)", "#2ca02c"),
    Arm("mxnet-import", "mxnet", None, "onnx-import", "MXNet (mx.contrib.onnx import)", "#d62728"),
)
STEPS = tuple(arm.name for arm in ARM_TABLE)
LEGACY_OPSET = 11

_QUICK = {
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
}
PROFILES = {
    "smoke": {**_QUICK, "n_train": 64, "n_test": 64, "train_batch": 32, "batch_sizes": [1, 16], "repeats": 2},
    "quick": _QUICK,
    # the paper profile: A10 asks whether the model crosses (each step works or fails), not how fast, so
    # quick's scale already answers it
    "paper": dict(_QUICK),
    "full": {**_QUICK, "n_train": 25000, "n_test": 5000, "epochs": 3, "warmup": 3, "repeats": 20},
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


def export_config(options: dict) -> dict:
    return {
        "step": "torch-export",
        "model": dict(MODEL),
        "encoding": vars(imdb_data.Encoding(num_words=MODEL["num_words"], maxlen=options["seq_len"])).copy(),
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
    runtime = {k: export[k] for k in ("batch_sizes", "warmup", "repeats", "threads")}
    return [
        export if step == "torch-export" else {"step": step, "export": export, **runtime}
        for step in STEPS
        if step in options["steps"]
    ]


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
        preflight=lambda options: imdb_data.check_source(),  # the IMDB source, as the imdb study checks it
        arms=ARM_TABLE,
        arm_field="step",
        reference={"torch": "torch-export", "mxnet": "mxnet-import"},
        code=("fwbench.studies.onnx_artifacts", "fwbench.sentiment", "fwbench.data.imdb", "fwbench.measure"),
        figure_prefix="onnx_",
    )
)
