"""The study registry: one declaration adds a study (pytest-plugin style), and everything else iterates over it.

A study module ends with ``STUDY = register(Study(...))``, which holds its **arm table** (arm name -> framework,
backend module, variant, label, colour). Everything else asks the registry; nothing outside a study's own module
derives a framework from an arm's name. Frameworks are the framework table's (``fwbench.frameworks``).

Arm names follow one scheme in every study, ``<framework>-<variant>``, the variant saying how the model runs:
PyTorch ``eager`` (dense gradients), ``sparse`` (sparse embedding gradients), ``compile`` (``torch.compile``),
``script`` (TorchScript trace + freeze); MXNet ``imperative`` (nothing hybridized), ``hybrid-partial`` (some blocks
hybridized, the rest imperative: the IMDB blocks around the LSTM, or GluonTS' hybridized training network with its
imperative predictor), ``hybrid-full`` (everything hybridized). oneDNN on/off and thread counts are options of a
trial, not arms.

Declaring or looking up a study imports no framework: backends are imported in the trial process only
(``Arm.load_backend``). Studies defined outside ``fwbench`` register the same way (``FWBENCH_STUDIES=pkg.mod[,...]``
makes the CLI import them first); the trial process gets the defining module and the folder it is imported from.
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
from ..frameworks import Framework, all_frameworks, get_framework, register_framework  # noqa: F401
from . import options as opt

BUILTIN_STUDIES = ("imdb", "deepar", "vgg16", "gemm", "onnx", "dataparallel")  # all_studies() order
BUILTIN_MODULES = tuple(f"fwbench.studies.{name}" for name in BUILTIN_STUDIES)


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
        """The variables the arm's framework reads at import for oneDNN on or off (set before ``load_backend``)."""
        return get_framework(self.framework).onednn_env(enabled)

    def load_backend(self):
        """The twin backend module; call inside the trial process only (it imports the framework)."""
        if self.backend is None:
            raise FwbenchError(f"arm {self.name!r} declares no backend module")
        return importlib.import_module(self.backend)


@dataclass(frozen=True)
class Study:
    """One study, declared once: ``grid(options) -> [config]``, ``run_trial(config, report) -> result`` (in the
    trial process only), ``describe(config) -> label``; the other fields as commented."""

    name: str
    title: str
    module: str
    profiles: dict
    options: dict
    grid: Callable[[dict], list]
    run_trial: Callable[..., dict]
    describe: Callable[[dict], str]
    arms: tuple
    preflight: Callable[[dict], None] = lambda options: None  # checks the data in the parent before any trial
    prepare: Callable[[dict], dict] | None = None  # validated options -> options (e.g. defaults from a catalogue)
    arm_field: str = "arm"
    reference: dict = field(default_factory=dict)  # framework -> the arm that stands for it in the sources' comparison
    code: tuple = ()  # modules besides the trial module and the arms' backends whose source is a trial's identity
    hidden: bool = False  # out of the README and the post (the harness self-test)
    figure_prefix: str | None = None
    block_field: str = "repeat"  # the config field numbering a setting's repeat block
    block_option: str = "repeats"  # the option setting how many blocks the grid makes
    # adaptive repeats (``studies.adaptive``): the ratios a setting feeds, ((numerator arm, denominator arm), ...),
    # and ``adaptive_metric(summary) -> float``, the per-trial number they are taken of
    adaptive_pairs: tuple | None = None
    adaptive_metric: Callable[[dict], float] | None = None
    # parts (config ``part``) whose blocks the profile declares (an accuracy part's seeds): every one runs, whatever
    # the timings say
    fixed_block_parts: tuple = ()
    # parts measured as pieces per CPU model (``--set cpu=this``): a profile's run is complete without them
    # (``completeness``), and each CPU's piece is its own condition
    piece_parts: tuple = ()
    # executor slots (Dask worker threads on one host) a trial occupies: 1, one process of ``threads`` threads,
    # unless it starts a group of processes itself (the data-parallel study: its world size)
    slots: Callable[[dict], int] = lambda config: 1

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
        """The environment a config's trial runs in: the config's ``env`` (a part run elsewhere), else its arm's."""
        return config.get("env") or self.arm_of(config).env

    def framework_of(self, arm: str) -> str:
        return self.arm(arm).framework

    def reference_arm(self, framework: str) -> str:
        if framework not in self.reference:
            raise FwbenchError(f"study {self.name!r} names no reference arm for {framework!r}")
        return self.reference[framework]

    def labels(self) -> dict:
        return {a.name: a.label for a in self.arms}

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
        options["adaptive"] = opt.adaptive_option("adaptive", options["adaptive"])  # profile values checked too
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
        so editing a profile keeps stored trials of unchanged configs current."""
        facts = {get_framework(a.framework).module for a in self.arms} - {None}
        return sorted({self.trial_module, *self.code, *(a.backend for a in self.arms if a.backend), *facts})

    def code_version(self) -> str:
        """A fingerprint of the source of ``fingerprinted_modules``, read without importing any framework; part of
        every trial id, so rows measured with other code are not reused (``fwbench status`` calls them stale). The
        arm table is not hashed, so adding an arm keeps the other arms' trials current: an arm's row selects its
        backend (hashed) and its variant, which is in the arm's name, so remapping an arm is a new arm name."""
        digest = hashlib.sha256()
        for name in self.fingerprinted_modules():
            digest.update(name.encode() + b"\0" + _source_bytes(name) + b"\0")
        return digest.hexdigest()[:12]

    def import_root(self) -> str | None:
        """The folder the defining module is imported from (for a plugin outside the installed package)."""
        path = getattr(sys.modules.get(self.module), "__file__", None)
        return str(Path(path).resolve().parents[self.module.count(".")]) if path else None


def _source_bytes(module: str) -> bytes:
    origin = getattr(sys.modules.get(module), "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec else None
    if not origin or not os.path.isfile(origin):
        raise FwbenchError(f"cannot read the source of {module!r} for the code fingerprint")
    return Path(origin).read_bytes()


_REGISTRY: dict[str, Study] = {}
_LOADED = False


def register(study: Study) -> Study:
    """Add ``study`` (again from the same module: replaces it; the same name from another module: an error)."""
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
    """The registered study ``name`` (unknown: an error, never a default). ``module`` (in a trial's spec) is imported
    first and the other studies only when it does not declare ``name``: a trial process loads its own study's
    declaration, not every study's (nor the pandas and scipy they bring: 0.7 s of its start-up)."""
    if module and name not in _REGISTRY:
        importlib.import_module(module)
    if name not in _REGISTRY:
        _load()
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
    fields = ("framework", "variant", "label", "colour", "backend")
    return [{"study": s.name, "arm": a.name, **{k: getattr(a, k) for k in fields}} for a in s.arms]
