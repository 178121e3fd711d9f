"""Claim B over the 2024 post's datasets: its total from the coverage part's per-batch costs, weighted as the post
weighted it, and a prediction of the post's per-dataset totals set beside the values read off its chart.

- ``weighted_total``: each coverage trial at the protocol's scale, summed per framework over the datasets both
  core arms ran, as the post summed its datasets (``stats.sum_of_means_ratio_ci``).
- ``comparison``: one row per dataset of the post's list under one condition, from costs measured here only (never
  the chart's). A row's ``basis``: ``measured`` by the condition's own trials; ``scaled``, the coverage cost on
  that CPU times the condition's factor per framework (``condition_factors``); ``window line``, the coverage
  part's line ``c_batch = a + b x window`` times that factor.
- ``against_chart``: the prediction beside the published per-dataset totals (the post's bars may include
  forecasting and whatever else a run did; ours are training).

The conditions (``prediction_conditions``), per CPU model: the coverage part's and each k of the
``post_conditions`` part (k runs at once, the libraries' default threads). ``choose`` picks the one whose predicted
MXNet / PyTorch ratio has the smallest root-mean-square log error on the datasets the study was given
(``CHART_GIVEN``). Decision: the fit judges the ratio, not the totals: the totals carry the laptop's speed and the
reading of the chart as one run or five, which the ratio does not. Nothing is fitted: each prediction is made from
its trials alone, and the chart only ranks them. Decision: the contention part's conditions (threads set by hand, a
busy core) are no candidates: the post set no threads, and their whole-list prediction from that part's few
datasets, against its own baseline, would be invented.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..data import monash
from ..floatmode import DEFAULT
from ..pages import render_markdown
from ..paths import reference_dir
from ..published.deepar2024 import CHART_GIVEN, CLAIMED_SPEEDUP, N_DATASETS_STATED, post_ratio
from ..quantity import Quantity
from ..stats import CONFIDENCE, sum_of_means_ratio_ci
from . import Results, deepar
from .cpu_models import Condition, stored_conditions
from .deepar import PROTOCOL_BATCHES, PROTOCOL_EPOCHS, STUDY, reference_arms
from .deepar_coverage import DEFAULT_THREADS, cost_rows, cost_table, protocol_train_s

CHART_FILE = "deepar_runtime_chart_2024_part.csv"
POST_SEEDS = 5
POST_BATCHES = POST_SEEDS * PROTOCOL_EPOCHS * PROTOCOL_BATCHES  # per dataset and framework: 25,000
COMPARISON_COLUMNS = ["dataset", "window", "measured", "condition", "cpu", "ours_mxnet_s_per_batch",
                      "ours_pytorch_s_per_batch", "predicted_post_mxnet_s", "predicted_post_pytorch_s",
                      "predicted_post_ratio", "trials_at_once", "threads", "basis", "chosen"]  # fmt: skip
POST_CONDITIONS, CONTENTION = "post_conditions", "contention"
MEASURED, SCALED, LINE = "measured", "scaled", "window line"  # a prediction's basis, strongest first
# a condition reproduces the post's ratio (its totals') when its prediction of the post's whole list is within 25 % of
# it: the bar the per-dataset comparison with the chart uses
REPRODUCES = 0.25
# a runner-up whose RMS log error is within 5 % of the best fit's is a near-tie: the page names it beside the best
NEAR_TIE = 0.05


@dataclass(frozen=True)
class PredictionCondition:
    """A condition the post's runs may have had: CPU model, runs at once, threads (``DEFAULT_THREADS``: no setting)."""

    cpu: str
    trials_at_once: int = 1
    threads: int = 2
    named: bool = field(default=False, compare=False)  # the trials' configs name the CPU (a piece run for it)

    @property
    def threads_label(self) -> str:
        return "default" if self.threads == DEFAULT_THREADS else str(self.threads)

    @property
    def key(self) -> str:
        return f"{self.cpu.replace('/', '-')}.x{self.trials_at_once}.t{self.threads_label}"

    @property
    def cpu_name(self) -> str:
        return Condition(self.cpu).cpu_name

    @property
    def conditions(self) -> dict[str, str]:
        """The words a page names this condition by (template ``prediction_condition``), for a quantity under it."""
        words = render_markdown("prediction_condition", c=self, as_parts=True).split("\n")
        return dict(zip(("cpu", "runs at once", "threads"), words))


