"""The framework table: one declaration adds a framework, and no module outside a framework's own modules names a
framework in its logic.

- a guard scans ``lib/fwbench`` for framework names in comparisons, dict keys and tuples/lists/sets outside the
  table, the frameworks' facts modules and the backends (declarations allowed: ``Arm(...)``, ``reference=``);
- a toy framework declared here with one ``register_framework`` (its facts module is this test module) and a toy
  study using it run through the real runner: provenance records the toy's facts, the one-framework-per-process
  check sees it, and no fwbench file had to name it.
"""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import pytest

from fwbench import cli, prose
from fwbench.analysis import Results
from fwbench.errors import FwbenchError
from fwbench.provenance import imported_frameworks
from fwbench.studies import (
    Arm,
    Framework,
    Study,
    all_frameworks,
    get_framework,
    get_study,
    register,
    register_framework,
)
from fwbench.studies import options as opt

LIB = Path(__file__).resolve().parents[1] / "lib" / "fwbench"


# -- the guard -------------------------------------------------------------------------------------------------
def framework_names() -> set[str]:
    """Names of the registered frameworks that load something ("none" is also an ordinary word: a progress mode)."""
    return {f.name for f in all_frameworks() if f.import_name is not None}


def exempt(path: Path) -> bool:
    """The table and facts modules, the backends, and the published numbers and claims (data by nature)."""
    rel = path.relative_to(LIB).as_posix()
    return rel.startswith(("frameworks/", "published", "ledger/sources/")) or path.name in {
        f"{name}.py" for name in framework_names()
    }


def _declarations(tree: ast.AST) -> set[int]:
    """ids of nodes inside a declaration: an ``Arm(...)`` call or a ``reference=`` keyword."""
    inside = set()
    for node in ast.walk(tree):
        roots = []
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Arm":
            roots.append(node)
        if isinstance(node, ast.keyword) and node.arg == "reference":
            roots.append(node.value)
        for root in roots:
            inside |= {id(child) for child in ast.walk(root)}
    return inside


def framework_logic(source: str, names: set[str]) -> list[str]:
    """Where ``source`` compares against, keys a dict by, or lists framework names (outside declarations)."""
    tree = ast.parse(source)
    allowed = _declarations(tree)

    def named(node) -> bool:
        return isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            hits = [n for n in (node.left, *node.comparators) if named(n)]
            what = "comparison with"
        elif isinstance(node, ast.Dict):
            hits = [key for key in node.keys if key is not None and named(key)]
            what = "dict key"
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            hits = [element for element in node.elts if named(element)]
            what = "listed"
        else:
            continue
        found += [f"line {hit.lineno}: {what} {hit.value!r}" for hit in hits]
    return found


def test_no_module_names_a_framework_in_its_logic():
    names = framework_names()
    assert names >= {"torch", "mxnet", "onnxruntime"}
    offences = {}
    for path in sorted(LIB.rglob("*.py")):
        if not exempt(path):
            found = framework_logic(path.read_text(), names)
            if found:
                offences[path.relative_to(LIB).as_posix()] = found
    assert not offences, offences


def test_the_guard_catches_a_planted_branch_and_lets_declarations_be():
    names = {"torch", "mxnet", "onnxruntime"}
    planted = """
if arm.framework == "mxnet":
    os.environ["MXNET_MKLDNN_ENABLED"] = "0"
LOOPS = {"torch": bare_torch}
for fw in ("torch", "mxnet"):
    pass
"""
    found = framework_logic(planted, names)
    assert found == [
        "line 2: comparison with 'mxnet'",
        "line 4: dict key 'torch'",
        "line 5: listed 'torch'",
        "line 5: listed 'mxnet'",
    ]
    declared = """
ARMS = (Arm("torch-eager", "torch", None, "eager", "PyTorch", "#1f77b4"),)
STUDY = register(Study(name="x", arms=ARMS, reference={"torch": "torch-eager"}))
label = study.reference_arm("mxnet")
"""
    assert framework_logic(declared, names) == []
    assert exempt(LIB / "sentiment" / "torch.py") and exempt(LIB / "frameworks" / "mxnet.py")
    assert not exempt(LIB / "studies" / "imdb.py") and not exempt(LIB / "provenance.py")


