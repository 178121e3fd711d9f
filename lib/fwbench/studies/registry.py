"""The study registry: one declaration adds a study (pytest-plugin style), and everything else iterates over it.

A study module ends with ``STUDY = register(Study(...))``. The declaration holds the study's name, profiles,
option validators, grid, trial function and its **arm table** (arm name -> framework, backend module, variant,
label, colour). The runner, the CLI, the README generator, the report, the plots' colours, provenance and the
ledger ask the registry; nothing outside a study's own module derives a framework from an arm's name. An arm's
framework is one of the framework table's (``fwbench.frameworks``, re-exported here: ``register_framework``,
``get_framework``, ``all_frameworks``), where one declaration adds a framework as one declaration here adds a study.

Arm names follow one scheme in every study: ``<framework>-<variant>``, where the variant says how the model runs:

- PyTorch: ``torch-eager`` (dense gradients), ``torch-sparse`` (eager, sparse embedding gradients),
  ``torch-compile`` (``torch.compile``), ``torch-script`` (TorchScript trace + freeze);
- MXNet: ``mxnet-imperative`` (nothing hybridized), ``mxnet-hybrid-partial`` (some blocks hybridized, the rest
  imperative: the IMDB blocks around the LSTM, or GluonTS' hybridized training network with its imperative
  predictor), ``mxnet-hybrid-full`` (everything hybridized).
oneDNN on/off and thread counts are options of a trial, not arms.

Everything here is framework-free: declaring or looking up a study imports neither torch nor mxnet. The
backend modules are imported inside the trial process only (``Arm.load_backend``).

Studies defined outside ``fwbench`` register the same way; the runner passes the defining module to the trial
process (``Study.module``) together with the folder it is imported from, so a plugin's trials run too.
Set ``FWBENCH_STUDIES=pkg.mod[,other.mod]`` to make the CLI import plugin modules before it looks a study up.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conditions import study_overrides
from ..errors import FwbenchError

# the framework table, re-exported: the registry is where arms and studies look their frameworks up
from ..frameworks import Framework, all_frameworks, get_framework, register_framework  # noqa: F401
from . import options as opt
from .adaptive import adaptive_option

BUILTIN_MODULES = (
    "fwbench.studies.imdb",
    "fwbench.studies.deepar",
    "fwbench.studies.vgg16",
    "fwbench.studies.gemm",
    "fwbench.studies.onnx",
    "fwbench.studies.dataparallel",
    "fwbench.studies.selftest",
)


@dataclass(frozen=True)
class Arm:
    """One row of a study's arm table."""

    name: str
    framework: str
    backend: str | None  # module imported inside the trial process (None: the study imports what it needs)
    variant: str
    label: str
    colour: str
    env: str = "main"  # the environment its trials run in (``fwbench.environments``), unless a config names one

    def __post_init__(self):
        try:
            get_framework(self.framework)  # the framework table (``fwbench.frameworks``)
        except FwbenchError as exc:
            raise FwbenchError(f"arm {self.name!r}: {exc}") from None

    def onednn_env(self, enabled: bool) -> dict[str, str]:
        """Environment variables the arm's framework reads at import for oneDNN on or off (set them before
        ``load_backend``; none for a framework that switches at run time)."""
        return get_framework(self.framework).onednn_env(enabled)

    def load_backend(self):
        """The twin backend module; call inside the trial process only (it imports the framework)."""
        if self.backend is None:
            raise FwbenchError(f"arm {self.name!r} declares no backend module")
        return importlib.import_module(self.backend)


def _no_preflight(options: dict) -> None:
    """Nothing to check before the trials."""


def _one_slot(config: dict) -> int:
    """A trial is one process of ``threads`` threads: one slot of an executor."""
    return 1


