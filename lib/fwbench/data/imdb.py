"""The IMDB Large Movie Review dataset (Maas et al. 2011), encoded the way Keras' ``imdb.load_data`` does.

Sources, in the order they are looked for in ``$FWBENCH_DATA_DIR`` and its ``imdb/`` subfolder:
``aclImdb_v1.tar.gz`` (the original archive), ``aclImdb_v1_labeled.tar.gz`` (the same files without the
unlabelled part), or an unpacked ``aclImdb/`` folder. Where none is there and the network allows, the original
is downloaded from Stanford and its SHA-256 checked.

Encoding (assumptions, recorded in every trial's config as ``encoding``):
- tokens: Keras ``text_to_word_sequence`` rules (lowercase, punctuation replaced by spaces, split on
  whitespace; so ``<br />`` becomes the token ``br``);
- vocabulary: the most frequent words of the 25k *training* reviews (ties broken alphabetically), rank 1 = most
  frequent; word id = rank + ``index_from`` (3); 0 = padding, 1 = start, 2 = out of vocabulary; ids
  ``>= num_words`` (5000) become 2;
- each review is prefixed with the start id and padded/truncated to ``maxlen`` (500) at the front (Keras'
  ``pad_sequences`` defaults ``padding='pre'``, ``truncating='pre'``), so the last time step is the last word;
- order: each split is shuffled with seed 113 (as Keras does), so the first ``n`` rows are a random subsample.

The encoded arrays are cached (``.npz`` keyed by the archive checksum and the encoding) so a second load
takes well under a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import DataUnavailable
from ..paths import cache_dir, data_dir
from .download import download, sha256_file

CANONICAL_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
CANONICAL_SHA256 = "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe"
ARCHIVE_NAMES = ("aclImdb_v1.tar.gz", "aclImdb_v1_labeled.tar.gz")
REVIEWS_PER_SPLIT_AND_LABEL = 12_500
REVIEWS_PER_SPLIT = 2 * REVIEWS_PER_SPLIT_AND_LABEL  # 25,000 train, 25,000 test: one epoch of the 2018 post
ENCODER_VERSION = 1  # bump when the encoding code changes, so stale caches are not reused

_KERAS_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'
_TRANSLATION = str.maketrans({c: " " for c in _KERAS_FILTERS})
_MEMBER = re.compile(r"(?:^|/)aclImdb/(train|test)/(pos|neg)/(\d+)_(\d+)\.txt$")


@dataclass(frozen=True)
class Encoding:
    num_words: int = 5000
    maxlen: int = 500
    index_from: int = 3
    start_char: int = 1
    oov_char: int = 2
    pad: int = 0
    padding: str = "pre"
    truncating: str = "pre"
    shuffle_seed: int = 113


@dataclass
class ImdbArrays:
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str
    checksum: str
    encoding: Encoding

    def subsample(self, n_train: int | None, n_test: int | None) -> ImdbArrays:
        """The first n rows of each (already shuffled) split."""
        return ImdbArrays(
            self.x_train[:n_train],
            self.y_train[:n_train],
            self.x_test[:n_test],
            self.y_test[:n_test],
            self.source,
            self.checksum,
            self.encoding,
        )


def tokenize(text: str) -> list[str]:
    return text.lower().translate(_TRANSLATION).split()


def find_source(root: Path | None = None) -> Path:
    """The first IMDB source found under the data dir; downloads the original where possible."""
    root = Path(root) if root is not None else data_dir()
    candidates = [d / name for d in (root, root / "imdb") for name in ARCHIVE_NAMES]
    candidates += [root / "aclImdb", root / "imdb" / "aclImdb"]
    for path in candidates:
        if path.exists():
            return path
    target = root / "imdb" / ARCHIVE_NAMES[0]
    try:
        return download(CANONICAL_URL, target, CANONICAL_SHA256)
    except OSError as exc:
        raise DataUnavailable(
            f"IMDB dataset not found (looked for {', '.join(ARCHIVE_NAMES)} or aclImdb/ in {root} and "
            f"{root / 'imdb'}) and the download from {CANONICAL_URL} failed ({exc}); put the archive there "
            "or set FWBENCH_DATA_DIR to the folder that holds it"
        ) from None


def _read_reviews(source: Path) -> dict[str, list[tuple[int, int, str]]]:
    """{'train': [(id, label, text), ...], 'test': [...]} sorted by (label, id) for a stable order."""
    splits: dict[str, list[tuple[int, int, str]]] = {"train": [], "test": []}

    def add(name: str, read) -> None:
        m = _MEMBER.search(name)
        if m:
            split, label, rid, _rating = m.groups()
            splits[split].append((int(rid), int(label == "pos"), read().decode("utf-8", errors="replace")))

    if source.is_dir():
        for path in sorted(source.glob("*/*/*.txt")):
            add(path.relative_to(source.parent).as_posix(), path.read_bytes)
    else:
        try:
            with tarfile.open(source, "r:gz") as tar:
                for member in tar:
                    if member.isfile() and member.name.endswith(".txt"):
                        add(member.name, tar.extractfile(member).read)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise DataUnavailable(
                f"IMDB archive {source} is truncated or corrupt ({type(exc).__name__}: {exc}); delete it and "
                "rerun to download it again, or copy a good aclImdb_v1.tar.gz there"
            ) from None
    for split, rows in splits.items():
        counts = Counter(label for _, label, _ in rows)
        if counts[0] != REVIEWS_PER_SPLIT_AND_LABEL or counts[1] != REVIEWS_PER_SPLIT_AND_LABEL:
            raise DataUnavailable(
                f"IMDB source {source} is incomplete: {split} has {counts[1]} pos / {counts[0]} neg reviews, "
                f"expected {REVIEWS_PER_SPLIT_AND_LABEL} each; replace it with the full aclImdb v1 archive"
            )
        rows.sort(key=lambda r: (r[1], r[0]))
    return splits


def _checksum(source: Path) -> str:
    if source.is_file():
        return sha256_file(source)
    # An unpacked folder: hash names and sizes (cheap, and catches missing or changed files).
    h = hashlib.sha256()
    for path in sorted(source.glob("*/*/*.txt")):
        h.update(f"{path.relative_to(source).as_posix()}:{path.stat().st_size}\n".encode())
    return "dir:" + h.hexdigest()


def build_vocabulary(train_texts: list[list[str]], num_words: int) -> dict[str, int]:
    counts = Counter(tok for toks in train_texts for tok in toks)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {word: rank for rank, (word, _) in enumerate(ranked[:num_words], start=1)}


def encode(tokens: list[str], vocab: dict[str, int], enc: Encoding) -> np.ndarray:
    ids = [enc.start_char]
    for tok in tokens:
        rank = vocab.get(tok)
        idx = rank + enc.index_from if rank is not None else enc.oov_char
        ids.append(idx if idx < enc.num_words else enc.oov_char)
    ids = ids[-enc.maxlen :] if enc.truncating == "pre" else ids[: enc.maxlen]
    out = np.full(enc.maxlen, enc.pad, dtype=np.int32)
    if enc.padding == "pre":
        out[enc.maxlen - len(ids) :] = ids
    else:
        out[: len(ids)] = ids
    return out


def load_imdb(root: Path | None = None, encoding: Encoding = Encoding()) -> ImdbArrays:
    """Encoded IMDB train/test arrays (cached after the first call)."""
    source = find_source(root)
    checksum = _checksum(source)
    cache = cache_dir() / f"imdb-v{ENCODER_VERSION}-{checksum.replace(':', '')[:16]}-{_encoding_tag(encoding)}.npz"
    if cache.exists():
        try:
            with np.load(cache) as z:
                return ImdbArrays(z["x_train"], z["y_train"], z["x_test"], z["y_test"], str(source), checksum, encoding)
        except (OSError, ValueError, KeyError, zlib.error):
            cache.unlink(missing_ok=True)  # a broken cache is rebuilt, never trusted
    splits = _read_reviews(source)
    tokens = {s: [tokenize(text) for _, _, text in rows] for s, rows in splits.items()}
    vocab = build_vocabulary(tokens["train"], encoding.num_words)
    arrays = {}
    rng = np.random.RandomState(encoding.shuffle_seed)
    for split in ("train", "test"):
        x = np.stack([encode(t, vocab, encoding) for t in tokens[split]])
        y = np.array([label for _, label, _ in splits[split]], dtype=np.int64)
        order = rng.permutation(len(y))
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x[order], y[order]
    tmp = cache.with_name(cache.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(cache)
    return ImdbArrays(
        arrays["x_train"], arrays["y_train"], arrays["x_test"], arrays["y_test"], str(source), checksum, encoding
    )


def _encoding_tag(enc: Encoding) -> str:
    return hashlib.sha256(json.dumps(asdict(enc), sort_keys=True).encode()).hexdigest()[:10]


def check_source() -> None:
    """The IMDB source is there and readable (``studies.imdb.preflight``). Decompresses the archive once (~0.5 s
    of CPU): a truncated or corrupt gzip stream fails its length/CRC check; the tar header is checked too."""
    if os.environ.get("FWBENCH_DATA_DIR") and not data_dir().is_dir():
        raise DataUnavailable(
            f"FWBENCH_DATA_DIR={os.environ['FWBENCH_DATA_DIR']} does not exist; fix the path "
            "or create it and put aclImdb_v1.tar.gz there"
        )
    source = find_source()
    if source.is_dir():
        if not all((source / split).is_dir() for split in ("train", "test")):
            raise DataUnavailable(
                f"IMDB folder {source} has no train/ and test/; replace it with the unpacked aclImdb v1 archive"
            )
        return
    inflate, head, problem = zlib.decompressobj(16 + zlib.MAX_WBITS), b"", None
    try:
        with open(source, "rb") as f:
            while block := f.read(1 << 22):
                out = inflate.decompress(block)
                if len(head) < 512:
                    head += out[:512]
        if not inflate.eof:
            problem = "the gzip stream ends early"
        elif head[257:262] != b"ustar":
            problem = "it is not a tar archive"
    except (zlib.error, OSError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        raise DataUnavailable(
            f"IMDB archive {source} is truncated or corrupt ({problem}); delete it and rerun to "
            "download it again, or copy a good aclImdb_v1.tar.gz there"
        )
