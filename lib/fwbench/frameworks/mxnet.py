"""MXNet's process-level facts (same public names as ``fwbench.frameworks.torch``), and its oneDNN check.
Imported in the parent process too: mxnet is imported inside the functions only.

MXNet fixes oneDNN use at import from ``ONEDNN_ENV`` (``MXNET_MKLDNN_ENABLED``, and ``MXNET_USE_MKLDNN_RNN`` for
fused RNNs): a trial sets them (``onednn_env``) before its backend imports mxnet, and ``onednn`` only checks that
the process matches. Both are set for every MXNet trial: the RNN switch changes nothing in a model without RNNs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

FRAMEWORK = "mxnet"
ONEDNN_ENV = ("MXNET_MKLDNN_ENABLED", "MXNET_USE_MKLDNN_RNN")  # read at import; "0" turns oneDNN off
BUILD_FEATURES = ("MKLDNN", "BLAS_OPEN", "BLAS_MKL", "BLAS_APPLE", "OPENMP", "SSE", "F16C")
__all__ = ["FRAMEWORK", "ONEDNN_ENV", "info", "onednn_env", "describe_build", "onednn", "onednn_enabled"]


def info() -> dict:
    import mxnet as mx
    import numpy as np

    features = mx.runtime.Features()
    return {
        "framework": FRAMEWORK,
        "framework_version": mx.__version__,
        "numpy_version": np.__version__,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "onednn_available": features.is_enabled("MKLDNN"),
        "mxnet_mkldnn_enabled_env": os.environ.get("MXNET_MKLDNN_ENABLED"),
        "features_enabled": sorted(name for name, f in features.items() if f.enabled),
    }


def onednn_env(enabled: bool) -> dict[str, str]:
    """The variables MXNet reads at import, for oneDNN on or off."""
    return {variable: str(int(enabled)) for variable in ONEDNN_ENV}


def describe_build(recorded: Callable[[str], object]) -> str:
    """The math-library features of the build, from the recorded ``features_enabled``."""
    features = recorded("features_enabled")
    if not isinstance(features, list):
        return "features not recorded"
    return "features " + ", ".join(f for f in features if f in BUILD_FEATURES)


def onednn_enabled(env_vars: tuple[str, ...] = ONEDNN_ENV) -> bool:
    """Whether this process's MXNet runs oneDNN kernels: built with it and none of ``env_vars`` set to 0 at
    import (a model without RNNs needs only ``MXNET_MKLDNN_ENABLED``)."""
    import mxnet as mx

    return mx.runtime.Features().is_enabled("MKLDNN") and all(os.environ.get(v, "1") != "0" for v in env_vars)


@contextlib.contextmanager
def onednn(enabled: bool, env_vars: tuple[str, ...] = ONEDNN_ENV):
    """MXNet fixes oneDNN use at import (``env_vars``): this only checks that the process matches."""
    if onednn_enabled(env_vars) != enabled:
        found = {v: os.environ.get(v) for v in env_vars}
        raise RuntimeError(
            f"oneDNN must be {'on' if enabled else 'off'} but {found} at import; set "
            f"{' and '.join(env_vars)} to {int(enabled)} before importing mxnet"
        )
    yield
