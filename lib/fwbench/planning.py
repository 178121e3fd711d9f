"""What a sweep will run, checked before anything runs: a study's profile and overrides resolved into its planned
trials (each with its environment, and the environment's lock in the identity when it is not ``main``), the
study's data check (``preflight``, once, when a trial is about to run: ``Preflight``) and the run's arguments
sane. Whether the trials' environments are built is asked where they will run (``Executor.require_environments``).
``fwbench.runner`` runs what this plans; the status, estimates and pages read ``plan`` without running anything."""

from __future__ import annotations

from collections.abc import Callable

from . import conditions
from .environments import MAIN, get_environment
from .errors import FwbenchError
from .execute import PlannedTrial
from .progress import Progress
from .store import trial_id
from .studies import all_studies, get_study


def resolve(study_name: str, profile: str, overrides: dict | None):
    if overrides is not None and not isinstance(overrides, dict):
        raise FwbenchError(f"overrides must be a dict of option -> value, got {overrides!r}; e.g. {{'epochs': 3}}")
    study = get_study(study_name)
    return study, study.resolve(profile, overrides)


def trial_environment(study, config: dict, cache: dict):
    """The declared environment of a config's trial (an unknown name is a one-line error naming the arm)."""
    name = study.env_of(config)
    if name not in cache:
        try:
            cache[name] = get_environment(name)
        except FwbenchError as exc:
            raise FwbenchError(f"study {study.name}, arm {config.get(study.arm_field)!r}: {exc}") from None
    return cache[name]


def planned_trials(study, options: dict, condition: dict | None = None) -> list[PlannedTrial]:
    """The plan. A trial outside ``main`` names its environment and that environment's lock hash in its config
    (so in its id: another environment, or a relocked one, is another trial); a ``main`` trial's config is left as
    the study made it, so its id is unchanged (see ``fwbench.environments``). ``condition`` (``fwbench.conditions``:
    the CPU model and fp mode a run is measured under) adds its keys to every config."""
    code, root = study.code_version(), study.import_root()
    trials, envs = [], {}
    for position, config in enumerate(study.grid(options)):
        study.arm_of(config)  # an arm missing from the study's arm table is an error before anything runs
        config = {**config, **(condition or {})}
        env = trial_environment(study, config, envs)
        lock = env.lock_hash() if env.lock.exists() or env.name != MAIN else None
        if env.name != MAIN:
            config = {**config, "env": env.name, "env_lock": lock}
        trials.append(
            PlannedTrial(
                trial_id(study.name, config, code),
                study.name,
                config,
                study.describe(config),
                study.module,
                root,
                position,
                code,
                env.name,
                lock,
                tuple(env.packages()),
                study.slots(config),
            )
        )
    return trials


def environments_needed(study_names=None, profile: str | None = None) -> set[str]:
    """The environments the plans of ``profile`` need (every study that has the profile, or those named)."""
    names: set[str] = set()
    for study in all_studies():
        if (study_names and study.name not in study_names) or profile not in study.profiles:
            continue
        options = study.resolve(profile)
        names |= {study.env_of(c) for c in study.grid(options)}
    return names


def plan(study_name: str, profile: str, overrides: dict | None = None) -> list[PlannedTrial]:
    """The trials of a profile under the condition its overrides name (validated before anything runs)."""
    return planned_trials(*resolve(study_name, profile, overrides), conditions.of_run(study_name, profile, overrides))


class Preflight:
    """The study's ``preflight(options)``, run at most once, when the first trial is about to be handed to the
    executor; a sweep with nothing to run never calls it. ``elsewhere(study, options)``, when given, runs the same
    check where the trials will run (``Executor.require_preflight``: on a cluster, each worker host finds its data
    through its own environment)."""

    def __init__(self, study, options: dict, elsewhere: Callable[[object, dict], None] | None = None):
        self.study, self.options, self.elsewhere, self.done = study, options, elsewhere, False

    def __call__(self) -> None:
        if not self.done:
            self.study.preflight(self.options)
            if self.elsewhere is not None:
                self.elsewhere(self.study, self.options)
            self.done = True


def _check_number(name: str, value, minimum: float, integer: bool = False, flag: str | None = None) -> None:
    kinds = (int,) if integer else (int, float)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        what = "an integer" if integer else "a number"
        raise FwbenchError(
            f"{name} must be {what} >= {minimum} (or None), got {value!r}" + (f"; e.g. {flag}" if flag else "")
        )


def check_run_args(progress, timeout_s, memory_limit_mb, trials_per_host, scheduler) -> None:
    """Validate the runner's own arguments (notebook parameters arrive here as the user typed them)."""
    if not isinstance(progress, Progress) and progress not in ("auto", "lines", "bar", "none"):
        raise FwbenchError(f"progress must be one of auto, lines, bar, none, got {progress!r}")
    _check_number("timeout_s", timeout_s, 1, flag="timeout_s=3600")
    _check_number("memory_limit_mb", memory_limit_mb, 64, integer=True, flag="memory_limit_mb=8192")
    _check_number("trials_per_host", trials_per_host, 1, integer=True, flag="trials_per_host=1")
    if trials_per_host is not None and trials_per_host > 1 and scheduler is None:
        raise FwbenchError(
            f"trials_per_host={trials_per_host} only applies to a Dask run; pass a scheduler "
            "(--scheduler tcp://HOST:8786) or drop it (one machine runs one trial at a time)"
        )
    if scheduler is not None:
        from .cluster_connect import check_address

        check_address(scheduler)
