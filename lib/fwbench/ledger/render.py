"""The ledger as text: one row per claim (``COLUMNS``), our conditions, the host and versions of a set of trials
(``host_text``: the one place the post, the README and the ledger describe them), and the facts of the rules and the
verdict counts (``rules_facts``, ``verdict_facts``: the templates ``ledger_rules`` and ``ledger_verdicts`` word them).

One confidence level per table, stated in its header. A claim judged on k > 1 parts has every interval of its row
(the estimate's and each part's in ``measurement``) at 1 - 0.05/k (Bonferroni, ``judge``), so that the k hold
together at 95 %: each row's intervals belong to a 95 % family-wise set. Every ledger table says so once, in the
header of its estimate column (``CI_HEADER``, explained by ``CI_NOTE``), and no row prints a level of its own
(``Part.text`` writes "[CI lo-hi]"); the per-interval level is data, in the ``ci_level`` column of ledger.csv.
"""

from __future__ import annotations

import pandas as pd

from ..stats import BOOTSTRAP_MIN
from .data import HARDWARE, Claim, Data
from .judge import judge
from .rules import NOT_MEASURED, NOT_TESTABLE, SENSITIVITY_TOL, TOL, Part

COLUMNS = [
    "claim_id",
    "claim",
    "source",
    "source_conditions",
    "rule",
    "verdict",
    "quantity",
    "estimate",
    "ci_low",
    "ci_high",
    "measurement",
    "our_conditions",
    "reason",
    "source_hardware",
    "our_hardware",
    "scale",
    "n",
    "parts_agree",
    "verdict_band10",
    "min_detectable",
    "ci_level",
]
SHOWN = ["claim_id", "claim", "verdict", "estimate", "ci_low", "ci_high", "n", "our_hardware", "measurement", "reason"]
CI_LEVEL = "95 % family-wise CI"  # the one level every ledger table states (see the module's doc)
CI_HEADER = f"our estimate [{CI_LEVEL}]"
CI_NOTE = (
    f"Every interval in the ledger is a {CI_LEVEL}: a claim judged on k > 1 parts has each of its intervals at "
    "1 - 0.05/k (Bonferroni), so that the k hold together at 95 %; a claim with one judged part has a plain 95 % "
    "CI. The rows print no level of their own (ledger.csv gives each interval's in its ci_level column)."
)


# ---------------------------------------------------------------------------------------------------- host
def _done(trials: pd.DataFrame) -> pd.DataFrame:
    return trials[trials.status == "done"] if not trials.empty and "status" in trials else trials


def framework_versions(trials: pd.DataFrame) -> dict:
    """``{framework: "version[, version]"}`` over the trials' provenance."""
    if trials.empty or "provenance.framework" not in trials:
        return {}
    cols = trials[["provenance.framework", "provenance.framework_version"]].dropna(subset=["provenance.framework"])
    return {
        fw: ", ".join(sorted(set(map(str, g["provenance.framework_version"]))))
        for fw, g in cols.groupby("provenance.framework")
    }


def host_text(trials: pd.DataFrame) -> str:
    """CPU model, cores and framework versions of the (finished) trials: 'CPU X (N cores); mxnet 1.9.1, ...'."""
    t = _done(trials)
    if t.empty:
        return "no finished trials"
    first = t.iloc[0]
    versions = ", ".join(f"{fw} {v}" for fw, v in framework_versions(t).items())
    return f"CPU {first.get('provenance.cpu_model')} ({first.get('provenance.cpu_count')} cores)" + (
        f"; {versions}" if versions else ""
    )


def _values(t: pd.DataFrame, col: str) -> list:
    return sorted(set(t[col].dropna())) if col in t else []


# ---------------------------------------------------------------------------------------------------- conditions
def conditions(d: Data) -> str:
    """Where our IMDB numbers come from: host, versions, threads, profile, scale (from the trials' provenance).
    Threads are every value the trials used (the quality seeds that ran two at once ran at 1), not the first's."""
    t = d.imdb_trials
    if t.empty:
        return "no IMDB trials"
    t = _done(t)
    if t.empty:
        return "no finished IMDB trials"
    first = t.iloc[0]
    return (
        f"device {d.device or 'cpu'}; {host_text(t)}; threads per trial {_values(t, 'config.threads')}; Python "
        f"{first.get('provenance.python')}; profile {d.profile or 'all'}: train reviews per epoch "
        f"{_values(t, 'config.n_train')}, epochs {_values(t, 'config.epochs')}, {t['config.seed'].nunique()} "
        f"seed(s), {len(t)} trials"
    )


def deepar_conditions(d: Data) -> str:
    f = d.deepar
    if f.empty:
        return "no DeepAR trials"
    return (
        f"{host_text(d.study_trials('deepar'))}; profile {d.profile or 'all'}: {f.dataset.nunique()} dataset(s), "
        f"{f.seed.nunique()} seed(s), arms {sorted(set(f.arm))}"
    )