def sides() -> tuple[str, ...]:
    """The column prefix of each reference arm's framework (``mxnet``, ``pytorch``: ``ours_mxnet_s_per_batch``)."""
    return tuple(name.lower() for name in deepar.framework_names())


def gmean(values) -> float:
    """The geometric mean of the finite positive ``values`` (NaN with none)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else math.nan


def weighted_total(rows: pd.DataFrame, confidence: float = CONFIDENCE) -> dict:
    """B over the datasets both core arms measured: Σ protocol-scale training time MXNet / PyTorch, with its CI
    over the coverage trials; ``n_datasets``, and each framework's total (one seed per dataset)."""
    mx, pt = reference_arms()
    out = {"ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_datasets": 0, "mxnet_s": math.nan,
           "pytorch_s": math.nan, "datasets": []}  # fmt: skip
    if rows.empty:
        return out
    rows = rows.assign(total_s=protocol_train_s(rows, PROTOCOL_EPOCHS, PROTOCOL_BATCHES))
    both = sorted(set(rows.loc[rows.arm == mx, "dataset"]) & set(rows.loc[rows.arm == pt, "dataset"]))
    if not both:
        return out
    groups = {arm: [rows.loc[(rows.arm == arm) & (rows.dataset == d), "total_s"].to_numpy() for d in both]
              for arm in (mx, pt)}  # fmt: skip
    r = sum_of_means_ratio_ci(groups[mx], groups[pt], confidence)
    return {**out, "ratio": r["ratio"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n_datasets": len(both),
            "mxnet_s": float(sum(g.mean() for g in groups[mx])), "pytorch_s": float(sum(g.mean() for g in groups[pt])),
            "datasets": both}  # fmt: skip


def window_lines(costs: pd.DataFrame, column: str = "c_batch") -> dict[str, tuple[float, float]]:
    """Per reference arm with 2 windows or more: (a, b) of ``column = a + b x window``, least squares."""
    lines = {}
    for arm in reference_arms():
        mine = costs[costs.arm == arm]
        if mine.window.nunique() >= 2:
            b, a = np.polyfit(mine.window.astype(float), mine[column].astype(float), 1)
            lines[arm] = (float(a), float(b))
    return lines


def condition_factors(coverage: pd.DataFrame, rows: pd.DataFrame) -> dict[str, float]:
    """Per reference arm: the geometric mean over the datasets both ran of the condition's median per-batch cost
    over the coverage part's (1 where ``rows`` is the coverage itself)."""
    if rows is coverage:
        return dict.fromkeys(reference_arms(), 1.0)
    own = cost_table(rows).set_index(["dataset", "arm"]).c_batch
    base = cost_table(coverage).set_index(["dataset", "arm"]).c_batch
    out = {}
    for arm in reference_arms():
        keys = [k for k in own.index if k[1] == arm and k in base.index]
        logs = [math.log(own[k] / base[k]) for k in keys if own[k] > 0 and base[k] > 0]
        out[arm] = math.exp(sum(logs) / len(logs)) if logs else math.nan
    return out


def comparison(coverage: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per dataset of the post's list (``COMPARISON_COLUMNS``) under one condition: the coverage part's
    (``rows`` None: one CPU model's coverage trials) or that of ``rows``, a post_conditions group of that CPU."""
    rows = coverage if rows is None else rows
    condition = condition_of(coverage, rows)
    mx, pt = reference_arms()
    base = cost_table(coverage)
    lines = window_lines(base)
    factors = condition_factors(coverage, rows)
    tables = {MEASURED: cost_table(rows), SCALED: base}
    tables = {k: (t.set_index(["dataset", "arm"]) if len(t) else t) for k, t in tables.items()}
    typical = {arm: base[base.arm == arm][["warmup", "fit_fixed"]].median() for arm in (mx, pt)}
    text = render_markdown("prediction_condition", c=condition, coverage=rows is coverage)  # the rows' condition
    out = []
    for name in monash.names(in_2024_post=True):
        meta = monash.info(name)
        window = int(deepar.unrolled_window(meta.context_length or 0, meta.horizon))
        per_batch, totals, bases = {mx: math.nan, pt: math.nan}, {mx: math.nan, pt: math.nan}, []
        for arm in (mx, pt):
            cost, factor, basis = None, 1.0, None
            if len(tables[MEASURED]) and (name, arm) in tables[MEASURED].index:
                cost, basis = tables[MEASURED].loc[(name, arm)], MEASURED
            elif len(tables[SCALED]) and (name, arm) in tables[SCALED].index:
                cost, factor, basis = tables[SCALED].loc[(name, arm)], factors[arm], SCALED
            elif arm in lines:
                a, b = lines[arm]
                cost = {"c_batch": max(a + b * window, 0.0), **typical[arm].to_dict()}
                factor, basis = factors[arm], LINE
            if cost is not None:
                per_batch[arm] = float(cost["c_batch"]) * factor
                totals[arm] = float(POST_SEEDS * protocol_train_s(cost, PROTOCOL_EPOCHS, PROTOCOL_BATCHES) * factor)
            bases.append(basis)
        basis = max(bases, key=lambda b: (MEASURED, SCALED, LINE, None).index(b))  # the weaker arm's
        note = text + ("; window line fitted on the measured datasets" if basis == LINE else "")
        ratio = totals[mx] / totals[pt] if totals[pt] > 0 else math.nan
        costs = [per_batch[mx], per_batch[pt], totals[mx], totals[pt], ratio]
        at_once, threads = condition.trials_at_once, condition.threads_label
        out.append([name, window, basis == MEASURED, note, condition.cpu, *costs, at_once, threads, basis, False])
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


def condition_of(coverage: pd.DataFrame, rows: pd.DataFrame) -> PredictionCondition:
    """The condition of ``rows`` (cost rows of one CPU model and one condition)."""
    cpu = str(coverage.cpu.iloc[0]) if len(coverage) and "cpu" in coverage else "not recorded"
    if rows.empty:
        return PredictionCondition(cpu)
    at_once = int(rows.trials_at_once.iloc[0]) if "trials_at_once" in rows else 1
    return PredictionCondition(cpu, at_once, int(rows.threads.iloc[0]) if "threads" in rows else 2)


def prediction_conditions(results: Results) -> list[tuple[PredictionCondition, pd.DataFrame, pd.DataFrame]]:
    """Every measured condition (default fp mode) as ``(condition, its CPU's coverage rows, its own rows)``: per CPU
    model the coverage part's first (its own rows are the coverage rows), then each k of the post_conditions part."""
    out = []
    for c in (c for c in stored_conditions(results, STUDY) if c.fp_mode == DEFAULT):
        chosen = c.select(results, STUDY)
        coverage = cost_rows(chosen)
        if coverage.empty:
            continue
        out.append((replace(condition_of(coverage, coverage), named=c.named), coverage, coverage))
        post = cost_rows(chosen, part=POST_CONDITIONS)
        for _, rows in post.groupby(["trials_at_once", "threads"]):
            out.append((replace(condition_of(coverage, rows), named=c.named), coverage, rows.reset_index(drop=True)))
    return out


def chart_fit(table: pd.DataFrame, published: pd.DataFrame, given=CHART_GIVEN) -> dict:
    """How one condition's prediction follows the post's per-dataset ratio on the ``given`` datasets only: ``n``,
    ``rms_log_error`` (the criterion), the median error factor and how many fall within 25 %."""
    merged = against_chart(table, published[published.dataset.isin(list(given))])
    err = np.log(merged.predicted_post_ratio.to_numpy(float) / merged.post_ratio.to_numpy(float))
    err = err[np.isfinite(err)]
    if not err.size:
        return {"n": 0, "rms_log_error": math.nan, "median_error": math.nan, "n_within_25": 0}
    rms, median = float(np.sqrt(np.mean(err**2))), float(np.exp(np.median(np.abs(err))))
    within = int((np.abs(np.exp(err) - 1) <= 0.25).sum())
    return {"n": int(err.size), "rms_log_error": rms, "median_error": median, "n_within_25": within}


def choose(tables: dict, published: pd.DataFrame, given=CHART_GIVEN) -> tuple[str | None, pd.DataFrame]:
    """(the key of the condition whose prediction fits the chart's ``given`` datasets best, one row per condition
    with its fit). ``tables``: ``{key: comparison table}``. Only the given datasets' chart values are read."""
    rows = [{"key": key, **chart_fit(table, published, given)} for key, table in tables.items()]
    fits = pd.DataFrame(rows, columns=["key", "n", "rms_log_error", "median_error", "n_within_25"])
    usable = fits[fits.n > 0]
    best = None if usable.empty else str(usable.sort_values(["rms_log_error", "key"]).key.iloc[0])
    return best, fits.assign(chosen=fits.key == best)


def predictions(results: Results, measured: list | None = None) -> dict:
    """Every condition's prediction, its fit to the given chart datasets, the chosen one: ``{"conditions": {key:
    PredictionCondition}, "tables": {key: comparison}, "fits", "chosen": key, "table", "unranked": {"datasets"}}``."""
    measured = prediction_conditions(results) if measured is None else measured
    conditions = {c.key: c for c, _, _ in measured}
    tables = {c.key: comparison(coverage, None if rows is coverage else rows) for c, coverage, rows in measured}
    chosen, fits = choose(tables, chart())
    blocks = [t.assign(chosen=key == chosen) for key, t in tables.items()]
    table = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame(columns=COMPARISON_COLUMNS)
    omp = {c.key: rows.groupby("arm").omp_max_threads.median().reindex(reference_arms()) for c, _, rows in measured}
    fits = fits.assign(
        cpu=fits.key.map(lambda k: conditions[k].cpu),
        trials_at_once=fits.key.map(lambda k: conditions[k].trials_at_once),
        threads=fits.key.map(lambda k: conditions[k].threads_label),
        archive_ratio=fits.key.map(lambda k: archive_estimate(tables[k])["ratio"]),
        n_measured=fits.key.map(lambda k: int(tables[k].measured.sum())),  # the list's datasets it ran itself
        mxnet_omp_threads=fits.key.map(lambda k: float(omp[k].iloc[0])),  # as the trials recorded them
        pytorch_omp_threads=fits.key.map(lambda k: float(omp[k].iloc[1])),
    )
    fits["reproduces"] = (fits.archive_ratio / post_ratio() - 1).abs() <= REPRODUCES
    return {"conditions": conditions, "tables": tables, "fits": fits, "chosen": chosen, "table": table,
            "unranked": {"datasets": sorted(set(cost_rows(results, part=CONTENTION).dataset))}}  # fmt: skip


def facts(post: dict) -> dict:
    """What the page says of B under the measured conditions (``predictions``' result): the fits (best first) and
    each key's ``PredictionCondition`` (the templates name it), the chosen condition and its whole-list prediction
    as a ``Quantity``, the runner-up within ``NEAR_TIE`` (else None), the residual to the post's ratio, the
    conditions that reproduce it (``REPRODUCES``), the closest one, the post's dataset count as its text gives it
    beside its list's, and what is not ranked (``unranked``: the contention part's ``datasets``, and ``closing``)."""
    fits = post["fits"].sort_values(["rms_log_error", "key"]).reset_index(drop=True)
    chosen = fits[fits.chosen]
    out = {"fits": fits, "conditions": post["conditions"], "claimed": post_ratio(), "stated": CLAIMED_SPEEDUP,
           "tolerance": REPRODUCES, "n_given": len(CHART_GIVEN), "n_list": len(monash.names(in_2024_post=True)),
           "n_stated": N_DATASETS_STATED, "reproducing": fits[fits.reproduces], "unranked": post.get("unranked"),
           "not_reproducing": fits[~fits.reproduces], "chosen": None, "closest": None, "runner_up": None}  # fmt: skip
    if fits.empty or chosen.empty:
        return out
    row = chosen.iloc[0]
    closest = fits.iloc[(np.log(fits.archive_ratio / post_ratio())).abs().argsort().iloc[0]]
    others = fits[~fits.chosen & (fits.n > 0)]
    near = len(others) and others.rms_log_error.iloc[0] <= row.rms_log_error * (1 + NEAR_TIE)
    return {
        **out,
        "chosen": row,
        "chosen_ratio": Quantity("deepar.post.chosen_archive_ratio", float(row.archive_ratio),
                                 n=f"the post's {archive_estimate(post['tables'][row.key])['n_datasets']} datasets",
                                 label="the predicted whole-list MXNet / PyTorch",
                                 conditions=post["conditions"][row.key].conditions),
        "runner_up": others.iloc[0] if near else None,
        "residual": post_ratio() / float(row.archive_ratio),
        "closest": closest,
    }  # fmt: skip


def chart() -> pd.DataFrame:
    """The post's per-dataset totals read off its chart (reference folder, ``CHART_FILE``): 21 of its datasets."""
    frame = pd.read_csv(reference_dir() / CHART_FILE)
    return frame.rename(columns={"mxnet_total_s": "post_mxnet_s", "pytorch_total_s": "post_pytorch_s"})


def against_chart(table: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The prediction beside each published total: predicted / published per framework, and the post's per-batch
    cost over ours (``post_over_ours_*``: above 1, the framework was slower per batch on the post's machine)."""
    merged = table.merge(published[["dataset", "post_mxnet_s", "post_pytorch_s"]], on="dataset", how="inner")
    merged["post_ratio"] = merged.post_mxnet_s / merged.post_pytorch_s
    for side in sides():
        ours = f"ours_{side}_s_per_batch"
        merged[f"predicted_over_post_{side}"] = merged[f"predicted_post_{side}_s"] / merged[f"post_{side}_s"]
        merged[f"post_over_ours_{side}"] = merged[f"post_{side}_s"] / POST_BATCHES / merged[ours]
    return merged.sort_values("window", kind="stable").reset_index(drop=True)


def against_chart_summary(merged: pd.DataFrame) -> dict:
    """Per framework the geometric mean of the post's per-batch cost over ours on the measured charted datasets (and
    on the larger bars, >= 2,000 s, where a pixel's 135 s matters least); the post's ratio against the window."""
    measured = merged[merged.measured]
    big = measured[measured.post_mxnet_s >= 2000]
    out = {"n_charted": len(merged), "n_measured": len(measured), "n_big": len(big)}
    for suffix, rows in (("", measured), ("_big", big)):  # geometric means over each set, per framework
        out |= {f"post_over_ours_{side}{suffix}": gmean(rows[f"post_over_ours_{side}"]) for side in sides()}
    trend = float(np.corrcoef(merged.window, merged.post_ratio)[0, 1]) if len(merged) > 2 else math.nan
    return {**out, "post_ratio_vs_window": trend}


def archive_estimate(table: pd.DataFrame) -> dict:
    """The whole list's predicted MXNet / PyTorch total (measured and modelled rows of ``comparison``), and how many
    modelled rows lie beyond the measured windows (``n_beyond``: the window line extrapolated, ``staged``: the
    measured windows' range)."""
    usable = table.dropna(subset=["predicted_post_mxnet_s", "predicted_post_pytorch_s"])
    mxnet, pytorch = usable.predicted_post_mxnet_s.sum(), usable.predicted_post_pytorch_s.sum()
    ratio = float(mxnet / pytorch) if len(usable) else math.nan
    staged, modelled = table.loc[table.measured, "window"], usable.loc[~usable.measured, "window"]
    beyond = int(((modelled < staged.min()) | (modelled > staged.max())).sum()) if len(staged) else len(modelled)
    return {"ratio": ratio, "n_datasets": len(usable), "n_modelled": int((~usable.measured).sum()),
            "n_beyond": beyond, "staged": (staged.min(), staged.max()) if len(staged) else None}  # fmt: skip


def dataset_range(table: pd.DataFrame) -> dict | None:
    """The lowest and highest predicted MXNet / PyTorch of one condition's ``comparison`` over the datasets its own
    trials measured (the spread behind B's total): ``{"min"|"max": (dataset, Quantity)}``; None when none is."""
    rows = table[table.measured].dropna(subset=["predicted_post_ratio"]).set_index("dataset").predicted_post_ratio
    if rows.empty:
        return None
    ends = {"min": rows.idxmin(), "max": rows.idxmax()}
    return {end: (ds, Quantity(f"deepar.coverage.dataset_ratio.{end}", float(rows[ds]))) for end, ds in ends.items()}


def chart_facts(merged: pd.DataFrame) -> dict:
    """The prediction beside the chart (template ``deepar_chart``): the merged rows and their summary."""
    return {"merged": merged, "s": against_chart_summary(merged)}


def main(argv: list[str] | None = None) -> int:
    """``python -m fwbench.analysis.deepar_prediction --profile paper -o results/paper/deepar_post_comparison.csv``"""
    args, results = deepar.csv_arguments("the post's per-dataset totals predicted from the coverage part", argv)
    result = predictions(results)
    table = result["table"]
    if table.empty:
        print(f"no coverage trials in profile {args.profile!r}: {args.output} not written")
        return 0
    table.to_csv(args.output, index=False, float_format="%.6g")
    print(f"wrote {len(table)} rows ({len(result['tables'])} conditions; chosen: {result['chosen']}) to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
