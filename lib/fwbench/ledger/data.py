"""What the claims read, and the shared helpers over it.

The rows come from the analysis loaders the notebooks use: one way to select a profile's rows (``profile`` None:
every row of the store; a study that does not define the profile contributes none). Arms are named through the
registry: a framework's is the study's ``reference_arm``, a claim-specific one is looked up in the arm table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis import Results, dataparallel, deepar_coverage, inference
from ..analysis import deepar as deepar_analysis
from ..analysis import imdb as imdb_analysis
from ..studies import get_study
from .rules import Part, missing, ratio_part

IMDB_PARTS = imdb_analysis.TIMED_PARTS  # grid parts judged (``scaling`` varies seq_len/threads/n_train)


HARDWARE = {"gpu": "a GPU", "cpu": "a CPU", "none": "any hardware"}


@dataclass
class Claim:
    """One claim of a source: its text, the rule in words, the study whose rows describe its conditions,
    ``evaluate(data) -> [Part]``, the hardware its numbers depend on (``gpu``: timings measured on a GPU; ``cpu``;
    ``none``: training quality, whether something works) and ``floor(data) -> None or what is missing`` (below it
    the verdict is "below scale"). ``part``: the study part whose trials the estimate comes from, when not the
    judged grid; ``tests``: how many judged parts it declares (its Bonferroni k also where fewer are measured);
    ``scope``: what its verdict asserts where that is narrower than the claim's words (shown beside the verdict)."""

    id: str
    text: str
    source: str
    source_conditions: str
    rule: str
    evaluate: Callable[[Data], list[Part]]
    study: str = "imdb"
    hardware: str = "none"
    source_hardware: str = ""
    floor: Callable[[Data], str | None] = lambda d: None
    scale: str = ""  # the floor in words
    part: str = ""
    tests: int = 1
    scope: str = ""

    def __post_init__(self):
        if self.hardware not in HARDWARE:
            raise ValueError(f"claim {self.id}: hardware must be one of {sorted(HARDWARE)}, got {self.hardware!r}")


class Data(Results):
    """The rows of one profile as the claims read them: a ``Results`` (sharing the cache of the one it was made from)
    with the frames the claims compare, each read on first use and kept."""

    def _cached(self, key, make):
        return self.frame(("ledger", key), make)

    def study_trials(self, study: str) -> pd.DataFrame:
        """The study's trials (any status) of the profile."""
        return self.trials(study) if self.has(study) else pd.DataFrame()

    # -- IMDB: the judged parts, on one device -------------------------------------------------------------
    def _imdb(self, parts: tuple = IMDB_PARTS) -> tuple[pd.DataFrame, pd.DataFrame, str | None]:
        trials = self.study_trials("imdb")
        if trials.empty:
            return pd.DataFrame(), trials, None
        trials = trials.copy()
        for col, default in (("config.part", "main"), ("config.device", "cpu")):
            trials[col] = trials[col].fillna(default) if col in trials else default
        trials = trials[trials["config.part"].isin(parts)]
        # one device: the sources' GPU where the store has GPU trials, else the CPU
        device = "cuda" if "cuda" in set(trials.loc[trials.status == "done", "config.device"]) else "cpu"
        trials = trials[trials["config.device"] == device].reset_index(drop=True)
        frame = imdb_analysis.load_sweep(self)
        if not frame.empty:
            frame = frame[frame.trial_id.isin(set(trials.trial_id))].reset_index(drop=True)
            blocks = trials.set_index("trial_id").get("config.repeat")
            frame["block"] = frame.trial_id.map(blocks) if blocks is not None else 0
        return frame, trials, device

    @property
    def imdb(self) -> pd.DataFrame:
        """One row per IMDB trial x epoch (``load_sweep``) of the judged parts on ``device``."""
        return self._cached("imdb", self._imdb)[0]

    @property
    def imdb_quality(self) -> pd.DataFrame:
        """The same rows for the training-quality part (all 25k reviews; A8), kept apart from the timing parts."""
        return self._cached("imdb_quality", lambda: self._imdb(("quality",)))[0]

    @property
    def imdb_onednn(self) -> pd.DataFrame:
        """The oneDNN part's rows with the main grid's (its oneDNN-on counterparts), for C3's LSTM context."""
        return self._cached("imdb_onednn", lambda: self._imdb(("main", "onednn")))[0]

    @property
    def imdb_trials(self) -> pd.DataFrame:
        return self._cached("imdb", self._imdb)[1]

    @property
    def device(self) -> str | None:
        return self._cached("imdb", self._imdb)[2]

    def timed(self) -> pd.DataFrame:
        """The IMDB epochs that count for timing: all but each trial's first."""
        return self.imdb[self.imdb.epoch > 0] if not self.imdb.empty else self.imdb

    # -- DeepAR and VGG16 ----------------------------------------------------------------------------------
    def _of(self, study: str, key: str, make: Callable[[Data], pd.DataFrame]) -> pd.DataFrame:
        """``make(self)`` once, or an empty frame where the profile has no rows of ``study``."""
        return self._cached(key, lambda: make(self) if self.has(study) else pd.DataFrame())

    @property
    def deepar(self) -> pd.DataFrame:
        return self._of("deepar", "deepar", deepar_analysis.load_trials)

    @property
    def deepar_coverage(self) -> pd.DataFrame:
        """The DeepAR ``coverage`` part's trials, one row each with its per-batch cost (``deepar_coverage``)."""
        return self._of("deepar", "deepar_coverage", deepar_coverage.cost_rows)

    @property
    def deepar_versions(self) -> pd.DataFrame:
        """The DeepAR ``versions`` part: the main part's configs run under the post's library versions (another
        declared environment, column ``env``); never pooled with ``deepar``."""
        return self._of("deepar", "deepar_versions", lambda d: deepar_analysis.load_trials(d, parts=("versions",)))

    @property
    def vgg16(self) -> pd.DataFrame:
        """The VGG16 latencies on one device (``device_of``): a GPU's and a CPU's are never pooled."""

        def make(d: Data) -> pd.DataFrame:
            f, device = inference.vgg16_latencies(d), d.device_of("vgg16")
            return f if f.empty or device is None else f[f.device.fillna("cpu") == device].reset_index(drop=True)

        return self._of("vgg16", "vgg16", make)

    @property
    def dataparallel(self) -> pd.DataFrame:
        """One row per data-parallel trial (C2's CPU analogue; ``analysis.dataparallel.per_trial``)."""
        return self._of(dataparallel.STUDY, "dataparallel", dataparallel.per_trial)

    def device_of(self, study: str) -> str | None:
        """The device a study's judged rows ran on ("cuda" or "cpu"; None without rows)."""
        if study == "imdb":
            return self.device
        trials = self.study_trials(study)
        if trials.empty or "config.device" not in trials:
            return "cpu" if not trials.empty else None
        devices = set(trials.loc[trials.status == "done", "config.device"].fillna("cpu"))
        return "cuda" if "cuda" in devices else ("cpu" if devices else None)


