"""Build the main environment (``.venv``) from the lock: with ``uv`` (seconds where pip takes minutes), as
``fwbench envs`` builds the other environments; with pip only where uv cannot be had.

``make setup`` runs it with the machine's Python before anything is installed, so it uses the standard library only
(and ``fwbench.pip_sources``, which does too). uv comes from PATH, else from the venv, else it is installed into
the venv by pip at the lock's own pin (one wheel). numpy is held by the constraints file, whichever tool installs.

    python3 tools/install_main.py --venv .venv --lock requirements.lock --constraints constraints.txt
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from fwbench.pip_sources import pip_sources  # noqa: E402  (standard library only)


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd[:6]) + (" ..." if len(cmd) > 6 else ""), flush=True)
    subprocess.run(cmd, check=True)


def uv_pin(lock: Path) -> str | None:
    """The lock's ``uv==X`` line, None when the lock has none."""
    found = re.search(r"^uv==\S+", lock.read_text(), flags=re.M)
    return found.group(0) if found else None


def find_uv(venv: Path, lock: Path) -> str | None:
    """uv on PATH, in the venv, or installed there by pip at the lock's pin; None when none can be had."""
    for candidate in (shutil.which("uv"), venv / "bin" / "uv"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    pin = uv_pin(lock)
    if pin is None:
        return None
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", pin])
    return str(venv / "bin" / "uv") if proc.returncode == 0 and (venv / "bin" / "uv").exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path(".venv"))
    parser.add_argument("--lock", type=Path, default=Path("requirements.lock"))
    parser.add_argument("--constraints", type=Path, default=Path("constraints.txt"))
    parser.add_argument("--tool", choices=["auto", "pip"], default="auto", help="pip: never uv")
    args = parser.parse_args(argv)
    python = args.venv / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(args.venv)])
    uv = find_uv(args.venv, args.lock) if args.tool == "auto" else None
    lock = ["-r", str(args.lock), "-c", str(args.constraints)]
    if uv:
        _run([uv, "pip", "install", "--quiet", "--python", str(python), *lock, *pip_sources(str(python))])
    else:
        print("uv could not be had: pip installs the lock", flush=True)
        _run([str(python), "-m", "pip", "install", "--quiet", *lock])
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e", "."])
    print(f"built {args.venv} with {'uv' if uv else 'pip'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
