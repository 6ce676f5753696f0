"""doc/developers.rst agrees with the code.

- The "Add a kernel" recipe runs: its code block, executed in a fresh
  namespace, defines a kernel with the documented ``init`` / ``step``
  signatures, a driver with every member the page lists for a driver, and
  a registered ``ChainSampler``. Under :func:`~skgibbs.samplers.run_chains`
  on a one-dimensional Gaussian posterior its draws have the exact mean and
  variance within Monte Carlo error (the tolerance from the effective
  sample size); an estimator fits with it; the page's own run block runs.
  The registration is removed afterwards, so that tests looping over
  ``available_samplers()`` never see it.
- Every member the page's protocol tables list exists under that name and
  signature on the class the table is for (``Sampler``, ``ChainSampler``,
  ``BatchSurrogate``), with the default the table states; every member of
  those classes is listed, once.
- Every path the page names exists; those of the reading order are paths
  from the repository's root.
"""

import ast
import contextlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from skgibbs import GibbsMLPRegressor
from skgibbs.potential import FunctionPotential
from skgibbs.priors import Prior
from skgibbs.samplers import (
    BatchSurrogate,
    ChainSampler,
    RunSettings,
    Sampler,
    Target,
    available_samplers,
    base,
    get_sampler,
    run_chains,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "doc" / "developers.rst"

#: the recipe's registered name (the page's ``name = ...``)
RECIPE_NAME = "rwm-recipe"


# ------------------------------------------------------------------ reading the page
def _text():
    return PAGE.read_text()


def code_block_after(marker, text=None):
    """The source of the first ``.. code-block:: python`` after the comment line ``.. <marker>``."""
    lines = (text if text is not None else _text()).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f".. {marker}"))
    head = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == ".. code-block:: python")
    body = []
    for line in lines[head + 1 :]:
        if line.strip() and not line.startswith("   "):
            break
        body.append(line[3:])
    return "\n".join(body).strip("\n") + "\n"


def section(title, text=None):
    """The text of the section headed ``title`` (up to the next heading of any level)."""
    lines = (text if text is not None else _text()).splitlines()
    start = lines.index(title) + 2
    end = next(
        (
            i - 1
            for i in range(start + 1, len(lines))
            if re.fullmatch(r"[=\-~^]{3,}", lines[i]) and lines[i - 1].strip()
        ),
        len(lines),
    )
    return "\n".join(lines[start:end])


def list_table(name, text=None):
    """The rows of the ``list-table`` with ``:name: <name>``: a list of cell texts per row, header dropped."""
    lines = (text if text is not None else _text()).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f":name: {name}")
    rows = []
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith("   "):
            break
        if line.startswith("   * - "):
            rows.append([line[7:].strip()])
        elif line.startswith("     - "):
            rows[-1].append(line[7:].strip())
        elif line.startswith("       ") and rows:
            rows[-1][-1] += " " + line.strip()
    return rows[1:]


#: the protocol tables of the page and the class whose own members they list
PROTOCOL_TABLES = {
    "protocol-sampler-flags": Sampler,
    "protocol-sampler-run": Sampler,
    "protocol-sampler-hooks": Sampler,
    "protocol-chainsampler": ChainSampler,
    "protocol-batchsurrogate": BatchSurrogate,
}


def listed_members():
    """``(table, class, literal of the first cell, other cells)`` of every row of the protocol tables."""
    out = []
    for table, cls in PROTOCOL_TABLES.items():
        for row in list_table(table):
            literal = re.fullmatch(r"``(.+)``", row[0])
            assert literal, f"{table}: the first cell {row[0]!r} is not one literal"
            out.append((table, cls, literal.group(1), row[1:]))
    return out


def _member_name(literal):
    return literal.split("(", 1)[0]


def _own_members(cls):
    """The public members ``cls`` adds to ``Sampler``.

    An override (``ChainSampler.sample``, ``BatchSurrogate.loss_statistics``)
    is listed as ``Sampler``'s.
    """
    inherited = set() if cls is Sampler else set(vars(Sampler))
    return {n for n in vars(cls) if not n.startswith("_") and n not in inherited}


def _documented_parameters(literal):
    """``[(name, kind, default)]`` of a signature written as ``name(a, b, *, c=1)`` on the page."""
    tree = ast.parse(f"def {literal}: pass")
    args = tree.body[0].args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + [ast.literal_eval(d) for d in args.defaults]
    out = [(a.arg, "positional", d) for a, d in zip(positional, defaults)]
    kw_defaults = [None if d is None else ast.literal_eval(d) for d in args.kw_defaults]
    return out + [(a.arg, "keyword", d) for a, d in zip(args.kwonlyargs, kw_defaults)]


def _code_parameters(function):
    out = []
    for p in list(inspect.signature(function).parameters.values())[1:]:  # without self
        kind = "keyword" if p.kind is p.KEYWORD_ONLY else "positional"
        out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