@dataclass(frozen=True)
class Study:
    """One study, declared once. ``grid(options) -> [config]``, ``run_trial(config, report) -> result``
    (child process only), ``describe(config) -> label``; ``prepare(options) -> options`` post-processes the
    validated options (e.g. fills defaults that need the data catalogue); ``preflight(options)`` checks data in
    the parent before any trial. ``code`` names modules (besides the study's own and the arms' backends) whose
    source is part of a trial's identity. ``reference`` maps a framework to the arm that stands for it in the
    source's comparison. ``hidden`` studies (the harness self-test) stay out of the README and the post.

    Repeat blocks: ``block_field`` is the config field numbering a setting's block, ``block_option`` the option
    that sets how many blocks the grid makes. A study that can run adaptive repeats (``studies.adaptive``)
    declares ``adaptive_pairs`` ((numerator arm, denominator arm), ...: the ratios a setting feeds) and
    ``adaptive_metric(summary) -> float`` (the per-trial number those ratios are taken of).

    ``fixed_block_parts``: the grid parts (config ``part``) whose number of blocks the profile declares (the
    seeds of an accuracy part): the adaptive rule runs every planned block of their settings, whatever their
    timings say.

    ``piece_parts``: the grid parts measured as pieces per CPU model (``--set cpu=this``), never on the unnamed
    plan alone: a profile's run is complete without them (``completeness``), and each CPU's piece is read as its
    own condition.

    ``slots(config) -> int``: how many executor slots (Dask worker threads on one host) a trial occupies; 1 unless
    a trial starts a group of processes itself (the data-parallel study: its world size)."""

    name: str
    title: str
    module: str
    profiles: dict
    options: dict
    grid: Callable[[dict], list]
    run_trial: Callable[..., dict]
    describe: Callable[[dict], str]
    arms: tuple
    preflight: Callable[[dict], None] = _no_preflight
    prepare: Callable[[dict], dict] | None = None
    arm_field: str = "arm"
    reference: dict = field(default_factory=dict)
    code: tuple = ()
    hidden: bool = False
    figure_prefix: str | None = None
    block_field: str = "repeat"
    block_option: str = "repeats"
    adaptive_pairs: tuple | None = None
    adaptive_metric: Callable[[dict], float] | None = None
    fixed_block_parts: tuple = ()
    piece_parts: tuple = ()
    slots: Callable[[dict], int] = _one_slot

    def __post_init__(self):
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names):
            raise FwbenchError(f"study {self.name!r} declares an arm twice: {names}")
        for framework, arm in self.reference.items():
            if arm not in names or self.arm(arm).framework != framework:
                raise FwbenchError(
                    f"study {self.name!r}: reference arm {arm!r} for {framework!r} is not one of its {framework} arms"
                )
        for pair in self.adaptive_pairs or ():
            if len(pair) != 2 or not set(pair) <= set(names) or pair[0] == pair[1]:
                raise FwbenchError(f"study {self.name!r}: adaptive pair {pair!r} is not two of its arms {names}")
        if self.adaptive_pairs and self.adaptive_metric is None:
            raise FwbenchError(f"study {self.name!r} declares adaptive_pairs but no adaptive_metric")

    # -- arms ---------------------------------------------------------------------------------------------
    @property
    def arm_names(self) -> tuple:
        return tuple(a.name for a in self.arms)

    def arm(self, name: str) -> Arm:
        for a in self.arms:
            if a.name == name:
                return a
        raise FwbenchError(f"unknown arm {name!r} for study {self.name}; its arms: {', '.join(self.arm_names)}")

    def arm_of(self, config: dict) -> Arm:
        if self.arm_field not in config:
            raise FwbenchError(f"a {self.name} config has no {self.arm_field!r} field: {config!r}")
        return self.arm(config[self.arm_field])

    def env_of(self, config: dict) -> str:
        """The environment a config's trial runs in: the config's ``env`` (a study part that runs its arms
        elsewhere), else its arm's (default ``main``)."""
        return config.get("env") or self.arm_of(config).env

    def framework_of(self, arm: str) -> str:
        return self.arm(arm).framework

    def reference_arm(self, framework: str) -> str:
        if framework not in self.reference:
            raise FwbenchError(f"study {self.name!r} names no reference arm for {framework!r}")
        return self.reference[framework]

    def labels(self) -> dict:
        return {a.name: a.label for a in self.arms}

    def colours(self) -> dict:
        return {a.name: a.colour for a in self.arms}

    # -- options and plan ---------------------------------------------------------------------------------
    def resolve(self, profile: str, overrides: dict | None = None) -> dict:
        """The profile's options with ``overrides``; the run's condition (``fwbench.conditions``: cpu, fp_mode)
        is not the study's and is taken out here (the planner adds it to each config)."""
        overrides = study_overrides(overrides)
        options = opt.resolve(self.name, self.profiles, self.options, profile, overrides)
        if options.get("adaptive"):
            self._plan_adaptive(options, overrides or {})
        return self.prepare(options) if self.prepare else options

    def _plan_adaptive(self, options: dict, overrides: dict) -> None:
        """Adaptive repeats: the grid is planned at the cap (``max_blocks`` blocks); the runner runs fewer."""
        options["adaptive"] = adaptive_option("adaptive", options["adaptive"])  # profile values checked too
        if not self.adaptive_pairs:
            raise FwbenchError(
                f"study {self.name!r} declares no adaptive_pairs, so it cannot run adaptive repeats; set adaptive=False"
            )
        if self.block_option not in options:
            raise FwbenchError(f"study {self.name!r} has no {self.block_option!r} option to plan adaptive blocks")
        if overrides.get(self.block_option) is not None:
            raise FwbenchError(
                f"{self.block_option} and adaptive both set: with adaptive repeats the number of "
                f"blocks is max_blocks; drop {self.block_option} or set adaptive=False"
            )
        options[self.block_option] = options["adaptive"]["max_blocks"]

    @property
    def trial_module(self) -> str:
        """The module that defines ``run_trial``: what a trial process runs."""
        return getattr(self.run_trial, "__module__", None) or self.module

    def fingerprinted_modules(self) -> list[str]:
        """The modules whose source is a trial's code: the trial module, the arms' backends, the facts modules
        of their frameworks (they set what a framework does at import, e.g. oneDNN) and the study's ``code``
        modules. The declaration module (profiles, options, grid) is left out when ``run_trial`` lives elsewhere,
        so editing a profile keeps stored trials of unchanged configs current; a study that defines ``run_trial``
        beside its profiles (the self-test, most plugins) fingerprints that whole module, as before."""
        facts = {get_framework(a.framework).module for a in self.arms} - {None}
        return sorted({self.trial_module, *self.code, *(a.backend for a in self.arms if a.backend), *facts})

    def code_version(self) -> str:
        """A fingerprint of what a trial runs: the source of ``fingerprinted_modules``. It is part of every trial
        id, so rows measured with other code are not reused (``fwbench status`` calls them stale). Read from the
        source files, without importing any framework.

        The arm table is not hashed: adding an arm keeps the stored trials of the other arms current. An arm's
        row selects its backend (hashed above) and its variant, and the variant is part of the arm's name
        (``<framework>-<variant>``), so remapping what an arm runs is a new arm name, whose rows ``fwbench status``
        already calls stale (an arm the table no longer has)."""
        digest = hashlib.sha256()
        for name in self.fingerprinted_modules():
            digest.update(name.encode() + b"\0" + _source_bytes(name) + b"\0")
        return digest.hexdigest()[:12]

    def import_root(self) -> str | None:
        """The folder the defining module is imported from (for a plugin outside the installed package)."""
        mod = sys.modules.get(self.module)
        path = getattr(mod, "__file__", None)
        if not path:
            return None
        root = Path(path).resolve().parent
        for _ in range(self.module.count(".")):
            root = root.parent
        return str(root)


