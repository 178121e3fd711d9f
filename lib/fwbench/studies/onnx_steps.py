"""The three steps of the ``onnx`` study (``fwbench.studies.onnx`` declares it): each runs in its own trial
process. ``run_export`` imports torch + onnx, ``run_ort`` onnxruntime only, ``run_mxnet`` mxnet + onnx.

``python -m fwbench.studies.onnx_steps export CONFIG_JSON`` rebuilds the export artifacts only (a runtime step
whose artifacts are missing runs it in a separate process).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
import traceback
from pathlib import Path

from .onnx_artifacts import _ensure_artifacts, artifacts_dir
from .registry import get_study


def _latency_inputs(tokens, batch: int):
    import numpy as np

    rows = np.arange(batch) % len(tokens)
    return np.ascontiguousarray(tokens[rows])


def _time_batches(call, synchronize, tokens, config) -> tuple[list, dict]:
    """(measurements, summary) of ``call(x)`` per batch size: warm-up and timed seconds."""
    from ..measure import time_calls

    measurements, summary = [], {}
    for batch in config["batch_sizes"]:
        x = _latency_inputs(tokens, batch)
        warm, timed = time_calls(lambda inputs=x: call(inputs), synchronize, config["warmup"], config["repeats"])
        measurements += [(i, f"warmup_s_b{batch}", v) for i, v in enumerate(warm)]
        measurements += [(i, f"latency_s_b{batch}", v) for i, v in enumerate(timed)]
        summary[f"median_latency_ms_b{batch}"] = 1e3 * statistics.median(timed)
    return measurements, summary


def _parity(logits, directory: Path) -> dict:
    import numpy as np

    reference = np.load(directory / "torch_logits.npy")
    labels = np.load(directory / "labels.npy")
    logits = np.asarray(logits, dtype=np.float32)
    return {
        "max_abs_diff": float(np.abs(logits - reference).max()),
        "argmax_agreement": float((logits.argmax(1) == reference.argmax(1)).mean()),
        "test_acc": float((logits.argmax(1) == labels).mean()),
        "torch_test_acc": float((reference.argmax(1) == labels).mean()),
        "n_compared": int(len(labels)),
    }


def _in_chunks(call, tokens, size: int = 256):
    import numpy as np

    return np.concatenate([np.asarray(call(tokens[i : i + size])) for i in range(0, len(tokens), size)])


def _unavailable(package: str, exc: BaseException, extra: dict | None = None) -> dict:
    return {
        "summary": {
            "step_status": "unavailable",
            "error": f"{type(exc).__name__}: {exc}",
            "reason": f"{package} is not installed in this environment (pip install -r requirements.lock)",
            **(extra or {}),
        },
        "measurements": [],
        "provenance": {},
    }


# -- the three steps --------------------------------------------------------------------------------------------
def run_export(config: dict, report=None) -> dict:
    import numpy as np

    try:
        import onnx
    except ImportError as exc:
        return _unavailable("onnx", exc)
    import torch

    from ..data.imdb import Encoding, load_imdb
    from ..sentiment import torch as be

    be.configure_threads(config["threads"])
    be.set_seed(config["seed"])
    data = load_imdb(encoding=Encoding(**config["encoding"])).subsample(config["n_train"], config["n_test"])
    m = config["model"]
    model = be.build_model(m["num_words"], m["embed_dim"], m["hidden_size"], m["num_classes"])
    trainer = be.make_trainer(model, config["lr"])
    loader = be.make_loader(data.x_train, data.y_train, config["train_batch"], 0, shuffle=True, seed=config["seed"])
    measurements = []
    for epoch in range(config["epochs"]):
        t0 = time.perf_counter()
        loss, _ = be.train_one_epoch(model, trainer, loader)
        measurements += [(epoch, "train_loss", loss), (epoch, "train_time_s", time.perf_counter() - t0)]
        if report:
            report(f"epoch {epoch + 1}/{config['epochs']}: loss={loss:.4f}")
    model.eval()
    tokens = data.x_test.astype(np.int64)

    def torch_logits(x):
        with torch.no_grad():
            return model(torch.from_numpy(x)).numpy()

    logits = _in_chunks(torch_logits, tokens)
    directory = artifacts_dir({k: v for k, v in config.items()})
    tmp = directory.with_name(directory.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    example = torch.from_numpy(tokens[:1])
    common = dict(
        input_names=["tokens"],
        output_names=["logits"],
        dynamo=False,
        dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}},
    )
    t0 = time.perf_counter()
    torch.onnx.export(model, (example,), str(tmp / "model.onnx"), opset_version=config["opset"], **common)
    export_s = time.perf_counter() - t0
    torch.onnx.export(
        model,
        (example,),
        str(tmp / "model-legacy.onnx"),
        opset_version=config["legacy_opset"],
        keep_initializers_as_inputs=True,
        **common,
    )
    onnx.checker.check_model(str(tmp / "model.onnx"))
    ops = sorted({n.op_type for n in onnx.load(str(tmp / "model.onnx")).graph.node})
    legacy_ops = sorted({n.op_type for n in onnx.load(str(tmp / "model-legacy.onnx")).graph.node})
    np.save(tmp / "tokens.npy", tokens)
    np.save(tmp / "labels.npy", data.y_test.astype(np.int64))
    np.save(tmp / "torch_logits.npy", logits.astype(np.float32))
    meta = {
        "opset": config["opset"],
        "legacy_opset": config["legacy_opset"],
        "ops": ops,
        "legacy_ops": legacy_ops,
        "torch_version": torch.__version__,
        "onnx_version": onnx.__version__,
    }
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    shutil.rmtree(directory, ignore_errors=True)
    tmp.replace(directory)

    timing, latency = _time_batches(torch_logits, be.synchronize, tokens, config)
    acc = float((logits.argmax(1) == data.y_test).mean())
    return {
        "summary": {
            "step_status": "ok",
            "runtime": "torch",
            "n_parameters": be.count_parameters(model),
            "test_acc": acc,
            "export_s": export_s,
            "onnx_ops": ops,
            "legacy_onnx_ops": legacy_ops,
            "artifacts": str(directory),
            "model_onnx_bytes": (directory / "model.onnx").stat().st_size,
            **latency,
        },
        "measurements": measurements + timing,
        "provenance": {
            **be.framework_info(),
            "onnx_version": onnx.__version__,
            "dataset_source": os.path.basename(data.source),
            "dataset_checksum": data.checksum,
        },
    }


def run_ort(config: dict, report=None) -> dict:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        return _unavailable("onnxruntime", exc)
    import numpy as np

    rebuilt = _ensure_artifacts(config["export"], report)
    directory = artifacts_dir(config["export"])
    options = ort.SessionOptions()
    options.intra_op_num_threads = config["threads"]
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"])
    tokens = np.load(directory / "tokens.npy")

    def run(x):
        return session.run(None, {"tokens": x})[0]

    parity = _parity(_in_chunks(run, tokens), directory)
    timing, latency = _time_batches(run, lambda: None, tokens, config)
    if report:
        report(
            f"onnxruntime: max |logit diff| {parity['max_abs_diff']:.2e}, agreement {parity['argmax_agreement']:.3f}"
        )
    return {
        "summary": {"step_status": "ok", "runtime": "onnxruntime", **parity, **latency, "artifacts_rebuilt": rebuilt},
        "measurements": timing,
        "provenance": {
            "framework": "onnxruntime",
            "framework_version": ort.__version__,
            "providers": session.get_providers(),
            "intra_op_num_threads": config["threads"],
            "numpy_version": np.__version__,
        },
    }


def run_mxnet(config: dict, report=None) -> dict:
    try:
        import onnx
    except ImportError as exc:
        return _unavailable("onnx", exc, {"runtime": "mxnet"})
    import mxnet as mx
    import numpy as np

    from ..vision import mxnet as vbe  # framework_info only

    rebuilt = _ensure_artifacts(config["export"], report)
    directory = artifacts_dir(config["export"])
    info = {**vbe.framework_info(), "onnx_version": onnx.__version__}
    try:
        from mxnet.contrib.onnx.onnx2mx import _import_helper

        supported = set(_import_helper._convert_map)
    except ImportError:
        supported = set()
    attempts, imported = [], None
    for name in ("model-legacy.onnx", "model.onnx"):
        ops = sorted({n.op_type for n in onnx.load(str(directory / name)).graph.node})
        try:
            sym, arg_params, aux_params = mx.contrib.onnx.import_model(str(directory / name))
        except Exception as exc:  # the importer's own error, recorded verbatim
            attempts.append(
                {
                    "file": name,
                    "error": f"{type(exc).__name__}: {exc}",
                    "unsupported_ops": [op for op in ops if op not in supported],
                    "traceback_tail": traceback.format_exc().strip().splitlines()[-3:],
                }
            )
            continue
        imported = (name, sym, arg_params, aux_params)
        break
    if imported is None:
        first = attempts[0]
        missing = sorted({op for a in attempts for op in a["unsupported_ops"]})
        if report:
            report(f"MXNet ONNX import failed: {first['error']}")
        return {
            "summary": {
                "step_status": "step_failed",
                "runtime": "mxnet",
                "failed_at": "mx.contrib.onnx.import_model",
                "error": first["error"],
                "file": first["file"],
                "unsupported_ops": missing,
                "reason": (
                    f"MXNet {mx.__version__}'s ONNX importer (onnx2mx) has no translation for "
                    f"{', '.join(missing) or 'some op of this graph'}"
                    if missing
                    else f"MXNet {mx.__version__}'s ONNX importer rejected the graph"
                ),
                "attempts": attempts,
                "artifacts_rebuilt": rebuilt,
                "mxnet_onnx_module": sorted(n for n in dir(getattr(mx, "onnx", None)) if not n.startswith("_")),
                "note": "mxnet.onnx in 1.9.1 only exports (export_model); the importer is "
                "mx.contrib.onnx.import_model, deprecated for removal in 1.10",
            },
            "measurements": [],
            "provenance": info,
        }
    name, sym, arg_params, aux_params = imported
    block = mx.gluon.SymbolBlock(sym, [mx.sym.var("tokens")])
    params = block.collect_params()
    for key, value in {**arg_params, **aux_params}.items():
        if key in params:
            params[key]._load_init(value, mx.cpu())
    tokens = np.load(directory / "tokens.npy")

    def run(x):
        return block(mx.nd.array(x, dtype=np.float32)).asnumpy()

    parity = _parity(_in_chunks(run, tokens), directory)
    timing, latency = _time_batches(lambda x: block(mx.nd.array(x, dtype=np.float32)), mx.nd.waitall, tokens, config)
    return {
        "summary": {
            "step_status": "ok",
            "runtime": "mxnet",
            "file": name,
            **parity,
            **latency,
            "attempts": attempts,
            "artifacts_rebuilt": rebuilt,
        },
        "measurements": timing,
        "provenance": info,
    }


if __name__ == "__main__":  # ``python -m fwbench.studies.onnx_steps export CONFIG_JSON``: rebuild artifacts only
    if len(sys.argv) != 3 or sys.argv[1] != "export":
        sys.exit("usage: python -m fwbench.studies.onnx_steps export CONFIG_JSON")
    run_export(json.loads(sys.argv[2]))


def run_trial(config: dict, report=None) -> dict:
    """The onnx study's trial (its declarations, ``fwbench.studies.onnx``, are not part of the code fingerprint:
    this module is): the step the arm names."""
    step = {"export": run_export, "runtime": run_ort, "onnx-import": run_mxnet}[
        get_study("onnx").arm_of(config).variant
    ]
    return step(config, report)