def vgg16_conditions(d: Data) -> str:
    t = _done(d.study_trials("vgg16"))
    if t.empty:
        return "no VGG16 trials"
    return (
        f"{host_text(t)}; profile {d.profile or 'all'}: VGG16 random weights, arms {_values(t, 'config.arm')}, "
        f"batch {_values(t, 'config.batch_size')}, {_values(t, 'config.image_size')} px, oneDNN "
        f"{_values(t, 'config.onednn')}, {_values(t, 'config.repeats')} timed calls per trial, device "
        f"{_values(t, 'config.device')}"
    )


def onnx_conditions(d: Data) -> str:
    t = _done(d.study_trials("onnx"))
    if t.empty:
        return "no ONNX trials"
    return f"{host_text(t)}; profile {d.profile or 'all'}: steps {_values(t, 'config.step')}"


def dataparallel_conditions(d: Data) -> str:
    t = _done(d.study_trials("dataparallel"))
    if t.empty:
        return "no data-parallel trials"
    return (
        f"{host_text(t)}; profile {d.profile or 'all'}: a VGG-style net on synthetic 32x32 images, world sizes "
        f"{_values(t, 'config.world_size')} x {_values(t, 'config.threads')} thread(s), batch "
        f"{_values(t, 'config.per_rank_batch')} per worker, {_values(t, 'config.steps')} timed steps per trial"
    )


CONDITIONS_BY_STUDY = {
    "imdb": conditions,
    "deepar": deepar_conditions,
    "vgg16": vgg16_conditions,
    "onnx": onnx_conditions,
    "dataparallel": dataparallel_conditions,
}


# ---------------------------------------------------------------------------------------------------- rows
def row(claim: Claim, d: Data) -> dict:
    """The ledger row of a claim (``judge``): the verdict, the deciding part's estimate, every part as text (as a
    labelled analogue when the hardware does not match), the hardware on both sides, the scale floor and n."""
    j = judge(claim, d)
    parts, verdict = j["parts"], j["verdict"]
    deciding = (
        next((p for p in parts if p.verdict == verdict), None)
        or next((p for p in parts if not p.verdict == NOT_MEASURED), None)
        or Part("rows", reason="no judged part")
    )
    reasons = [j["reason"]] + [
        p.reason for p in parts if p.reason and (p.verdict in (verdict, NOT_TESTABLE, NOT_MEASURED))
    ]
    if j["analogue"]:
        measurement = f"on this {j['our_hardware']} (analogue, not judged): " + " | ".join(p.analogue() for p in parts)
    else:
        measurement = " | ".join(p.text() for p in parts)
    return {
        "claim_id": claim.id,
        "claim": claim.text,
        "source": claim.source,
        "source_conditions": claim.source_conditions,
        "rule": claim.rule,
        "verdict": verdict,
        "quantity": deciding.quantity,
        "estimate": deciding.estimate,
        "ci_low": deciding.ci_low,
        "ci_high": deciding.ci_high,
        "measurement": measurement,
        "our_conditions": CONDITIONS_BY_STUDY[claim.study](d),
        "reason": "; ".join(dict.fromkeys(r for r in reasons if r)),
        "source_hardware": claim.source_hardware or HARDWARE[claim.hardware],
        "our_hardware": j["our_hardware"],
        "scale": claim.scale,
        "n": deciding.n,
        "parts_agree": j["parts_agree"],
        "verdict_band10": j["verdict_band10"],
        "min_detectable": j["min_detectable"],
        "ci_level": j["confidence"],
    }


def rules_facts(claims: list[Claim]) -> dict:
    """The rules and tolerance as the README and the post state them (template ``ledger_rules``): the tolerance,
    the sensitivity band, the bootstrap's minimum trials a side, and per claim its source's hardware, what it
    depends on, its scale floor and its rule."""
    return {
        "tol": TOL,
        "sensitivity_tol": SENSITIVITY_TOL,
        "bootstrap_min": BOOTSTRAP_MIN,
        "claims": [
            {
                "id": c.id,
                "source_hardware": c.source_hardware,
                "depends_on": HARDWARE[c.hardware],
                "scale": c.scale,
                "rule": c.rule,
            }
            for c in claims
        ],
    }


def verdict_facts(table: pd.DataFrame, order=None) -> dict:
    """How many claims each verdict has (template ``ledger_verdicts``): ``counts``, (verdict, n) in ``order``
    (default most frequent first), and ``n_claims``."""
    counts = table.verdict.value_counts()
    return {"n_claims": len(table), "counts": [(v, int(counts[v])) for v in (order or counts.index) if v in counts]}


def styled(table: pd.DataFrame):
    """The table as the notebook shows it (the main columns, 3 significant digits), its intervals' one level in
    the headers of the estimate and CI columns and ``CI_NOTE`` as its caption."""
    names = {"estimate": CI_HEADER, "ci_low": f"{CI_LEVEL}: low", "ci_high": f"{CI_LEVEL}: high"}
    return (
        table[SHOWN].rename(columns=names).style.format(precision=3, na_rep="-").hide(axis="index").set_caption(CI_NOTE)
    )
