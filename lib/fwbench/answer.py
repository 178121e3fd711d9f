"""The study's answer, computed once from the results store: the facts every page opens with.

``compute(results)`` gathers the claims ledger's rows (every claim's estimate is the ledger's, never recomputed
here), the best-setting comparison of the fastest IMDB arm (claim A7's held-out selection), the IMDB test accuracy,
the DeepAR MASE against the Monash paper's, the hardware and versions and the trial count. ``prose.answer_text``
words them for the README's front page, the top of the post and the notebooks' closing cells, so a number cannot
differ between them; every shared number is a ``fwbench.quantity`` span, which ``tools/check_pages.py`` reads back.

Which framework "is faster" is read off the interval, not the point estimate: above 1 with the whole interval
above 1, below with the whole interval below; an interval that holds 1 is "no clear difference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from . import ledger
from .analysis import Results, convergence, cpu_models, deepar, deepar_conditions, mase_reference
from .frameworks import get_framework
from .ledger.render import framework_versions
from .ledger.rules import verdict_above
from .ledger.sources.borealis2018 import EPOCH
from .ledger.sources.borealis2018_rules import PT, best_setting_ratio, best_settings_table
from .ledger.sources.deepar2024 import N_POST_LIST
from .machines import NOT_RECORDED, cpu_model_of, models_by_own_run
from .published import borealis2018, deepar2024, overview
from .quantity import Quantity, from_row
from .studies import get_study

FULL_HYBRID_ARM = "mxnet-hybrid-full"  # the arm the 2018 post could not build (claim A9)
GPU_VERDICT = ledger.NOT_TESTABLE
SPEED_RUN = {"threads": "config.threads", "at_once": "provenance.trials_sharing_host"}  # what each trial recorded


@dataclass(frozen=True)
class Workload:
    """One line of the answer's speed part: a ledger claim whose estimate is a time ratio ``num / den``."""

    claim: str
    title: str
    num: str  # framework of the ratio's numerator (the ledger's orientation)
    den: str
    claimed: float  # the source's ratio in the same orientation (from ``fwbench.published``)
    source: str
    drawn_inverse: bool = False  # the answer's figure draws every ratio as MXNet / PyTorch: True where num is not


WORKLOADS = (
    Workload(
        "B",
        "Forecasting (GluonTS DeepAR, Monash archive)",
        "mxnet",
        "torch",
        deepar2024.post_ratio(),
        "the 2024 post (a laptop CPU)",
    ),
    Workload(
        "A7",
        "Sentiment (IMDB LSTM), each framework at its best setting",
        "torch",
        "mxnet",
        borealis2018.BEST_SETTING_SPEEDUP["dense"],
        "the 2018 post (a V100 GPU)",
        drawn_inverse=True,
    ),
    Workload(
        "C1",
        "Image inference (VGG16, batch 1)",
        "torch",
        "mxnet",
        overview.VGG16_LATENCY_MS["torch"] / overview.VGG16_LATENCY_MS["mxnet"],
        "an overview article (Colab, at a GPU's rate)",
        drawn_inverse=True,
    ),
)


def claim_quantity(row) -> Quantity:
    """A ledger row's estimate as the named quantity ``claim.<id>`` (its interval at the level the ledger used)."""
    return from_row(f"claim.{row.claim_id}", row.estimate, row.ci_low, row.ci_high, row.ci_level, row.n)


def reading(q: Quantity) -> str:
    """Which side of a time ratio ``num / den`` is faster, read off its interval (see the module docstring):
    ``den`` (the interval above 1), ``num`` (below 1), ``neither`` (it holds 1), ``one_trial`` (no interval) or
    ``unmeasured``; template ``answer`` words it."""
    if math.isnan(q.value):
        return "unmeasured"
    if not q.has_ci:
        return "one_trial"
    if q.ci_low > 1:
        return "den"
    if q.ci_high < 1:
        return "num"
    return "neither"


def label(framework: str) -> str:
    return get_framework(framework).label


@dataclass
class Answer:
    profile: str
    hardware: dict  # the CPU models, cores and versions of the finished trials (``hardware``)
    trials: Quantity
    ledger: pd.DataFrame
    parts: dict = field(default_factory=dict)  # claim id -> its judged parts (``ledger.judged_parts``)
    speed: list[dict] = field(default_factory=list)
    favour: dict | None = None
    accuracy: list[Quantity] = field(default_factory=list)
    accuracy_run: dict | None = None  # how the accuracy was reached: epochs, reviews, seeds, CPUs, threads, the bar
    mase: dict | None = None
    limits: dict = field(default_factory=dict)  # the facts of the limits a reader weighs first (``_limits``)
    gap: dict | None = None  # B's gap to the post: ``analysis.deepar_conditions.load``
    cpus: dict = field(default_factory=dict)  # the timings per CPU model and fp mode: ``analysis.cpu_models.facts``

    def quantity(self, claim_id: str) -> Quantity | None:
        rows = self.ledger[self.ledger.claim_id == claim_id]
        return claim_quantity(rows.iloc[0]) if len(rows) else None


