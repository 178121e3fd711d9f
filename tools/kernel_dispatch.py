"""Which math kernels each framework dispatches for DeepAR's training on this CPU (the methods' "why MXNet slows
more on Intel"): a few training batches of one DeepAR config per framework, each in a fresh process with the
libraries' verbose logs on (oneDNN: ``ONEDNN_VERBOSE``/``DNNL_VERBOSE``/``MKLDNN_VERBOSE``; MKL: ``MKL_VERBOSE``),
tallied per primitive kind and implementation (``jit:avx512_core``, ``gemm:jit``, ``ref``...). What no log shows
(MXNet's own operators, OpenBLAS) is named from ``mxnet.runtime.Features()`` and ``torch.__config__``.

    .venv/bin/python tools/kernel_dispatch.py -o results/paper/kernels-$(cpu).csv

A tool of the repository, not a trial: it times nothing (the batches run to make the libraries choose), and it
writes one row per (CPU model, framework, library, primitive, implementation) with the count of calls.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from fwbench.planning import plan
from fwbench.provenance import cpu_flags, this_cpu
from fwbench.studies import get_study

VERBOSE = {"ONEDNN_VERBOSE": "1", "DNNL_VERBOSE": "1", "MKLDNN_VERBOSE": "1", "MKL_VERBOSE": "1"}
# onednn_verbose[,TIMESTAMP][,primitive],exec,cpu,inner_product,brgemm:avx512_core,...  (oneDNN 3.x)
# dnnl_verbose,exec,cpu,rnn,ref:any,... (2.x); mkldnn_verbose,exec,inner_product,gemm:jit,...  (MXNet 1.x's)
ONEDNN = re.compile(r"^(?:onednn|dnnl|mkldnn)_verbose,(?:[^,]*,){0,3}?exec,(?:cpu,)?([a-z_]+),([^,]+),")
MKL = re.compile(r"^MKL_VERBOSE\s+([A-Z_0-9]+)\(")
CHILD = """
import json, sys
from fwbench.studies import get_study
config = json.loads(sys.argv[1])
get_study("deepar").run_trial(config, report=lambda m: None)
"""
BUILD = {
    "mxnet": "import mxnet as mx; print('BUILD', [f.name for f in mx.runtime.Features().values() if f.enabled])",
    "torch": "import torch; print('BUILD', torch.__config__.show().replace(chr(10), ' | ')[:2000])",
}


def tally(text: str) -> Counter:
    counts: Counter = Counter()
    for line in text.splitlines():
        m = ONEDNN.match(line)
        if m:
            counts[("oneDNN", m.group(1), m.group(2))] += 1
            continue
        m = MKL.match(line)
        if m:
            counts[("MKL", m.group(1), "mkl")] += 1
    return counts


def run(config: dict, framework: str, batches: int) -> tuple[Counter, str]:
    config = {**config, "epochs": 1, "num_batches_per_epoch": batches}
    env = {**os.environ, **VERBOSE, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(config)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{framework}: the DeepAR batches failed:\n{out.stderr[-2000:]}")
    build = subprocess.run([sys.executable, "-c", BUILD[framework]], capture_output=True, text=True).stdout
    return tally(out.stdout + out.stderr), build.strip().removeprefix("BUILD ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="m1_yearly")
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    rows = []
    main = [t for t in plan("deepar", "smoke", {"datasets": [args.dataset]}) if t.config.get("part", "main") == "main"]
    for trial in (t for t in main if t.env == "main"):  # the main environment's frameworks: this interpreter's
        framework = get_study("deepar").framework_of(trial.config["arm"])
        counts, build = run(trial.config, framework, args.batches)
        for (library, primitive, impl), n in sorted(counts.items()):
            rows.append({"cpu": this_cpu(), "cpu_flags": " ".join(cpu_flags()), "framework": framework,
                         "arm": trial.config["arm"], "library": library, "primitive": primitive,
                         "implementation": impl, "calls": n})  # fmt: skip
        rows.append({"cpu": this_cpu(), "cpu_flags": " ".join(cpu_flags()), "framework": framework,
                     "arm": trial.config["arm"], "library": "build", "primitive": "-", "implementation": build,
                     "calls": 0})  # fmt: skip
    table = pd.DataFrame(rows)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.output, index=False)
    print(table[table.library != "build"].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
