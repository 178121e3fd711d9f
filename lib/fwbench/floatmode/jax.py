"""JAX's subnormal probe (twin of ``fwbench.floatmode.torch``): products computed by XLA's CPU kernels on its own
thread pool, inside a jitted function so no operand is folded at compile time (see ``fwbench.floatmode``)."""

from __future__ import annotations

from . import SCALE, TINY, subnormals, zero_share

__all__ = ["subnormal_products"]


def subnormal_products(n: int, m: int) -> dict[str, float]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    @jax.jit
    def products(a, b, c, x, y):
        return a * b, c * c, x @ y

    f32 = np.float32
    daz, ftz, gemm = products(
        jnp.asarray(subnormals(n)),
        jnp.full((n,), SCALE, f32),
        jnp.full((n,), TINY, f32),
        jnp.asarray(subnormals((m, m))),
        jnp.full((m, m), SCALE, f32),
    )
    return {
        "elementwise_in": zero_share(np.asarray(daz)),
        "elementwise_out": zero_share(np.asarray(ftz)),
        "gemm_in": zero_share(np.asarray(gemm)),
    }