def hardware(trials: pd.DataFrame) -> dict:
    """What the finished ``trials`` ran on, where they ran whatever their configs name: ``models``, the profile's own
    run's first (most trials naming no CPU), then by trials, each ``{"name", "n", "parts"}`` with ``parts`` the
    (study, part, trials there, the part's trials on every model) it ran; the core counts; the framework versions."""
    if trials.empty:
        return {"models": [], "cores": [], "versions": {}}
    cpu = trials["provenance.cpu_id"].map(cpu_model_of) if "provenance.cpu_id" in trials else NOT_RECORDED
    part = trials["config.part"].fillna("") if "config.part" in trials else ""
    where = pd.DataFrame({"study": trials.study, "part": part, "cpu": cpu})
    per_part = where.groupby(["study", "part"]).size()
    models = []
    for model in models_by_own_run(trials) or [NOT_RECORDED]:
        counts = where[where.cpu == model].groupby(["study", "part"]).size()
        parts = [(study, name, int(n), int(per_part[study, name])) for (study, name), n in counts.items()]
        models.append({"name": cpu_models.Condition(model).cpu_name, "n": int(counts.sum()), "parts": parts})
    cores = sorted({int(c) for c in trials.get("provenance.cpu_count", pd.Series(dtype=float)).dropna()})
    return {"models": models, "cores": cores, "versions": framework_versions(trials)}


def _favour(d: ledger.Data) -> dict | None:
    """Every IMDB arm at its best setting (A7's selection, ``table``) and the fastest (``arm``) against PyTorch's
    reference arm (``quantity``, ``label``: None where the reference arm is itself the fastest, or unmeasured)."""
    rows = best_settings_table(d, EPOCH)
    if not rows:
        return None
    fastest = min(rows, key=lambda r: r["geomean"])
    part = best_setting_ratio(d, fastest["arm"], PT, EPOCH, verdict_above) if fastest["arm"] != PT else None
    if part is None or math.isnan(part.estimate):
        return {"arm": fastest["arm"], "quantity": None, "label": None, "table": rows}
    q = Quantity("imdb.fastest_arm_vs_pytorch", part.estimate, part.ci_low, part.ci_high, part.confidence, part.n)
    return {"arm": fastest["arm"], "quantity": q, "label": part.label, "table": rows}


def _limits(a: Answer, d: ledger.Data) -> dict:
    """The facts of the few limits a reader must weigh before the numbers (template ``answer``), from the store:
    the IMDB timing epochs' size, DeepAR's coverage and the CPU (``cpu_limit``)."""
    imdb, coverage, main = d.imdb, d.deepar_coverage, d.deepar
    return {
        "imdb_n_train": (int(imdb.n_train.min()), int(imdb.n_train.max())) if not imdb.empty else None,
        "coverage": (
            {
                "n_datasets": coverage.dataset.nunique(),
                "epochs": int(coverage.epochs.max()),
                "n_main_datasets": main.dataset.nunique() if not main.empty else None,
            }
            if not coverage.empty
            else None
        ),
        "deepar": (
            {"n_datasets": main.dataset.nunique(), "n_post": N_POST_LIST, "n_seeds": main.seed.nunique()}
            if coverage.empty and not main.empty
            else None
        ),
        "cpu": cpu_limit(a.cpus),
    }


def cpu_limit(cpus: dict) -> dict:
    """Which CPU the timings are of (``base``: the IMDB unnamed trials' condition; None when unknown), whether every
    timed study's unnamed trials ran mostly on that model (``every_study``), the IMDB ``setting``'s MXNet / PyTorch
    ratio there (``here``), and on the other CPU models' conditions whose interval excludes it (``others``:
    condition and quantity; ``n_within``: how many others overlap it or have no interval). Decision: the first screen
    names a condition's ratio only where it differs beyond the intervals; the results' per-CPU table has them all."""
    ratios, run = cpus.get("imdb_ratios") or [], cpus.get("speed_run", {})
    firsts = [next((c for c in cs if not c.named), None) for cs in cpus.get("conditions", {}).values() if cs]
    base = next((c for c in cpus.get("conditions", {}).get(cpu_models.IMDB, []) if not c.named), None)
    if base is None:
        return dict(base=None, here=None, others=[], n_within=0, setting=None, every_study=False, run=run)
    here = next((q for c, q in ratios if c.cpu == base.cpu and c.fp_mode == base.fp_mode), None)
    others = [(c, q) for c, q in ratios if c.cpu != base.cpu]
    low, high = (here.ci_low, here.ci_high) if here is not None else (math.nan, math.nan)
    apart = [(c, q) for c, q in others if q.ci_low > high or q.ci_high < low]  # False where either has no interval
    every = all(c is not None and c.cpu == base.cpu for c in firsts)
    setting, within = cpus.get("imdb_setting"), len(others) - len(apart)
    return dict(base=base, here=here, others=apart, n_within=within, setting=setting, every_study=every, run=run)


