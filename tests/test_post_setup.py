"""The post's "Setup and assumptions" and "The environment it ran on", built from the committed paper store: each
setup line names its study, part and CPU models with the trials there, counted as the first screen's "Measured on"
counts them (``answer.hardware``); the environment lists every CPU model with those counts; the assumptions are a
template's words, not a docstring read at build time."""

from __future__ import annotations

import re
from html import unescape

from test_site_build import PROFILE, section, site, texts  # noqa: F401 (site: the built post)

from fwbench import answer, post_text
from fwbench.analysis import Results
from fwbench.studies import imdb as imdb_study

# a part's trials on a CPU model: "96 trials: 72 on X, 24 on Y" or "3 trials on X"
COUNTED = re.compile(r"(\d+) (?:trials? )?on ((?:AMD EPYC|Intel Xeon) \d+/\d+)")


def setup_lines(results: Results) -> list[str]:
    return post_text.setup(results)


def test_a_setup_line_per_part_with_its_trials_on_each_cpu_model_as_the_first_screen_counts(paper_results):
    hardware = answer.compute(paper_results).hardware
    lines = setup_lines(paper_results)
    parts = {(study, part) for m in hardware["models"] for study, part, _, _ in m["parts"]}
    assert len(lines) == len(parts) > 2
    assert lines[0].startswith("IMDB LSTM (study A;") and any(line.startswith("GluonTS DeepAR") for line in lines)
    per_model: dict = {}
    for line in lines:
        counted = COUNTED.findall(line)
        assert counted, f"a setup line without its CPU model: {line}"
        total = int(re.search(r"; (\d+) trials?[ :]", line).group(1))
        assert total == sum(int(n) for n, _ in counted), line  # the part's trials are those on its models
        for n, model in counted:
            per_model[model] = per_model.get(model, 0) + int(n)
    assert per_model == {m["name"]: m["n"] for m in hardware["models"]}  # the "Measured on" line's counts
    coverage = next(line for line in lines if ", part coverage " in line)
    by_model = {m["name"]: dict(((s, p), n) for s, p, n, _ in m["parts"]) for m in hardware["models"]}
    for model, parts_there in by_model.items():
        if ("deepar", "coverage") in parts_there:
            assert f"{parts_there['deepar', 'coverage']} on {model}" in coverage
    assert "epochs per trial " in coverage and "batches per epoch " in coverage and "seeds " in coverage


def items(page: str) -> list[str]:
    """The text of each list item of ``page`` (a glossary link inside one kept as its words)."""
    return [unescape(re.sub(r"<[^>]+>", "", item)) for item in re.findall(r"<li>(.*?)</li>", page, re.S)]


def test_every_setup_line_names_its_study_part_and_cpu_and_the_timing_line_the_imdb_rows(paper_results, site):  # noqa: F811
    setup = section(site[2], "setup")
    lines = items(setup.split("Where the sources are silent")[0])
    timing = [line for line in lines if line.startswith("Timing:")]
    assert lines[: len(lines) - len(timing)] == setup_lines(paper_results)
    base = answer.compute(paper_results).limits["cpu"]["base"].cpu_name  # the model the IMDB timings are of
    assert all(line.startswith("Timing: IMDB ") and f"CPU {base} (" in line for line in timing)
    assert "AMD EPYC (" not in setup  # a CPU is named by its model, never by the vendor's brand alone


def test_the_environment_lists_every_cpu_model_with_the_first_screens_counts(paper_results, site):  # noqa: F811
    env = section(site[2], "environment")
    row = next(text for text, _ in texts(env) if text.startswith(("AMD EPYC", "Intel Xeon")))
    models = answer.compute(paper_results).hardware["models"]
    assert len(models) > 1 and all(f"{m['name']} ({m['n']} trials)" in row for m in models)
    assert f"the {sum(m['n'] for m in models)} finished trials of profile {PROFILE}" in row
    assert "AMD EPYC (" not in env
    # every OS the first screen's trials recorded (superseded ones out), each with its count (the machines were not one)
    done = paper_results.finished(drop="stale")
    assert sum(m["n"] for m in models) == len(done)
    for os_name, n in done["provenance.os"].value_counts().items():
        assert f"{os_name} ({n} trials)" in env or done["provenance.os"].nunique() == 1
    for version in done["provenance.gluonts_version"].dropna().unique():  # gluonts as the trials recorded it
        assert f" {version}" in row and "gluonts " in row


def test_a_setup_line_names_each_models_own_settings_and_fp_mode_and_the_gluonts_version(paper_results):
    """A model whose trials covered less than the part names its own values, and a part of two fp modes each
    model's trials per mode; each DeepAR line the gluonts version its trials' provenance records."""
    done = paper_results.finished(drop="stale")
    lines = setup_lines(paper_results)
    main = next(line for line in lines if line.startswith("IMDB LSTM (study A;"))
    intel = done[
        done.study.eq("imdb") & done["config.part"].eq("main") & done["provenance.cpu_id"].str.contains("Intel")
    ]
    flushed = int(intel["config.fp_mode"].eq("flush").sum())
    assert 0 < flushed < len(intel)  # the committed store: some Intel trials flushed, some not
    batches = ", ".join(str(int(b)) for b in sorted(intel["config.batch_size"].unique()))
    part = done[done.study.eq("imdb") & done["config.part"].eq("main")]
    own = main.split("on Intel Xeon 6/207 (")[1]
    # its own batch sizes only where its trials covered fewer than the part's (since the flushed grid: all of them)
    covered = set(intel["config.batch_size"]) == set(part["config.batch_size"])
    assert own.startswith("fp mode ") if covered else own.startswith(f"batch sizes {batches};")
    assert f"subnormals flushed in {flushed}," in own or f"subnormals flushed in {flushed})" in own
    extra = next(line for line in lines if ", part extra " in line)  # one fp mode for the part, or each model's own
    extra_intel = done[
        done.study.eq("imdb") & done["config.part"].eq("extra") & done["provenance.cpu_id"].str.contains("Intel")
    ]
    n_flushed = int(extra_intel["config.fp_mode"].eq("flush").sum())  # each mode's count where the model ran both
    both = f"subnormals flushed in {n_flushed}, the libraries' default in {len(extra_intel) - n_flushed})"
    forms = ("; fp mode the libraries' default;", "on Intel Xeon 6/207 (fp mode subnormals flushed)", both)
    assert any(form in extra for form in forms), extra
    deepar = done[done.study.eq("deepar")]
    for line in (line for line in lines if line.startswith("GluonTS DeepAR")):
        part = re.search(r", part (\w+) ", line).group(1)
        (version,) = deepar[deepar["config.part"].eq(part)]["provenance.gluonts_version"].unique()
        assert f"; gluonts {version};" in line


def test_the_assumptions_are_a_templates_words_not_the_study_docstrings(monkeypatch):
    before = post_text.assumptions()
    monkeypatch.setattr(imdb_study, "__doc__", "")  # the post no longer reads it
    assert post_text.assumptions() == before and len(before) > 5
    assert before[0].startswith(f"embedding {imdb_study.MODEL['embed_dim']}, LSTM hidden")
    assert any("`worker_lifetime`" in line for line in before)
