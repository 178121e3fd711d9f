"""Numbers flow one way: no import cycle of any length in ``lib/fwbench``, and the leaves import nothing of it.

The graph is read from the source with ``ast``, so it counts what a module could import, not what one test run
happened to: top-level and function-level (lazy) imports alike. A lazy import that exists to dodge a cycle is
still a cycle here. Relative imports are resolved; ``from . import x`` where ``x`` is a submodule is an edge to
``x``, not to the package (a package's ``__init__`` re-exporting its submodules is not a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"
PACKAGE = "fwbench"
LEAVES = ("fwbench.published", "fwbench.stats", "fwbench.errors")  # modules (or packages) readable by every layer


def modules(root: Path = LIB, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` under ``root`` (a package is its __init__)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: set) -> set:
    """The modules of ``known`` that ``name`` (at ``path``) imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                # ``from pkg import sub`` imports the submodule; ``from pkg import name`` runs pkg's __init__
                found.add(submodule if submodule in known else target)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {target for target in found if target in known} - {name}


def import_graph(root: Path = LIB, package: str = PACKAGE) -> dict[str, set]:
    found = modules(root, package)
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def cycles(graph: dict[str, set]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted; a self-import counts too."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def _path_through(graph: dict[str, set], component: list[str]) -> list[str]:
    """One cycle inside ``component``, as a readable path a -> b -> ... -> a."""
    members, start = set(component), component[0]
    path, seen = [start], {start}
    while True:
        successor = sorted(graph[path[-1]] & members)[0]
        if successor in seen:
            return path[path.index(successor) :] + [successor]
        path.append(successor)
        seen.add(successor)


def test_the_cycle_finder_finds_a_three_cycle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert cycles(graph) == [["a", "b", "c"], ["e"]]
    assert _path_through(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve_to_submodules_not_packages(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from . import leaf\nfrom .sub import thing\n")
    (package / "leaf.py").write_text("def f():\n    from .sub import deep\n")
    (package / "sub" / "__init__.py").write_text("thing = 1\n")
    (package / "sub" / "deep.py").write_text("from .. import leaf\nfrom ..leaf import f\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.leaf", "pkg.sub"},
        "pkg.leaf": {"pkg.sub.deep"},
        "pkg.sub": set(),
        "pkg.sub.deep": {"pkg.leaf"},
    }
    assert cycles(graph) == [["pkg.leaf", "pkg.sub.deep"]]  # the lazy import counts


def test_no_import_cycle_of_any_length():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles (lazy imports included):\n" + "\n".join(
        f"{' -> '.join(_path_through(graph, component))}  (component: {', '.join(component)})" for component in found
    )


def test_leaves_import_nothing_of_fwbench():
    graph = import_graph()
    leaves = [name for name in graph if any(name == leaf or name.startswith(leaf + ".") for leaf in LEAVES)]
    assert set(LEAVES) <= set(leaves), "a leaf module is missing"
    outside = {name: sorted(target for target in graph[name] if not target.startswith(name + ".")) for name in leaves}
    # a leaf package may hold its own submodules; nothing else of fwbench
    outside = {name: targets for name, targets in outside.items() if targets}
    assert not outside, outside