def speed_run(done: pd.DataFrame, d: ledger.Data) -> dict:
    """The threads a trial and trials sharing the host the speed lines' trials recorded (each: the values found)."""
    ids = set().union(*(set(f.trial_id) for f in (d.imdb, d.deepar_coverage, d.vgg16) if "trial_id" in f))
    t = done[done.trial_id.isin(ids)]
    return {k: sorted({int(v) for v in t[c].dropna()}) if c in t else [] for k, c in SPEED_RUN.items()}


def compute(results: Results) -> Answer:
    """The answer for ``results``' profile (see the module docstring), once: kept in ``results``. It is the
    profile's answer: a notebook's overrides are set aside (``Results.whole_profile``), as the ledger reads."""
    whole = results.whole_profile()
    return whole.frame(("answer",), lambda: _compute(whole))


def _compute(results: Results) -> Answer:
    table = ledger.build(results)
    d = ledger.load(results)
    done = results.finished(drop="stale")  # the one count of trials every page states
    trials = Quantity("trials.done", float(len(done)), n="trials", digits=6)
    a = Answer(profile=results.profile or "all", hardware=hardware(done), trials=trials, ledger=table)
    a.parts = ledger.judged_parts(d)
    for w in WORKLOADS:
        q = a.quantity(w.claim)
        if q is None or math.isnan(q.value):
            continue
        row = table[table.claim_id == w.claim].iloc[0]
        beside = [
            (p.label, part_quantity(w.claim, k, p)) for k, p in enumerate(a.parts.get(w.claim, []), 1) if p.beside
        ]
        a.speed.append({"workload": w, "quantity": q, "verdict": row.verdict, "what": row.quantity, "beside": beside})
    a.favour = _favour(d)
    acc = convergence.accuracy_bar_table(d.imdb_quality) if not d.imdb_quality.empty else pd.DataFrame()
    if len(acc):  # the sources' frameworks: JAX's accuracy is context ("leaving MXNet"), not the answer's
        imdb_study = get_study("imdb")
        acc = acc[acc.arm.map(imdb_study.framework_of).isin(set(imdb_study.reference))]
    a.accuracy = [convergence.accuracy_quantity(r) for r in acc.itertuples()]
    if len(acc):
        run = dict(epochs=int(acc.epochs.max()), n_train=int(acc.n_train.max()), all_pass=bool(acc.passes_bar.all()))
        a.accuracy_run = dict(run, bar=convergence.ACCURACY_BAR, seeds=sorted({int(s) for s in acc.seeds}),
                              **convergence.quality_conditions(d.imdb_quality, acc.arm))  # fmt: skip
    if not d.deepar.empty:
        table_mase, acc_deepar = mase_reference.mase_vs_reference(d.deepar), deepar.accuracy_table(d.deepar)
        if len(table_mase):
            a.mase = {
                "low": Quantity("deepar.mase_vs_paper.min", float(table_mase.ratio.min())),
                "high": Quantity("deepar.mase_vs_paper.max", float(table_mase.ratio.max())),
                "n": int(table_mase.dataset.nunique()),
                "ratio": deepar.mase_ratio(acc_deepar),
                "wins": deepar.mase_wins(d.deepar, acc_deepar),
            }
    if not d.deepar_coverage.empty:
        a.gap = deepar_conditions.load(results)
    a.cpus = cpu_models.facts(results) if results.profile is not None else {}
    a.cpus["speed_run"] = speed_run(done, d)
    a.limits = _limits(a, d)
    return a


def part_quantity(claim_id: str, k: int, part) -> Quantity:
    """Part ``k`` (from 1) of a claim as the named quantity ``claim.<id>.<k>``."""
    return Quantity(
        f"claim.{claim_id}.{k}", part.estimate, part.ci_low, part.ci_high, part.confidence, str(part.n or "")
    )


def claims(a: Answer, study: str) -> list[dict]:
    """The ledger's claims on one study (template ``answer_study``): each row with its parts, a part's estimate as
    the quantity ``claim.<id>.<k>`` (None where it was not measured)."""
    rows = a.ledger[a.ledger.claim_id.map(ledger.STUDY_OF) == study]
    return [
        {
            "row": row,
            "parts": [
                (p, None if math.isnan(p.estimate) else part_quantity(row.claim_id, k, p))
                for k, p in enumerate(a.parts.get(row.claim_id, []), start=1)
            ],
        }
        for row in rows.itertuples()
    ]
