"""The ledger's rows (``COLUMNS``) and the facts behind their words: our conditions (``conditions_facts``), the host
and versions of a set of trials (``host_facts``), the rules and the verdict counts (``rules_facts``,
``verdict_facts``). Templates word them (``ledger_measurement``, ``ledger_conditions``, ``ledger_host``, ...).

No row prints a confidence level of its own ("[CI lo-hi]"): a ledger table states its one level in the header of its
estimate column (template ``ledger_ci``), and ledger.csv each row's in ``ci_level`` (``judge``'s Bonferroni level)."""

from __future__ import annotations

import pandas as pd

from ..machines import cpu_model_of
from ..pages import render_markdown
from ..stats import BOOTSTRAP_MIN
from .data import HARDWARE, Claim, Data
from .judge import judge
from .rules import NOT_MEASURED, NOT_TESTABLE, PRECEDENCE, SENSITIVITY_TOL, TOL, Part
from .sources import CLAIMS

COLUMNS = [
    "claim_id",
    "claim",
    "source",
    "source_conditions",
    "rule",
    "verdict",
    "quantity",
    "setting",
    "estimate",
    "ci_low",
    "ci_high",
    "measurement",
    "our_conditions",
    "reason",
    "source_hardware",
    "our_hardware",
    "scale",
    "below_floor",
    "n",
    "parts_agree",
    "verdict_band10",
    "min_detectable",
    "ci_level",
]
SHOWN = ["claim_id", "claim", "verdict", "estimate", "ci_low", "ci_high", "n", "our_hardware", "measurement", "reason"]


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


def host_facts(trials: pd.DataFrame) -> dict | None:
    """CPU model, cores and framework versions (``framework_versions``) of the finished trials; None without any."""
    t = _done(trials)
    if t.empty:
        return None
    first = t.iloc[0]
    cpu, cores = first.get("provenance.cpu_model"), first.get("provenance.cpu_count")
    return {"cpu": cpu, "cores": cores, "versions": framework_versions(t)}


def host_text(trials: pd.DataFrame) -> str:
    """``host_facts`` in words (template ``ledger_host``): the one place the post, the README and the ledger
    describe the host."""
    return render_markdown("ledger_host", host=host_facts(trials))


def _values(t: pd.DataFrame, col: str) -> list:
    return sorted(set(t[col].dropna())) if col in t else []


# ---------------------------------------------------------------------------------------------------- conditions
# the options whose values the conditions of a study's claims name (DeepAR's: columns of ``Data.deepar``), and of
# a part whose trials an estimate comes from (``Claim.part``; the coverage part's: columns of ``Data.deepar_coverage``)
CONDITION_VALUES = {
    "imdb": ("threads", "n_train", "epochs", "seed"),
    "deepar": ("dataset", "seed", "arm"),
    "vgg16": ("arm", "batch_size", "image_size", "onednn", "repeats", "device"),
    "onnx": ("step",),
    "dataparallel": ("world_size", "threads", "per_rank_batch", "steps"),
    "quality": ("arm", "threads", "n_train", "epochs", "batch_size", "seed"),
    "coverage": ("dataset", "seed", "arm", "epochs", "num_batches_per_epoch", "threads"),
}