def load(results: Results) -> Data:
    """The rows the ledger reads (on first use), sharing ``results``' cache: what one read, the other reuses."""
    if isinstance(results, Data):
        return results
    return Data(results.store, results.profile, results.overrides, results._cache)


# ---------------------------------------------------------------------------------------------------- arms
def reference(study: str, framework: str) -> str:
    """The arm that stands for ``framework`` in the source's comparison (the study's arm table says)."""
    return get_study(study).reference_arm(framework)


def named_arm(study: str, name: str) -> str:
    """A claim-specific arm by its name in the study's arm table; an arm the table lacks is an error."""
    return get_study(study).arm(name).name


# ---------------------------------------------------------------------------------------------------- IMDB
def times(d: Data, arm: str, batch=None, workers=None, metric: str = "train_time_s", blocks=None) -> np.ndarray:
    """One value per trial of one arm (at a batch size, worker count and repeat blocks when given): the median
    of ``metric`` over the trial's timed epochs. The trial, a fresh process, is the unit of replication."""
    t = d.timed()
    if t.empty or metric not in t:
        return np.array([])
    sel = t.arm == arm
    if batch is not None:
        sel &= t.batch_size == batch
    if workers is not None:
        sel &= t.num_workers == workers
    if blocks is not None:
        sel &= t.block.isin(list(blocks))
    return t.loc[sel].groupby("trial_id")[metric].median().dropna().to_numpy()


def blocks(d: Data) -> list:
    """The repeat blocks of the judged IMDB rows, in order."""
    return sorted(set(d.imdb.block)) if not d.imdb.empty and "block" in d.imdb else []


def settings(d: Data, arm: str) -> set:
    """The (batch size, workers) settings one arm has rows at."""
    if d.imdb.empty:
        return set()
    s = d.imdb[d.imdb.arm == arm]
    return set(zip(s.batch_size, s.num_workers))


def arms(d: Data) -> set:
    return set(d.imdb.arm) if not d.imdb.empty else set()


def have_imdb(d: Data) -> str:
    """What the store has of IMDB, for a 'not measured yet' reason."""
    if d.imdb.empty:
        return "no finished IMDB trials for this profile"
    return (
        f"arms {sorted(arms(d))}, batch sizes {sorted(set(d.imdb.batch_size))}, "
        f"workers {sorted(set(d.imdb.num_workers))}"
    )


def per_batch(
    d: Data, num_arm: str, den_arm: str, workers: int, quantity: str, rule, metric: str = "train_time_s"
) -> list[Part]:
    """One part per batch size where both arms have timed values of ``metric`` at ``workers``."""
    common = sorted(b for b, w in settings(d, num_arm) & settings(d, den_arm) if w == workers)
    pairs = [(b, times(d, num_arm, b, workers, metric), times(d, den_arm, b, workers, metric)) for b in common]
    pairs = [(b, num, den) for b, num, den in pairs if len(num) and len(den)]
    if not pairs:
        return [
            missing(f"finished IMDB trials of {num_arm} and {den_arm} with {workers} workers ({metric})", have_imdb(d))
        ]
    return [ratio_part(f"batch {b}, {workers} workers", quantity, num, den, rule) for b, num, den in pairs]
