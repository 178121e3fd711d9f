"""PyTorch's subnormal probe (twin of ``fwbench.floatmode.mxnet`` and ``.jax``): products computed by its own
elementwise and GEMM kernels on its intra-op pool (see ``fwbench.floatmode``)."""

from __future__ import annotations

from . import SCALE, TINY, subnormals, zero_share

__all__ = ["subnormal_products"]


def subnormal_products(n: int, m: int) -> dict[str, float]:
    import torch

    with torch.no_grad():
        daz = torch.from_numpy(subnormals(n)) * torch.full((n,), SCALE)
        ftz = torch.full((n,), TINY) * torch.full((n,), TINY)
        gemm = torch.from_numpy(subnormals((m, m))) @ torch.full((m, m), SCALE)
    return {
        "elementwise_in": zero_share(daz.numpy()),
        "elementwise_out": zero_share(ftz.numpy()),
        "gemm_in": zero_share(gemm.numpy()),
    }