def _part_rows(d: Data, part: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The trials and the rows of one part an estimate comes from (``Claim.part``)."""
    rows = d.imdb_quality if part == "quality" else d.deepar_coverage
    trials = d.study_trials("imdb" if part == "quality" else "deepar")
    if trials.empty or rows.empty:
        return trials.iloc[0:0], rows
    return trials[trials.trial_id.isin(set(rows.trial_id))], rows


def cpu_counts(trials: pd.DataFrame) -> dict:
    """``{CPU model: finished trials}`` (``machines.cpu_model_of``): a part that is not timed may span models."""
    t = _done(trials)
    if t.empty or "provenance.cpu_id" not in t:
        return {}
    return {str(k): int(v) for k, v in t["provenance.cpu_id"].map(cpu_model_of).value_counts().sort_index().items()}


def conditions_facts(d: Data, study: str, part: str = "") -> dict:
    """Where the numbers of a claim on ``study`` come from (template ``ledger_conditions``): the host and Python of
    its finished trials, the profile, and every value each of ``CONDITION_VALUES`` took (never the first trial's
    alone). ``part`` (``Claim.part``): that part's trials instead, with how many shared the host and the CPU models
    they ran on (a part without rows: the study's judged ones, which the claim then reads)."""
    trials, rows = _part_rows(d, part) if part else (None, pd.DataFrame())
    if rows.empty:
        part = ""
        trials = d.imdb_trials if study == "imdb" else d.study_trials(study)
    t = _done(trials)
    if not part:
        rows = d.deepar if study == "deepar" else t
    facts = {"study": study, "part": part, "stored": not trials.empty, "measured": not rows.empty, "trials": len(t)}
    facts |= {"profile": d.profile or "all", "host": host_facts(t), "cpus": cpu_counts(t)}
    facts["python"] = t.iloc[0].get("provenance.python") if not t.empty else None
    facts["sharing"] = _values(t, "provenance.trials_sharing_host")
    if study == "imdb":  # the device the judged IMDB rows ran on (the others' is a config value)
        facts["device"] = d.device or "cpu"
    # DeepAR's values are columns of its rows; the others' are config values of the finished trials
    values, prefix = (rows, "") if study == "deepar" else (t, "config.")
    return facts | {option: _values(values, prefix + option) for option in CONDITION_VALUES[part or study]}


def conditions(d: Data, study: str = "imdb", part: str = "") -> str:
    """``conditions_facts`` in words (template ``ledger_conditions``)."""
    return render_markdown("ledger_conditions", **conditions_facts(d, study, part))


# ---------------------------------------------------------------------------------------------------- rows
def row(claim: Claim, d: Data) -> dict:
    """The ledger row of a claim (``judge``): the verdict, the deciding part's estimate, every part in words (as a
    labelled analogue when the hardware does not match; template ``ledger_measurement``), the hardware on both
    sides, the scale floor and n."""
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
    return {
        "claim_id": claim.id,
        "claim": claim.text,
        "source": claim.source,
        "source_conditions": claim.source_conditions,
        "rule": claim.rule,
        "verdict": verdict,
        "quantity": deciding.quantity,
        "setting": deciding.label if deciding.measured else "",  # where the estimate was measured (batch, part, ...)
        "estimate": deciding.estimate,
        "ci_low": deciding.ci_low,
        "ci_high": deciding.ci_high,
        "measurement": render_markdown("ledger_measurement", **j),
        "our_conditions": conditions(d, claim.study, claim.part),
        "reason": "; ".join(dict.fromkeys(r for r in reasons if r)),
        "source_hardware": claim.source_hardware or HARDWARE[claim.hardware],
        "our_hardware": j["our_hardware"],
        "scale": claim.scale,
        "below_floor": j["below_floor"],
        "n": deciding.n,
        "parts_agree": render_markdown("ledger_parts_agree", **j),
        "verdict_band10": j["verdict_band10"],
        "min_detectable": j["min_detectable"],
        "ci_level": j["confidence"],
    }


def rules_facts() -> dict:
    """The rules and tolerance as the README and the post state them (template ``ledger_rules``), and every claim."""
    return {
        "tol": TOL,
        "sensitivity_tol": SENSITIVITY_TOL,
        "bootstrap_min": BOOTSTRAP_MIN,
        "precedence": PRECEDENCE,
        "claims": CLAIMS,
        "hardware": HARDWARE,
    }


def verdict_facts(table: pd.DataFrame, order=None) -> dict:
    """How many claims each verdict has (template ``ledger_verdicts``): ``counts``, (verdict, n) in ``order``
    (default most frequent first), and ``n_claims``."""
    counts = table.verdict.value_counts()
    return {"n_claims": len(table), "counts": [(v, int(counts[v])) for v in (order or counts.index) if v in counts]}
