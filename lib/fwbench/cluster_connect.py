"""Connecting to a Dask distributed cluster: the scheduler's address checked before anything is sent
(``check_address``), TLS settings from arguments or the environment (``make_security``), and a client that fails
fast, in one line, when the scheduler cannot be reached or has no workers (``connect``). ``fwbench.cluster`` runs
the trials over that client.

``distributed`` is imported lazily: without ``--scheduler`` nothing here is loaded.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .errors import FwbenchError

CONNECT_TIMEOUT_S = float(os.environ.get("FWBENCH_CONNECT_TIMEOUT", "5"))
WORKER_WAIT_S = float(os.environ.get("FWBENCH_WORKER_WAIT", "60"))
TLS_ENV = {"tls_ca_file": "FWBENCH_TLS_CA_FILE", "tls_cert": "FWBENCH_TLS_CERT", "tls_key": "FWBENCH_TLS_KEY"}


def check_address(address) -> None:
    """A scheduler address (``tcp://`` or ``tls://``) or an existing scheduler file; one-line error otherwise."""
    if not isinstance(address, str) or not address:
        raise FwbenchError(f"scheduler must be an address like 'tcp://HOST:8786' or a scheduler file, got {address!r}")
    if address.startswith(("tcp://", "tls://")):
        host, _, port = address.split("://", 1)[1].rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise FwbenchError(f"scheduler address {address!r} has no valid host:port; e.g. tcp://10.0.0.5:8786")
        return
    if address.endswith(".json"):
        if not Path(address).is_file():
            raise FwbenchError(
                f"scheduler file {address} does not exist; start the scheduler with "
                f"`dask scheduler --scheduler-file {address}` or fix the path"
            )
        return
    raise FwbenchError(
        f"scheduler {address!r} is neither an address (tcp://HOST:8786, tls://HOST:8786) nor a "
        "scheduler file (.json); e.g. --scheduler tcp://127.0.0.1:8786"
    )


def make_security(tls_ca_file: str | None = None, tls_cert: str | None = None, tls_key: str | None = None):
    """``distributed.security.Security`` from the CLI flags or ``FWBENCH_TLS_*``; None when neither is set."""
    given = {"tls_ca_file": tls_ca_file, "tls_cert": tls_cert, "tls_key": tls_key}
    given = {k: v or os.environ.get(TLS_ENV[k]) or None for k, v in given.items()}
    if not any(given.values()):
        return None
    missing = [TLS_ENV[k] for k, v in given.items() if not v]
    if missing:
        raise FwbenchError(
            f"TLS needs a CA file, a certificate and a key; missing {', '.join(missing)} (or the matching --tls-* flag)"
        )
    for key, value in given.items():
        if not Path(value).is_file():
            raise FwbenchError(f"{key.replace('_', '-')} file {value} does not exist; fix the path")
    from distributed.security import Security

    return Security(
        tls_ca_file=given["tls_ca_file"],
        tls_client_cert=given["tls_cert"],
        tls_client_key=given["tls_key"],
        require_encryption=True,
    )


def connect(address: str, security=None):
    """A client of the scheduler at ``address`` that has at least one worker, or a one-line error."""
    check_address(address)
    if address.startswith("tls://") and security is None:
        raise FwbenchError(
            f"{address} is a TLS address; pass --tls-ca-file, --tls-cert and --tls-key (or set "
            "FWBENCH_TLS_CA_FILE, FWBENCH_TLS_CERT, FWBENCH_TLS_KEY)"
        )
    from distributed import Client

    # A refused connection is retried by distributed until the timeout: quiet its log lines about that.
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    kwargs = {"scheduler_file": address} if address.endswith(".json") else {"address": address}
    try:
        client = Client(**kwargs, security=security, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FwbenchError(
            f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT_S:.0f} s ({reason}); "
            "start one (`dask scheduler --host 127.0.0.1`) or fix --scheduler"
        ) from None
    finally:
        log.setLevel(level)
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (OSError, TimeoutError):
        client.close()
        raise FwbenchError(
            f"the Dask scheduler at {address} has no workers after {WORKER_WAIT_S:.0f} s; start "
            f"some with `dask worker {address} --nthreads 1 --nworkers 1`"
        ) from None
    return client
