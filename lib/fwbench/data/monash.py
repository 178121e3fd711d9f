"""Monash Time Series Forecasting Archive (Godahewa et al., 2021): find, read and split its ``.tsf`` files.

- **Catalogue.** ``catalogue()`` / ``info(name)``: frequency, horizon, context length (the Monash lag), seasonality
  for MASE, Zenodo record; facts copied into ``monash_catalogue.py`` (which says where they came from).
- **Finding a file** (``locate``), in this order, under ``$FWBENCH_DATA_DIR/monash``:
  1. the file that ``MANIFEST.csv`` names for the dataset (a staged copy: kind ``original`` or ``rebuilt``);
  2. ``tsf/<tsf_file>`` (kind ``original``), then ``tsf_rebuilt/<tsf_file>`` (kind ``rebuilt``);
  3. the archive's zip from Zenodo, unpacked to ``tsf/<tsf_file>`` (kind ``original``; skipped with
     ``FWBENCH_OFFLINE=1`` or without a network);
  otherwise ``DataUnavailable`` with the reasons. ``availability()`` reports this for many datasets at once.
- **Reading** (``read_tsf``): gluonts' own ``TSFReader`` does the parsing. The wrapper first decodes the file as
  cp1252 (the archive's encoding) and writes a clean temporary UTF-8 copy: ``\\n`` line ends, comment and blank
  lines dropped (TSFReader chokes on blank lines). ``?`` becomes NaN (TSFReader). Whatever the reader rejects is
  re-raised as one ``FwbenchError`` line.
- **Splitting** (``load``): the last ``h`` values of each series are its test window, where ``h`` is the
  dataset's horizon, or the series' own ``horizon`` attribute where the file has one (cif_2016: 12 or 6).
  The model forecasts ``max h`` steps and a series with a shorter horizon is scored on its first ``h`` steps.
  Series with ``len <= h`` (nothing left to train on) are dropped and counted (``n_dropped_short``), as gluonts'
  own Monash conversion does; if no series is left the load fails. Series without a start date start at
  1970-01-01 (gluonts' convention for this archive).
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataUnavailable, FwbenchError
from ..paths import data_dir
from .download import download, sha256_file
from .monash_catalogue import CATALOGUE_CSV

ZENODO_URL = "https://zenodo.org/record/{record}/files/{zip}"
DEFAULT_START = "1970-01-01"


# -- catalogue -----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def catalogue() -> pd.DataFrame:
    """One row per archive dataset (43), indexed by the dataset key used everywhere in fwbench."""
    frame = pd.read_csv(
        io.StringIO(CATALOGUE_CSV), keep_default_na=False, na_values={"context_length": [""], "staged_n_series": [""]}
    )
    return frame.set_index("dataset", drop=False)


@dataclass(frozen=True)
class DatasetInfo:
    dataset: str
    name: str
    freq: str
    horizon: int
    context_length: int | None
    seasonality: int
    tsf_file: str
    zenodo_url: str
    in_2024_post: bool
    per_series_horizon: bool


def names(in_2024_post: bool | None = None) -> list[str]:
    cat = catalogue()
    if in_2024_post is not None:
        cat = cat[(cat.in_2024_post == "yes") == in_2024_post]
    return list(cat.index)


def info(name: str) -> DatasetInfo:
    cat = catalogue()
    if name not in cat.index:
        raise FwbenchError(f"unknown Monash dataset {name!r}; known: {', '.join(cat.index)}")
    r = cat.loc[name]
    return DatasetInfo(
        dataset=name,
        name=r["name"],
        freq=r["freq"],
        horizon=int(r["horizon"]),
        context_length=None if pd.isna(r["context_length"]) else int(r["context_length"]),
        seasonality=int(r["seasonality"]),
        tsf_file=r["tsf_file"],
        zenodo_url=ZENODO_URL.format(record=r["zenodo_record"], zip=r["zenodo_zip"]),
        in_2024_post=r["in_2024_post"] == "yes",
        per_series_horizon=r["per_series_horizon"] == "yes",
    )


# -- finding files -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Located:
    dataset: str
    path: Path
    kind: str  # original | rebuilt
    source: str  # manifest | tsf | tsf_rebuilt | zenodo
    expected_n_series: int | None
    expected_sha256: str | None


def monash_dir() -> Path:
    return data_dir() / "monash"


def _manifest() -> pd.DataFrame | None:
    path = monash_dir() / "MANIFEST.csv"
    if not path.exists():
        return None
    return pd.read_csv(path, dtype=str, keep_default_na=False).set_index("dataset_key")


def _expected(name: str, path: Path) -> tuple[int | None, str | None]:
    """Series count and sha256 this file should have: the staged copy's if it is that file, else the archive's."""
    r = catalogue().loc[name]
    if r["staged_file"] and path.name == Path(r["staged_file"]).name:
        return int(r["staged_n_series"]), r["staged_sha256"] or None
    return int(r["n_series"]), None


def _found(name: str, path: Path, kind: str, source: str) -> Located:
    n, sha = _expected(name, path)
    return Located(name, path, kind, source, n, sha)


def locate(name: str, allow_download: bool = True) -> Located:
    """The file to read for ``name``; raises ``DataUnavailable`` (listing what was tried) if there is none."""
    meta = info(name)
    root = monash_dir()
    tried = []
    manifest = _manifest()
    if manifest is not None and name in manifest.index:
        row = manifest.loc[name]
        if row["kind"] in ("original", "rebuilt") and row["file"]:
            path = root / row["file"]
            if path.is_file():
                return _found(name, path, row["kind"], "manifest")
            tried.append(f"{path} (named in MANIFEST.csv) is missing")
        else:
            tried.append(f"MANIFEST.csv marks it {row['kind']}")
    for sub, kind in (("tsf", "original"), ("tsf_rebuilt", "rebuilt")):
        path = root / sub / meta.tsf_file
        if path.is_file():
            return _found(name, path, kind, sub)
    tried.append(f"no {meta.tsf_file} in {root}/tsf or tsf_rebuilt")
    if allow_download:
        try:
            return _found(name, _download(meta, root / "tsf"), "original", "zenodo")
        except (OSError, zipfile.BadZipFile, FwbenchError) as exc:
            tried.append(f"download of {meta.zenodo_url} failed: {exc}")
    else:
        tried.append("download not attempted")
    raise DataUnavailable(f"Monash dataset {name!r} is unavailable: " + "; ".join(tried))


def _download(meta: DatasetInfo, dest_dir: Path) -> Path:
    dest = dest_dir / meta.tsf_file
    with tempfile.TemporaryDirectory(prefix="fwbench-monash-") as tmp:
        archive = download(meta.zenodo_url, Path(tmp) / "archive.zip", sha256=None, timeout=60)
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.namelist() if m.endswith(".tsf")]
            if len(members) != 1:
                raise FwbenchError(f"{meta.zenodo_url} holds {len(members)} .tsf files, expected 1")
            dest.parent.mkdir(parents=True, exist_ok=True)
            part = dest.with_name(dest.name + ".part")
            part.write_bytes(zf.read(members[0]))
            part.replace(dest)
    return dest


def availability(datasets: list[str] | None = None, allow_download: bool = False) -> pd.DataFrame:
    """Per dataset: ``status`` (original / rebuilt / unavailable), the file and why not (no training, no parse).

    Without ``allow_download`` nothing is fetched: a dataset that only Zenodo has reads ``unavailable`` here and is
    fetched by its trial when the network allows.
    """
    rows = []
    for name in datasets or names():
        try:
            loc = locate(name, allow_download=allow_download)
            rows.append(
                {"dataset": name, "status": loc.kind, "source": loc.source, "file": str(loc.path), "reason": ""}
            )
        except DataUnavailable as exc:
            rows.append(
                {
                    "dataset": name,
                    "status": "unavailable",
                    "source": "",
                    "file": "",
                    "reason": str(exc).split(": ", 1)[-1],
                }
            )
    return pd.DataFrame(rows)


# -- reading -------------------------------------------------------------------------------------------------
def read_tsf(path: str | Path):
    """``(meta, records)`` as gluonts' ``TSFReader`` returns them, for any archive file; corrupt -> FwbenchError."""
    import warnings

    warnings.filterwarnings("ignore", message="Using `json`-module", category=UserWarning)  # gluonts' speed hint
    from gluonts.dataset.repository._tsf_reader import TSFReader  # framework-free

    path = Path(path)
    try:
        text = path.read_bytes().decode("cp1252", errors="replace")
    except OSError as exc:
        raise DataUnavailable(f"cannot read {path}: {exc}") from None
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not any(line.lower() == "@data" for line in lines):
        raise FwbenchError(f"corrupt or truncated .tsf file {path}: no @data line")
    with tempfile.TemporaryDirectory(prefix="fwbench-tsf-") as tmp:
        clean = Path(tmp) / path.name
        # written as UTF-8; TSFReader decodes it as latin-1 (byte by byte), undone for string attributes below
        clean.write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            meta, records = TSFReader(clean).read()
        except Exception as exc:  # AssertionError, ValueError, JSON errors, bad dates: all mean a broken file
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise FwbenchError(f"corrupt or truncated .tsf file {path}: {detail}") from None
    if not records:
        raise FwbenchError(f"corrupt or truncated .tsf file {path}: no series after @data")
    strings = [name for name, ty in meta.columns.items() if ty == "string"]
    for rec in records:
        for name in strings:
            rec[name] = rec[name].encode("latin1").decode("utf-8")
    if not getattr(meta, "frequency", None):
        raise FwbenchError(f"corrupt .tsf file {path}: no @frequency line")
    return meta, records