# ------------------------------------------------------------------ the recipe
@contextlib.contextmanager
def recipe_namespace():
    """The namespace of the page's recipe block, executed fresh; its registration removed on exit."""
    assert RECIPE_NAME not in base._REGISTRY, "the recipe's name is taken before the recipe runs"
    namespace = {"__name__": "developers_recipe"}
    try:
        exec(compile(code_block_after("recipe: kernel"), str(PAGE), "exec"), namespace)
        yield namespace
    finally:
        base._REGISTRY.pop(RECIPE_NAME, None)


@pytest.fixture
def recipe():
    with recipe_namespace() as namespace:
        yield namespace


def _sampler_class(namespace):
    (cls,) = [
        v
        for v in namespace.values()
        if isinstance(v, type) and issubclass(v, ChainSampler) and v is not ChainSampler
    ]
    return cls


def test_the_recipe_registers_a_chain_sampler_and_the_registration_is_removed_after():
    before = available_samplers()
    with recipe_namespace() as namespace:
        cls = _sampler_class(namespace)
        assert cls.name == RECIPE_NAME
        assert available_samplers() == sorted([*before, RECIPE_NAME])
        assert RECIPE_NAME in available_samplers("dense")
        assert type(get_sampler(RECIPE_NAME)) is cls
    assert available_samplers() == before


def test_the_recipes_kernel_has_the_documented_signatures(recipe):
    assert list(inspect.signature(recipe["init"]).parameters)[:4] == [
        "generators",
        "target",
        "theta",
        "params",
    ]
    assert list(inspect.signature(recipe["step"]).parameters) == ["generators", "state", "target", "params"]


def _gaussian_problem(lam=5.0, prior_std=1.0, n=50):
    """``l_i = (y_i - theta)^2`` under ``N(0, prior_std^2)`` at ``lambda``: a Gaussian posterior.

    ``U(theta) = lambda (theta - ybar)^2 + theta^2 / (2 s^2) + const``, so the
    posterior has precision ``2 lambda + 1 / s^2`` and mean
    ``2 lambda ybar / (2 lambda + 1 / s^2)``.
    """
    y = 1.0 + torch.randn(n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    losses = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=n)
    precision = 2 * lam + 1 / prior_std**2
    return Target(losses, Prior(std=prior_std), lambda_=lam), 2 * lam * float(y.mean()) / precision, 1 / precision


def test_the_recipe_samples_the_exact_gaussian_posterior_under_run_chains(recipe, moment_errors):
    cls = _sampler_class(recipe)
    target, mean, var = _gaussian_problem()
    K, n_samples = 4, 2000
    theta0 = torch.tensor([[-2.0], [0.0], [1.0], [3.0]], dtype=torch.float64)
    res = run_chains(target, theta0, [11, 12, 13, 14], cls(), n_samples=n_samples, burn_in=500)

    assert res.samples.shape == (K, n_samples, 1)
    # mean and variance within 4 Monte Carlo standard errors: sd / sqrt(ESS) of the draws and of
    # their squared deviations (tests/conftest.py, skgibbs.diagnostics.effective_sample_size)
    errors = moment_errors(res.samples, np.array([mean]), np.array([[var]]), k_sd=4.0)
    assert max(errors.values()) < 1.0, errors

    # the protocol's pieces arrive where the page says
    assert res.acceptance_rate.shape == (K,) and np.all((res.acceptance_rate > 0) & (res.acceptance_rate < 1))
    np.testing.assert_array_equal(res.n_grad, 0)
    assert set(res.draw_stats) == {"acceptance_rate", "accept_prob"}
    assert res.draw_stats["accept_prob"].shape == (K, n_samples)
    assert set(res.info) == {"scale"} and res.scale.shape == (K,) and np.all(res.scale > 0)
    assert not res.interrupted


def test_the_recipes_driver_has_every_member_the_page_lists(recipe):
    cls = _sampler_class(recipe)
    target, _, _ = _gaussian_problem()
    sampler = cls()
    gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    driver = sampler.chains(target, torch.zeros(2, 1, dtype=torch.float64), gens, RunSettings(burn_in=5))
    members = [
        _member_name(re.fullmatch(r"``(.+)``", row[0]).group(1)) for row in list_table("protocol-driver")
    ]
    assert members == ["warmup", "frozen_params", "sample_step", "summary", "state", "gens", "n_grad", "K"]
    missing = [m for m in members if not hasattr(driver, m)]
    assert not missing
    driver.warmup()
    record = driver.sample_step(driver.frozen_params())
    assert record["accepted"].shape == (2,) and driver.state.theta.shape == (2, 1) and driver.K == 2
    assert all(isinstance(v, np.ndarray) for v in driver.summary().values())  # fitted state is NumPy


