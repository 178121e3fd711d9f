"""Our DeepAR MASE against the published one: the Monash archive paper's (Godahewa et al. 2021) DeepAR mean MASE,
``monash_deepar_mase_reference.csv`` in the reference folder (``fwbench.paths.reference_dir``).

Per dataset x arm: our mean MASE over seeds (min, max, a t-interval on log MASE with >= 2 seeds), the paper's, and
ours / paper. Goal: 0.7 <= ratio <= 1.2 for every arm on >= 80 % of the datasets staged from an original Monash file,
counting only trials at the protocol's scale (100 epochs x 50 batches; below it a model is barely trained, so such
rows are shown but flagged and left out of the goal). Rebuilt datasets are shown, labelled, and left out too.

How the paper's run differed (shared/reference/PROTOCOLS.md B) is turned into each off-goal row's ``note`` from
facts, never from typed per-dataset numbers: the data source (original / rebuilt, subset), the catalogue
(per-series horizons, weekly frequency), the datasets the paper's script rounded, the arm's framework and the seeds.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import monash
from ..errors import FwbenchError
from ..pages import render_markdown
from ..paths import reference_dir
from ..stats import log_contrast_ci
from ..studies import get_framework, get_study
from . import arm_order
from .deepar import PROTOCOL_BATCHES, PROTOCOL_EPOCHS, STUDY

REFERENCE_FILE = "monash_deepar_mase_reference.csv"
REFERENCE_COLUMNS = ("dataset_key", "paper_label", "deepar_mean_mase")
GOAL_BAND = (0.7, 1.2)
GOAL_SHARE = 0.8
# Datasets the paper's DeepAR runs called with integer_conversion=True (forecasts rounded before scoring):
# rakshitha123/TSForecasting, experiments/deep_learning_experiments.py, "# DeepAR" block; as our dataset keys.
PAPER_ROUNDED = frozenset({"car_parts", "hospital", "electricity_weekly", "kaggle_web_traffic", "us_births", "sunspot",
                           "covid_deaths", "electricity_hourly", "pedestrian_counts"})  # fmt: skip
COLUMNS = ["dataset", "paper_label", "arm", "framework", "data_source", "epochs", "num_batches_per_epoch",
           "below_scale", "n_seeds", "mase_mean", "mase_min", "mase_max", "ci_low", "ci_high", "paper_mase", "ratio",
           "within_goal", "note"]  # fmt: skip


def load_reference(path: str | Path | None = None) -> pd.DataFrame:
    """The paper's DeepAR mean MASE per dataset key; a missing or malformed file is a one-line error."""
    path = Path(path) if path is not None else reference_dir() / REFERENCE_FILE
    if not path.is_file():
        raise FwbenchError(
            f"published MASE reference {path} is missing; set FWBENCH_REFERENCE_DIR to the folder "
            f"holding {REFERENCE_FILE} (shared/reference)"
        )
    frame = pd.read_csv(path)
    missing = [c for c in REFERENCE_COLUMNS if c not in frame]
    if missing:
        raise FwbenchError(f"{path} lacks column(s) {', '.join(missing)}; expected {', '.join(REFERENCE_COLUMNS)}")
    return frame[list(REFERENCE_COLUMNS)].rename(columns={"dataset_key": "dataset", "deepar_mean_mase": "paper_mase"})


def _spread(values: np.ndarray) -> dict:
    """Mean, min, max and a t-interval over seeds (NaN with one seed: no spread to measure). Decision: the interval is
    taken on the log scale (of the geometric mean), since MASE > 0 and a symmetric one over 2 seeds went below 0."""
    ci, low, high = log_contrast_ci([(1, values)]), float(values.min()), float(values.max())
    mean = dict(n_seeds=values.size, mase_mean=float(values.mean()), mase_min=low, mase_max=high)
    return {**mean, "ci_low": ci["ci_low"], "ci_high": ci["ci_high"]}


def _data_source(dataset: str, kinds: pd.Series) -> str:
    """What the trials recorded (provenance), else what the catalogue says is staged."""
    known = kinds.dropna()
    return str(known.iloc[0]) if len(known) else str(monash.catalogue().loc[dataset, "staged_kind"])


def _gluonts_version() -> str:
    try:
        return f"gluonts {version('gluonts')}"
    except PackageNotFoundError:
        return "a newer gluonts"


