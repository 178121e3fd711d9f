"""The Monash loader and catalogue: real staged files, and small crafted .tsf files for the format's quirks and
for broken input."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fwbench.data import monash
from fwbench.errors import DataUnavailable, FwbenchError

# the staged Monash files, found only through FWBENCH_DATA_DIR (tests/conftest.py sets a default)
STAGED_ROOT = Path(os.environ["FWBENCH_DATA_DIR"]) if os.environ.get("FWBENCH_DATA_DIR") else None
SHARED_MONASH = STAGED_ROOT / "monash" if STAGED_ROOT else Path("/nonexistent")
needs_staged = pytest.mark.skipif(
    not (SHARED_MONASH / "MANIFEST.csv").exists(),
    reason="FWBENCH_DATA_DIR is unset or has no staged Monash data (monash/MANIFEST.csv)",
)

HEADER = (
    "# comment\n@relation t\n@attribute series_name string\n@attribute start_timestamp date\n@frequency monthly\n"
    "@horizon 2\n@missing true\n@equallength false\n@data\n"
)


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """An empty FWBENCH_DATA_DIR, offline."""
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    return tmp_path


@pytest.fixture
def staged(monkeypatch):
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(STAGED_ROOT))
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")


def test_catalogue_covers_the_archive_and_the_post():
    cat = monash.catalogue()
    assert len(cat) == 43 and cat.index.is_unique
    post = monash.names(in_2024_post=True)
    assert len(post) == 41  # the post's script has 41 keys (it says 40)
    for name in post:
        info = monash.info(name)
        assert info.context_length and info.context_length > 0, name
        assert info.horizon > 0 and info.seasonality >= 1
        pd.Period("2000-01-01", freq=info.freq)  # a valid pandas frequency
        assert info.zenodo_url.startswith("https://zenodo.org/record/") and info.zenodo_url.endswith(".zip")
    assert monash.info("cif_2016").per_series_horizon
    assert (
        monash.info("m4_hourly").context_length,
        monash.info("m4_hourly").horizon,
        monash.info("m4_hourly").seasonality,
    ) == (210, 48, 24)


def test_unknown_dataset_is_one_line_error():
    with pytest.raises(FwbenchError, match="unknown Monash dataset 'm5_daily'"):
        monash.info("m5_daily")


@needs_staged
def test_staged_availability_matches_manifest(staged):
    table = monash.availability().set_index("dataset")
    manifest = pd.read_csv(SHARED_MONASH / "MANIFEST.csv").set_index("dataset_key")
    assert (table.status == manifest.loc[table.index, "kind"]).all()
    assert "FWBENCH_OFFLINE" not in table.loc["m4_daily", "reason"]  # availability() never downloads
    assert "download not attempted" in table.loc["m4_daily", "reason"]


@needs_staged
def test_load_original_split_and_provenance(staged):
    data = monash.load("m1_yearly")
    assert data.kind == "original" and len(data.train) == 181 and data.prediction_length == 6
    for tr, full in zip(data.train, data.full):
        assert len(full["target"]) - len(tr["target"]) == 6
        np.testing.assert_array_equal(tr["target"], full["target"][:-6])
    prov = data.provenance()
    assert prov["dataset_kind"] == "original" and prov["n_dropped_short"] == 0 and len(prov["dataset_checksum"]) == 64


@needs_staged
def test_rebuilt_file_without_start_dates(staged):
    data = monash.load("m1_quarterly")
    assert data.kind == "rebuilt" and len(data.train) == 203
    assert data.train[0]["start"] == pd.Period("1970Q1", freq="Q")


@needs_staged
def test_cif_2016_per_series_horizons(staged):
    data = monash.load("cif_2016")
    assert sorted(pd.Series(data.horizons).value_counts().items()) == [(6, 15), (12, 57)]
    assert data.prediction_length == 12
    for tr, full, h in zip(data.train, data.full, data.horizons):
        assert len(full["target"]) - len(tr["target"]) == h


@needs_staged
def test_crlf_and_missing_values_in_real_files(staged):
    assert len(monash.load("hospital").train) == 767  # CRLF file
    _, records = monash.read_tsf(SHARED_MONASH / "tsf" / "vehicle_trips_dataset_with_missing_values.tsf")
    assert sum(int(np.isnan(r["target"]).sum()) for r in records) == 7274  # the '?' values


def test_cp1252_crlf_question_marks_and_no_start(tmp_path):
    text = (
        "# Monash \u2013 cp1252 dash\r\n@relation t\r\n@attribute series_name string\r\n@frequency yearly\r\n"
        "@horizon 2\r\n\r\n@data\r\nS\u20131:1,2,?,4,5\r\nS2:5,6,7\r\n"
    )
    path = tmp_path / "x.tsf"
    path.write_bytes(text.encode("cp1252"))
    meta, records = monash.read_tsf(path)
    assert meta.frequency == "yearly" and len(records) == 2
    assert path.read_bytes().count(b"\x96") == 2
    assert records[0]["series_name"] == "S\u20131" and np.isnan(records[0]["target"][2])
    train, full, horizons, dropped = monash.split(records, freq="Y", horizon=2, per_series_horizon=False)
    assert dropped == 0 and train[0]["start"] == pd.Period("1970", freq="Y") and len(train[1]["target"]) == 1


@pytest.mark.parametrize(
    "body, message",
    [
        ("T1:1990-01-01 00-00-00:1,2,3,\n", "corrupt or truncated"),  # cut after a comma
        ("T1:1990-01-01 00-00-00:1,2,3\nT2:1990-01-01 0", "corrupt or truncated"),  # cut inside the attributes
        ("T1:1,2,3\n", "corrupt or truncated"),  # a missing attribute
        ("", "no series after @data"),  # nothing after @data
    ],
)
def test_corrupt_tsf_is_one_line_error(tmp_path, body, message):
    path = tmp_path / "bad.tsf"
    path.write_text(HEADER + body)
    with pytest.raises(FwbenchError, match=message) as exc:
        monash.read_tsf(path)
    assert "\n" not in str(exc.value)


def test_truncated_header_is_one_line_error(tmp_path):
    path = tmp_path / "bad.tsf"
    path.write_text(HEADER.split("@frequency")[0])
    with pytest.raises(FwbenchError, match="no @data line"):
        monash.read_tsf(path)


@needs_staged
def test_file_truncated_at_a_line_end_is_caught_by_the_series_count(data_dir):
    lines = (SHARED_MONASH / "tsf" / "m1_yearly_dataset.tsf").read_bytes().split(b"\n")
    cut = next(i for i, line in enumerate(lines) if line.strip() == b"@data") + 101
    target = data_dir / "monash" / "tsf" / "m1_yearly_dataset.tsf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\n".join(lines[:cut]) + b"\n")
    with pytest.raises(FwbenchError, match="has 100 series, m1_yearly should have 181"):
        monash.load("m1_yearly")


def test_too_short_series_are_dropped_and_counted(tmp_path):
    records = [{"series_name": "a", "target": np.arange(10.0)}, {"series_name": "b", "target": np.arange(3.0)}]
    train, full, horizons, dropped = monash.split(records, freq="M", horizon=3, per_series_horizon=False)
    assert dropped == 1 and [t["item_id"] for t in train] == ["a"]
    with pytest.raises(FwbenchError, match="nothing to train on"):
        monash.split(records[1:], freq="M", horizon=3, per_series_horizon=False, dataset="tiny")


def test_unavailable_offline_is_explicit(data_dir):
    with pytest.raises(DataUnavailable, match="'m4_daily' is unavailable.*FWBENCH_OFFLINE=1"):
        monash.locate("m4_daily")
    assert monash.availability(["m4_daily"]).status.tolist() == ["unavailable"]


def test_download_unpacks_the_zenodo_zip(data_dir, monkeypatch):
    fetched = []

    def fake_download(url, dest, sha256, timeout=30.0):
        fetched.append(url)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("m1_yearly_dataset.tsf", HEADER.replace("monthly", "yearly") + "T1:1990-01-01 00-00-00:1,2,3\n")
        Path(dest).write_bytes(buf.getvalue())
        return Path(dest)

    monkeypatch.setattr(monash, "download", fake_download)
    loc = monash.locate("m1_yearly")
    assert fetched == ["https://zenodo.org/record/4656193/files/m1_yearly_dataset.zip"]
    assert loc.source == "zenodo" and loc.kind == "original"
    assert loc.path == data_dir / "monash" / "tsf" / "m1_yearly_dataset.tsf" and loc.path.exists()
    assert monash.locate("m1_yearly", allow_download=False).source == "tsf"  # found locally the next time


def _last_value_forecasts(data):
    """A flat forecast at each series' last training value (100 identical sample paths): cheap, no model."""
    from gluonts.model.forecast import SampleForecast

    out = []
    for s in data.train:
        last = float(pd.Series(s["target"]).ffill().fillna(0.0).iloc[-1])
        samples = np.full((100, data.prediction_length), last)
        out.append(SampleForecast(samples=samples, start_date=s["start"] + len(s["target"]), item_id=None))
    return out


def _zero_scale_series(data) -> int:
    """Series whose training part has a seasonal-naive scale of 0, counted here without gluonts."""
    n = 0
    for s in data.train:
        y = np.asarray(s["target"], dtype=float)
        m = data.seasonality if len(y) > data.seasonality else 1
        n += bool(np.nanmean(np.abs(y[m:] - y[:-m])) == 0)
    return n


@needs_staged
@pytest.mark.parametrize("name, expected", [("covid_deaths", 36), ("m1_yearly", 0)])
def test_zero_scale_series_are_left_out_of_mase_and_counted(staged, name, expected):
    """covid_deaths has series that are all zero before the test window (deaths not yet recorded): their MASE is
    infinite, so the Monash evaluation leaves them out; the score is over the rest and the count is stored."""
    from fwbench.forecast import evaluate

    data = monash.load(name)
    scores = evaluate(_last_value_forecasts(data), data.full, data.horizons, data.seasonality)
    assert scores["n_series_dropped"] == _zero_scale_series(data) == expected
    assert scores["n_series_scored"] == len(data.train) and np.isfinite(scores["MASE"])
