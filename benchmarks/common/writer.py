"""The one writer of benchmark results: ``<stem>.json``, ``<stem>.md`` and ``<stem>.rst``.

A benchmark's ``run`` returns its raw results (``{stem: dict}``), which go
to JSON unchanged but for the environment record; its ``report`` turns
them into :class:`Page` objects, which this module prints and writes as
Markdown and reStructuredText (the documentation includes the latter).
Re-rendering a report therefore only needs the JSON files.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .environment import describe
from .tables import md_table, rst_table

__all__ = ["RESULTS", "Page", "load", "render", "save_json", "write_page"]

RESULTS = Path(__file__).resolve().parents[1] / "results"


@dataclass
class Page:
    """What one result file set shows.

    Parameters
    ----------
    stem : str
        File name without suffix.
    heading : str
        Title of the Markdown file.
    tables : list of (title, header, rows)
        Rendered as Markdown and grid tables, in order.
    notes : list of str
        Paragraphs after the tables.
    md, rst : list of str, optional
        Lines written as they are instead of ``heading``, ``tables`` and
        ``notes`` (for reports with their own layout).
    figure : callable, optional
        ``figure(path)`` draws the figure ``<stem>.png`` that the text includes.
    unwritten : str, optional
        Why the Markdown and reStructuredText files are not written (the
        tables are still printed and the JSON written).
    """

    stem: str
    heading: str = ""
    tables: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    md: list = None
    rst: list = None
    figure: Callable = None
    unwritten: str = None


def render(page, environment=None):
    """``(markdown, restructuredtext)`` of ``page`` as strings, ending with ``environment`` if given."""
    if page.md is not None:
        md, rst = list(page.md), list(page.rst)
    else:
        md, rst = [f"# {page.heading}", ""], []
        for title, header, rows in page.tables:
            md += [f"## {title}", "", md_table(header, rows), ""]
            rst += [f"**{title}**", "", rst_table(header, rows), ""]
        for note in page.notes:
            md += [note, ""]
            rst += [note, ""]
    if environment and "versions" in environment:  # older results kept their own, differently shaped
        md += ["", describe(environment), ""]
        rst += ["", describe(environment), ""]
    return "\n".join(md), "\n".join(rst)


def save_json(directory, stem, result):
    """Write ``<stem>.json`` in one step, so that an interruption leaves the previous file."""
    path = Path(directory) / f"{stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=float))
    tmp.replace(path)
    return path


def write_page(directory, page, environment=None):
    """Print ``page`` and write its Markdown, reStructuredText and figure; return the paths written."""
    md, rst = render(page, environment)
    print(f"\n== {page.stem}\n{rst if page.md is None else md}")
    if page.unwritten:
        print(f"\n{page.unwritten}")
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{page.stem}.md", directory / f"{page.stem}.rst"]
    paths[0].write_text(md)
    paths[1].write_text(rst)
    if page.figure is not None:
        paths.append(directory / f"{page.stem}.png")
        page.figure(paths[-1])
    return paths


def load(directory, stems):
    """``{stem: result}`` of the stored JSON files among ``stems`` (those that exist)."""
    out = {}
    for stem in stems:
        path = Path(directory) / f"{stem}.json"
        if path.is_file():
            out[stem] = json.loads(path.read_text())
    return out
