"""Estimators saved before the samplers moved into their family's folders still load."""

import importlib
import pickle

import pytest

from skgibbs import persistence
from skgibbs.samplers import FORMER_MODULES, get_sampler


@pytest.mark.parametrize("old, new", sorted(FORMER_MODULES.items()))
def test_a_former_module_path_imports_the_sampler_module(old, new):
    module = importlib.import_module(old)
    sampler_module = importlib.import_module(new)
    names = [n for n in dir(sampler_module) if n[:1].isupper() and isinstance(getattr(sampler_module, n), type)]
    assert names and all(getattr(module, n) is getattr(sampler_module, n) for n in names if hasattr(module, n))


@pytest.mark.parametrize("name", ["hmc", "csmala", "sgld", "rjmcmc", "rjhmc", "vi", "smc", "sghmc"])
def test_a_sampler_pickled_under_its_former_path_loads_and_is_trusted(name):
    sampler = get_sampler(name)
    cls = type(sampler)
    (old,) = [o for o, n in FORMER_MODULES.items() if n == cls.__module__]
    # protocol 0 writes the class's module as text: put the former path in its place
    data = pickle.dumps(sampler, protocol=0).replace(cls.__module__.encode(), old.encode())
    assert old.encode() in data
    loaded = pickle.loads(data)
    assert type(loaded) is cls and loaded.get_params() == sampler.get_params()
    assert f"{old}.{cls.__qualname__}" in persistence.TRUSTED_TYPES


def test_the_version_and_the_dated_notes_agree():
    """The version, the release notes and the versions the docstrings name agree.

    ``skgibbs.__version__`` is ``pyproject.toml``'s version, and the release
    notes' first section is that version. Every dated note of the package
    (``versionchanged::``, "renamed X in", "deprecated in", "since") names
    that version or an earlier one; at present two do, the ``sampler_`` entries
    of the estimators' Attributes. Before 1.0 a rename takes effect in the
    release that makes it, so no text of the package announces a removal to
    come ("removed in", "will be removed").
    """
    import pathlib
    import re
    import tomllib

    import skgibbs

    root = pathlib.Path(skgibbs.__file__).resolve().parent
    declared = tomllib.loads((root.parent / "pyproject.toml").read_text())["project"]["version"]
    assert skgibbs.__version__ == declared
    major, minor = (int(v) for v in re.match(r"(\d+)\.(\d+)", declared).groups())
    this = f"{major}.{minor}"
    notes = (root.parent / "doc" / "changes.rst").read_text()
    assert re.search(rf"^{re.escape(this)} \(unreleased\)\n=+$", notes, re.M), "changes.rst's first section"
    found = 0
    for path in root.rglob("*.py"):
        text = " ".join(path.read_text().split())
        dated = r"(?:renamed \S+ in|deprecated in|since|deprecated::|versionchanged::) (\d+)\.(\d+)\b"
        for since in re.findall(dated, text):
            assert tuple(map(int, since)) <= (major, minor), f"{path.name}: a note dated {'.'.join(since)}"
            found += 1
        if major < 1:
            promised = re.findall(r"(?:removed in \d+\.\d+|will be removed)", text)
            assert promised == [], f"{path.name}: {promised}; before 1.0 a former name goes when it is renamed"
    assert found >= 2  # the check reads the notes it is about
