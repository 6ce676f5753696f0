"""Rules that keep the documentation from drifting from the code.

- sampler names are read from the registry wherever the samplers are listed
  (the estimators' ``sampler`` docstring, the documentation's table), never
  typed by hand, so that a new registration appears in every list;
- no docstring carries a measured number: measurements live on the
  benchmark pages, which the documentation includes, and go stale in a
  docstring;
- the glossary (``doc/glossary.rst``) names only what exists and lists every
  parameter of the estimators;
- every former name the release notes list as removed is gone.
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
                f"{path.relative_to(root)}:{line}: {s[:120]}"
                for s in sentences
                if MEASURE.search(s) and NUMBER.search(s)
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


# ------------------------------------------------------------------ glossary

GLOSSARY = DOC / "glossary.rst"


def _glossary_tables(path=GLOSSARY, underline="="):
    """``{section title: [row, ...]}`` of the list tables of ``path``, each row a list of its cells' text.

    The sections are the titles underlined with ``underline``.
    """
    tables, title, rows = {}, None, None
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1]) == {underline} and line.strip():
            title = line.strip()
        if line.startswith(".. list-table::"):
            rows = tables.setdefault(title, [])
        elif rows is not None and line.startswith("   * - "):
            rows.append([line[7:]])
        elif rows is not None and line.startswith("     - "):
            rows[-1].append(line[7:])
        elif rows is not None and line.startswith("       ") and rows and rows[-1]:
            rows[-1][-1] += " " + line.strip()
        elif line and not line.startswith(" ") and not line.startswith(".."):
            rows = None
    return {k: v[1:] for k, v in tables.items()}  # without the header row


def _names(cell):
    """The ``literal`` names of a cell, reduced to what must exist: ``A.b``, ``f(x=...)`` or ``name``."""
    out = []
    for text in re.findall(r"``([^`]+)``", cell):
        text = re.sub(r"\[.*?\]|\.shape\b", "", text)  # temperature_path_["beta"] -> temperature_path_
        call = re.fullmatch(r"(\w+)\((\w+)=\.\.\.\)", text)
        if call:
            out.append(("call", call.group(1), call.group(2)))
        elif re.fullmatch(r"[A-Za-z_]\w*\.[A-Za-z_]\w*", text):
            out.append(("attribute", *text.split(".")))
        elif re.fullmatch(r"[A-Za-z_]\w*", text):
            out.append(("name", text, None))
    return out


def _source_words():
    words = set()
    for path in PACKAGE.rglob("*.py"):
        words |= set(re.findall(r"\b\w+\b", path.read_text()))
    return words


def _public_class(name):
    import skgibbs.credible
    import skgibbs.criteria
    import skgibbs.samplers
    import skgibbs.samplers.vi

    for module in (skgibbs, skgibbs.samplers, skgibbs.samplers.vi, skgibbs.criteria, skgibbs.credible):
        if hasattr(module, name):
            return getattr(module, name)
    raise AssertionError(f"glossary: {name} is not a public name of skgibbs")


def test_every_name_of_the_glossary_exists():
    import inspect

    words, missing = _source_words(), []
    for rows in _glossary_tables().values():
        for row in rows:
            for kind, a, b in _names(row[1]):
                if kind == "name" and a not in words:
                    missing.append(a)
                elif kind == "attribute":
                    cls = _public_class(a)
                    if not (hasattr(cls, b) or b in getattr(cls, "_fields", ())):
                        missing.append(f"{a}.{b}")
                elif kind == "call" and b not in inspect.signature(_public_class(a)).parameters:
                    missing.append(f"{a}({b}=...)")
    assert missing == []


def test_the_glossary_lists_every_parameter_of_the_estimators():
    from skgibbs import SparseGibbsMLPRegressor

    listed = {a for rows in _glossary_tables().values() for row in rows for _, a, _ in _names(row[1])}
    params = set()
    for cls in (GibbsMLPRegressor, GibbsMLPClassifier, SparseGibbsMLPRegressor):
        params |= set(cls().get_params())
    assert sorted(params - listed) == []


#: the SGLD kernel's names, which ``skgibbs.samplers.langevin`` held when it was that kernel's module
SGLD_NAMES = ("SGLDState", "SGLDInfo", "SGLDParams", "init", "step")


def test_every_former_name_the_release_notes_remove_is_gone():
    """The names of the release notes' "Former names removed" table fail where they were used."""
    import warnings

    import numpy as np
    import torch

    from skgibbs.control_variates import esvrr, spectral_variance_torch, windowed
    from skgibbs.criteria import LFVResult
    from skgibbs.diagnostics import lag_window, mcse, spectral_variance
    from skgibbs.model import MLPSpec
    from skgibbs.potential import FunctionPotential
    from skgibbs.samplers import MeanFieldVI, Target, langevin, vi

    pot = FunctionPotential(lambda th, idx: th[:, :1] ** 2 + 0 * idx, n_data=2)
    lfv = LFVResult(*([0.0] * len(LFVResult._fields)))
    ones = torch.ones(2)
    params = vi.VIParams(lam=2.0, eta=ones, prior_std=ones, scale=ones)
    state = vi.init(torch.zeros(2), params)
    spec, X, y, x = MLPSpec(1, ()), torch.zeros(2, 1), torch.zeros(2), np.arange(20.0) % 3
    fitted = GibbsMLPRegressor((2,), sampler=MeanFieldVI(max_iter=20), pretrain_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(np.linspace(-1, 1, 20)[:, None], np.linspace(-1, 1, 20))
    uses = {
        "skgibbs.targets": [lambda: importlib.import_module("skgibbs.targets")],
        "skgibbs.samplers.mala": [lambda: importlib.import_module("skgibbs.samplers.mala")],
        "skgibbs.samplers.hmc_gibbs": [lambda: importlib.import_module("skgibbs.samplers.hmc_gibbs")],
        "skgibbs.samplers.rjmcmc": [lambda: importlib.import_module("skgibbs.samplers.rjmcmc")],
        "skgibbs.samplers.rjhmc": [lambda: importlib.import_module("skgibbs.samplers.rjhmc")],
        **{f"langevin.{n}": [lambda n=n: getattr(langevin, n)] for n in SGLD_NAMES},
        "kernel_": [lambda: fitted.kernel_],
        "waic_": [lambda: fitted.waic_, lambda: GibbsMLPClassifier.waic_],
        "LFVResult.generalization_loss": [lambda: lfv.generalization_loss],
        "VIState.rho": [lambda: state.rho],
        "vi.step(generator, state, spec, X, y, params)": [
            lambda: vi.step(torch.Generator(), state, spec, X, y, params)
        ],
        "vi.held_out_objective(generator, state, spec, X, y, params)": [
            lambda: vi.held_out_objective(torch.Generator(), state, spec, X, y, params)
        ],
        "VIParams(loss=...)": [
            lambda: vi.VIParams(lam=2.0, eta=ones, prior_std=ones, scale=ones, loss="squared")
        ],
        "Target(lam=...)": [lambda: Target(pot, lam=2.0)],
        "Target.lam": [lambda: Target(pot, lambda_=2.0).lam],
        "window=": [
            lambda: lag_window(window="flat-top", truncation=4),
            lambda: spectral_variance(x, window="flat-top"),
            lambda: mcse(x, window="flat-top"),
            lambda: spectral_variance_torch(torch.as_tensor(x), window="flat-top"),
            lambda: windowed(x, window="flat-top"),
            lambda: esvrr(x, x / 2, window="flat-top"),
        ],
    }
    rows = _glossary_tables(DOC / "changes.rst", underline="-")["Former names removed"]
    listed = [name for row in rows for name in re.findall(r"``([^`]+)``", row[0])]
    assert sorted(listed) == sorted(uses)
    for name in listed:
        for use in uses[name]:
            with pytest.raises((AttributeError, ImportError, TypeError)):
                use()


# ------------------------------------------------------------------ what "auto" runs


def _auto_table():
    """``(estimator expression, size cell, sampler name)`` of each row of the guide's "auto" table."""
    text = (DOC / "user_guide" / "samplers.rst").read_text()
    start = text.index(".. _auto-sampler:")
    block = text[start : text.index("\n\n", text.index(".. list-table::", start) + 200) + 2000]
    rows = re.findall(r"   \* - ``(.+?)``.*\n     - (.+)\n     - ``\"(\w+)\"``", block)
    return rows[1:] if rows and rows[0][0].startswith("Estimator") else rows


def test_the_auto_table_of_the_guide_is_what_the_code_chooses():
    from skgibbs import SparseGibbsMLPRegressor  # noqa: F401 (a row may name it)
    from skgibbs.plan import plan_fit
    from skgibbs.samplers.base import FULL_BATCH_WORK

    rows = _auto_table()
    assert len(rows) >= 7
    sizes = {
        "at most the limit": FULL_BATCH_WORK // 1000,
        "above the limit": FULL_BATCH_WORK * 2,
        "any": None,
    }
    for expression, size_cell, expected in rows:
        est = eval(
            expression, {"GibbsMLPRegressor": GibbsMLPRegressor, "GibbsMLPClassifier": GibbsMLPClassifier}
        )
        noise = est.noise if est._traits.noise_model else None
        works = [sizes[size_cell]] if sizes[size_cell] else [FULL_BATCH_WORK // 1000, FULL_BATCH_WORK * 2]
        for work in works:
            chosen = plan_fit(est.get_params(), est._traits, n_rows=1000, n_params=work // 1000, noise=noise)
            chosen = chosen.sampler.name
            assert chosen == expected, (
                f"{expression} at rows x weights = {work:.3g}: the code runs {chosen!r}"
            )
