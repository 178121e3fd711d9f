"""The code fingerprint covers what a trial runs, not the profile tables; a store migrates across a refactor."""

from __future__ import annotations

import ast
import importlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from fwbench.errors import FwbenchError
from fwbench.migrate import current_fingerprints, fingerprints_at, migrate_fingerprints
from fwbench.store import ResultsStore, trial_id
from fwbench.studies import all_studies, get_study

REPO = Path(__file__).resolve().parents[1]

DECLARATION = """
from fwbench.studies.registry import Arm, Study, register
from {package}.trial import run_trial

PROFILES = {{"smoke": {{"seeds": {seeds}}}}}
OPTIONS = {{"seeds": lambda name, value: list(value)}}

STUDY = register(Study(
    name="{name}", title="fingerprint toy", module=__name__, profiles=PROFILES, options=OPTIONS,
    grid=lambda options: [{{"arm": "only", "seed": s}} for s in options["seeds"]], run_trial=run_trial,
    describe=str, arms=(Arm("only", "none", None, "plain", "toy", "#000000"),), hidden=True))
"""
TRIAL = """
def run_trial(config, report=None):
    return {{"summary": {{"value": {value}}}, "measurements": [], "provenance": {{}}}}
"""


def _toy(tmp_path, monkeypatch, name: str, seeds=(1, 2), value=1.0):
    package = f"fptoy_{name}"
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "declaration.py").write_text(DECLARATION.format(package=package, name=name, seeds=list(seeds)))
    (folder / "trial.py").write_text(TRIAL.format(value=value))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(f"{package}.declaration")
    return folder, get_study(name)


def test_changing_a_profile_keeps_stored_trials_fresh(tmp_path, monkeypatch):
    folder, study = _toy(tmp_path, monkeypatch, "fp_profile", seeds=(1, 2))
    before = study.code_version()
    ids = {trial_id(study.name, config, before) for config in study.grid(study.resolve("smoke"))}
    text = (folder / "declaration.py").read_text()
    (folder / "declaration.py").write_text(text.replace('"seeds": [1, 2]', '"seeds": [1, 2, 3, 4, 5]'))
    study = importlib.reload(sys.modules[f"{folder.name}.declaration"]).STUDY
    after = study.code_version()
    assert after == before
    new_ids = {trial_id(study.name, config, after) for config in study.grid(study.resolve("smoke"))}
    assert ids < new_ids and len(new_ids) == 5  # the two stored seeds keep their ids; three more are planned


def test_changing_the_trial_code_makes_stored_trials_stale(tmp_path, monkeypatch):
    folder, study = _toy(tmp_path, monkeypatch, "fp_trial", value=1.0)
    before = study.code_version()
    (folder / "trial.py").write_text(TRIAL.format(value=2.0))
    assert study.code_version() != before


def test_adding_an_arm_keeps_the_other_arms_trials_fresh(tmp_path, monkeypatch):
    folder, study = _toy(tmp_path, monkeypatch, "fp_arm")
    before = study.code_version()
    text = (folder / "declaration.py").read_text()
    added = (
        'arms=(Arm("only", "none", None, "plain", "toy", "#000000"), Arm("second", "none", None, "b", "2", "#111111"))'
    )
    (folder / "declaration.py").write_text(
        text.replace('arms=(Arm("only", "none", None, "plain", "toy", "#000000"),)', added)
    )
    study = importlib.reload(sys.modules[f"{folder.name}.declaration"]).STUDY
    assert study.arm_names == ("only", "second")
    assert study.code_version() == before


def _imported_modules(module: str) -> set[str]:
    """The fwbench modules ``module`` imports anywhere in its source (relative imports resolved)."""
    path = Path(importlib.import_module(module).__file__)
    package = module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize(
    "study", [s for s in all_studies(hidden=True) if s.trial_module != s.module], ids=lambda s: s.name
)
def test_a_trial_module_never_imports_its_declarations(study):
    assert study.module not in study.fingerprinted_modules()
    assert study.module not in _imported_modules(study.trial_module), (
        f"{study.trial_module} imports {study.module}: a declaration constant would change what a trial does "
        "without changing its fingerprint"
    )


def test_every_paper_study_keeps_its_profiles_out_of_the_fingerprint():
    for name in ("imdb", "deepar", "vgg16", "gemm", "onnx"):
        study = get_study(name)
        assert study.trial_module != study.module, name


# -- migration ---------------------------------------------------------------------------------------------


def _store_with(path: Path, code: str, configs: list[dict]) -> list[str]:
    store = ResultsStore(path)
    ids = []
    for config in configs:
        tid = trial_id("gemm", config, code)
        store.record(
            trial_id=tid,
            study="gemm",
            status="done",
            config=config,
            provenance={"code_version": code},
            summary={"median_gflops": 1.0},
            measurements=[(0, "seconds", 0.5), (1, "seconds", 0.6)],
        )
        ids.append(tid)
    return ids


