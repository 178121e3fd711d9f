"""The sources whose claims the ledger judges, one module each, each holding its own numbers once:
``borealis2018`` (A1-A10), ``deepar2024`` (B), ``overview`` (C1-C4). A new source is a module with ``SOURCE``
and ``CLAIMS`` added to ``SOURCES``."""

from __future__ import annotations

from . import borealis2018, deepar2024, overview

SOURCES = (borealis2018, deepar2024, overview)
CLAIMS = [claim for source in SOURCES for claim in source.CLAIMS]
