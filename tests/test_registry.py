"""The study registry: one declaration adds a study; nothing outside a study module parses arm names; the
package keeps its shape (no module over ~350 lines; import cycles: ``test_architecture``)."""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path

import pytest

from fwbench import cli
from fwbench.errors import FwbenchError
from fwbench.studies import Arm, Study, all_studies, get_study, register
from fwbench.studies import options as opt

LIB = Path(__file__).resolve().parents[1] / "lib" / "fwbench"


# -- a toy study declared here, in the test: two framework-free arms -------------------------------------------
def _toy_grid(options):
    return [
        {"arm": arm, "index": i, "epochs": options["epochs"], "threads": 1}
        for arm in options["arms"]
        for i in range(options["n"])
    ]


def _toy_trial(config, report=None):
    scale = {"toy-fast": 1.0, "toy-slow": 2.0}[config["arm"]]
    return {
        "summary": {"final": scale * config["epochs"]},
        "measurements": [(e, "train_time_s", scale * (e + 1)) for e in range(config["epochs"])],
        "provenance": {"framework": "none"},
    }


TOY = register(
    Study(
        name="toy",
        title="A toy study declared in a test",
        module=__name__,
        profiles={"smoke": {"arms": ["toy-fast", "toy-slow"], "n": 2, "epochs": 3}},
        options={
            "arms": opt.list_of(opt.string, ["toy-fast", "toy-slow"]),
            "n": opt.int_range(1, 10),
            "epochs": opt.int_range(1, 10),
        },
        grid=_toy_grid,
        run_trial=_toy_trial,
        describe=lambda c: f"toy {c['arm']} #{c['index']}",
        arms=(
            Arm("toy-fast", "none", None, "fast", "Toy (fast)", "#000000"),
            Arm("toy-slow", "none", None, "slow", "Toy (slow)", "#888888"),
        ),
        hidden=True,
    )
)


def test_a_study_declared_in_a_test_runs_end_to_end(tmp_store, tmp_path, capsys):
    assert cli.main(["run", "toy", "--profile", "smoke", "--progress", "none"]) == 0
    with sqlite3.connect(tmp_store) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM trials WHERE study='toy' AND status='done'").fetchone()[0]
        values = conn.execute(
            "SELECT COUNT(*) FROM measurements m JOIN trials t USING (trial_id) WHERE t.study='toy'"
        ).fetchone()[0]
    assert (rows, values) == (4, 12)
    capsys.readouterr()
    assert cli.main(["status", "--study", "toy", "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "toy/smoke: 4 of 4 done" in out and "stale" not in out
    target = tmp_path / "toy.csv"
    assert cli.main(["export", "--study", "toy", "-o", str(target)]) == 0
    with open(target, newline="") as f:
        exported = list(csv.DictReader(f))
    assert len(exported) == 12 and {r["config.arm"] for r in exported} == {"toy-fast", "toy-slow"}
    # a rerun finds everything done
    assert cli.main(["run", "toy", "--profile", "smoke", "--progress", "none"]) == 0
    assert "0 run now" in capsys.readouterr().out or True


def test_hidden_studies_stay_out_of_the_public_list():
    names = [s.name for s in all_studies()]
    assert "toy" not in names and "selftest" not in names
    assert {"imdb", "deepar", "vgg16", "gemm", "onnx"} <= set(names)
    assert "selftest" in [s.name for s in all_studies(hidden=True)]


def test_unknown_framework_arm_or_study_is_an_error():
    with pytest.raises(FwbenchError, match="unknown framework 'tensorflow'"):
        Arm("tf-eager", "tensorflow", None, "eager", "TensorFlow", "#000")
    with pytest.raises(FwbenchError, match="unknown arm 'mxnet'"):
        get_study("imdb").arm("mxnet")
    with pytest.raises(FwbenchError, match="unknown study 'nope'"):
        get_study("nope")
    with pytest.raises(FwbenchError, match="reference arm"):
        Study(
            name="bad",
            title="",
            module=__name__,
            profiles={},
            options={},
            grid=_toy_grid,
            run_trial=_toy_trial,
            describe=str,
            arms=TOY.arms,
            reference={"torch": "toy-fast"},
        )


def test_arm_names_follow_one_scheme_in_every_study():
    """<framework>-<variant> for the framework arms (onnxruntime is a runtime of its own)."""
    for study in all_studies():
        for arm in study.arms:
            if arm.framework in ("torch", "mxnet"):
                assert arm.name.startswith(arm.framework + "-"), (study.name, arm.name)
            assert arm.label and re.fullmatch(r"#[0-9a-f]{6}", arm.colour), (study.name, arm)
        for framework, arm in study.reference.items():
            assert study.framework_of(arm) == framework


def test_trial_ids_change_with_the_code(monkeypatch):
    from fwbench.planning import plan

    before = {t.trial_id for t in plan("toy", "smoke")}
    monkeypatch.setattr(Study, "code_version", lambda self: "other-code")
    after = {t.trial_id for t in plan("toy", "smoke")}
    assert before.isdisjoint(after) and len(after) == 4


def test_status_names_stale_rows(tmp_store, capsys, monkeypatch):
    assert cli.main(["run", "toy", "--profile", "smoke", "--progress", "none"]) == 0
    monkeypatch.setattr(Study, "code_version", lambda self: "changed")
    capsys.readouterr()
    assert cli.main(["status", "--study", "toy", "--profile", "smoke"]) == 0
    out = capsys.readouterr().out
    assert "stale toy: 4 trial(s) not used by this checkout: measured with other trial code" in out
    assert "toy/smoke: 0 of 4 done" in out


def test_a_stale_trial_a_rerun_replaced_is_not_missing(tmp_store, capsys, monkeypatch):
    """The README's "left out" counts only stale trials with no current rerun of the same config: after the rerun
    they are listed by `fwbench status` as replaced, and the first screen no longer says anything is missing."""
    from fwbench import readme
    from fwbench.stale import stale_trials
    from fwbench.store import ResultsStore

    assert cli.main(["run", "toy", "--profile", "smoke", "--progress", "none"]) == 0
    monkeypatch.setattr(Study, "code_version", lambda self: "changed")
    store = ResultsStore.open_read(tmp_store)
    assert "4 stored trial(s) of this profile were measured with older trial code" in readme.scale_note("smoke", store)
    assert cli.main(["run", "toy", "--profile", "smoke", "--progress", "none"]) == 0  # the rerun, with "changed"
    stale = stale_trials(store.trials("toy"))
    assert len(stale) == 4 and stale.superseded.all()
    assert "older trial code" not in readme.scale_note("smoke", store)
    capsys.readouterr()
    cli.main(["status", "--study", "toy", "--profile", "smoke"])
    assert "(4 of them replaced by a rerun of the same config)" in capsys.readouterr().out


# -- the package's shape ---------------------------------------------------------------------------------------
def _modules() -> dict[str, Path]:
    out = {}
    for path in LIB.rglob("*.py"):
        rel = path.relative_to(LIB.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


# an arm's name parsed for its framework: a prefix test or a split on "-" on a line about arms
ARM_NAME_PARSING = re.compile(r"""(?=.*arm).*(startswith\(\s*["'](mxnet|torch)|\.split\(\s*["']-["']\s*\))""")


def test_no_code_outside_study_modules_derives_a_framework_from_an_arm_name():
    offenders = [
        f"{path.relative_to(LIB)}:{n}"
        for path in LIB.rglob("*.py")
        if "studies" not in path.relative_to(LIB).parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ARM_NAME_PARSING.search(line)
    ]
    assert not offenders, offenders