def test_the_recipe_refuses_bad_settings_before_any_work(recipe):
    cls = _sampler_class(recipe)
    target, _, _ = _gaussian_problem()
    # scikit-learn's InvalidParameterError, a ValueError naming the setting, the sampler and the range
    refused = "'scale' parameter of RecipeRandomWalk must be a float in the range"
    with pytest.raises(ValueError, match=refused):
        run_chains(
            target, torch.zeros(1, 1, dtype=torch.float64), [0], cls(scale=-1.0), n_samples=1, burn_in=0
        )


@pytest.mark.filterwarnings("ignore::UserWarning")  # short chains and pre-training: they warn, as they should
@pytest.mark.parametrize("by", ["object", "name"])
def test_an_estimator_fits_with_the_recipes_sampler(recipe, by):
    """As an object and by its registered name: the estimator reads the registry when it validates, so a
    sampler registered after ``import skgibbs`` is a valid ``sampler=`` string."""
    cls = _sampler_class(recipe)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=30)
    reg = GibbsMLPRegressor(
        sampler=cls() if by == "object" else RECIPE_NAME,
        hidden_layer_sizes=(3,),
        n_samples=20,
        burn_in=50,
        prior="fixed",
        temperature="plug-in",
        n_chains=2,
        pretrain_iter=50,
        random_state=0,
    )
    reg.fit(X, y)
    assert reg.samples_.shape == (2, 20, reg.spec_.n_params) == (2, 20, 2 * 3 + 3 + 3 + 1)
    assert type(reg.sampler_) is cls and reg.sampler_ is not reg.sampler
    assert reg.sampler_name_ == RECIPE_NAME
    assert reg.scale_.shape == (2,)  # the driver's summary, one value per chain
    assert reg.predict(X[:3]).shape == (3,)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_pages_run_block_runs(recipe):
    namespace = dict(recipe)
    exec(compile(code_block_after("recipe: run"), str(PAGE), "exec"), namespace)
    assert namespace["result"].samples.shape == (4, 2000, 1)
    assert namespace["reg"].sampler_name_ == RECIPE_NAME


# ------------------------------------------------------------------ the protocol tables
def test_the_protocol_tables_list_existing_members_with_their_signatures_and_defaults():
    for table, cls, literal, cells in listed_members():
        name = _member_name(literal)
        assert name in vars(cls), f"{table}: {cls.__name__} defines no {name!r}"
        value = vars(cls)[name]
        if "(" in literal:
            assert callable(value), f"{table}: {cls.__name__}.{name} is not a method"
            assert _documented_parameters(literal) == _code_parameters(value), f"{table}: {literal}"
        else:
            assert not callable(value), f"{table}: {cls.__name__}.{name} is a method; write its signature"
            default = re.fullmatch(r"``(.+)``", cells[0])
            assert default, f"{table}: no default given for {name}"
            assert ast.literal_eval(default.group(1)) == value, f"{table}: default of {name}"


def test_every_member_of_the_protocol_is_listed_once():
    members = [(cls, _member_name(literal)) for _, cls, literal, _ in listed_members()]
    assert len(members) == len(set(members)), "a member is listed twice"
    for cls in (Sampler, ChainSampler, BatchSurrogate):
        listed = {name for owner, name in members if owner is cls}
        assert listed == _own_members(cls), cls.__name__


def test_the_tables_parser_reads_a_table():
    text = """\
.. list-table::
   :name: t
   :header-rows: 1

   * - member
     - what
   * - ``check(prior, rho)``
     - raises, and
       returns

After.
"""
    assert list_table("t", text) == [["``check(prior, rho)``", "raises, and returns"]]
    assert _documented_parameters("sample(target, *, vectorize=True)") == [
        ("target", "positional", None),
        ("vectorize", "keyword", True),
    ]


# ------------------------------------------------------------------ paths
def test_every_file_of_the_reading_order_exists():
    order = section("Reading order")
    paths = re.findall(r"``([\w./-]+)``", order)
    paths = [p for p in paths if "/" in p]
    assert len(paths) >= 15
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing


def test_every_path_the_page_names_exists():
    """Every ``*.py`` the page names and every folder literal (``x/``) exists.

    A path resolves from the repository's root, ``skgibbs/``, ``skgibbs/estimators/``,
    ``skgibbs/samplers/`` or a family's folder (the family table names ``kernel.py``); ``<family>``
    stands for any family.
    """
    text = _text()
    found = set(re.findall(r"(?<![\w/<>.])((?:[\w<>]+/)*[\w<>]+\.py)\b", text))
    found |= set(re.findall(r"``((?:[\w<>]+/)+)``", text))
    samplers = ROOT / "skgibbs" / "samplers"
    families = sorted(p.name for p in samplers.iterdir() if (p / "__init__.py").exists())
    bases = [ROOT, ROOT / "skgibbs", ROOT / "skgibbs" / "estimators", samplers, *(samplers / f for f in families)]
    missing = []
    for path in sorted(found):
        candidates = [path.replace("<family>", f) for f in families] if "<family>" in path else [path]
        if not any((b / c).exists() for b in bases for c in candidates):
            missing.append(path)
    assert len(found) >= 40
    assert not missing
