"""Build facts of the framework a trial process imported, for its provenance: one definition shared by the twin
backends (sentiment, forecast, vision). Call only from a backend module: each function imports its framework."""
from __future__ import annotations

import contextlib
import os


def torch_info() -> dict:
    import numpy as np
    import torch

    config = torch.__config__.show()
    return {
        "framework": "torch",
        "framework_version": torch.__version__,
        "numpy_version": np.__version__,
        "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "onednn_available": torch.backends.mkldnn.is_available(),
        "onednn_enabled_default": bool(torch.backends.mkldnn.enabled),
        "mkl_available": torch.backends.mkl.is_available(),
        "build_config": [line.strip() for line in config.splitlines()
                         if any(k in line for k in ("BLAS", "LAPACK", "oneDNN", "MKL", "OpenMP", "CPU capability"))][:12],
        "parallel_info": torch.__config__.parallel_info().strip().splitlines()[:8],
    }


def mxnet_info() -> dict:
    import mxnet as mx
    import numpy as np

    features = mx.runtime.Features()
    return {
        "framework": "mxnet",
        "framework_version": mx.__version__,
        "numpy_version": np.__version__,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "onednn_available": features.is_enabled("MKLDNN"),
        "mxnet_mkldnn_enabled_env": os.environ.get("MXNET_MKLDNN_ENABLED"),
        "features_enabled": sorted(name for name, f in features.items() if f.enabled),
    }


def mxnet_onednn_enabled(env_vars: tuple[str, ...]) -> bool:
    """Whether this process's MXNet runs oneDNN kernels: built with it and none of ``env_vars`` set to 0 at
    import (``MXNET_MKLDNN_ENABLED``; for fused RNNs also ``MXNET_USE_MKLDNN_RNN``)."""
    import mxnet as mx

    return mx.runtime.Features().is_enabled("MKLDNN") and all(os.environ.get(v, "1") != "0" for v in env_vars)


@contextlib.contextmanager
def mxnet_onednn(enabled: bool, env_vars: tuple[str, ...]):
    """MXNet fixes oneDNN use at import (``env_vars``): this only checks that the process matches."""
    if mxnet_onednn_enabled(env_vars) != enabled:
        found = {v: os.environ.get(v) for v in env_vars}
        raise RuntimeError(f"oneDNN must be {'on' if enabled else 'off'} but {found} at import; set "
                           f"{' and '.join(env_vars)} to {int(enabled)} before importing mxnet")
    yield
