"""One quantity, one value: every page that states a shared number quotes it from one computation.

The pages are rendered from a store (the committed paper store here; the smoke site in test_site), the named
numbers read back from them (``tools/check_pages.py``), and each name must carry one value, one interval and one
text per form. A planted disagreement (a page that computed its own value) must be caught.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from conftest import load_tool

from fwbench import answer, generated_blocks, prose, readme, report
from fwbench.quantity import Quantity

REPO = Path(__file__).resolve().parents[1]
consistency = load_tool("check_pages")
PAPER_STORE = REPO / "results" / "paper" / "paper-run.sqlite"
STUDIES = ("imdb", "deepar", "vgg16", "onnx")


# -- the check itself, on planted pages ---------------------------------------------------------------------------
def _page(tmp_path: Path, name: str, *quantities: str) -> Path:
    path = tmp_path / name
    path.write_text("<p>" + " and ".join(quantities) + "</p>", encoding="utf-8")
    return path


def test_a_quantity_round_trips_through_its_span():
    q = Quantity("claim.B", 2.2909, 2.0444, 2.5103, 0.975, "10 pairs")
    (m,) = consistency.mentions(f"MXNet / PyTorch: {q.markup()}.", "page.html")
    assert (m.name, m.value, m.ci_low, m.ci_high, m.level) == ("claim.B", 2.2909, 2.0444, 2.5103, 0.975)
    assert m.text == "2.29 (95 % family-wise CI 2.04-2.51)" and m.form == "stored"
    (inv,) = consistency.mentions(q.markup(inverse=True), "page.md")
    assert inv.form == "inverse" and inv.value == 2.2909 and inv.text.startswith("0.437 (95 % family-wise CI 0.398-")


def test_consistent_pages_pass(tmp_path):
    q = Quantity("claim.B", 2.29, 2.04, 2.51)
    pages = [_page(tmp_path, "a.html", q.markup()), _page(tmp_path, "b.md", q.markup(), q.markup(inverse=True))]
    found = consistency.collect(pages)
    assert len(found) == 3 and consistency.disagreements(found) == []


def test_a_planted_second_value_is_caught(tmp_path):
    """The README computing the ratio its own way (another value for the same name) fails the check."""
    ours = Quantity("claim.B", 2.29, 2.04, 2.51)
    recomputed = Quantity("claim.B", 2.31, 2.10, 2.55)
    found = consistency.collect(
        [_page(tmp_path, "index.html", ours.markup()), _page(tmp_path, "README.md", recomputed.markup())]
    )
    (problem,) = consistency.disagreements(found)
    assert problem.startswith("claim.B: 2 different values") and "2.31" in problem and "2.29" in problem


def test_float_round_off_from_another_cpu_agrees_and_a_shown_difference_does_not(tmp_path):
    """The paper post rebuilt on an Intel Xeon gives C1's lower bound as 1.115047833109518 where the README written
    on an AMD EPYC has 1.115047833109519 (another BLAS kernel, another summation order): one value. A difference
    in the 4th digit, the smallest a reader could see, is two."""
    amd = Quantity("claim.C1", 1.2, 1.115047833109519, 1.3)
    intel = Quantity("claim.C1", 1.2, 1.115047833109518, 1.3)
    assert (
        consistency.disagreements(
            consistency.collect([_page(tmp_path, "a.html", amd.markup()), _page(tmp_path, "b.md", intel.markup())])
        )
        == []
    )
    visible = Quantity("claim.C1", 1.2, 1.1152, 1.3)
    assert consistency.disagreements(
        consistency.collect([_page(tmp_path, "c.html", amd.markup()), _page(tmp_path, "d.md", visible.markup())])
    )
    assert consistency.REL_TOL < 1e-6  # far below the 3 significant digits a page shows


def test_a_planted_other_interval_or_text_is_caught(tmp_path):
    base = Quantity("imdb.x", 1.1, 0.9, 1.3)
    other_ci = Quantity("imdb.x", 1.1, 0.95, 1.25)  # same point, another interval (e.g. another level or method)
    assert consistency.disagreements(
        consistency.collect([_page(tmp_path, "a.html", base.markup()), _page(tmp_path, "b.html", other_ci.markup())])
    )
    edited = base.markup().replace("1.1 (", "1.10 (")  # same stored values, another text: a page formatted it
    assert consistency.disagreements(
        consistency.collect([_page(tmp_path, "c.html", base.markup()), _page(tmp_path, "d.html", edited)])
    )


LABEL = "MXNet / PyTorch, one thread, tourism_monthly"


def test_a_quantity_carries_its_label_and_conditions_in_its_span():
    q = Quantity("x.intel", 0.95, label=LABEL, conditions={"cpu": "Intel Xeon 6/207", "trials_at_once": "2 at once"})
    (m,) = consistency.mentions(f"<p>{q.markup()}</p>", "page.html")
    assert m.label == LABEL and dict(m.conditions) == {"cpu": "Intel Xeon 6/207", "trials_at_once": "2 at once"}
    (plain,) = consistency.mentions(Quantity("claim.B", 2.29).markup(), "page.md")
    assert (plain.label, plain.conditions) == ("claim.B", ())  # no label: its name; no conditions: the headline's


def test_one_label_under_other_conditions_unnamed_is_caught(tmp_path):
    """Two quantities shown under one label, the second measured on another CPU with two trials at once: pages
    that do not say so show one label with two numbers; naming the conditions in the row or sentence passes."""
    headline = Quantity("deepar.ratio.amd", 1.26, label=LABEL)
    conditions = {"cpu": "Intel Xeon 6/207", "at_once": "2 trials at once"}
    other = Quantity("deepar.ratio.intel", 0.95, label=LABEL, conditions=conditions)
    unnamed = [
        _page(tmp_path, "README.md", f"| {LABEL} | {headline.markup()} |"),
        _page(tmp_path, "b.html", other.markup()),
    ]
    (problem,) = consistency.disagreements(consistency.collect(unnamed))
    assert problem.startswith(f"{LABEL} on README.md, b.html: at_once, cpu differ and are not named")
    assert "b.html: 0.95 (no CI) under at_once 2 trials at once, cpu Intel Xeon 6/207" in problem
    named = _page(tmp_path, "c.html", f"{other.markup()} on the Intel Xeon 6/207, 2 trials at once")
    assert consistency.disagreements(consistency.collect([unnamed[0], named])) == []
    half = _page(tmp_path, "d.md", f"| {LABEL}, Intel Xeon 6/207 | {other.markup()} |")  # one of two named
    assert "under at_once 2 trials at once)" in consistency.disagreements(consistency.collect([unnamed[0], half]))[0]


def test_the_command_line_exits_1_on_a_disagreement(tmp_path, capsys):
    a, b = Quantity("q", 1.0), Quantity("q", 2.0)
    _page(tmp_path, "a.html", a.markup())
    _page(tmp_path, "b.html", b.markup())
    assert consistency.main([str(tmp_path)]) == 1
    assert "DISAGREE q" in capsys.readouterr().out
    (tmp_path / "b.html").unlink()
    assert consistency.main([str(tmp_path)]) == 0


# -- the paper store: README, docs, the post and the notebooks' closing text agree ----------------------------------
@pytest.fixture(scope="module")
def paper_pages(paper_results, paper_post, tmp_path_factory):
    """Every page rendered from the committed paper store: the README's answer and the details block as `make
    readme` writes them, the post (index.html, without notebook pages) and each notebook's closing text, all from
    one results object, as `make readme` reads it."""
    out = tmp_path_factory.mktemp("paper-pages")
    (out / "README.md").write_text(readme.render(paper_results), encoding="utf-8")
    (out / "results.md").write_text(readme.details(paper_results), encoding="utf-8")
    (out / "methods.md").write_text(readme.BLOCKS["options"](paper_results), encoding="utf-8")
    shutil.copytree(paper_post.parent, out / "site")
    found = answer.compute(paper_results)
    for study in STUDIES:
        (out / f"notebook-{study}.md").write_text(prose.answer_study(found, study), encoding="utf-8")
    (out / "notebook-ledger.md").write_text(prose.answer_ledger(found), encoding="utf-8")
    return out


def test_the_paper_pages_state_one_value_per_quantity(paper_pages):
    found = consistency.collect([paper_pages])
    assert consistency.disagreements(found) == []
    pages_of = {}
    for m in found:
        pages_of.setdefault(m.name, set()).add(Path(m.page).name)
    # the answer's numbers are on the README, the post and (the claims) the details and the notebooks
    for name in ("claim.B", "claim.A7", "claim.C1", "imdb.fastest_arm_vs_pytorch", "trials.done"):
        assert {"README.md", "index.html"} <= pages_of[name], (name, pages_of.get(name))
    assert {"results.md", "notebook-ledger.md"} <= pages_of["claim.B"]
    assert "notebook-vgg16.md" in pages_of["claim.C4.3"]  # torch.compile's part of C4, quoted, not recomputed
    # what the options buy (docs/methods.md): the LSTM's oneDNN effect, a hybrid arm's, the LSTM compiled, as the post
    for name in ("claim.C3.5", "claim.A9.3", "claim.C4.5"):
        assert {"methods.md", "index.html"} <= pages_of[name], (name, pages_of.get(name))


def test_the_committed_readme_and_results_agree_with_the_paper_store(paper_pages):
    """The committed front page, docs/results.md and docs/methods.md (written by `make readme`) say what the store
    says now: equal to ``consistency.REL_TOL`` (1e-9), since the README may have been written on another CPU than
    the one reading the store now, whose float round-off differs in the 15th digit."""
    committed_pages = [REPO / "README.md", REPO / "docs" / "results.md", REPO / "docs" / "methods.md"]
    found = consistency.collect([paper_pages, *committed_pages])
    assert consistency.disagreements(found) == []
    committed = {m.name for m in found if m.page.startswith(str(REPO / "README.md"))}
    assert "claim.B" in committed


def test_the_committed_options_block_is_generated_from_the_ledger(paper_pages):
    """docs/methods.md's "what the options and variants buy" is the ``options`` block as `make readme` renders it
    now: the ledger's parts of C3, A9 and C4 under their names, and around them the same words and no number typed
    by hand (spans aside, whose stored digits may differ in the 15th on another CPU: the test above compares them)."""
    start, end = generated_blocks.markers("options")
    page = (REPO / "docs" / "methods.md").read_text(encoding="utf-8")
    committed = page[page.index(start) + len(start) : page.index(end)].strip()
    rendered = (paper_pages / "methods.md").read_text(encoding="utf-8").strip()

    def names(text: str) -> list[str]:
        return [m.name for m in consistency.mentions(text, "methods.md")]

    assert names(committed) == names(rendered)
    assert {"claim.C3.5", "claim.C3.6", "claim.A9.2", "claim.A9.3", "claim.C4.1", "claim.C4.5"} <= set(names(rendered))
    assert consistency.SPAN.sub("", committed) == consistency.SPAN.sub("", rendered)


def test_a_page_that_recomputes_a_number_is_caught(paper_pages, tmp_path):
    """A disagreement planted in a copy of the rendered pages: the README quoting claim B from its own sum."""
    pages = tmp_path / "pages"
    shutil.copytree(paper_pages, pages)
    readme_md = pages / "README.md"
    text = readme_md.read_text(encoding="utf-8")
    (b,) = {m for m in consistency.mentions(text, "README.md") if m.name == "claim.B"}
    planted = Quantity("claim.B", b.value * 1.01, b.ci_low, b.ci_high, b.level)
    start = text.index('<span class="q" data-q="claim.B"')
    end = text.index("</span>", start) + len("</span>")
    readme_md.write_text(text[:start] + planted.markup() + text[end:], encoding="utf-8")
    problems = consistency.disagreements(consistency.collect([pages]))
    assert any(p.startswith("claim.B: 2 different values") for p in problems)
    assert not math.isclose(planted.value, b.value)


def test_a_notebook_page_keeps_the_spans_of_its_markdown_output(tmp_path):
    """nbconvert's own Markdown rendering cuts an inline span off its text; the notebooks' ``Markdown`` (HTML as
    well) keeps it, so the check reads the number on the notebook page."""
    import nbformat
    from IPython.core.formatters import DisplayFormatter
    from IPython.display import Markdown as IPythonMarkdown

    from fwbench.notebook_display import Markdown

    q = Quantity("claim.B", 2.29, 2.04, 2.51)
    text = f"| claim | estimate |\n|---|---|\n| B | {q.markup()} |"
    formatter = DisplayFormatter()  # not the global shell: a shell instance would change other tests' output
    pages = {}
    for name, shown in (("ours", Markdown(text)), ("ipython", IPythonMarkdown(text))):
        data, _ = formatter.format(shown)
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("display(...)")
        cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {name}"), cell]
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        page = report.render_notebook(report.notebook_meta(path), tmp_path, "smoke")
        pages[name] = consistency.mentions(page.read_text(encoding="utf-8"), page.name)
    (m,) = pages["ours"]
    assert m.text == q.text() and m.value == 2.29
    assert [x.text for x in pages["ipython"]] == [""]  # why the notebooks do not use IPython's Markdown
