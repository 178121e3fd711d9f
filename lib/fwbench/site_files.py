"""What the site carries beside the post, so that its links work from any static host, and the repository's address.

Decision: the post links files *inside the site folder*, never paths of a checkout the reader does not
have. ``publish`` writes into ``<site>/data/`` the results store the post was built from (``ResultsStore.backup``:
a consistent copy, read only; a store over ``MAX_STORE_MB`` is not copied and the post says so), the profile's
tables as ``make publish`` writes them (``fwbench.export.write_tables``, exported from that same store at build
time so they always agree with the page) and ``requirements.lock``.

The repository is linked by its address (``repository``): ``git remote get-url origin`` (credentials stripped,
``git@host:path`` as ``https://host/path``), else ``pyproject.toml``'s ``[project.urls]``, else no link: a sentence
names the commit the post was built at, never a made-up address.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .export import write_tables
from .paths import REPO_ROOT
from .provenance import git_output
from .store import ResultsStore

DATA = "data"  # the site's folder for the files below
MAX_STORE_MB = 200
URL_KEYS = ("Repository", "Source", "Source Code", "Homepage")


def clean_url(url: str | None) -> str | None:
    """An address a browser can open, without credentials: https/http as given (user and password removed),
    ``git@host:owner/repo(.git)`` and ``ssh://git@host/owner/repo`` as ``https://host/owner/repo``; else None."""
    url = (url or "").strip()
    if not url:
        return None
    scp = re.match(r"^[\w.-]+@([\w.-]+):(?!//)(.+)$", url)
    if scp:
        url = f"https://{scp.group(1)}/{scp.group(2)}"
    parts = urlsplit(url)
    if parts.scheme in ("ssh", "git"):
        parts = parts._replace(scheme="https")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname + (f":{parts.port}" if parts.port and parts.scheme != "https" else "")
    path = re.sub(r"\.git/?$", "", parts.path).rstrip("/")
    return urlunsplit((parts.scheme, host, path, "", ""))


def _pyproject_url(root: Path) -> str | None:
    try:
        urls = tomllib.loads((root / "pyproject.toml").read_text()).get("project", {}).get("urls", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return next((urls[k] for k in URL_KEYS if urls.get(k)), None)


def repository(git: dict) -> dict:
    """``{"url", "commit", "dirty", "source"}``: the repository's address (None when none is known, see the
    module's doc) and the commit the post is built at."""
    url, source = clean_url(git_output("remote", "get-url", "origin")), "git remote origin"
    if not url:
        url, source = clean_url(_pyproject_url(REPO_ROOT)), "pyproject.toml [project.urls]"
    return {"url": url, "commit": git.get("git_sha"), "dirty": git.get("git_dirty"), "source": source if url else None}


def _size(path: Path) -> str:
    n = path.stat().st_size
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def publish(store: ResultsStore, profile: str, out: Path, lock: Path = REPO_ROOT / "requirements.lock") -> dict:
    """Write the store copy, the profile's tables and the lock file into ``out/data``; returns what the post
    links: ``{"files": [{"href", "name", "kind", "size"}], "store_href", "skipped"}`` (``post.html.j2`` words each
    kind: store, a table's name, lock; and ``skipped``, the store's name and MB where it is too large to copy)."""
    data = Path(out) / DATA
    if data.exists():
        shutil.rmtree(data)  # nothing of an earlier build stays beside this one's files
    data.mkdir(parents=True)
    files, skipped, store_href = [], None, None

    def add(path: Path, kind: str) -> None:
        files.append({"href": f"{DATA}/{path.name}", "name": path.name, "size": _size(path), "kind": kind})

    mb = store.path.stat().st_size / 1e6
    if mb <= MAX_STORE_MB:
        copy = store.backup(data / store.path.name)
        store_href = f"{DATA}/{copy.name}"
        add(copy, "store")
    else:
        skipped = {"name": store.path.name, "mb": mb, "max_mb": MAX_STORE_MB}
    for path in write_tables(store, data, ("csv",), profile=profile):
        add(path, path.stem)
    if Path(lock).is_file():
        add(Path(shutil.copy2(lock, data / "requirements.lock")), "lock")
    return {"files": files, "store_href": store_href, "skipped": skipped}