# -- splitting -----------------------------------------------------------------------------------------------
@dataclass
class MonashData:
    """A dataset split for forecasting: ``train[i]`` is series i without its last ``horizons[i]`` values,
    ``full[i]`` the whole series; both gluonts-style dicts (``target``, ``start`` as a pandas Period, ``item_id``)."""

    dataset: str
    freq: str
    prediction_length: int
    context_length: int | None
    seasonality: int
    train: list[dict]
    full: list[dict]
    horizons: list[int]
    kind: str
    source: str
    path: str
    sha256: str
    n_series_file: int
    n_dropped_short: int
    n_missing_values: int
    notes: list[str] = field(default_factory=list)

    def provenance(self) -> dict:
        return {
            "dataset_kind": self.kind,
            "dataset_source": self.source,
            "dataset_file": os.path.basename(self.path),
            "dataset_checksum": self.sha256,
            "n_series_file": self.n_series_file,
            "n_series_used": len(self.train),
            "n_dropped_short": self.n_dropped_short,
            "n_missing_values": self.n_missing_values,
            "dataset_notes": self.notes,
        }


def split(records: list[dict], *, freq: str, horizon: int, per_series_horizon: bool, dataset: str = "?"):
    """(train, full, horizons, n_dropped) from TSFReader records; the last h values of each series are the test."""
    train, full, horizons, dropped = [], [], [], 0
    for i, rec in enumerate(records):
        target = np.asarray(rec["target"], dtype=np.float32)
        h = int(rec["horizon"]) if per_series_horizon and "horizon" in rec else horizon
        if len(target) <= h:
            dropped += 1
            continue
        start = pd.Period(rec.get("start_timestamp") or DEFAULT_START, freq=freq)
        item_id = str(rec.get("series_name", f"T{i + 1}"))
        full.append({"target": target, "start": start, "item_id": item_id})
        train.append({"target": target[:-h], "start": start, "item_id": item_id})
        horizons.append(h)
    if not train:
        raise FwbenchError(f"{dataset}: every series is shorter than or as long as its horizon; nothing to train on")
    return train, full, horizons, dropped


