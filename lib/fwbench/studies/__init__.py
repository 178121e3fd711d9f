"""The studies. Each module declares one study with ``register(Study(...))`` (see ``registry``); import
``get_study``/``all_studies`` from here. Study modules are framework-free: the backends they name are imported
inside the trial process only."""
from .registry import FRAMEWORKS, Arm, Study, all_studies, arm_table, get_study, register, study_names

__all__ = ["FRAMEWORKS", "Arm", "Study", "all_studies", "arm_table", "get_study", "register", "study_names"]
