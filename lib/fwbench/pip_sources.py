"""Where pip installs from, as ``uv`` arguments: standard library only, so the bootstrap of ``.venv``
(``tools/install_main.py``, before any dependency is installed) and ``fwbench.environments`` read it alike."""

from __future__ import annotations

import subprocess
import sys


def pip_sources(python: str = sys.executable) -> list[str]:
    """pip's configured find-links and extra index URLs (pip.conf, PIP_* variables) as uv arguments, so uv
    installs from the same places pip does (e.g. the local CPU torch wheel)."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    args: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        option = key.rpartition(".")[2]
        if option in ("find-links", "extra-index-url", "index-url"):
            for item in value.strip().strip("'\"").split():
                pair = [f"--{option}", item]
                if not any(args[i : i + 2] == pair for i in range(0, len(args), 2)):
                    args += pair
    return args + (["--index-strategy", "unsafe-best-match"] if args else [])
