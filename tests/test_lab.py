"""The lab opens anywhere: `make lab`'s own command line (read with ``make -n lab``) starts JupyterLab headless, as
root here (``--allow-root`` only when ``id -u`` is 0), on a free loopback port, and prints its URL with the token.

- In headless Chromium (flags as in test_site.py) ``/lab/tree/notebooks/01_*.ipynb?token=...`` renders the
  notebook: its cells, the parameters cell's code, the first heading.
- A kernel of that server (``POST /api/sessions`` as the lab does, then execute requests over the kernel's
  websocket with tornado's client, the server's own library) runs notebook 01's cells against an existing store
  (two IMDB smoke trials made here), with papermill-style injected parameters; progress in that kernel is the
  tqdm widget, or plain lines under ``FWBENCH_HEADLESS=1``.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

NOTEBOOK = sorted((REPO / "notebooks").glob("01_*.ipynb"))[0]
NARROW = {"arms": ["torch-eager", "mxnet-imperative"], "workers": [0], "extra_arms": [], "scaling": False}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_command(port: int) -> str:
    """The recipe of `make lab` (printed by ``make -n``, nothing run) with this venv and port."""
    venv = Path(sys.executable).parent.parent
    out = subprocess.run(
        ["make", "-s", "-n", "lab", f"VENV={venv}", f"LAB_PORT={port}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    start = out.rindex(f"{venv}/bin/jupyter lab")
    return out[start:].replace("\\\n", " ").strip()


@pytest.fixture(scope="module")
def lab_store(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("lab-store") / "results.sqlite"
    sets = [x for k, v in NARROW.items() for x in ("--set", f"{k}={v!r}")]
    proc = subprocess.run(
        [sys.executable, "-m", "fwbench.cli", "run", "imdb", "--profile", "smoke", *sets, "--progress", "lines"],
        env={**os.environ, "FWBENCH_RESULTS": str(store)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return store


@pytest.fixture(scope="module")
def lab(lab_store, tmp_path_factory):
    """A running `make lab` server: yields (base URL, token); stopped (its process only) afterwards."""
    tmp = tmp_path_factory.mktemp("lab")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("FWBENCH_HEADLESS", "MPLBACKEND", "JUPYTER_TOKEN")}
    env.update(
        FWBENCH_RESULTS=str(lab_store),
        FWBENCH_FIGURES=str(tmp / "figures"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        IPYTHONDIR=str(tmp / "ipython"),
    )
    # the lab saves a checkpoint of every notebook it opens: into tmp, not notebooks/.ipynb_checkpoints
    (tmp / "config").mkdir()
    (tmp / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"FileCheckpoints": {"checkpoint_dir": str(tmp / "checkpoints")}})
    )
    command = lab_command(port)
    assert "--no-browser" in command and f"--port={port}" in command and "--ip=127.0.0.1" in command
    log = tmp / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline, token = time.monotonic() + 120, None
        while token is None:
            assert proc.poll() is None, f"the lab exited ({proc.returncode}):\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no URL with a token printed:\n{log.read_text()[-3000:]}"
            found = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]{{16,}})", log.read_text())
            token = found.group(1) if found else time.sleep(0.5)
        base = f"http://127.0.0.1:{port}"
        assert json.loads(rest(base, token, "GET", "/api/status"))["started"]
        yield base, token
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def rest(base: str, token: str, method: str, path: str, body: dict | None = None) -> bytes:
    request = urllib.request.Request(
        f"{base}{path}?token={token}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def test_the_lab_runs_as_root_only_with_allow_root():
    command = lab_command(8888)
    allow = subprocess.run(
        ["bash", "-c", '[ "$(id -u)" = 0 ] && echo --allow-root'], capture_output=True, text=True
    ).stdout.strip()
    assert "--port=8888" in command and "$(id -u)" in command
    assert allow == ("--allow-root" if os.geteuid() == 0 else "")


def test_a_notebook_renders_in_a_headless_browser(lab, tmp_path):
    base, token = lab
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.fail("no chromium on PATH: run `make browser` (apt-get install -y chromium) before the tests")
    checkpoints = NOTEBOOK.parent / ".ipynb_checkpoints"

    def listing():
        return sorted(p.name for p in checkpoints.iterdir()) if checkpoints.exists() else None

    before = hashlib.sha256(NOTEBOOK.read_bytes()).hexdigest(), listing()
    url = f"{base}/lab/tree/notebooks/{NOTEBOOK.name}?token={token}"
    with tempfile.TemporaryDirectory(prefix="fwbench-chromium-") as profile:
        proc = subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1280,2000",
                "--virtual-time-budget=30000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    dom = proc.stdout
    assert "jp-Notebook" in dom, f"no notebook in the page (rc {proc.returncode}):\n{proc.stderr[-2000:]}"
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    rendered = re.findall(r'class="[^"]*\bjp-CodeCell\b[^"]*"', dom)
    assert len(rendered) == len(code_cells), f"{len(rendered)} of {len(code_cells)} code cells rendered"
    text = html.unescape(re.sub(r"<[^>]+>", "", dom.split("<body", 1)[1]))
    parameters = next(c for c in code_cells if "parameters" in c.metadata.get("tags", []))
    first_line = parameters.source.splitlines()[0]
    assert first_line in text, f"the parameters cell ({first_line!r}) is not on the page"
    heading = next(
        line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("# ")
    )
    assert heading[2:].strip()[:30] in text, "the notebook's title is not rendered"
    after = hashlib.sha256(NOTEBOOK.read_bytes()).hexdigest(), listing()
    assert after == before, "opening the notebook changed it or wrote a checkpoint beside it"


async def _execute(base: str, token: str, kernel_id: str, cells: list[str], timeout: float = 300) -> list[dict]:
    """Run ``cells`` one after the other over the kernel's websocket; returns per cell its reply and outputs."""
    from tornado.websocket import websocket_connect

    conn = await websocket_connect(f"{base.replace('http', 'ws', 1)}/api/kernels/{kernel_id}/channels?token={token}")
    session, results = uuid.uuid4().hex, []
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            header = {
                "msg_id": msg_id,
                "username": "test",
                "session": session,
                "msg_type": "execute_request",
                "version": "5.3",
                "date": datetime.now(UTC).isoformat(),
            }
            await conn.write_message(
                json.dumps(
                    {
                        "header": header,
                        "parent_header": {},
                        "metadata": {},
                        "channel": "shell",
                        "buffers": [],
                        "content": {
                            "code": code,
                            "silent": False,
                            "store_history": True,
                            "user_expressions": {},
                            "allow_stdin": False,
                            "stop_on_error": True,
                        },
                    }
                )
            )
            reply, idle, outputs = None, False, []
            while reply is None or not idle:
                raw = await asyncio.wait_for(conn.read_message(), timeout)
                assert raw is not None, "the kernel's websocket closed"
                if not isinstance(raw, str):
                    continue  # binary frames carry buffers (widget state): not needed here
                msg = json.loads(raw)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "execute_reply":
                    reply = msg["content"]
                elif msg["msg_type"] == "status":
                    idle = msg["content"]["execution_state"] == "idle"
                elif msg["msg_type"] in ("stream", "display_data", "execute_result", "error"):
                    outputs.append({"type": msg["msg_type"], **msg["content"]})
            results.append({"code": code, "reply": reply, "outputs": outputs})
            if reply["status"] != "ok":
                break
    finally:
        conn.close()
    return results