# -- the table -------------------------------------------------------------------------------------------------
def test_the_table_declares_every_framework_an_arm_uses():
    assert [f.name for f in all_frameworks()][:5] == ["torch", "mxnet", "jax", "onnxruntime", "none"]
    assert get_framework("mxnet").label == "MXNet" and get_framework("none").import_name is None
    for study in [get_study(name) for name in ("imdb", "deepar", "vgg16", "gemm", "onnx", "selftest")]:
        for arm in study.arms:
            assert get_framework(arm.framework).name == arm.framework
    with pytest.raises(FwbenchError, match="unknown framework 'tensorflow'"):
        get_framework("tensorflow")
    with pytest.raises(FwbenchError, match="declared twice"):
        register_framework(Framework("torch", "Torch", "torch", None, "#000000"))


def test_facts_modules_are_twins_and_import_no_framework_at_top():
    """Imported in the parent process too: their framework only inside functions."""
    facts = {f.name: f.facts() for f in all_frameworks() if f.module and f.module.startswith("fwbench.")}
    assert set(facts) == {"torch", "mxnet", "jax"}
    for module in facts.values():
        assert {"info", "onednn_env", "describe_build"} <= set(module.__all__)
        tree = ast.parse(Path(module.__file__).read_text())
        top = {
            alias.name.split(".")[0]
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        assert not top & framework_names(), (module.__name__, top)
    assert get_framework("torch").onednn_env(False) == {}
    assert get_framework("mxnet").onednn_env(False) == {"MXNET_MKLDNN_ENABLED": "0", "MXNET_USE_MKLDNN_RNN": "0"}
    assert get_framework("onnxruntime").onednn_env(True) == {} and get_framework("none").info() == {}
    recorded = {"features_enabled": ["MKLDNN", "OPENMP", "CUDA"], "build_config": ["- oneDNN v3.1"]}
    assert get_framework("mxnet").describe_build(recorded.get) == "features MKLDNN, OPENMP"
    assert get_framework("torch").describe_build(recorded.get) == "oneDNN v3.1"
    assert get_framework("jax").onednn_env(True) == {}  # XLA's CPU kernels are its own
    versions = {"jax_version": "0.10.2", "jaxlib_version": "0.10.2", "numpy_version": "2.4.6"}
    assert get_framework("jax").describe_build(versions.get) == "XLA CPU; jax 0.10.2, jaxlib 0.10.2, numpy 2.4.6"


def test_jax_threads_are_pinned_cpus_and_an_impossible_count_is_refused():
    from fwbench.frameworks import jax as jax_facts

    cpus = sorted(os.sched_getaffinity(0))
    script = (
        "import json, os; from fwbench.frameworks.jax import pin_to_cpus; "
        "print(json.dumps([pin_to_cpus(1), sorted(os.sched_getaffinity(0))]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [cpus[:1], cpus[:1]]  # pinned, in a child process
    with pytest.raises(FwbenchError, match="CPU\\(s\\) available"):
        jax_facts.pin_to_cpus(len(cpus) + 1)


# -- a toy framework, declared here with one register_framework: this module is its facts module ----------------
TOY_IMPORT_NAME = "fwbench_test_toyfw"  # what the toy "framework" is imported as (a module made up in the trial)


def info() -> dict:
    return {"framework": "toyfw", "framework_version": "0.1", "toyfw_build": "toy build"}


def onednn_env(enabled: bool) -> dict[str, str]:
    return {"TOYFW_ONEDNN": str(int(enabled))}


def describe_build(recorded) -> str:
    return f"toy: {recorded('toyfw_build')}"


TOYFW = register_framework(Framework("toyfw", "Toy framework", TOY_IMPORT_NAME, __name__, "#123456"))


def _toy_trial(config, report=None):
    arm = TOY_STUDY.arm_of(config)
    os.environ.update(arm.onednn_env(config["onednn"]))  # through the table, as the real studies do
    sys.modules.setdefault(TOY_IMPORT_NAME, types.ModuleType(TOY_IMPORT_NAME))  # "import toyfw"
    if arm.variant == "leaky":  # a trial that loads a second framework, against the isolation rule
        sys.modules.setdefault("torch", types.ModuleType("torch"))
    return {
        "summary": {"onednn_env": os.environ["TOYFW_ONEDNN"]},
        "measurements": [(0, "train_time_s", 1.0)],
        "provenance": {},
    }  # nothing of its own: the table's facts are what provenance records


TOY_STUDY = register(
    Study(
        name="toyfw-study",
        title="A study of a toy framework declared in a test",
        module=__name__,
        profiles={"smoke": {"arms": ["toyfw-eager"], "onednn": False}},
        options={"arms": opt.list_of(opt.string, ["toyfw-eager", "toyfw-leaky"]), "onednn": opt.boolean},
        grid=lambda options: [{"arm": arm, "onednn": options["onednn"], "threads": 1} for arm in options["arms"]],
        run_trial=_toy_trial,
        describe=lambda config: f"toyfw {config['arm']}",
        arms=(
            Arm("toyfw-eager", "toyfw", None, "eager", "Toy (eager)", "#123456"),
            Arm("toyfw-leaky", "toyfw", None, "leaky", "Toy (imports torch too)", "#654321"),
        ),
        reference={"toyfw": "toyfw-eager"},
        hidden=True,
    )
)


def test_a_toy_framework_is_one_declaration(tmp_store, monkeypatch):
    assert get_framework("toyfw") is TOYFW and "toyfw" not in imported_frameworks()
    monkeypatch.setitem(sys.modules, TOY_IMPORT_NAME, types.ModuleType(TOY_IMPORT_NAME))
    assert "toyfw" in imported_frameworks()  # the one-framework-per-process check sees it

    assert cli.main(["run", "toyfw-study", "--profile", "smoke", "--progress", "none"]) == 0
    with sqlite3.connect(tmp_store) as conn:
        status, provenance, summary = conn.execute(
            "SELECT status, provenance, summary FROM trials WHERE study='toyfw-study'"
        ).fetchone()
    assert status == "done"
    assert '"framework":"toyfw"' in provenance.replace(" ", "") and "toy build" in provenance
    assert '"frameworks_imported":["toyfw"]' in provenance.replace(" ", "")
    assert '"onednn_env":"0"' in summary.replace(" ", "")  # the table's onednn_env reached the trial
    # nothing of fwbench had to name it
    assert not [p for p in LIB.rglob("*.py") if "toyfw" in p.read_text()]


def test_a_trial_loading_a_second_framework_fails(tmp_store, capsys):
    cli.main(["run", "toyfw-study", "--profile", "smoke", "--set", 'arms=["toyfw-leaky"]', "--progress", "none"])
    with sqlite3.connect(tmp_store) as conn:
        status, error, tail = conn.execute(
            "SELECT status, error, stderr_tail FROM trials WHERE study='toyfw-study'"
        ).fetchone()
    assert status == "failed" and "isolation broken" in error and "['torch', 'toyfw']" in error, (error, tail)


def test_the_thread_check_reads_each_arms_measured_cpu(tmp_path):
    from fwbench.analysis import inference
    from fwbench.planning import plan
    from fwbench.store import ResultsStore

    store = ResultsStore(tmp_path / "r.sqlite")
    busy = {("torch-eager", 1): 1.0, ("torch-eager", 2): 1.9, ("jax-jit", 1): 0.99, ("jax-jit", 2): 1.4}
    for t in plan("gemm", "quick", {"arms": ["torch-eager", "jax-jit"]}):
        store.record(trial_id=t.trial_id, study="gemm", status="done", config=t.config, provenance={"host": "h"},
                     summary={}, measurements=[(-1, "cpus_busy", busy[(t.config["arm"], t.config["threads"])])],
                     profile="quick")  # fmt: skip
    table = inference.thread_check(Results(store, "quick", {"gemm": {"arms": ["torch-eager", "jax-jit"]}}))
    got = {(r.arm, r.threads): r.cpus_busy for r in table.itertuples()}
    assert got == pytest.approx(busy) and set(table.framework) == {"torch", "jax"}
    assert "| `jax-jit` | 1 | 1 | 0.99 | 0.99 | not recorded |" in prose.thread_check(table)
    # each row names the CPU model its trials ran on (a setting that held on one CPU says nothing of another)
    t = plan("gemm", "quick", {"arms": ["jax-jit"]})[0]
    store.record(
        trial_id=t.trial_id,
        study="gemm",
        status="done",
        config=t.config,
        profile="quick",
        summary={},
        provenance={"host": "h", "cpu_id": "GenuineIntel/6/207/2"},
        measurements=[(-1, "cpus_busy", 0.98)],
    )
    table = inference.thread_check(Results(store, "quick", {"gemm": {"arms": ["torch-eager", "jax-jit"]}}))
    assert f"| `jax-jit` | {t.config['threads']} | 1 | 0.98 | 0.98 | GenuineIntel/6/207 |" in prose.thread_check(table)