def _source_bytes(module: str) -> bytes:
    mod = sys.modules.get(module)
    origin = getattr(mod, "__file__", None) if mod else None
    if origin is None:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec else None
    if not origin or not os.path.isfile(origin):
        raise FwbenchError(f"cannot read the source of {module!r} for the code fingerprint")
    return Path(origin).read_bytes()


_REGISTRY: dict[str, Study] = {}
_LOADED = False


def register(study: Study) -> Study:
    """Add ``study`` (a re-registration from the same module replaces it; another module's same name is an
    error)."""
    old = _REGISTRY.get(study.name)
    if old is not None and old.module != study.module:
        raise FwbenchError(f"study {study.name!r} is declared twice ({old.module} and {study.module})")
    _REGISTRY[study.name] = study
    return study


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    plugins = [m.strip() for m in os.environ.get("FWBENCH_STUDIES", "").split(",") if m.strip()]
    for module in (*BUILTIN_MODULES, *plugins):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise FwbenchError(f"cannot import study module {module!r} ({exc}); check FWBENCH_STUDIES") from None


def get_study(name: str, module: str | None = None) -> Study:
    """The registered study ``name``; ``module`` (the trial process gets it in its spec) is imported first when
    the study is not known yet. An unknown study is an error, never a default."""
    _load()
    if name not in _REGISTRY and module:
        importlib.import_module(module)
    if name not in _REGISTRY:
        raise FwbenchError(f"unknown study {name!r}; choose one of: {', '.join(study_names(hidden=True))}")
    return _REGISTRY[name]


def all_studies(hidden: bool = False) -> list[Study]:
    """Registered studies in declaration order (``hidden`` ones only when asked)."""
    _load()
    return [s for s in _REGISTRY.values() if hidden or not s.hidden]


def study_names(hidden: bool = False) -> list[str]:
    return [s.name for s in all_studies(hidden)]


def arm_table(study: str) -> list[dict[str, Any]]:
    """The arm table of a study as rows (for the README and the post)."""
    s = get_study(study)
    return [
        {
            "study": s.name,
            "arm": a.name,
            "framework": a.framework,
            "variant": a.variant,
            "label": a.label,
            "colour": a.colour,
            "backend": a.backend,
        }
        for a in s.arms
    ]
