"""The kernel-dispatch tool (``tools/kernel_dispatch.py``) reads the libraries' verbose lines of every format it
meets: oneDNN 3.x (``onednn_verbose`` with a timestamp), 2.x (``dnnl_verbose``), MXNet's 1.x (``mkldnn_verbose``)
and MKL's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "kernel_dispatch.py"


def _tool():
    spec = importlib.util.spec_from_file_location("kernel_dispatch", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_verbose_lines_are_tallied_per_primitive_and_implementation():
    text = "\n".join(
        [
            "onednn_verbose,1732619000.1,exec,cpu,inner_product,brgemm:avx512_core,forward_training,src_f32,,0.1",
            "onednn_verbose,1732619000.2,primitive,exec,cpu,inner_product,brgemm:avx512_core,forward_training,,0.1",
            "dnnl_verbose,exec,cpu,eltwise,jit:avx2,forward_training,data_f32,,0.01",
            "mkldnn_verbose,exec,inner_product,gemm:jit,forward_training,fsrc:nc,,0.2",
            "MKL_VERBOSE SGEMM(N,N,32,40,40,0x7ffd,0x1,32,0x2,40,0x7ffd,0x3,32) 12.3us CNR:OFF Dyn:1",
            "onednn_verbose,info,cpu,isa:Intel AVX-512",  # an info line, not a call
            "some other output",
        ]
    )
    counts = _tool().tally(text)
    assert counts == {
        ("oneDNN", "inner_product", "brgemm:avx512_core"): 2,
        ("oneDNN", "eltwise", "jit:avx2"): 1,
        ("oneDNN", "inner_product", "gemm:jit"): 1,
        ("MKL", "SGEMM", "mkl"): 1,
    }
