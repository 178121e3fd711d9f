"""The published figures every claim is held against, one module per source, as their authors stated them.

A leaf: nothing here imports fwbench, so the analysis, the plots, the ledger, the report and the README all read
the same numbers without reaching into each other. What a claim's rule does with them lives in the ledger.
"""