def load(name: str, allow_download: bool = True) -> MonashData:
    """Locate, read, check and split dataset ``name`` (raises before any training if anything is wrong)."""
    meta_info = info(name)
    if meta_info.context_length is None:
        raise FwbenchError(f"{name}: the catalogue has no Monash lag (context length) for it; it cannot be run")
    loc = locate(name, allow_download=allow_download)
    digest = sha256_file(loc.path)
    meta, records = read_tsf(loc.path)
    notes = []
    if loc.expected_n_series is not None and len(records) != loc.expected_n_series:
        raise FwbenchError(
            f"{loc.path} has {len(records)} series, {name} should have {loc.expected_n_series} "
            "(truncated or wrong file?); delete it to fetch it again"
        )
    if loc.expected_sha256 and digest != loc.expected_sha256:
        notes.append("sha256 differs from the staged copy's")
    horizon = meta_info.horizon
    file_h = getattr(meta, "forecast_horizon", None)
    if file_h is not None and int(file_h) != horizon:
        notes.append(f"file @horizon {file_h} differs from the catalogue's {horizon}; the catalogue's is used")
    per_series = meta_info.per_series_horizon and "horizon" in meta.columns
    train, full, horizons, dropped = split(
        records, freq=meta_info.freq, horizon=horizon, per_series_horizon=per_series, dataset=name
    )
    if dropped:
        notes.append(f"{dropped} series with length <= horizon dropped")
    missing = int(sum(np.isnan(s["target"]).sum() for s in full))
    return MonashData(
        dataset=name,
        freq=meta_info.freq,
        prediction_length=max(horizons),
        context_length=meta_info.context_length,
        seasonality=meta_info.seasonality,
        train=train,
        full=full,
        horizons=horizons,
        kind=loc.kind,
        source=loc.source,
        path=str(loc.path),
        sha256=digest,
        n_series_file=len(records),
        n_dropped_short=dropped,
        n_missing_values=missing,
        notes=notes,
    )