def test_migration_moves_trials_and_their_measurements_and_records_itself(tmp_path):
    path = tmp_path / "store.sqlite"
    configs = [{"arm": "torch-eager", "n": 64, "seed": s} for s in (0, 1)]
    old_ids = _store_with(path, "oldcode", configs)
    _store_with(path, "othercode", [{"arm": "torch-eager", "n": 64, "seed": 9}])  # another code: stays
    current = current_fingerprints()["gemm"]
    moved = migrate_fingerprints(path, {"gemm": "oldcode"}, {"gemm": current}, from_commit="abc", reason="test")
    assert moved == {"gemm": 2}
    store = ResultsStore.open_read(path)
    trials = store.trials("gemm")
    expected = {trial_id("gemm", config, current) for config in configs}
    assert expected <= set(trials.trial_id) and not set(old_ids) & set(trials.trial_id)
    assert store.status_of(expected) == {tid: "done" for tid in expected}
    measured = store.measurements("gemm")
    assert set(measured.trial_id) >= expected and len(measured[measured.trial_id.isin(expected)]) == 4
    raw = json.loads(
        sqlite3.connect(path)
        .execute("SELECT provenance FROM trials WHERE trial_id = ?", (sorted(expected)[0],))
        .fetchone()[0]
    )
    assert raw["code_version"] == current and raw["migrated_from"][-1]["code_version"] == "oldcode"
    rows = (
        sqlite3.connect(path)
        .execute("SELECT study, from_commit, old_code, new_code, trials_moved FROM migrations")
        .fetchall()
    )
    assert rows == [("gemm", "abc", "oldcode", current, 2)]
    # a second run changes nothing and says so without an error
    again = migrate_fingerprints(path, {"gemm": "oldcode"}, {"gemm": current}, from_commit="abc", reason="test")
    assert again == {"gemm": 0}


def test_migration_refuses_when_no_trial_was_measured_with_that_code(tmp_path):
    path = tmp_path / "store.sqlite"
    _store_with(path, "oldcode", [{"arm": "torch-eager", "n": 64, "seed": 0}])
    with pytest.raises(FwbenchError, match="no stored trial"):
        migrate_fingerprints(path, {"gemm": "nosuchcode"}, {"gemm": "new"}, from_commit="abc", reason="test")
    with pytest.raises(FwbenchError, match="reason"):
        migrate_fingerprints(path, {"gemm": "oldcode"}, {"gemm": "new"}, from_commit="abc", reason=" ")
    # nothing written: the trial keeps its id and no migration is on record
    assert ResultsStore.open_read(path).trials("gemm").trial_id.tolist() == [
        trial_id("gemm", {"arm": "torch-eager", "n": 64, "seed": 0}, "oldcode")
    ]
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM migrations").fetchone()[0] == 0


def _lib_is_committed() -> bool:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "lib"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    return out.strip() == ""


@pytest.mark.skipif(not _lib_is_committed(), reason="lib/ has uncommitted changes (or no git): HEAD is not this code")
def test_fingerprints_at_a_commit_are_computed_by_that_commits_code():
    at_head, here = fingerprints_at("HEAD"), current_fingerprints()
    assert {"imdb", "deepar", "vgg16", "gemm", "onnx"} <= set(at_head)
    assert at_head == {name: here[name] for name in at_head}  # toy studies of other tests exist only here


def test_fingerprints_at_an_unknown_commit_is_one_clear_error():
    with pytest.raises(FwbenchError, match="cannot read commit"):
        fingerprints_at("no-such-commit")


def test_a_saved_prediction_still_finds_its_trials_after_a_migration():
    import pandas as pd

    from fwbench.analysis.estimate_accuracy import _under_predicted_ids

    first = {"commit": "a", "code_version": "c0", "trial_id": "old1"}
    second = {"commit": "b", "code_version": "c1", "trial_id": "mid1"}
    trials = pd.DataFrame(
        {"trial_id": ["new1", "plain", "other"], "provenance.migrated_from": [[first, second], None, [second]]}
    )
    found = _under_predicted_ids(trials, {"old1", "plain"})
    assert sorted(found.trial_id) == ["old1", "plain"]


def test_the_committed_paper_store_is_current_with_this_checkout():
    """Every trial of the committed paper run is current here, or superseded: a change to what a trial runs must
    rerun the trials it touches (the stale row stays, raw, beside its rerun of the same config, as the 8 GEMM
    trials measured before their CPU reading), and a refactor that changes no trial's work migrates the store
    (``fwbench migrate-fingerprints``), which this test then sees."""
    from fwbench.stale import stale_reason

    store = ResultsStore.open_read(REPO / "results" / "paper" / "paper-run.sqlite")
    rows = sqlite3.connect(store.path).execute("SELECT study, config, provenance FROM trials").fetchall()
    declared = {study.name for study in all_studies(hidden=True)}
    reasons = [
        (study, config, stale_reason(study, json.loads(config), json.loads(provenance).get("code_version")))
        for study, config, provenance in rows
        if study in declared
    ]
    current = {(study, config) for study, config, reason in reasons if not reason}
    stale = [(study, reason) for study, config, reason in reasons if reason and (study, config) not in current]
    assert len(rows) >= 175 and not stale, stale[:5]


def test_migration_of_named_studies_only(tmp_path, monkeypatch, capsys):
    """``--study`` moves only the named studies: here the gemm trials stay stale when only vgg16 may move."""
    from fwbench import cli, migrate

    path = tmp_path / "store.sqlite"
    _store_with(path, "oldcode", [{"arm": "torch-eager", "n": 64, "seed": 0}])
    monkeypatch.setattr(migrate, "fingerprints_at", lambda commit: {"gemm": "oldcode", "vgg16": "oldvgg"})
    args = ["migrate-fingerprints", "--from-commit", "abc", "--reason", "test", "--store", str(path)]
    assert cli.main([*args, "--study", "vgg16"]) != 0
    assert "no stored trial" in capsys.readouterr().err
    assert ResultsStore.open_read(path).trials("gemm").trial_id.tolist() == [
        trial_id("gemm", {"arm": "torch-eager", "n": 64, "seed": 0}, "oldcode")
    ]
    assert cli.main([*args, "--study", "nosuch"]) != 0
    assert "no such study" in capsys.readouterr().err
    assert cli.main([*args, "--study", "gemm"]) == 0
    assert "gemm: 1 trial(s) moved" in capsys.readouterr().out
