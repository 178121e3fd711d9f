"""The study's answer, computed once from the results store, in the words every page opens with.

``compute(store, profile)`` gathers the numbers: the claims ledger's rows (``fwbench.ledger``: every claim's
estimate is the ledger's, never recomputed here), the best-setting comparison of the fastest IMDB arm (the same
held-out selection as claim A7), the IMDB test accuracy and the DeepAR MASE against the Monash paper's (the
analysis modules' functions), the hardware and versions (``ledger.host_text``) and the trial count. ``markdown``
renders them: the README's front page, the top of the post (``fwbench.report``) and the notebooks' closing
cells show this one text, so a number cannot differ between them. Every number shared with another page is a
``fwbench.quantity`` span, which ``fwbench.consistency`` reads back.

Which framework "is faster" is read off the interval, not the point estimate: above 1 with the whole interval
above 1, below with the whole interval below; an interval that holds 1 is "no clear difference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from . import ledger, prose
from .analysis import (
    convergence,
    cpu_models,
    deepar,
    deepar_conditions,
    mase_reference,
)
from .frameworks import get_framework
from .ledger.render import host_text
from .ledger.rules import verdict_above
from .ledger.sources.borealis2018 import EPOCH
from .ledger.sources.borealis2018_rules import PT, best_setting_ratio, best_settings_table
from .paths import results_path
from .published import borealis2018, deepar2024, overview
from .quantity import Quantity, from_row
from .store import ResultsStore
from .studies import get_study

FULL_HYBRID_ARM = "mxnet-hybrid-full"  # the arm the 2018 post could not build (claim A9)
GPU_VERDICT = ledger.NOT_TESTABLE


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


def reading(q: Quantity, num: str, den: str) -> str:
    """Who is faster, read off the interval of a time ratio ``num / den`` (see the module docstring)."""
    if math.isnan(q.value):
        return "not measured"
    if not q.has_ci:
        return "one trial a side: no interval to read"
    if q.ci_low > 1:
        return f"{den} is faster"
    if q.ci_high < 1:
        return f"{num} is faster"
    return "no clear difference"


def label(framework: str) -> str:
    return get_framework(framework).label


@dataclass
class Answer:
    profile: str
    hardware: str
    trials: Quantity
    ledger: pd.DataFrame
    parts: dict = field(default_factory=dict)  # claim id -> its judged parts (``ledger.judged_parts``)
    speed: list[dict] = field(default_factory=list)
    favour: dict | None = None
    accuracy: list[Quantity] = field(default_factory=list)
    accuracy_note: str = ""
    mase: dict | None = None
    limits: list[str] = field(default_factory=list)
    gap: dict | None = None  # B's gap to the post: ``analysis.deepar_conditions.load``
    cpus: dict = field(default_factory=dict)  # the timings per CPU model and fp mode: ``analysis.cpu_models.facts``

    def quantity(self, claim_id: str) -> Quantity | None:
        rows = self.ledger[self.ledger.claim_id == claim_id]
        return claim_quantity(rows.iloc[0]) if len(rows) else None


def _done(store: ResultsStore, profile: str | None) -> pd.DataFrame:
    """The finished trials of ``profile`` (every profile's for None or "all", as ``ledger.build`` reads them)."""
    t = store.trials()
    if t.empty:
        return t
    t = t[t.status == "done"]
    return t if profile in (None, "all") or "profile" not in t else t[t.profile == profile]


def trial_count(store: ResultsStore, profile: str) -> Quantity:
    """The finished trials of ``profile`` (each a fresh process): the one count every page states."""
    t = _done(store, profile)
    n = len(t)
    return Quantity("trials.done", float(n), n="trials", digits=6)


def _favour(d: ledger.Data) -> dict | None:
    """The fastest IMDB arm against PyTorch's reference arm, each at its best setting (A7's selection)."""
    rows = best_settings_table(d, EPOCH)
    if not rows:
        return None
    fastest = min(rows, key=lambda r: r["median"])
    if fastest["arm"] == PT:
        return None
    part = best_setting_ratio(d, fastest["arm"], PT, EPOCH, verdict_above)
    if part is None or math.isnan(part.estimate):
        return None
    q = Quantity("imdb.fastest_arm_vs_pytorch", part.estimate, part.ci_low, part.ci_high, part.confidence, part.n)
    return {"arm": fastest["arm"], "quantity": q, "label": part.label, "table": rows}


def _limits(a: Answer, d: ledger.Data) -> list[str]:
    """The few limits a reader must weigh before the numbers, each from the store."""
    out = [
        "One CPU-only machine: claims whose sources measured on a GPU get a labelled analogue here, not a verdict "
        f"({int((a.ledger.verdict == GPU_VERDICT).sum())} of {len(a.ledger)} claims).",
    ]
    imdb = d.imdb
    if not imdb.empty:
        out.append(
            f"IMDB timing epochs of {int(imdb.n_train.min()):,}-{int(imdb.n_train.max()):,} reviews, scaled to the "
            "post's 25,000-review epoch; accuracy on all 25,000."
        )
    coverage = d.deepar_coverage
    if not coverage.empty:
        out.append(
            f"DeepAR's B over the {coverage.dataset.nunique()} datasets of the post's list staged here, from "
            f"{int(coverage.epochs.max())}-epoch trials (the cost per batch, checked against "
            f"{d.deepar.dataset.nunique()} datasets run at the full 100 x 50); the post's other datasets only "
            "estimated."
            if not d.deepar.empty
            else f"DeepAR's B over {coverage.dataset.nunique()} datasets, from short trials."
        )
    elif not d.deepar.empty:
        out.append(
            f"DeepAR on {d.deepar.dataset.nunique()} of the post's {deepar2024.N_DATASETS} datasets, "
            f"{d.deepar.seed.nunique()} seed(s) each."
        )
    out.append("One version of each framework (the last MXNet, 1.9.1); other builds can move the ratios.")
    out.append(_cpu_limit(a.cpus))
    return out


def _cpu_limit(cpus: dict) -> str:
    """Which CPU the timings are of, and the IMDB setting's MXNet / PyTorch ratio on every other condition measured
    (``analysis.cpu_models``): a timing is a fact about a CPU."""
    ratios = cpus.get("imdb_ratios") or []
    base = next((c for c in cpus.get("conditions", {}).get(cpu_models.IMDB, []) if not c.named), None)
    if base is None:
        return "The timings are one CPU's; other CPUs can move the ratios."
    here = next((q for c, q in ratios if c.cpu == base.cpu and c.fp_mode == base.fp_mode), None)
    others = [(c, q) for c, q in ratios if c.cpu != base.cpu]
    if not others or here is None:
        return f"The timings are of an {base.cpu_name} CPU; other CPUs can move the ratios."
    setting = cpus["imdb_setting"]
    shown = "; ".join(f"{q.markup()} on an {c.cpu_name} with {FP_WORDS[c.fp_mode]}" for c, q in others)
    return (
        f"The timings are of an {base.cpu_name} CPU. The CPU is a condition: at one IMDB setting (batch "
        f"{setting['batch_size']}, {setting['num_workers']} workers) MXNet / PyTorch is {here.markup()} there, "
        f"{shown}. On Intel cores the subnormal floats of the LSTM's backward pass are slow unless flushed; the "
        'results\' "The CPU is a condition" has each condition.'
    )


FP_WORDS = {"default": "the libraries' defaults", "flush": "subnormals flushed"}


def compute(store: ResultsStore | None, profile: str) -> Answer:
    """The answer for ``profile`` from ``store`` (default: the results store; see the module docstring). It is the
    profile's answer: a notebook run with overrides still quotes the whole profile's rows, as the ledger does."""
    store = store or ResultsStore.open_read(results_path())
    table = ledger.build(store, profile)
    d = ledger.load(store, profile)
    a = Answer(
        profile=profile, hardware=host_text(_done(store, profile)), trials=trial_count(store, profile), ledger=table
    )
    a.parts = ledger.judged_parts(d)
    for w in WORKLOADS:
        q = a.quantity(w.claim)
        if q is None or math.isnan(q.value):
            continue
        row = table[table.claim_id == w.claim].iloc[0]
        beside = [(k, p) for k, p in enumerate(a.parts.get(w.claim, []), start=1) if p.beside]
        a.speed.append({"workload": w, "quantity": q, "verdict": row.verdict, "what": row.quantity, "beside": beside})
    a.favour = _favour(d)
    acc = convergence.accuracy_bar_table(d.imdb_quality) if not d.imdb_quality.empty else pd.DataFrame()
    if len(acc):  # the sources' frameworks: JAX's accuracy is context ("leaving MXNet"), not the answer's
        imdb_study = get_study("imdb")
        acc = acc[acc.arm.map(imdb_study.framework_of).isin(set(imdb_study.reference))]
    a.accuracy = [convergence.accuracy_quantity(r) for r in acc.itertuples()]
    if len(acc):
        a.accuracy_note = (
            f"after {int(acc.epochs.max())} epochs on all {int(acc.n_train.max()):,} training reviews, median over "
            f"seeds; {'every arm reaches' if acc.passes_bar.all() else 'not every arm reaches'} the "
            f"{convergence.ACCURACY_BAR:.0%} a Keras LSTM gets"
        )
    if not d.deepar.empty:
        table_mase = mase_reference.mase_vs_reference(d.deepar)
        if len(table_mase):
            a.mase = {
                "low": Quantity("deepar.mase_vs_paper.min", float(table_mase.ratio.min())),
                "high": Quantity("deepar.mase_vs_paper.max", float(table_mase.ratio.max())),
                "n": int(table_mase.dataset.nunique()),
                "median": deepar.median_mase(d.deepar),
            }
    if not d.deepar_coverage.empty:
        a.gap = deepar_conditions.load(profile, store=store)
    a.cpus = cpu_models.facts(store, profile) if profile not in (None, "all") else {}
    a.limits = _limits(a, d)
    return a


def _speed_line(s: dict) -> str:
    w, q = s["workload"], s["quantity"]
    verdict = "not testable here (needs a GPU): an analogue" if s["verdict"] == GPU_VERDICT else s["verdict"]
    beside = "".join(f" Beside it, {p.label}: {part_quantity(w.claim, k, p).markup()}." for k, p in s.get("beside", []))
    return (
        f"- **{w.title}: {reading(q, label(w.num), label(w.den))}.** {s['what']}: {q.markup()}; "
        f"{w.source} found {w.claimed:.2f} (claim {w.claim}: {verdict}).{beside}"
    )


def markdown(a: Answer, heading: str = "## The answer") -> str:
    """The answer as Markdown with quantity spans: the README's front page, the post's first screen."""
    lines = [heading, ""] if heading else []
    lines.append(
        f"Measured on **{a.hardware}**, no GPU: {a.trials.markup(ci=False)} finished trials of profile `{a.profile}`, "
        "each in a fresh process; every interval is over those independent trials."
    )
    lines.append("")
    lines.append("**Speed** (a ratio of times: above 1, the first framework named is slower):")
    lines += [_speed_line(s) for s in a.speed]
    if a.favour:
        f = a.favour
        lines.append(
            f"- **In MXNet's favour:** its whole model hybridized (`{f['arm']}`, the LSTM included, which the 2018 "
            f"post could not do) is the fastest IMDB arm: epoch time {f['arm']} / {PT}, each at its best setting, "
            f"{f['quantity'].markup()} ({f['label'].split(' (')[0]})."
            if f["arm"] == FULL_HYBRID_ARM
            else f"- **The fastest IMDB arm** is `{f['arm']}`: epoch time {f['arm']} / {PT}, each at its best "
            f"setting, {f['quantity'].markup()}."
        )
    lines += [
        "",
        f"**Verdicts** on the sources' {len(a.ledger)} claims: "
        f"{prose.ledger_verdict_counts(a.ledger, ledger.PRECEDENCE)} (the claims ledger has each one with its rule).",
        "",
        "**Limits:** " + " ".join(a.limits),
    ]
    if a.accuracy or a.mase:
        lines += ["", "**What they learn** (the same model in each framework):"]
    if a.accuracy:
        arms = ", ".join(f"`{q.name.rsplit('.', 1)[-1]}` {q.markup(ci=False)}" for q in a.accuracy)
        lines.append(f"- IMDB test accuracy: {arms} ({a.accuracy_note}).")
    if a.mase:
        m = a.mase
        med = ", ".join(f"`{arm}` {q.markup(ci=False)}" for arm, q in m["median"].items())
        lines.append(
            f"- DeepAR MASE, ours / the Monash paper's: {m['low'].markup(ci=False)} to {m['high'].markup(ci=False)} "
            f"over {m['n']} dataset(s) with a published value; median MASE over datasets: {med}."
        )
    if a.gap is not None and not a.gap["factors"].empty:
        lines += [
            "",
            "**Why DeepAR's ratio is not the post's 4.5** (claim B; every condition measured here in both frameworks "
            "alike, one at a time; notebook 02 has each per dataset):",
            "",
            prose.deepar_factors(a.gap),
        ]
        if a.gap.get("post") and a.gap["post"]["chosen"] is not None:
            lines += ["", prose.post_conditions(a.gap["post"], answer=True)]
    return "\n".join(lines)


def study_claims(study: str) -> list[str]:
    """The ids of the claims judged on ``study``'s rows (the ledger's ``STUDY_OF``)."""
    return [c for c, s in ledger.STUDY_OF.items() if s == study]


def part_quantity(claim_id: str, k: int, part) -> Quantity:
    """Part ``k`` (from 1) of a claim as the named quantity ``claim.<id>.<k>``."""
    return Quantity(
        f"claim.{claim_id}.{k}", part.estimate, part.ci_low, part.ci_high, part.confidence, str(part.n or "")
    )


def claims_markdown(a: Answer, study: str) -> str:
    """The ledger's claims on one study, every part with its estimate as a quantity span: what a notebook closes
    with instead of recomputing them."""
    lines = []
    for row in a.ledger[a.ledger.claim_id.isin(study_claims(study))].itertuples():
        parts = []
        for k, p in enumerate(a.parts.get(row.claim_id, []), start=1):
            if math.isnan(p.estimate):
                parts.append(f"{p.label}: {p.reason or 'not measured'}")
            else:
                parts.append(f"{p.label}: {p.quantity} = {part_quantity(row.claim_id, k, p).markup()}")
        body = "\n".join(f"  - {text}" for text in parts) if parts else f"  - {row.reason}"
        lines.append(f"- **{row.claim_id}** ({row.verdict}): {row.claim}\n{body}")
    return "\n".join(lines) if lines else f"_No claim of the ledger is judged on study `{study}`._"


def ledger_markdown(a: Answer) -> str:
    """The claims ledger as one Markdown table, each claim's deciding estimate as its quantity span."""
    lines = [
        f"| claim | verdict | source hardware | ours | scale floor | what is estimated | {ledger.render.CI_HEADER} |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in a.ledger.itertuples():
        floor = "met" if row.verdict != ledger.BELOW_SCALE else "below: " + str(row.reason).split("needs ", 1)[-1]
        q = claim_quantity(row)
        estimate = q.markup() if not math.isnan(q.value) else "-"
        lines.append(
            f"| {row.claim_id} | {row.verdict} | {row.source_hardware} | {row.our_hardware} | "
            f"{floor if row.scale else '-'} | {str(row.quantity or '-').replace('|', '/')} | {estimate} |"
        )
    return "\n".join(lines)


def best_settings_markdown(a: Answer) -> str:
    """Each IMDB arm at its best setting (A7's held-out selection: chosen on the first block, timed on the others)."""
    if not a.favour:
        return ""
    rows = sorted(a.favour["table"], key=lambda r: r["median"])
    lines = [f"Each IMDB arm at its fastest setting ({rows[0]['how']}), seconds per 25,000-review epoch:"]
    lines += [
        f"- `{r['arm']}`: batch {r['batch_size']}, {r['num_workers']} workers: median {r['median']:.1f} s "
        f"(IQR {r['iqr']:.1f} s, {r['n']} trials)"
        for r in rows
    ]
    return "\n".join(lines)


def study_markdown(a: Answer, study: str) -> str:
    """What a study's notebook closes with: the ledger's claims on its rows (and for IMDB, the best settings and
    the accuracy), quoted from the answer, never recomputed."""
    parts = []
    if study == "imdb":
        parts.append(best_settings_markdown(a))
        if a.favour:
            parts.append(f"Fastest arm against PyTorch, each at its best setting: {a.favour['quantity'].markup()}.")
        if a.accuracy:
            arms = ", ".join(f"`{q.name.rsplit('.', 1)[-1]}` {q.markup(ci=False)}" for q in a.accuracy)
            parts.append(f"Test accuracy: {arms} ({a.accuracy_note}).")
    parts.append(f"The claims judged on these rows (the ledger's numbers):\n\n{claims_markdown(a, study)}")
    return "\n\n".join(p for p in parts if p)
