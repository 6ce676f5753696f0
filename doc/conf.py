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
exclude_patterns = ["_build", "_static/*.rst"]  # tables the examples write, included by the pages
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
# doc/benchmarks.rst lists the results that ``python -m benchmarks`` writes as
# reStructuredText (benchmarks/results/<name>.rst), one section per output
# that the benchmarks declare (benchmarks.registry), performance first, then
# the paper reproductions, each section labelled ``bench-<name>`` so that the
# user guide cites results (:ref:`bench-uq`) instead of copying their numbers,
# which would go stale at the next run. Only files that exist at build time
# are included: the sections are appended to the page source when it is read,
# and the page is re-read on every build so that new results appear.
RESULTS = ROOT / "benchmarks" / "results"
KIND_RUBRICS = {
    "performance": "Performance benchmarks (``benchmarks/perf``)",
    "reproduction": "Paper reproductions and studies (``benchmarks/studies``)",
}


def _section(title, body, label=None):
    return ["", *([f".. _{label}:", ""] if label else []), title, "-" * len(title), "", *body]


def _benchmark_sections():
    from benchmarks import registry

    benches = registry(strict=False)  # a module that does not import must not stop the build
    lines, declared = [], set()
    for kind, rubric in KIND_RUBRICS.items():
        group = []
        for bench in (b for b in benches.values() if b.kind == kind):
            for output in bench.outputs:
                declared.add(output.stem)
                if not (RESULTS / f"{output.stem}.rst").is_file():
                    continue
                written = f"Written by ``{bench.command(output)}`` to ``benchmarks/results/{output.stem}.rst``."
                include = f".. include:: ../benchmarks/results/{output.stem}.rst"
                group += _section(output.title, [written, "", include, ""], f"bench-{output.stem}")
        if group:
            # a rubric, not a section: the included results bring headings of their own
            lines += ["", f".. rubric:: {rubric}", "", *group]
    for stem in sorted(p.stem for p in RESULTS.glob("*.rst") if p.stem not in declared):
        include = f".. include:: ../benchmarks/results/{stem}.rst"
        lines += _section(stem.replace("_", " ").capitalize(), [include, ""], f"bench-{stem}")
    if not lines:
        lines = ["", "No results have been written yet: run ``make bench``.", ""]
    return "\n".join(lines)


def _add_benchmark_results(app, docname, source):
    if docname == "benchmarks":
        source[0] += _benchmark_sections()


def _always_reread_benchmarks(app, env, added, changed, removed):
    return ["benchmarks"] if "benchmarks" in env.found_docs else []


#: a line ``.. skgibbs-sampler-table::`` (optionally ``dense`` or ``sparse`` after it) becomes the
#: table of the registered samplers, so that no page lists them by hand
_SAMPLER_TABLE = ".. skgibbs-sampler-table::"


def _sampler_tables(app, docname, source):
    if _SAMPLER_TABLE not in source[0]:
        return
    from skgibbs.samplers.base import sampler_table

    lines = []
    for line in source[0].split("\n"):
        stripped = line.strip()
        if stripped.startswith(_SAMPLER_TABLE):
            kind = stripped[len(_SAMPLER_TABLE):].strip() or None
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(indent + row if row else row for row in sampler_table(kind).split("\n"))
        else:
            lines.append(line)
    source[0] = "\n".join(lines)


def setup(app):
    app.connect("source-read", _add_benchmark_results)
    app.connect("source-read", _sampler_tables)
    app.connect("env-get-outdated", _always_reread_benchmarks)
