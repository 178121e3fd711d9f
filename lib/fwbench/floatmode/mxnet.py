"""MXNet's subnormal probe (twin of ``fwbench.floatmode.torch``): products computed by its own operators on its
engine's worker threads and their OpenMP pools (see ``fwbench.floatmode``)."""

from __future__ import annotations

from . import SCALE, TINY, subnormals, zero_share

__all__ = ["subnormal_products"]


def subnormal_products(n: int, m: int) -> dict[str, float]:
    import mxnet as mx

    daz = mx.nd.array(subnormals(n), dtype="float32") * mx.nd.full((n,), SCALE)
    ftz = mx.nd.full((n,), TINY) * mx.nd.full((n,), TINY)
    gemm = mx.nd.dot(mx.nd.array(subnormals((m, m)), dtype="float32"), mx.nd.full((m, m), SCALE))
    return {
        "elementwise_in": zero_share(daz.asnumpy()),
        "elementwise_out": zero_share(ftz.asnumpy()),
        "gemm_in": zero_share(gemm.asnumpy()),
    }
