"""The published site, opened in a real headless browser (Debian's chromium; `make browser` installs it).

The site is built from a smoke-profile store made here (``smoke_site`` in conftest: every notebook through
papermill with ``-p profile smoke``, then ``python -m fwbench.report``). A checker page loads index.html and every
page it links in an iframe (file:// pages may read each other with --allow-file-access-from-files) and writes what
it found into its own DOM, which ``chromium --dump-dom`` returns: whether each page loaded, every image's
naturalWidth, the ledger rows. A screenshot of the post is kept in build/test-artifacts/index.png.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from conftest import load_tool

from fwbench import ledger

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "build" / "test-artifacts"

pytestmark = pytest.mark.slow

CHECKER = r"""<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><pre id="result">pending</pre>
<script>
const start = START_URL;
const queue = [start], seen = new Set(queue), out = {};
function inspect(doc, url) {
  const imgs = Array.from(doc.images).map(i => ({src: (i.getAttribute('src') || '').slice(0, 60),
                                                 complete: i.complete, width: i.naturalWidth}));
  const links = Array.from(doc.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));
  if (url === start) {
    for (const href of links) {
      const abs = new URL(href, url); abs.hash = '';
      if (abs.protocol === 'file:' && abs.pathname.endsWith('.html') && !seen.has(abs.href)) {
        seen.add(abs.href); queue.push(abs.href);
      }
    }
  }
  return {title: doc.title, images: imgs.length, broken: imgs.filter(i => !(i.complete && i.width > 0)),
          ledger_rows: doc.querySelectorAll('table.ledger tbody tr').length,
          verdict_cells: Array.from(doc.querySelectorAll('table.ledger td .verdict')).map(v => v.textContent.trim()),
          links: links, text_length: doc.body ? doc.body.innerText.length : 0};
}
function next() {
  if (!queue.length) { document.getElementById('result').textContent = JSON.stringify(out); return; }
  const url = queue.shift();
  const frame = document.createElement('iframe');
  frame.style.width = '1200px'; frame.style.height = '900px';
  const timer = setTimeout(() => { out[url] = {error: 'timeout'}; frame.remove(); next(); }, 60000);
  frame.onload = () => {
    clearTimeout(timer);
    setTimeout(() => {
      try { out[url] = inspect(frame.contentDocument, url); } catch (e) { out[url] = {error: String(e)}; }
      frame.remove(); next();
    }, 1000);
  };
  frame.src = url;
  document.body.appendChild(frame);
}
next();
</script></body></html>
"""

FLAGS = load_tool("first_screen").FLAGS  # one list of headless-Chromium flags (tools/first_screen.py)


@pytest.fixture(scope="session")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium on PATH: run `make browser` (apt-get install -y chromium) before the tests")
    return path


def run_chromium(binary: str, *args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="fwbench-chromium-") as profile:
        return subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout
        )


def check_site(binary: str, index: Path) -> dict:
    """Load ``index`` and every .html it links in the browser; returns {url: findings}."""
    with tempfile.TemporaryDirectory(prefix="fwbench-check-") as tmp:
        checker = Path(tmp) / "check.html"
        checker.write_text(CHECKER.replace("START_URL", json.dumps(index.resolve().as_uri())))
        proc = run_chromium(
            binary, "--allow-file-access-from-files", "--virtual-time-budget=600000", "--dump-dom", checker.as_uri()
        )
    match = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"chromium returned no checker result (rc {proc.returncode}):\n{proc.stderr[-3000:]}"
    text = match.group(1)
    assert text != "pending", "the checker did not finish within chromium's virtual time budget"
    return json.loads(html.unescape(text))


def test_checker_catches_a_broken_image_and_a_dead_link(chromium, tmp_path):
    """The browser check can fail: a missing image and a link to a missing page are reported."""
    (tmp_path / "index.html").write_text(
        '<html><head><title>t</title></head><body><img src="figures/none.png">'
        '<a href="gone.html">gone</a><a href="ok.html">ok</a></body></html>'
    )
    (tmp_path / "ok.html").write_text("<html><head><title>ok</title></head><body>ok</body></html>")
    found = check_site(chromium, tmp_path / "index.html")
    index = found[(tmp_path / "index.html").as_uri()]
    assert len(index["broken"]) == 1
    assert "error" in found[(tmp_path / "gone.html").as_uri()]
    assert found[(tmp_path / "ok.html").as_uri()]["title"] == "ok"


def test_site_files_are_complete_and_offline(smoke_site):
    site = smoke_site.root / "reports"
    index = site / "index.html"
    assert index.is_file()
    pages = sorted(p.stem for p in site.glob("*.html") if p.name != "index.html")
    assert pages == sorted(p.stem for p in smoke_site.executed.glob("*.ipynb")), "one page per notebook"
    table = pd.read_csv(site / "ledger.csv")
    assert list(table.claim_id) == [c.id for c in ledger.CLAIMS]
    assert set(table.verdict) <= set(ledger.PRECEDENCE)
    assert list(site.glob("figures/*.png")), "the post shows no figure"
    for page in site.glob("*.html"):
        text = page.read_text()
        # nothing the page needs comes from the network
        remote = re.findall(
            r'<(?:script|link|img|iframe)\b[^>]*(?:src|href)\s*=\s*["\']?(?:https?:)?//[^"\'> ]+', text, re.I
        )
        assert not remote, f"{page.name} loads {remote[:3]} from the network"
        for ref in re.findall(r'(?:src|href)="([^"#][^"]*)"', text):
            if ref.startswith(("data:", "mailto:")):
                continue
            assert not ref.startswith("/"), f"{page.name}: absolute link {ref}"
            if not re.match(r"^[a-z]+:", ref):
                assert (page.parent / ref).exists(), f"{page.name} links {ref}, which is not in the site"


def test_site_loads_in_a_browser(smoke_site, chromium):
    site = smoke_site.root / "reports"
    index = site / "index.html"
    found = check_site(chromium, index)
    expected = {index.as_uri()} | {p.as_uri() for p in site.glob("*.html")}
    assert set(found) == expected, "the post does not link every notebook page"
    for url, page in found.items():
        assert "error" not in page, f"{url} did not load: {page['error']}"
        assert page["title"] and page["text_length"] > 200, f"{url} is empty"
        assert not page["broken"], f"{url} has broken images: {page['broken']}"
    post = found[index.as_uri()]
    assert post["images"] >= 1
    assert post["ledger_rows"] == len(ledger.CLAIMS)
    assert set(post["verdict_cells"]) <= set(ledger.PRECEDENCE)
    # a notebook that saves figures shows them on its page (inline base64 images that decode)
    for executed in smoke_site.executed.glob("*.ipynb"):
        code = "".join(c.source for c in nbformat.read(executed, as_version=4).cells if c.cell_type == "code")
        if re.search(r"\b(save|publish)\(", code):
            page = found[(site / f"{executed.stem}.html").as_uri()]
            assert page["images"] >= 1, f"{executed.stem}.html shows none of the figures its notebook saves"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "index.png"
    shot.unlink(missing_ok=True)
    proc = run_chromium(chromium, "--window-size=1200,3000", f"--screenshot={shot}", index.as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot:\n{proc.stderr[-2000:]}"


def test_headless_progress_is_one_line_per_trial(smoke_site):
    """Executed notebooks show plain progress lines (FWBENCH_HEADLESS=1): no carriage returns or bars, no flood."""
    for path in smoke_site.executed.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        text = "".join(
            o.get("text", "")
            for c in nb.cells
            if c.cell_type == "code"
            for o in c.get("outputs", [])
            if o.get("output_type") == "stream"
        )
        assert "\r" not in text, f"{path.name}: carriage-return progress in the output"
        assert "it/s" not in text and "\u2588" not in text, f"{path.name}: a tqdm bar in the headless output"
        assert len(text.splitlines()) < 200, f"{path.name}: {len(text.splitlines())} lines of output"


def test_every_page_of_the_smoke_site_states_one_value_per_quantity(smoke_site):
    """The post and the notebook pages (nbconvert keeps the quantity spans of the Markdown outputs) agree."""
    consistency = load_tool("check_pages")
    site = smoke_site.root / "reports"
    found = consistency.collect([site])
    assert consistency.disagreements(found) == []
    pages_of = {}
    for m in found:
        pages_of.setdefault(m.name, set()).add(Path(m.page).name)
    assert "trials.done" in pages_of and "index.html" in pages_of["trials.done"]
    ledger_page = {name for name, pages in pages_of.items() if "05_claims_ledger.html" in pages}
    assert any(name.startswith("claim.") for name in ledger_page), sorted(pages_of)
    shared = {name for name, pages in pages_of.items() if len(pages) > 1 and name.startswith("claim.")}
    assert shared, "no claim's estimate appears on two pages: the check would compare nothing"
