"""What a stored page's fits ran with, and whether today's defaults still give them.

A page that shows what a fit prints (``make demo``'s output, the README's
first fit) goes stale when a default it relied on changes: the numbers on
it are then those of another model. The run that writes such a page
records, beside the environment, what its fits ran with
(:func:`ran_with`): for each estimator class it fitted, the defaults of
the class then and the parameters the code set; for each sampler the fits
resolved, the defaults of its object; and a hash of each source the page
shows or runs. :func:`stale` compares that record with today's code and
names what differs; ``tests/test_benchmarks.py`` fails on a page whose
record :func:`stale` finds anything in, naming the command that
regenerates it.
"""

import hashlib
import re
import textwrap
from pathlib import Path

__all__ = ["FIRST_BLOCK", "first_python_block", "ran_with", "source_hash", "source_text", "stale"]

ROOT = Path(__file__).resolve().parents[2]


#: the suffix of a source name that means the first ``.. code-block:: python`` of a reST file
FIRST_BLOCK = "#first-python-block"


def first_python_block(path):
    """The first ``.. code-block:: python`` of a reST file, dedented."""
    lines = Path(path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^\s*\.\. code-block::\s*python\s*$", line))
    body = []
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith(" "):
            break
        body.append(line)
    return textwrap.dedent("\n".join(body)).strip() + "\n"


def source_text(name):
    """The text of a source named as :func:`ran_with` names it: a path from the repository root, or
    ``PATH#first-python-block`` for the first code block of a reST page."""
    if name.endswith(FIRST_BLOCK):
        return first_python_block(ROOT / name[: -len(FIRST_BLOCK)])
    return (ROOT / name).read_text()


def source_hash(text):
    """The SHA-256 of a source's text, as :func:`ran_with` records it."""
    return hashlib.sha256(text.encode()).hexdigest()


def _defaults(cls):
    """``{parameter: repr(default)}`` of an estimator class, from a default instance, and
    ``{"traits.<name>": repr(value)}`` of what the class declares for its plans
    (:class:`~skgibbs.plan.EstimatorTraits`: a changed cap of the run length, say, changes its fits
    without changing a parameter's default)."""
    from dataclasses import fields

    out = {name: repr(value) for name, value in cls().get_params(deep=False).items()}
    traits = getattr(cls, "_traits", None)
    if traits is not None:
        out.update({f"traits.{f.name}": repr(getattr(traits, f.name)) for f in fields(traits)})
    return out


def _sampler_defaults(name):
    from skgibbs.samplers import get_sampler

    return {key: repr(value) for key, value in get_sampler(name).get_params(deep=False).items()}


def ran_with(namespace, sources=()):
    """The record of what the fitted estimators in ``namespace`` ran with.

    Parameters
    ----------
    namespace : dict
        The globals a page's block or script left (its fitted estimators
        are found among them, also inside a pipeline's last step).
    sources : iterable of str
        What the page shows or runs (a script, a page's first code block),
        named as :func:`source_text` reads them; their texts are hashed.

    Returns
    -------
    dict
        ``{"estimators": {class: {"defaults": ..., "given": ...}},
        "samplers": {name: defaults}, "sources": {name: sha256}}``; the
        values are ``repr`` strings.
    """
    estimators, samplers = {}, {}
    for value in list(namespace.values()):
        if hasattr(value, "steps"):  # a pipeline: its last step
            value = value.steps[-1][1]
        # a fitted skgibbs estimator: an estimator that resolved a sampler
        if not hasattr(value, "get_params") or not hasattr(value, "sampler_name_"):
            continue
        cls = type(value)
        defaults = _defaults(cls)
        given = {k: repr(v) for k, v in value.get_params(deep=False).items() if repr(v) != defaults.get(k)}
        estimators[cls.__name__] = {"module": cls.__module__, "defaults": defaults, "given": given}
        samplers[value.sampler_name_] = _sampler_defaults(value.sampler_name_)
    return {
        "estimators": estimators,
        "samplers": samplers,
        "sources": {name: source_hash(source_text(name)) for name in sources},
    }


def _changed(owner, then, now):
    """``(parameter, line)`` for each default of ``owner`` that differs between two ``{parameter: repr}``."""
    for param in sorted(set(then) | set(now)):
        before, after = then.get(param, "(absent)"), now.get(param, "(absent)")
        if before != after:
            yield param, f"{owner}'s default {param} was {before}, is {after}"


def stale(record):
    """What differs between a page's :func:`ran_with` record and today's code; empty when nothing does.

    Parameters
    ----------
    record : dict
        What :func:`ran_with` returned when the page was generated.

    Returns
    -------
    list of str
        One line per difference: a default of an estimator class or of a
        sampler object that changed (then and now), or a source that was
        edited. A record made before the classes' traits were recorded
        (``"traits.<name>"``) is judged on the parameters and sources
        alone.
    """
    import importlib

    found = []
    for name, entry in record.get("estimators", {}).items():
        cls = getattr(importlib.import_module(entry["module"]), name, None)
        if cls is None:
            found.append(f"{name} no longer exists in {entry['module']}")
            continue
        given = entry.get("given", {})
        today = _defaults(cls)
        if not any(key.startswith("traits.") for key in entry["defaults"]):  # recorded before traits were
            today = {key: value for key, value in today.items() if not key.startswith("traits.")}
        found += [line for param, line in _changed(name, entry["defaults"], today) if param not in given]
    for name, then_params in record.get("samplers", {}).items():
        try:
            today = _sampler_defaults(name)
        except (KeyError, ValueError):
            found.append(f"the sampler {name!r} is no longer registered")
            continue
        found += [line for _, line in _changed(name, then_params, today)]
    for name, digest in record.get("sources", {}).items():
        try:
            today = source_hash(source_text(name))
        except (OSError, StopIteration):
            found.append(f"{name} no longer exists")
            continue
        if today != digest:
            found.append(f"{name} was edited since the page was generated")
    return found
