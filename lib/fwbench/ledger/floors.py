"""Scale floors: the smallest run that can support a verdict. Below its floor a claim's verdict is "below scale",
naming what is missing; its measurement is still shown.

- IMDB timing (A1, A4-A7, C3's LSTM part): epochs of ``MIN_BATCHES`` batches, ``MIN_TIMED_EPOCHS`` timed epochs (the
  first is warm-up) and ``MIN_TRIALS`` independent trials per arm and setting; a "best setting" claim (A4, A6, A7)
  counts them in its judging blocks, on each side of the parts it judges (the count its parts show), and needs two
  settings swept to choose from. Not over every setting swept: a setting no part judges weighs on no interval, and
  adaptive repeats stop a futile setting (one clearly slower than the best) at its minimum blocks by design, so the
  thinnest setting swept would put every adaptive run below scale for the very trials the rule saved.
- Training quality (A8): the full 25k training reviews, and both arms past ``ACCURACY_BAR`` test accuracy at the end
  (an untrained model's loss says nothing about which framework trains better).
- DeepAR (B): each dataset's cost per batch (``COVERAGE_TRIALS`` coverage trials per dataset and arm) is carried to
  the protocol's 100 epochs x 50 batches, so it needs protocol-scale trials (start-up and forecasting dominate short
  runs) on ``MIN_TRIALS`` dataset x seed pairs to check that against.
- Latency (C1, C3's VGG16 part, C4): ``MIN_TRIALS`` independent trials per arm and setting.
"""

from __future__ import annotations

import pandas as pd

from ..analysis.convergence import ACCURACY_BAR
from ..analysis.imdb import final_epochs
from ..data.imdb import REVIEWS_PER_SPLIT
from .data import Data, blocks

MIN_BATCHES = 20
MIN_TIMED_EPOCHS = 2
MIN_TRIALS = 3
TRAIN_REVIEWS = REVIEWS_PER_SPLIT
DEEPAR_BATCHES = 100 * 50
HELDOUT_BLOCKS = 3  # "best setting" claims: one block chooses, at least this many judge

IMDB_TIMING = (
    f">= {MIN_BATCHES} batches per timed epoch, >= {MIN_TIMED_EPOCHS} timed epochs, >= {MIN_TRIALS} "
    "trials per arm and setting"
)
IMDB_QUALITY = f"all {TRAIN_REVIEWS:,} training reviews and >= {ACCURACY_BAR:.0%} final test accuracy for both arms"
HELDOUT = (
    f"{IMDB_TIMING}; >= {HELDOUT_BLOCKS + 1} repeat blocks (1 chooses the best setting, {HELDOUT_BLOCKS} judge it), "
    f">= {MIN_TRIALS} trials per arm and setting in the judging blocks at the settings judged, >= 2 settings swept"
)
COVERAGE_TRIALS = 2  # per dataset and arm: a cost per batch with a spread (B's interval needs it)
DEEPAR = (
    f"each dataset's cost per batch from >= {COVERAGE_TRIALS} coverage trials per arm, checked against "
    f"protocol-scale trials (100 epochs x 50 batches) on >= {MIN_TRIALS} dataset x seed pairs"
)
LATENCY = f">= {MIN_TRIALS} independent trials per arm and setting"


def _lacks(*checks: tuple[bool, str]) -> str | None:
    """What the run lacks of a floor, in one line: the text of each check it fails; None when it meets them all."""
    return "; ".join(text for failed, text in checks if failed) or None


