"""Twin backends are twins: each pair (``sentiment``, ``forecast``, ``vision``) declares the same ``__all__``, every
name in it is defined, no public top-level function or class is left out of it, and each twin imports only its own
framework. Read from the source with ``ast``: no framework is imported here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fwbench

LIB = Path(fwbench.__file__).resolve().parent
PACKAGES = ("sentiment", "forecast", "vision")
FRAMEWORKS = ("torch", "mxnet")


def _tree(package: str, framework: str) -> ast.Module:
    return ast.parse((LIB / package / f"{framework}.py").read_text())


def declared_all(tree: ast.Module) -> list[str]:
    """The module's ``__all__`` (a literal list or tuple of strings at top level)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value), value
            return list(value)
    raise AssertionError("no top-level __all__")


def defined(tree: ast.Module) -> set[str]:
    """Every name bound at top level: defs, classes, assignments and imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def public_defs(tree: ast.Module) -> set[str]:
    """Public API by definition: top-level functions and classes without a leading underscore (imported names such
    as ``np`` are not API)."""
    return {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")
    }


def imported_frameworks(tree: ast.Module) -> set[str]:
    """The frameworks the module imports anywhere (top level or inside functions)."""
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots & set(FRAMEWORKS)


@pytest.mark.parametrize("package", PACKAGES)
def test_twins_declare_the_same_all(package):
    torch_all, mxnet_all = (declared_all(_tree(package, fw)) for fw in FRAMEWORKS)
    assert len(set(torch_all)) == len(torch_all), f"{package}.torch lists a name twice"
    assert set(torch_all) == set(mxnet_all), (
        f"only in {package}.torch: {sorted(set(torch_all) - set(mxnet_all))}; "
        f"only in {package}.mxnet: {sorted(set(mxnet_all) - set(torch_all))}"
    )


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_exactly_the_public_api(package, framework):
    tree = _tree(package, framework)
    names = declared_all(tree)
    assert not set(names) - defined(tree), f"{package}.{framework}.__all__ names undefined {set(names) - defined(tree)}"
    extra = public_defs(tree) - set(names)
    assert not extra, f"{package}.{framework} defines public {sorted(extra)} outside __all__ (add it or prefix _)"


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("package", PACKAGES)
def test_each_twin_imports_only_its_own_framework(package, framework):
    assert imported_frameworks(_tree(package, framework)) == {framework}


def test_the_checks_catch_a_broken_twin():
    broken = ast.parse(
        "import numpy as np\nimport torch\n__all__ = ['build', 'gone']\n"
        "def build(): pass\ndef helper(): pass\ndef _private(): pass\nclass Model: pass\n"
    )
    assert declared_all(broken) == ["build", "gone"]
    assert "gone" not in defined(broken) and "np" in defined(broken)
    assert public_defs(broken) - {"build", "gone"} == {"helper", "Model"}  # np is imported, not API
    assert imported_frameworks(broken) == {"torch"}


def test_every_backend_an_arm_loads_is_a_checked_twin():
    from fwbench.studies import all_studies

    backends = {a.backend for s in all_studies(hidden=True) for a in s.arms if a.backend}
    checked = {f"fwbench.{p}.{fw}" for p in PACKAGES for fw in FRAMEWORKS}
    assert backends <= checked, f"backend modules outside the twin check: {sorted(backends - checked)}"
