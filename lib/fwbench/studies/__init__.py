"""The studies. Each module declares one study with ``register(Study(...))`` (see ``registry``); import
``get_study``/``all_studies`` from here. Study modules are framework-free: the backends they name are imported
inside the trial process only."""

from .registry import (
    Arm,
    Framework,
    Study,
    all_frameworks,
    all_studies,
    arm_table,
    get_framework,
    get_study,
    register,
    register_framework,
    study_names,
)

__all__ = [
    "Arm",
    "Framework",
    "Study",
    "all_frameworks",
    "all_studies",
    "arm_table",
    "get_framework",
    "get_study",
    "register",
    "register_framework",
    "study_names",
]
