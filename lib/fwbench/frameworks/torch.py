"""PyTorch's process-level facts (same public names as ``fwbench.frameworks.mxnet``). Imported in the parent
process too: torch is imported inside the functions only."""

from __future__ import annotations

from collections.abc import Callable

FRAMEWORK = "torch"
BUILD_KEYS = ("BLAS", "LAPACK", "oneDNN", "MKL", "OpenMP", "CPU capability")
__all__ = ["FRAMEWORK", "info", "onednn_env", "describe_build"]


def info() -> dict:
    import numpy as np
    import torch

    config = torch.__config__.show()
    return {
        "framework": FRAMEWORK,
        "framework_version": torch.__version__,
        "numpy_version": np.__version__,
        "torch_num_threads": torch.get_num_threads(),
        "torch_num_interop_threads": torch.get_num_interop_threads(),
        "onednn_available": torch.backends.mkldnn.is_available(),
        "onednn_enabled_default": bool(torch.backends.mkldnn.enabled),
        "mkl_available": torch.backends.mkl.is_available(),
        "build_config": [line.strip() for line in config.splitlines() if any(k in line for k in BUILD_KEYS)][:12],
        "parallel_info": torch.__config__.parallel_info().strip().splitlines()[:8],
    }


def onednn_env(enabled: bool) -> dict[str, str]:
    """Nothing: PyTorch switches oneDNN at run time (``torch.backends.mkldnn.flags``, the backends' ``onednn``)."""
    return {}


def _short_build(lines: list[str]) -> list[str]:
    """``torch.__config__.show()`` lines, shortened: the libraries, and BLAS/LAPACK from the build settings."""
    out = [line.lstrip("- ").strip() for line in lines if not line.lstrip("- ").startswith("Build settings")]
    settings = " ".join(line for line in lines if "Build settings" in line).split("Build settings:")[-1]
    out += [item.strip(" ,") for item in settings.split(", ") if item.strip().startswith(("BLAS_INFO", "USE_MKLDNN"))]
    return out


def describe_build(recorded: Callable[[str], object]) -> str:
    """The math libraries, from the recorded ``build_config`` lines."""
    build = recorded("build_config")
    return "; ".join(_short_build(build)) if isinstance(build, list) else "build not recorded"
