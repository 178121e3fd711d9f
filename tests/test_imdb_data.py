"""IMDB loading and Keras-style encoding, on the real staged archive (found only through FWBENCH_DATA_DIR)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from fwbench.data import imdb
from fwbench.data.imdb import Encoding, encode, load_imdb, tokenize
from fwbench.errors import DataUnavailable

STAGED_SHA256 = "3c7d06d26560475e8a57d0901ee9561546adbf9c9530f1d1cc5345e410b9463a"


def staged_source() -> Path | None:
    """The IMDB archive (or unpacked folder) under FWBENCH_DATA_DIR, where ``imdb.find_source`` looks; None when the
    variable is unset or nothing is there (never downloads)."""
    root = os.environ.get("FWBENCH_DATA_DIR")
    if not root:
        return None
    folders = (Path(root), Path(root) / "imdb")
    candidates = [d / name for d in folders for name in imdb.ARCHIVE_NAMES] + [d / "aclImdb" for d in folders]
    return next((p for p in candidates if p.exists()), None)


needs_staged = pytest.mark.skipif(
    staged_source() is None, reason="FWBENCH_DATA_DIR is unset or holds no IMDB archive (imdb/aclImdb_v1*.tar.gz)"
)


def test_tokenize_follows_keras_rules():
    assert tokenize("Great movie!<br /><br />It's BAD, though.") == [
        "great",
        "movie",
        "br",
        "br",
        "it's",
        "bad",
        "though",
    ]


def test_encode_prepends_start_maps_oov_and_pads_at_the_front():
    enc = Encoding(num_words=10, maxlen=6)
    vocab = {"a": 1, "b": 2, "rare": 50}  # rank 50 -> id 53 >= num_words -> oov
    out = encode(["a", "unknown", "b", "rare"], vocab, enc)
    assert out.tolist() == [0, 1, 4, 2, 5, 2]


def test_encode_truncates_at_the_front_keeping_the_last_words():
    enc = Encoding(num_words=100, maxlen=3)
    out = encode(["a", "b", "c", "d"], {"a": 1, "b": 2, "c": 3, "d": 4}, enc)
    assert out.tolist() == [5, 6, 7]  # start char and 'a' dropped, as Keras' truncating='pre'


@pytest.fixture(scope="module")
def arrays():
    if staged_source() is None:
        pytest.skip("FWBENCH_DATA_DIR is unset or holds no IMDB archive")
    return load_imdb()


def test_real_imdb_has_25k_balanced_reviews_per_split(arrays):
    assert arrays.x_train.shape == (25000, 500) and arrays.x_test.shape == (25000, 500)
    assert arrays.y_train.sum() == 12500 and arrays.y_test.sum() == 12500
    assert arrays.checksum == STAGED_SHA256
    assert arrays.x_train.max() == 4999 and arrays.x_train.min() == 0
    # a padded (short) review starts with the start char right after its padding; a long one was cut at
    # the front, so its last position is a word, never padding
    padded = arrays.x_train[:, 0] == 0
    first_word = np.argmax(arrays.x_train != 0, axis=1)
    assert (arrays.x_train[padded, first_word[padded]] == 1).all()
    assert 0.05 < (~padded).mean() < 0.15 and (arrays.x_train[:, -1] != 0).all()


def test_subsample_keeps_labels_mixed(arrays):
    small = arrays.subsample(200, 100)
    assert len(small.y_train) == 200 and 60 < small.y_train.sum() < 140  # shuffled, not sorted by label


def test_second_load_comes_from_the_cache(arrays, monkeypatch):
    def fail(*_):
        raise AssertionError("reviews re-read although the cache exists")

    monkeypatch.setattr(imdb, "_read_reviews", fail)
    again = load_imdb()
    assert np.array_equal(again.x_test, arrays.x_test)


def test_missing_dataset_is_one_line_naming_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("FWBENCH_OFFLINE", "1")
    with pytest.raises(DataUnavailable) as err:
        imdb.find_source(tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path) in msg and "FWBENCH_DATA_DIR" in msg


@needs_staged
def test_truncated_archive_is_reported_not_parsed(tmp_path, monkeypatch, arrays):
    src = staged_source()
    if src.is_dir():
        pytest.skip(f"the staged IMDB source {src} is an unpacked folder, not an archive to truncate")
    broken = tmp_path / "aclImdb_v1_labeled.tar.gz"
    broken.write_bytes(src.read_bytes()[:1_000_000])
    monkeypatch.setenv("FWBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FWBENCH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataUnavailable, match="truncated or corrupt"):
        load_imdb()


def test_unpacked_folder_is_a_valid_source(tmp_path):
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            (root / split / label).mkdir(parents=True)
            (root / split / label / "1_8.txt").write_text("fine film")
    assert imdb.find_source(tmp_path) == root
    with pytest.raises(DataUnavailable, match="incomplete"):
        imdb._read_reviews(root)
    shutil.rmtree(root)
