"""The ledger's rows (``COLUMNS``) and the facts behind their words: our conditions (``conditions_facts``), the host
and versions of a set of trials (``host_facts``), the rules and the verdict counts (``rules_facts``,
``verdict_facts``). Templates word them (``ledger_measurement``, ``ledger_conditions``, ``ledger_host``, ...).

No row prints a confidence level of its own ("[CI lo-hi]"): a ledger table states its one level in the header of its
estimate column (template ``ledger_ci``), and ledger.csv each row's in ``ci_level`` (``judge``'s Bonferroni level)."""

from __future__ import annotations

import pandas as pd

from ..analysis.cpu_models import Condition
from ..machines import NOT_RECORDED, cpu_model_of, cpu_name
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
    "verdict_scope",
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


# ---------------------------------------------------------------------------------------------------- host
def _done(trials: pd.DataFrame) -> pd.DataFrame:
    return trials[trials.status == "done"] if not trials.empty and "status" in trials else trials


def _column(t: pd.DataFrame, col: str, default="") -> pd.Series:
    if col not in t:
        return pd.Series(default, index=t.index, dtype=object)
    return t[col] if default is None else t[col].fillna(default)


def framework_versions(trials: pd.DataFrame) -> dict:
    """``{framework: "version[, version]"}`` over the trials' provenance."""
    if trials.empty or "provenance.framework" not in trials:
        return {}
    cols = trials[["provenance.framework", "provenance.framework_version"]].dropna(subset=["provenance.framework"])
    return {
        fw: ", ".join(sorted(set(map(str, g["provenance.framework_version"]))))
        for fw, g in cols.groupby("provenance.framework")
    }


def cpu_names(trials: pd.DataFrame) -> pd.Series:
    """Each trial's CPU model as the first screen names it (``cpu_models.Condition.cpu_name``: 'Intel Xeon 6/207');
    the brand string it recorded where it recorded no ``cpu_id``."""
    models = _column(trials, "provenance.cpu_id", None).map(cpu_model_of)
    brand = _column(trials, "provenance.cpu_model", NOT_RECORDED)
    return models.map(lambda m: Condition(m).cpu_name).where(models != NOT_RECORDED, brand)


def host_facts(trials: pd.DataFrame) -> dict | None:
    """The CPU models with their finished trials (``cpu_names``), the core counts and the framework versions
    (``framework_versions``) of the finished trials; None without any."""
    t = _done(trials)
    if t.empty:
        return None
    cpus, cores = cpu_names(t).value_counts().sort_index().to_dict(), _column(t, "provenance.cpu_count", None)
    return {"cpus": cpus, "cores": sorted({int(c) for c in cores.dropna()}), "versions": framework_versions(t)}


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


PART_ROWS = {"quality": "imdb_quality", "coverage": "deepar_coverage"}  # a ``Claim.part``'s rows: ``Data``'s


def _counts(d: Data, study: str, read: pd.DataFrame) -> dict:
    """The ``read`` trials' parts and count, the profile's finished trials of those parts per CPU model (``finished``:
    the rows a claim is judged on are one CPU model's and condition's, or an accuracy's) but the ``superseded``, and
    how many of ``read`` are flagged busy (``busy``: timed while other processes or the hypervisor took CPU)."""
    parts = sorted(set(_column(read, "config.part")))
    every, kept = (t[_column(t, "config.part").isin(parts)] for t in (d.finished(study, None), d.finished(study)))
    finished = {"finished": cpu_names(kept).value_counts().to_dict(), "superseded": len(every) - len(kept)}
    busy = int(_column(read, "provenance.busy_machine", False).eq(True).sum())
    return {"parts": [p for p in parts if p], "trials": len(read), "busy": busy} | finished


def conditions_facts(d: Data, study: str, part: str = "") -> dict:
    """Where the numbers of a claim on ``study`` come from (template ``ledger_conditions``): the trials of the rows it
    is judged on (``Data.<study>``, else the finished trials; a ``Claim.part``'s rows where it has any), their host,
    CPU models, Python, host sharing, each value of ``CONDITION_VALUES``, and count (``_counts``); B's main part's."""
    rows = getattr(d, PART_ROWS[part]) if part else pd.DataFrame()
    part = part if not rows.empty else ""
    trials = d.imdb_trials if study == "imdb" and not part else d.study_trials(study)
    t = _done(trials)
    rows = rows if part else (getattr(d, study) if isinstance(getattr(Data, study, None), property) else t)
    read = t[t.trial_id.isin(set(rows.trial_id))] if not rows.empty else t.iloc[0:0]
    facts = {"study": study, "part": part, "stored": not trials.empty, "measured": not rows.empty}
    facts |= {"profile": d.profile or "all", "host": host_facts(read), **_counts(d, study, read)}
    facts["cpus"] = _column(read, "provenance.cpu_id", None).map(cpu_model_of).value_counts().sort_index().to_dict()
    facts["python"] = read.iloc[0].get("provenance.python") if not read.empty else None
    facts["sharing"] = _values(read, "provenance.trials_sharing_host")
    if study == "imdb":  # the device the judged IMDB rows ran on (the others' is a config value)
        facts["device"] = d.device or "cpu"
    if part == "coverage":  # B is judged on the main part's full-scale trials too
        facts["main"] = conditions_facts(d, study)
    # DeepAR's values are columns of its rows; the others' are config values of the trials read
    values, prefix = (rows, "") if study == "deepar" else (read, "config.")
    return facts | {option: _values(values, prefix + option) for option in CONDITION_VALUES[part or study]}


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
    ours = conditions_facts(d, claim.study, claim.part)
    models = [cpu_name(m) for m in ours["cpus"] if m != NOT_RECORDED]  # a CPU run's hardware is its CPU models
    return {
        "claim_id": claim.id,
        "claim": claim.text,
        "source": claim.source,
        "source_conditions": claim.source_conditions,
        "rule": claim.rule,
        "verdict": verdict,
        "verdict_scope": claim.scope,
        "quantity": deciding.quantity,
        "setting": deciding.label if deciding.measured else "",  # where the estimate was measured (batch, part, ...)
        "estimate": deciding.estimate,
        "ci_low": deciding.ci_low,
        "ci_high": deciding.ci_high,
        "measurement": render_markdown("ledger_measurement", **j),
        "our_conditions": render_markdown("ledger_conditions", **ours),
        "reason": "; ".join(dict.fromkeys(r for r in reasons if r)),
        "source_hardware": claim.source_hardware or HARDWARE[claim.hardware],
        "our_hardware": f"{j['our_hardware']} ({', '.join(models)})"
        if models and j["our_hardware"] == "CPU"
        else j["our_hardware"],
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
