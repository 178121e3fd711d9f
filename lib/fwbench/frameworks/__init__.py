"""The framework table: one declaration adds a framework (pytest-plugin style), and everything else iterates over it.

A framework is one ``register_framework(Framework(...))``: its name (as arms and provenance spell it), a label, the
top-level module whose presence in ``sys.modules`` says it is loaded in this process (provenance's
one-framework-per-process check), its facts module and a colour. The facts modules are twins with the same public
names (d2l-style, e.g. ``fwbench.frameworks.torch`` and ``fwbench.frameworks.mxnet``): ``info() -> dict`` (version
and build facts for provenance), ``onednn_env(enabled) -> {variable: value}`` (set before the framework's import:
MXNet fixes oneDNN use at import, PyTorch switches at run time and sets nothing), ``onednn(enabled)`` /
``onednn_enabled()`` (the context a trial runs in, and what the process really does) and ``describe_build(recorded)
-> str`` (one line on the math libraries, from recorded provenance fields). The parent process imports them too
(the studies ask for ``onednn_env`` before the backend import), so a facts module imports its framework inside
functions only. ``"none"`` (the harness' self-test, toy studies) and ONNX Runtime (whose step records its own
version) have no facts module: they record and set nothing.

Decision: the table lives here, not in ``fwbench.studies.registry`` (which re-exports it), because
``fwbench.provenance`` reads it and must not import the study registry. Adding a framework: docs/architecture.md.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from ..errors import FwbenchError


@dataclass(frozen=True)
class Framework:
    """One row of the framework table."""

    name: str
    label: str
    import_name: str | None  # top-level module probed in sys.modules (None: nothing to load)
    module: str | None  # facts module (imports its framework inside functions only); None: no facts
    colour: str
    # its subnormal probe (``fwbench.floatmode``): run after a trial, outside the fingerprint; None: no probe
    probe_module: str | None = None

    def facts(self) -> ModuleType | None:
        """The facts module (cheap: it does not import the framework)."""
        return importlib.import_module(self.module) if self.module else None

    def imported(self) -> bool:
        """Whether this process has loaded the framework."""
        return self.import_name is not None and self.import_name in sys.modules

    def info(self) -> dict:
        """Version and build facts; imports the framework, so call it in a trial process only."""
        return self.facts().info() if self.module else {}

    def onednn_env(self, enabled: bool) -> dict[str, str]:
        """Environment variables to set before the framework's import for oneDNN on or off."""
        return self.facts().onednn_env(enabled) if self.module else {}

    def describe_build(self, recorded: Callable[[str], object]) -> str:
        """One line on the build, from ``recorded(field)`` (the first recorded value of a provenance field)."""
        return self.facts().describe_build(recorded) if self.module else "build not recorded"


_TABLE: dict[str, Framework] = {}


def register_framework(framework: Framework) -> Framework:
    """Add ``framework``; the same name with other facts is an error (the same declaration again is not)."""
    old = _TABLE.get(framework.name)
    if old is not None and old != framework:
        raise FwbenchError(f"framework {framework.name!r} is declared twice ({old} and {framework})")
    _TABLE[framework.name] = framework
    return framework


def get_framework(name: str) -> Framework:
    """The registered framework ``name``; an unknown one is an error."""
    if name not in _TABLE:
        raise FwbenchError(f"unknown framework {name!r}; known: {', '.join(_TABLE)}")
    return _TABLE[name]


def all_frameworks() -> list[Framework]:
    """Registered frameworks in declaration order."""
    return list(_TABLE.values())


register_framework(
    Framework("torch", "PyTorch", "torch", "fwbench.frameworks.torch", "#1f77b4", "fwbench.floatmode.torch")
)
register_framework(
    Framework("mxnet", "MXNet", "mxnet", "fwbench.frameworks.mxnet", "#d62728", "fwbench.floatmode.mxnet")
)
register_framework(Framework("jax", "JAX", "jax", "fwbench.frameworks.jax", "#e377c2", "fwbench.floatmode.jax"))
register_framework(Framework("onnxruntime", "ONNX Runtime", "onnxruntime", None, "#2ca02c"))
register_framework(Framework("none", "no framework", None, None, "#7f7f7f"))
