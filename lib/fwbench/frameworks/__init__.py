"""The framework table: one declaration adds a framework (pytest-plugin style), and everything else iterates over it.

A framework is one ``register_framework(Framework(...))``: its name (as arms and provenance spell it), a label for
people, the top-level module whose presence in ``sys.modules`` says the framework is loaded in this process (the
one-framework-per-process check of ``fwbench.provenance``), the module holding its process-level facts, and a
colour. The facts modules are twins with the same public names (d2l-style), e.g. ``fwbench.frameworks.torch`` and
``fwbench.frameworks.mxnet``:

- ``info() -> dict``: version and build facts for a trial's provenance;
- ``onednn_env(enabled) -> {variable: value}``: environment set before the framework is imported (MXNet fixes
  oneDNN use at import; PyTorch switches it at run time, so it sets nothing);
- ``onednn(enabled)`` / ``onednn_enabled()``: the context a trial runs in and what the process really does;
- ``describe_build(recorded) -> str``: one line on the math libraries, from recorded provenance fields.

They are imported in the parent process too (the studies ask for ``onednn_env`` before the backend import), so a
facts module imports its framework inside functions only. ``"none"`` (the harness' self-test, the toy studies) and
ONNX Runtime (whose one step records its own version) have no facts module: they record nothing and set nothing.

Decisions: the table lives here, at the bottom of the package, not in ``fwbench.studies.registry`` (which re-exports
it), because ``fwbench.provenance`` reads it and must not import the study registry. The study registry validates
every arm's framework against it.

Adding a framework (JAX next) touches: one ``register_framework`` line here (or in a plugin module), its facts
module (``fwbench/frameworks/<name>.py``), its backend twins (``sentiment/``, ``forecast/``, ``vision/`` as
``<name>.py``; the sentiment twin's ``bare_loop`` serves the harness benchmark) and the arm rows and ``reference``
entries of the studies that run it. JAX in the three training studies: 8 files, 4 of them new (facts module, three
backends) and 4 edited declarations (this table, the IMDB, DeepAR and VGG16 arm tables), and no caller: the runner,
provenance, the studies' trial code, the benchmarks, the twin check, the analysis and the ledger iterate over the
table or a study's ``reference``. Before the table the same addition also edited the logic of 9 more modules
(the registry's label dict, provenance, the oneDNN blocks of three studies, the bench's loop dict, the twin check,
the VGG16 analysis, the ledger's build lines). ``tests/test_frameworks.py`` guards this and registers a toy framework.
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
        facts = self.facts()
        return facts.info() if facts else {}

    def onednn_env(self, enabled: bool) -> dict[str, str]:
        """Environment variables to set before the framework's import for oneDNN on or off."""
        facts = self.facts()
        return facts.onednn_env(enabled) if facts else {}

    def describe_build(self, recorded: Callable[[str], object]) -> str:
        """One line on the build, from ``recorded(field)`` (the first recorded value of a provenance field)."""
        facts = self.facts()
        return facts.describe_build(recorded) if facts else "build not recorded"


_TABLE: dict[str, Framework] = {}


def register_framework(framework: Framework) -> Framework:
    """Add ``framework``; declaring the same name again with other facts is an error (the same declaration
    again, e.g. a re-imported plugin module, is not)."""
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
