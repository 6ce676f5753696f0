"""Rules that keep the documentation from drifting from the code.

- sampler names are read from the registry wherever the samplers are listed
  (the estimators' ``sampler`` docstring, the documentation's table), never
  typed by hand, so that a new registration appears in every list;
- no docstring carries a measured number: measurements live on the
  benchmark pages, which the documentation includes, and go stale in a
  docstring.
"""

import ast
import importlib.util
import pathlib
import re

import pytest

import skgibbs
from skgibbs import GibbsMLPClassifier, GibbsMLPRegressor
from skgibbs.samplers import available_samplers
from skgibbs.samplers.base import sampler_table

PACKAGE = pathlib.Path(skgibbs.__file__).parent
REPO = PACKAGE.parent
DOC = REPO / "doc"

#: a sentence that reports a measurement: it speaks of one and holds a decimal, a percentage, a ratio
#: or a duration
MEASURE = re.compile(r"\bmeasured\b|\bbenchmark\b|\bbench_|``benchmarks/", re.I)
NUMBER = re.compile(
    r"(?<![\w.])-?\d+\.\d+|\d+(\.\d+)?\s*%|\d+(\.\d+)?\s*(times|x)\b|\d+(\.\d+)?\s*(s|seconds|minutes|min)\b"
)


def _docstrings(path):
    """``(line, text)`` of a module's docstrings and ``#:`` comments (what the API pages render)."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc
    lines, i = source.split("\n"), 0
    while i < len(lines):
        if lines[i].strip().startswith("#:"):
            j = i
            while j < len(lines) and lines[j].strip().startswith("#:"):
                j += 1
            yield i + 1, " ".join(line.strip()[2:] for line in lines[i:j])
            i = j
        else:
            i += 1


def measured_numbers(root=PACKAGE):
    """Sentences of docstrings that report a measured number (doctest output excluded)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for line, doc in _docstrings(path):
            doc = re.split(r"\n\s*Examples\n\s*-+\n", doc)[0]
            sentences = []
            for paragraph in re.split(r"\n\s*\n|\n\s*[-*] |\n\s*\d+\. ", doc):
                sentences += re.split(r"(?<=\.)\s+", re.sub(r"\s+", " ", paragraph))
            found += [
                f"{path.relative_to(root)}:{line}: {s[:120]}" for s in sentences if MEASURE.search(s) and NUMBER.search(s)
            ]
    return found


def test_no_docstring_reports_a_measured_number():
    assert measured_numbers() == []


def test_the_rule_finds_a_measured_number(tmp_path):
    (tmp_path / "m.py").write_text('"""Fast.\n\nIt measured 1.4 times faster on diabetes."""\n')
    assert len(measured_numbers(tmp_path)) == 1
    (tmp_path / "m.py").write_text('"""Fast.\n\nThe ``speed`` benchmark\'s page has the times."""\n')
    assert measured_numbers(tmp_path) == []


def _quoted_names(text, names):
    return {name for name in names if f'``"{name}"``' in text or f"``'{name}'``" in text}


def hand_lists(paths, names, window=6, most=4):
    """Places where more than ``most`` registered names appear within ``window`` consecutive lines."""
    found = []
    for path in paths:
        lines = path.read_text().split("\n")
        for i in range(len(lines)):
            named = _quoted_names("\n".join(lines[i : i + window]), names)
            if len(named) > most:
                found.append(f"{path.relative_to(REPO)}:{i + 1}: {sorted(named)}")
                break
    return found


def test_no_page_or_module_lists_the_samplers_by_hand():
    names = available_samplers()
    paths = [*sorted(DOC.rglob("*.rst")), REPO / "README.rst", *sorted(PACKAGE.rglob("*.py"))]
    paths = [p for p in paths if "_build" not in p.parts]
    assert hand_lists(paths, names) == []


@pytest.mark.parametrize("estimator", [GibbsMLPRegressor, GibbsMLPClassifier])
def test_the_sampler_docstring_names_every_registered_dense_sampler(estimator):
    doc = estimator.__doc__
    entry = doc[doc.index("    sampler : ") : doc.index("    n_samples : ")]
    assert _quoted_names(entry, available_samplers()) == set(available_samplers("dense"))


def test_the_sampler_table_has_a_row_per_registered_sampler_with_its_class_flags():
    table = sampler_table()
    rows = [row for row in table.split("   * - ")[2:]]
    assert len(rows) == len(available_samplers())
    for name, row in zip(available_samplers(), rows):
        assert row.startswith(f'``"{name}"``')
    assert sampler_table("sparse").count("   * - ") == 1 + len(available_samplers("sparse"))


def test_the_documentation_expands_the_sampler_table_marker():
    spec = importlib.util.spec_from_file_location("doc_conf", DOC / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    source = ["Intro\n\n   .. skgibbs-sampler-table:: sparse\n\nAfter\n"]
    conf._sampler_tables(None, "page", source)
    assert "skgibbs-sampler-table" not in source[0]
    assert all(f'``"{name}"``' in source[0] for name in available_samplers("sparse"))
    assert '``"hmc"``' not in source[0]
    # a page that shows the table
    assert any(".. skgibbs-sampler-table::" in p.read_text() for p in DOC.rglob("*.rst"))
