"""Reproduce the tempering experiments of paper 002 (App. E.1, E.2, §5 Figs. 1, 3) with ``sampler="vi"``.

Paper 002 fits mean-field Gaussian variational posteriors to one-hidden-layer networks and argues that the KL
term of the ELBO must be cooled by ``eta = tau p / N`` (``p`` training examples, ``N`` neurons): without it
the KL term dominates as ``N`` grows and ``q`` collapses onto the prior (Prop. 1). The paper shows figures
only; the tables put our numbers next to what its figures show, in words. Four parts, chosen by ``--parts``,
one module each: ``e1`` (:mod:`.e1`, App. E.1, Fig. 4), ``e2`` (:mod:`.e2`, App. E.2, Figs. 5-6, no
training), ``fig1`` (:mod:`.fig1`, §5 Fig. 1 analogue) and ``fig3`` (:mod:`.fig3`, §5 Fig. 3 analogue).
Every estimator here has the paper's fixed Gaussian prior, ``prior="fixed"``; everything runs on one core.

``python -m benchmarks run vi [--parts e2 fig3]`` writes ``benchmarks/results/vi_{e1,e2,fig1,fig3}.*``.
"""

import functools
import time

from ... import Benchmark, Output
from ...common.tables import names
from ...common.writer import Page
from . import e1, e2, fig1, fig3

#: part -> its module: ``STEM`` (the result file), ``HEADING`` (its title), ``run(args)`` (the runs, data
#: only), ``render(result)`` (the page's tables and notes from them), ``plot(result, path)`` and
#: ``DOC_FIGURE`` (where the documentation shows the figure from doc/_static, if it does)
PARTS = {"e1": e1, "e2": e2, "fig1": fig1, "fig3": fig3}


def add_arguments(parser):
    parser.add_argument("--parts", nargs="+", default=[",".join(PARTS)], help=", ".join(PARTS))
    parser.add_argument("--seeds", type=int, default=None, help="seeds per point (default: per part)")


def run(args):
    """The parts asked for, in order (quick: small grids, one seed, few steps)."""
    results, start = {}, time.perf_counter()
    for part in names(args.parts, tuple(PARTS), "part"):
        print(f"== part {part}", flush=True)
        results.update(PARTS[part].run(args))
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    return results


def report(results):
    """Each part's tables, rendered from its stored runs, and its figure."""
    by_stem = {module.STEM: module for module in PARTS.values()}
    pages = []
    for stem, result in results.items():
        part = by_stem[stem]
        tables, notes = part.render(result)
        figure = functools.partial(part.plot, result)
        pages.append(Page(stem, part.HEADING, tables, notes, figure=figure, doc_figure=part.DOC_FIGURE))
    return pages


BENCHMARK = Benchmark(
    name="vi",
    kind="reproduction",
    title="Paper 002: tempered variational inference (App. E.1, E.2, Figs. 1 and 3)",
    outputs=tuple(Output(part.STEM, part.HEADING, flags=f"--parts {name}") for name, part in PARTS.items()),
    run=run,
    report=report,
    add_arguments=add_arguments,
)
