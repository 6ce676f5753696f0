"""Exit 0 when this checkout is installed with the requirements of the given extras.

Usage: ``python .ci/installed.py [EXTRA ...]``

The Makefile's ``setup`` targets call it so that a second ``make test`` does
not run pip again. It checks, against ``pyproject.toml`` (not against the
metadata of an older install), that

- ``import skgibbs`` resolves to the ``skgibbs/`` folder of this checkout
  (an editable install of this tree, not of another copy), with the version
  that ``pyproject.toml`` declares, and
- every requirement of ``[project].dependencies`` and of the named
  ``[project.optional-dependencies]`` is installed in a matching version.

Anything missing prints one line and exits 1.
"""

import importlib.util
import pathlib
import sys
from importlib import metadata

try:
    import tomllib
except ImportError:  # Python 3.10: pip carries tomli
    from pip._vendor import tomli as tomllib

try:
    from packaging.requirements import Requirement
except ImportError:  # a bare interpreter: pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parent.parent


def problems(extras):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    spec = importlib.util.find_spec(project["name"])
    if spec is None or spec.origin is None:
        yield f"{project['name']} is not installed"
        return
    here = (ROOT / project["name"]).resolve()
    if pathlib.Path(spec.origin).resolve().parent != here:
        yield f"{project['name']} is imported from {spec.origin}, not from {here}"
    try:
        version = metadata.version(project["name"])
    except metadata.PackageNotFoundError:
        version = None
    if version != project["version"]:
        yield f"{project['name']} {version} is installed, pyproject.toml declares {project['version']}"
    optional = project.get("optional-dependencies", {})
    requirements = list(project.get("dependencies", []))
    for extra in extras:
        if extra not in optional:
            yield f"pyproject.toml has no extra {extra!r}"
        requirements += optional.get(extra, [])
    for line in requirements:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            have = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            yield f"{req.name} is not installed"
            continue
        if not req.specifier.contains(have, prereleases=True):
            yield f"{req.name} {have} does not satisfy {req}"


def main(argv):
    found = list(problems(argv[1:]))
    for line in found:
        print(f"setup needed: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
