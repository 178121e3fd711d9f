"""Fetching a file from its canonical URL with a checksum, for machines that have the network."""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from pathlib import Path


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def download(url: str, dest: Path, sha256: str | None, timeout: float = 30.0) -> Path:
    """Download ``url`` to ``dest`` (via a ``.part`` file, so an interrupted download never looks complete)."""
    if os.environ.get("FWBENCH_OFFLINE") == "1":
        raise OSError("downloads disabled by FWBENCH_OFFLINE=1")
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    print(f"fwbench: downloading {url} -> {dest}", file=sys.stderr, flush=True)
    with urllib.request.urlopen(url, timeout=timeout) as response, open(part, "wb") as out:
        while block := response.read(1 << 20):
            out.write(block)
    if sha256 is not None:
        got = sha256_file(part)
        if got != sha256:
            part.unlink()
            raise OSError(f"checksum mismatch for {url}: got {got}, expected {sha256}")
    part.replace(dest)
    return dest
