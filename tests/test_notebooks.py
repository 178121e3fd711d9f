"""Every notebook: committed clean, one parameters cell, python3 kernel; and it runs under the smoke profile."""

from __future__ import annotations

import json

import nbformat
import papermill
import pytest
from conftest import NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean_with_one_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    params = papermill.inspect_notebook(str(path))
    assert "profile" in params and json.loads(params["profile"]["default"]) == "quick"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_under_smoke_profile_without_errors(path, smoke_notebooks):
    nb = nbformat.read(smoke_notebooks.executed / path.name, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and 'profile = "smoke"' in injected[0].source


@pytest.mark.slow
def test_imdb_notebook_figures_and_prose_come_from_the_store(smoke_notebooks):
    from fwbench import answer, prose
    from fwbench.analysis import Results, imdb
    from fwbench.store import ResultsStore

    for name in ("imdb_epoch_time", "imdb_ratio"):
        for ext in ("png", "svg"):
            assert (smoke_notebooks.figures / f"{name}.{ext}").stat().st_size > 1000
    results = Results(ResultsStore(smoke_notebooks.store), "smoke")
    frame = imdb.load_sweep(results)
    expected = prose.answer_study(answer.compute(results), "imdb")
    nb = nbformat.read(smoke_notebooks.executed / "01_imdb_sweep.ipynb", as_version=4)
    shown = [
        o["data"]["text/markdown"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]
    arms = set(imdb.part(frame, "main").arm)
    # the notebook closes with the answer's IMDB part: every arm at its best setting, the claims with the ledger's
    # numbers (quantity spans), nothing recomputed in the notebook
    assert expected in shown and all(f"- `{arm}`: batch" in expected for arm in arms)
    assert 'data-q="claim.A7.1"' in expected
