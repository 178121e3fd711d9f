"""Devices a trial may ask for, checked in the parent before any trial (framework-free)."""

from __future__ import annotations

import shutil
import subprocess

from .errors import FwbenchError

DEVICES = ("cpu", "cuda")


def device_option(name: str, value) -> str:
    """Validator of a study's ``device`` option."""
    if value not in DEVICES:
        raise FwbenchError(f"{name} must be one of {', '.join(repr(d) for d in DEVICES)}, got {value!r}")
    return value


def check_device_available(device: str) -> None:
    """``device='cuda'`` needs an NVIDIA driver that answers ``nvidia-smi -L``; one-line error otherwise."""
    if device != "cuda":
        return
    smi = shutil.which("nvidia-smi")
    try:
        ok = smi is not None and subprocess.run([smi, "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        raise FwbenchError(
            "device='cuda' needs an NVIDIA GPU and driver (nvidia-smi -L failed or is missing); use device='cpu' here"
        )
