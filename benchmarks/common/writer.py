"""The one writer of benchmark results: ``<stem>.json``, ``<stem>.rst`` and a figure ``<stem>.png``.

A benchmark's ``run`` returns its raw results (``{stem: dict}``), which go
to JSON unchanged but for the environment record; its ``report`` turns
them into :class:`Page` objects, which this module prints and writes as
reStructuredText, the text the documentation includes. Re-rendering a
report therefore only needs the JSON files. Figures are written here too,
and only here: a page whose figure the documentation shows from
``doc/_static`` names it (:attr:`Page.doc_figure`) and the writer copies it
there when it writes the committed results.
"""

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .environment import describe
from .tables import rst_table

__all__ = ["DOC_STATIC", "RESULTS", "Page", "load", "render", "save_json", "write_page"]

RESULTS = Path(__file__).resolve().parents[1] / "results"
#: the documentation's static files, where a page's ``doc_figure`` goes
DOC_STATIC = RESULTS.parents[1] / "doc" / "_static"


@dataclass
class Page:
    """What one result file set shows.

    Parameters
    ----------
    stem : str
        File name without suffix.
    heading : str
        What the page is about (printed; the documentation gives each page
        its own title).
    tables : list of (title, header, rows)
        Rendered as grid tables, in order.
    notes : list of str
        Paragraphs after the tables.
    rst : list of str, optional
        Lines written as they are instead of ``tables`` and ``notes`` (for
        reports with their own layout).
    figure : callable, optional
        ``figure(path)`` draws the figure ``<stem>.png`` that the text includes.
    doc_figure : str, optional
        The name under ``doc/_static`` (:data:`DOC_STATIC`) that the
        documentation shows the figure as: the writer copies ``<stem>.png``
        there when it writes into :data:`RESULTS` (never for other directories).
    unwritten : str, optional
        Why the reStructuredText file is not written (the tables are still
        printed and the JSON written).
    """

    stem: str
    heading: str = ""
    tables: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    rst: list = None
    figure: Callable = None
    doc_figure: str = None
    unwritten: str = None


def render(page, environment=None):
    """The reStructuredText of ``page``, ending with ``environment`` if given."""
    if page.rst is not None:
        rst = list(page.rst)
    else:
        rst = []
        for title, header, rows in page.tables:
            rst += [f"**{title}**", "", rst_table(header, rows), ""]
        for note in page.notes:
            rst += [note, ""]
    if environment and "versions" in environment:  # older results kept their own, differently shaped
        rst += ["", describe(environment), ""]
    return "\n".join(rst)


def save_json(directory, stem, result):
    """Write ``<stem>.json`` in one step, so that an interruption leaves the previous file."""
    path = Path(directory) / f"{stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=float))
    tmp.replace(path)
    return path


def write_page(directory, page, environment=None):
    """Print ``page`` and write its reStructuredText and figure; return the paths written."""
    rst = render(page, environment)
    print(f"\n== {page.stem}" + (f": {page.heading}" if page.heading else "") + f"\n{rst}")
    if page.unwritten:
        print(f"\n{page.unwritten}")
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{page.stem}.rst"]
    paths[0].write_text(rst)
    if page.figure is not None:
        paths.append(directory / f"{page.stem}.png")
        page.figure(paths[-1])
        if page.doc_figure and directory.resolve() == RESULTS.resolve():
            DOC_STATIC.mkdir(parents=True, exist_ok=True)
            paths.append(Path(shutil.copyfile(paths[-1], DOC_STATIC / page.doc_figure)))
    return paths


def load(directory, stems):
    """``{stem: result}`` of the stored JSON files among ``stems`` (those that exist)."""
    out = {}
    for stem in stems:
        path = Path(directory) / f"{stem}.json"
        if path.is_file():
            out[stem] = json.loads(path.read_text())
    return out