def test_notebook_cells_run_in_a_kernel_of_the_lab(lab):
    base, token = lab
    session = json.loads(
        rest(
            base,
            token,
            "POST",
            "/api/sessions",
            {
                "path": f"notebooks/{NOTEBOOK.name}",
                "type": "notebook",
                "name": NOTEBOOK.name,
                "kernel": {"name": "python3"},
            },
        )
    )
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cells = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        cells.append(cell.source)
        if "parameters" in cell.metadata.get("tags", []):  # injected after it, as papermill does
            cells.append(
                f"profile = 'smoke'\narms = {NARROW['arms']!r}\nworkers = {NARROW['workers']!r}\nrun_trials = False"
            )
    progress = (
        "from fwbench.progress import make_progress\nfrom fwbench.runner import run_sweep\n"
        f"summary = run_sweep('imdb', 'smoke', {NARROW!r})\n"
        "import os; os.environ['FWBENCH_HEADLESS'] = '1'\n"
        "print('headless:', type(make_progress()).__name__, 'skipped:', summary.skipped)"
    )
    try:
        results = asyncio.run(_execute(base, token, session["kernel"]["id"], cells + [progress]))
    finally:
        rest(base, token, "DELETE", f"/api/sessions/{session['id']}")
    for r in results:
        error = next((o for o in r["outputs"] if o["type"] == "error"), None)
        assert r["reply"]["status"] == "ok", f"cell failed:\n{r['code'][:300]}\n{error and error['evalue']}"
    assert len(results) == len(cells) + 1
    notebook_outputs = [o for r in results[:-1] for o in r["outputs"]]
    assert any("image/png" in o.get("data", {}) for o in notebook_outputs), "no figure from the notebook's cells"
    assert any("torch-eager" in json.dumps(o.get("data", {})) for o in notebook_outputs), "no table of the store"
    last = results[-1]["outputs"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in last), (
        "progress in a lab kernel is not the widget"
    )
    assert "headless: LineProgress skipped: 2" in "".join(o.get("text", "") for o in last)
