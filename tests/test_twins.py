"""Twin backends are twins: each pair (``sentiment``, ``forecast``, ``vision``, ``dataparallel``) declares the same
``__all__``, every name in it is defined, no public top-level function or class is left out of it, and each twin
imports only its own framework. Read from the source with ``ast``: no framework is imported here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fwbench

LIB = Path(fwbench.__file__).resolve().parent
PACKAGES = ("sentiment", "forecast", "vision", "dataparallel")
FRAMEWORKS = ("torch", "mxnet", "jax")
# every (package, framework) twin that exists: torch and mxnet in all four, jax in sentiment and vision (issue 25)
TWINS = [(p, fw) for p in PACKAGES for fw in FRAMEWORKS if (LIB / p / f"{fw}.py").exists()]


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


def test_the_twins_found_are_the_ones_declared():
    assert {(p, fw) for p in PACKAGES for fw in ("torch", "mxnet")} | {("sentiment", "jax"), ("vision", "jax")} == set(
        TWINS
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_twins_declare_the_same_all(package):
    first, *others = [(fw, declared_all(_tree(package, fw))) for p, fw in TWINS if p == package]
    assert len(set(first[1])) == len(first[1]), f"{package}.{first[0]} lists a name twice"
    for fw, names in others:
        assert set(first[1]) == set(names), (
            f"only in {package}.{first[0]}: {sorted(set(first[1]) - set(names))}; "
            f"only in {package}.{fw}: {sorted(set(names) - set(first[1]))}"
        )


@pytest.mark.parametrize(("package", "framework"), TWINS)
def test_all_is_exactly_the_public_api(package, framework):
    tree = _tree(package, framework)
    names = declared_all(tree)
    assert not set(names) - defined(tree), f"{package}.{framework}.__all__ names undefined {set(names) - defined(tree)}"
    extra = public_defs(tree) - set(names)
    assert not extra, f"{package}.{framework} defines public {sorted(extra)} outside __all__ (add it or prefix _)"


@pytest.mark.parametrize(("package", "framework"), TWINS)
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
    checked = {f"fwbench.{p}.{fw}" for p, fw in TWINS}
    assert backends <= checked, f"backend modules outside the twin check: {sorted(backends - checked)}"
