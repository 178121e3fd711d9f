"""Child-process entry point: ``python -m fwbench.trial SPEC.json RESULT.json``.

Runs one trial of one study in this fresh process (so exactly one framework gets imported) and writes the result
atomically. Before any framework import it sets the trial's ``fp_mode`` (``fwbench.floatmode``) and refuses a
config that names another CPU model than this machine's (``cpu``); after the trial the framework's subnormal probe
runs on the threads that did the work. Any exception exits non-zero with the traceback on stderr; the parent
records the trial as failed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions(names) -> dict:
    """The installed version of each named distribution in this process's environment (None where absent)."""
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    from . import floatmode
    from .conditions import require_cpu
    from .provenance import MachineLoad, framework_facts, host_info, imported_frameworks
    from .studies import get_study

    config = spec["config"]
    require_cpu(config)
    fp_mode = config.get("fp_mode", floatmode.DEFAULT)
    fp_set = floatmode.apply(fp_mode)  # before any framework import: every thread it starts inherits the mode
    started = now_iso()
    host = host_info()  # before the framework import: the load average is the load the trial starts on
    load = MachineLoad()
    t0 = time.perf_counter()
    study = get_study(spec["study"], spec.get("module") or None)
    result = study.run_trial(config, report=lambda msg: print(f"[trial] {msg}", file=sys.stderr, flush=True))
    frameworks = imported_frameworks()
    if len(frameworks) > 1:
        raise RuntimeError(
            f"isolation broken: {len(frameworks)} frameworks imported in one trial process ({frameworks})"
        )
    wall_s, machine = time.perf_counter() - t0, load.stop()
    fp_found = floatmode.verify(fp_mode, frameworks)  # after the timed work, on the threads that did it
    env = spec.get("env") or {}
    result["provenance"] = {
        **host,
        "env": env.get("name", "main"),
        "env_lock": env.get("lock"),
        "env_versions": package_versions(env.get("packages", ())),
        "env_variables": env.get("variables") or {},
        **framework_facts(frameworks),
        **result["provenance"],
        "frameworks_imported": frameworks,
        "pid": os.getpid(),
        "trial_wall_s": wall_s,
        **machine,
        **fp_set,
        **fp_found,
    }
    result["started_at"], result["ended_at"] = started, now_iso()
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, default=float))
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
