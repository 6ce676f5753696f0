"""Sphinx configuration of the skgibbs documentation.

Build with ``make docs`` (``python -m sphinx -W -b html doc doc/_build/html``).
Nothing here needs network access: no intersphinx, and MathJax is loaded by
the reader's browser.
"""

import pathlib
import sys

DOC = pathlib.Path(__file__).resolve().parent
ROOT = DOC.parent
sys.path.insert(0, str(ROOT))  # document this checkout, whatever is installed

import skgibbs

project = "skgibbs"
author = "the skgibbs developers"
copyright = "the skgibbs developers"
release = skgibbs.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

root_doc = "index"
exclude_patterns = ["_build"]
templates_path = []
html_theme = "alabaster"
html_static_path = ["_static"]
html_theme_options = {
    "description": "Gibbs-posterior neural networks for scikit-learn",
    "fixed_sidebar": True,
}

# API pages: summary tables link to the entries written out on the same
# page, so nothing is generated into the source tree.
autosummary_generate = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --------------------------------------------------------------- benchmarks
# doc/benchmarks.rst lists the results that benchmarks/ writes as
# reStructuredText (benchmarks/results/<name>.rst). Only files that exist at
# build time are included: the section below is appended to the page source
# when it is read, and the page is re-read on every build so that new
# results appear.
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARK_SECTIONS = [
    ("speed", "Speed", "``benchmarks/bench_speed.py``"),
    ("example9", "Example 9: credible balls in a linear model", "``benchmarks/repro_example9.py``"),
    ("table2", "Table 2: credible radii on the data-gap regression", "``benchmarks/repro_table2.py``"),
    ("fig6", "Fig. 6: validation risk against n at constant n rho", "``benchmarks/repro_fig6.py``"),
    ("lfv_speed", "Paper 004 Remark 5: time of LFV and FV", "``benchmarks/bench_lfv_speed.py``"),
    ("lfv_linear", "Paper 004 Tables 1-3: LFV in linear models", "``benchmarks/repro_lfv_linear.py``"),
    ("lfv_nn", "Paper 004 Tables 4-6: LFV of a tanh network", "``benchmarks/repro_lfv_nn.py``"),
    (
        "lfv_nn_init_sd01",
        "Paper 004 Tables 4-6, variant: initial spread 0.1",
        "``benchmarks/repro_lfv_nn.py --init-sd 0.1 --output lfv_nn_init_sd01``",
    ),
    (
        "lfv_real",
        "Paper 004 Table 7 analogue: LFV against cross-validation",
        "``benchmarks/repro_lfv_real.py``",
    ),
    (
        "model_selection",
        "WAIC search against 10-fold cross-validation: time and rankings",
        "``benchmarks/bench_model_selection.py``",
    ),
    (
        "surrogate_gap",
        "Distance of the surrogates from the Gibbs posterior",
        "``benchmarks/repro_surrogate_gap.py``",
    ),
    (
        "control_variates",
        "Paper 003 §6: neural control variates on the funnel, banana and logistic regression",
        "``benchmarks/repro_control_variates.py``",
    ),
    (
        "control_variates_speed",
        "Neural control variates: exact batched Laplacian vs per-point Hessians",
        "``benchmarks/bench_control_variates.py``",
    ),
    ("mixing", "Mixing per second: HMC, MALA, csMALA and BlackJAX NUTS", "``benchmarks/bench_mixing.py``"),
    ("uq", "Held-out uncertainty against GPs, ensembles, NGBoost and conformal", "``benchmarks/bench_uq.py``"),
    (
        "classification",
        "Classification: calibration against what users pick instead",
        "``benchmarks/bench_classification.py``",
    ),
    (
        "classifier_prior",
        "The scale of the classifier's default prior",
        "``benchmarks/bench_classifier_prior.py``",
    ),
    ("vi_e1", "Paper 002 App. E.1: the predictive spread of VI as the width grows", "``benchmarks/repro_vi.py``"),
    ("vi_e2", "Paper 002 App. E.2: the two terms of the ELBO as the width grows", "``benchmarks/repro_vi.py``"),
    ("vi_fig1", "Paper 002 Fig. 1 analogue: VI against the cooling tau", "``benchmarks/repro_vi.py``"),
    ("vi_fig3", "Paper 002 Fig. 3 analogue: the classical ELBO against the width", "``benchmarks/repro_vi.py``"),
    ("vi_tau", "The default cooling tau of sampler='vi'", "``benchmarks/sweep_vi_tau.py``"),
    (
        "vi_gradient",
        "VI gradients: local reparametrisation against weight draws",
        "``benchmarks/bench_vi_gradient.py``",
    ),
    ("large_n", "Default fits at large n", "``benchmarks/bench_large_n.py``"),
    ("burn_in", "csMALA burn-in steps against sampling steps", "``benchmarks/bench_burn_in.py``"),
    ("uq_mcycle", "Held-out uncertainty on a small 1-D data set (MASS mcycle)", "``benchmarks/bench_uq.py``"),
    ("sparse_tables", "Paper 001 Tables 1-2: full and sparse priors", "``benchmarks/repro_sparse.py``"),
    ("sparse", "Sparse networks: kernel speed and input relevance", "``benchmarks/bench_sparse.py``"),
    (
        "distributed",
        "Chains and searches in parallel: one process, loky, Dask",
        "``benchmarks/bench_distributed.py``",
    ),
]


def _benchmark_sections():
    known = {name for name, _, _ in BENCHMARK_SECTIONS}
    extra = sorted(p.stem for p in RESULTS.glob("*.rst") if p.stem not in known)
    entries = BENCHMARK_SECTIONS + [(name, name.replace("_", " ").capitalize(), None) for name in extra]
    lines = []
    for name, title, script in entries:
        if not (RESULTS / f"{name}.rst").is_file():
            continue
        lines += ["", title, "-" * len(title), ""]
        if script:
            lines += [f"Written by {script} to ``benchmarks/results/{name}.rst``.", ""]
        lines += [f".. include:: ../benchmarks/results/{name}.rst", ""]
    if not lines:
        lines = ["", "No results have been written yet: run ``make bench``.", ""]
    return "\n".join(lines)


def _add_benchmark_results(app, docname, source):
    if docname == "benchmarks":
        source[0] += _benchmark_sections()


def _always_reread_benchmarks(app, env, added, changed, removed):
    return ["benchmarks"] if "benchmarks" in env.found_docs else []


def setup(app):
    app.connect("source-read", _add_benchmark_results)
    app.connect("env-get-outdated", _always_reread_benchmarks)
