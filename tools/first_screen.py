"""The post's first screen as a reader sees it: index.html in headless Chromium at 1280 x 800, as a screenshot and
as the positions of the answer's parts on it.

    .venv/bin/python tools/first_screen.py reports/index.html --png docs/first-screen.png

The first screen must state the answer (the speed list), the hardware (the sentence that opens the answer) and
the limitations (the "Limits:" paragraph): ``MUST_SHOW`` names the text each begins with, ``layout`` measures
where each block ends in the browser, and ``problems`` lists those that end below the fold. Chromium is Debian's
(``make browser``); the page loads from file:// with no network. A tool of the repository (``make first-screen``),
not part of the package ``fwbench``.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fwbench.errors import FwbenchError

VIEWPORT = (1280, 800)
# what the first screen must show -> the text its block starts with (in the post's #answer section)
MUST_SHOW = {"hardware": "Measured on", "answer": "Speed", "limitations": "Limits:"}
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
]

# loads the post in an iframe of the viewport's size and reports, per part, the bottom edge (px from the top of
# the page) of its block: the paragraph that starts with the part's text, or for the answer the list after it
CHECKER = r"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0}</style></head>
<body><pre id="result">pending</pre><script>
const parts = PARTS;
const frame = document.createElement('iframe');
frame.width = WIDTH; frame.height = HEIGHT;
frame.onload = () => setTimeout(() => {
  const out = {};
  try {
    const doc = frame.contentDocument;
    const blocks = Array.from(doc.querySelectorAll('#answer p'));
    for (const [name, start] of Object.entries(parts)) {
      const p = blocks.find(b => b.textContent.trim().startsWith(start));
      let el = p || null;
      if (p && p.nextElementSibling && p.nextElementSibling.tagName === 'UL') el = p.nextElementSibling;
      out[name] = el ? el.getBoundingClientRect().bottom : null;
    }
  } catch (e) { out.error = String(e); }
  document.getElementById('result').textContent = JSON.stringify(out);
}, 500);
frame.src = START;
document.body.prepend(frame);
</script></body></html>
"""


def chromium_binary() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise FwbenchError("no chromium on PATH: run `make browser` (apt-get install -y chromium)")
    return path


def _run(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="fwbench-chromium-") as profile:
        return subprocess.run(
            [chromium_binary(), *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def screenshot(index: Path, png: Path) -> Path:
    """A ``VIEWPORT`` screenshot of the top of ``index``."""
    png.parent.mkdir(parents=True, exist_ok=True)
    width, height = VIEWPORT
    proc = _run([f"--window-size={width},{height}", f"--screenshot={png.resolve()}", index.resolve().as_uri()])
    if not png.is_file():
        raise FwbenchError(f"chromium wrote no screenshot (rc {proc.returncode}): {proc.stderr[-500:]}")
    return png


def layout(index: Path) -> dict:
    """Per ``MUST_SHOW`` part, the bottom edge of its block in px from the top (None: not found)."""
    width, height = VIEWPORT
    page = (
        CHECKER.replace("PARTS", json.dumps(MUST_SHOW))
        .replace("START", json.dumps(index.resolve().as_uri()))
        .replace("WIDTH", str(width))
        .replace("HEIGHT", str(height))
    )
    with tempfile.TemporaryDirectory(prefix="fwbench-first-screen-") as tmp:
        checker = Path(tmp) / "check.html"
        checker.write_text(page, encoding="utf-8")
        proc = _run(
            [
                f"--window-size={width},{height}",
                "--allow-file-access-from-files",
                "--virtual-time-budget=30000",
                "--dump-dom",
                checker.as_uri(),
            ]
        )
    match = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    if not match or match.group(1) == "pending":
        raise FwbenchError(f"the first-screen check returned nothing (rc {proc.returncode}): {proc.stderr[-500:]}")
    return json.loads(html.unescape(match.group(1)))


def problems(found: dict) -> list[str]:
    """One line per part that is missing or ends below the first screen."""
    height = VIEWPORT[1]
    out = [f"the page could not be read: {found['error']}"] if "error" in found else []
    for name, start in MUST_SHOW.items():
        bottom = found.get(name)
        if bottom is None:
            out.append(f"{name}: no block starting with {start!r} in the answer")
        elif bottom > height:
            out.append(f"{name}: ends at {bottom:.0f} px, below the first screen ({height} px)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/first_screen.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("index", help="the post's index.html")
    parser.add_argument("--png", default=None, help="write the screenshot here (e.g. docs/first-screen.png)")
    args = parser.parse_args(argv)
    index = Path(args.index)
    try:
        if args.png:
            print(f"wrote {screenshot(index, Path(args.png))}")
        found = layout(index)
    except FwbenchError as exc:
        print(f"first_screen: error: {exc}", file=sys.stderr)
        return 2
    lines = problems(found)
    for name, bottom in found.items():
        print(f"{name}: ends at {bottom} px")
    for line in lines:
        print(f"NOT ON THE FIRST SCREEN {line}")
    return 1 if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())
