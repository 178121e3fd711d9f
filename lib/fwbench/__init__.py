"""fwbench: PyTorch vs MXNet, measured.

Data flows one way: data loaders -> trials (one framework each, in a fresh process) -> runner ->
results store (SQLite) -> tables, figures, ledger -> notebooks and the post.
"""

__version__ = "0.1.0"