def imdb_timing(d: Data, arms: tuple[str, ...] = ()) -> str | None:
    f = d.imdb[d.imdb.arm.isin(arms)] if arms and not d.imdb.empty else d.imdb  # a claim's own arms, where named
    if f.empty:
        return None  # nothing measured: the claim says "not measured yet" itself
    per_trial = f.groupby("trial_id").agg(
        n_train=("n_train", "first"), batch=("batch_size", "first"), epochs=("epochs", "first")
    )
    batches = int((per_trial.n_train // per_trial.batch).min())
    timed = int((per_trial.epochs - 1).min())
    counts = f.groupby(["arm", "batch_size", "num_workers"]).trial_id.nunique()  # the thinnest setting is named
    trials, thin = int(counts.min()), "{} at batch {} / {} workers".format(*counts.idxmin())
    return _lacks(
        (batches < MIN_BATCHES, f"epochs of >= {MIN_BATCHES} batches (this run: {batches})"),
        (timed < MIN_TIMED_EPOCHS, f">= {MIN_TIMED_EPOCHS} timed epochs (this run: {timed})"),
        (trials < MIN_TRIALS, f">= {MIN_TRIALS} trials per arm and setting (this run: {trials}, {thin})"),
    )


def imdb_heldout(evaluate, *arms: str):
    """The floor of a "best setting" claim on ``arms`` (``evaluate``: its parts): ``imdb_timing``, enough repeat
    blocks, ``MIN_TRIALS`` trials per arm and setting in the judging blocks at the settings its parts judge (the
    trials its ratios are over, ``Part.sides``; where no part is measured the other
    checks say what is missing) and two settings swept (with one there is no best to choose)."""

    def check(d: Data) -> str | None:
        timing = imdb_timing(d, arms)
        f = d.imdb[d.imdb.arm.isin(arms)] if not d.imdb.empty else d.imdb
        if f.empty:
            return timing
        n = len(blocks(d))
        sides = [(k, p.label.split(" (")[0]) for p in evaluate(d) if p.measured for k in p.sides]
        fewest, where = min(sides, default=(MIN_TRIALS, ""))  # the thinnest side and its part's label
        choices = len(set(zip(f.batch_size, f.num_workers)))
        return _lacks(
            (bool(timing), timing),
            (
                n < HELDOUT_BLOCKS + 1,
                f">= {HELDOUT_BLOCKS + 1} repeat blocks (1 chooses, {HELDOUT_BLOCKS} judge; this run: {n})",
            ),
            (
                fewest < MIN_TRIALS,
                f">= {MIN_TRIALS} trials per arm and setting in the judging blocks (this run: {fewest}, part {where})",
            ),
            (choices < 2, f">= 2 settings swept to choose the best from (this run: {choices})"),
        )

    return check


def imdb_quality(f: pd.DataFrame, arms: tuple[str, str], batch: int, workers: int) -> str | None:
    """``f``: the IMDB epoch rows A8 reads (the quality part's, or the main grid's)."""
    if f.empty:
        return None
    f = f[(f.batch_size == batch) & (f.num_workers == workers) & f.arm.isin(arms)]
    if f.empty:
        return None
    reviews = int(f.n_train.min())
    last = final_epochs(f)
    acc = last.groupby("arm").test_acc.median() if "test_acc" in last else pd.Series(dtype=float)
    low = ", ".join(f"{a} {v:.3f}" for a, v in sorted(acc.items()) if not v >= ACCURACY_BAR)
    return _lacks(
        (reviews < TRAIN_REVIEWS, f"all {TRAIN_REVIEWS:,} training reviews (this run: {reviews:,})"),
        (bool(low), f">= {ACCURACY_BAR:.0%} final test accuracy (this run: {low})"),
    )


def deepar_protocol(d: Data) -> str | None:
    """B's estimate is each staged dataset's cost per batch (coverage part) carried to the protocol's scale: it needs
    that cost from ``COVERAGE_TRIALS`` trials per dataset and arm, and protocol-scale trials of the main part on
    ``MIN_TRIALS`` dataset x seed pairs, the check of the carried costs (and B's second judged part)."""
    cover, main = d.deepar_coverage, d.deepar
    if cover.empty and main.empty:
        return None  # nothing measured: the claim says "not measured yet" itself
    n = int(cover.groupby(["dataset", "arm"]).trial_id.nunique().min()) if not cover.empty else 0
    trials = d.study_trials("deepar")
    trials = trials[trials.status == "done"] if not trials.empty else trials
    if "config.part" in trials:  # the main part: the coverage part is short on purpose
        trials = trials[trials["config.part"].fillna("main") == "main"]
    batches = int((trials["config.epochs"] * trials["config.num_batches_per_epoch"]).min()) if len(trials) else 0
    if not main.empty and not cover.empty:
        main = main[main.dataset.isin(set(cover.dataset))]
    pairs = int((main.groupby(["dataset", "seed"]).arm.nunique() >= 2).sum()) if not main.empty else 0
    check = " of the coverage part's datasets at protocol scale, to check its costs against" if len(cover) else ""
    return _lacks(
        (
            not cover.empty and n < COVERAGE_TRIALS,
            f"each dataset's cost per batch from >= {COVERAGE_TRIALS} coverage trials per arm (this run: {n})",
        ),
        (
            len(trials) > 0 and batches < DEEPAR_BATCHES,
            f"100 epochs x 50 batches per trial (this run: {batches} batches)",
        ),
        (pairs < MIN_TRIALS, f">= {MIN_TRIALS} dataset x seed pairs{check} (this run: {pairs})"),
    )


def latency_trials(d: Data) -> str | None:
    f = d.vgg16
    if f.empty:
        return None
    n = int(f.groupby(["arm", "batch_size", "image_size", "onednn"]).trial_id.nunique().min())
    return None if n >= MIN_TRIALS else f">= {MIN_TRIALS} independent trials per arm and setting (this run: {n})"