def known_causes(row: dict) -> list[str]:
    """Why a row may differ from the paper, one cause each (words: template ``mase_causes``), from the facts about
    its dataset, arm and seeds."""
    cat = monash.catalogue().loc[row["dataset"]]
    staged = int(cat["n_series"]) if pd.isna(cat["staged_n_series"]) else int(cat["staged_n_series"])
    facts = {"staged": staged, "n_series": int(cat["n_series"]), "rounded": row["dataset"] in PAPER_ROUNDED,
             "per_series_horizon": cat["per_series_horizon"] == "yes", "weekly": cat["frequency"] == "weekly",
             "framework_label": get_framework(row["framework"]).label, "gluonts": _gluonts_version()}  # fmt: skip
    return render_markdown("mase_causes", **row, **facts, protocol=(PROTOCOL_EPOCHS, PROTOCOL_BATCHES)).split("\n")


def mase_vs_reference(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, arm, epochs x batches) in both the trials and the reference (``load_reference()``); see
    the module docstring for the columns' meaning."""
    if trials is None or trials.empty:
        return pd.DataFrame(columns=COLUMNS)
    paper = load_reference().set_index("dataset")
    sub = trials[trials.dataset.isin(paper.index) & trials.MASE.notna()]
    if sub.empty:
        return pd.DataFrame(columns=COLUMNS)
    study = get_study(STUDY)
    kinds = sub["dataset_kind"] if "dataset_kind" in sub else pd.Series(np.nan, index=sub.index)
    rows = []
    for (dataset, arm, epochs, batches), g in sub.groupby(["dataset", "arm", "epochs", "num_batches_per_epoch"]):
        epochs, batches = int(epochs), int(batches)
        row = {
            "dataset": dataset,
            "paper_label": paper.loc[dataset, "paper_label"],
            "arm": arm,
            "framework": study.arm(arm).framework,
            "data_source": _data_source(dataset, kinds[g.index]),
            "epochs": epochs,
            "num_batches_per_epoch": batches,
            "below_scale": epochs * batches < PROTOCOL_EPOCHS * PROTOCOL_BATCHES,
            **_spread(g.MASE.to_numpy(float)),
            "paper_mase": float(paper.loc[dataset, "paper_mase"]),
        }
        row["ratio"] = row["mase_mean"] / row["paper_mase"]
        row["within_goal"] = bool(GOAL_BAND[0] <= row["ratio"] <= GOAL_BAND[1])
        causes = known_causes(row)  # explained where the row is off; a below-scale flag always shows
        row["note"] = "; ".join(causes) if not row["within_goal"] else causes[0] if row["below_scale"] else ""
        rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = {a: i for i, a in enumerate(arm_order(STUDY, table.arm))}
    data_order = {d: i for i, d in enumerate(paper.index)}
    return (
        table.assign(_d=table.dataset.map(data_order), _a=table.arm.map(order))
        .sort_values(["_d", "_a", "epochs", "num_batches_per_epoch"])
        .drop(columns=["_d", "_a"])
        .reset_index(drop=True)
    )


def goal_summary(table: pd.DataFrame, include_below_scale: bool = False) -> dict:
    """The goal over original-file datasets: share whose every arm's ratio is within the band (only rows at the
    protocol's scale unless ``include_below_scale``), and whether that share reaches ``GOAL_SHARE``."""
    rows = table if include_below_scale else table[~table.below_scale.astype(bool)]
    original = rows[rows.data_source == "original"]
    per_dataset = original.groupby("dataset").within_goal.all() if len(original) else pd.Series(dtype=bool)
    n = int(per_dataset.size)
    share = float(per_dataset.mean()) if n else float("nan")
    goal = dict(n_original=n, n_within=int(per_dataset.sum()), share=share, goal_met=bool(n and share >= GOAL_SHARE))
    within, outside = sorted(per_dataset[per_dataset].index), sorted(per_dataset[~per_dataset].index)
    n_rebuilt = int(rows[rows.data_source != "original"].dataset.nunique())
    below = int(table.below_scale.astype(bool).sum())
    return {**goal, "band": GOAL_BAND, "goal_share": GOAL_SHARE, "within": within, "outside": outside,
            "n_rebuilt": n_rebuilt, "n_below_scale_rows": below}  # fmt: skip


def report_facts(trials: pd.DataFrame | None, table: pd.DataFrame | None = None) -> dict:
    """The MASE page (template ``mase_reference``): the comparison (or the given ``table``) and its goal summary, or
    why there is nothing to compare (``no_trials``, ``error``): the notebook and the README render either way."""
    protocol = (PROTOCOL_EPOCHS, PROTOCOL_BATCHES)
    out = {"no_trials": False, "error": None, "table": pd.DataFrame(), "s": {}, "protocol": protocol}
    if table is None:
        if trials is None or trials.empty:
            return {**out, "no_trials": True}
        try:
            table = mase_vs_reference(trials)
        except FwbenchError as exc:
            return {**out, "error": str(exc)}
    return {**out, "table": table, "s": goal_summary(table) if len(table) else {}}
