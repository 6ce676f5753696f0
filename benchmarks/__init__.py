"""Speed benchmarks and paper reproductions of skgibbs, run through one harness.

Every module of :mod:`benchmarks.perf` (speed and cost measurements) and
:mod:`benchmarks.studies` (paper reproductions and parameter studies)
declares itself once, as a module-level ``BENCHMARK``::

    BENCHMARK = Benchmark(
        name="burn_in",
        kind="performance",
        title="csMALA burn-in steps against sampling steps",
        outputs=(Output("burn_in", "csMALA burn-in steps against sampling steps"),),
        run=run,          # run(args) -> {result file stem: JSON-able dict}
        report=report,    # report(results) -> [Page, ...]
        add_arguments=add_arguments,  # optional: the benchmark's own flags
        sizes=SIZES,      # optional: {"full": {...}, "quick": {...}}, the run reads args.size
    )

A benchmark whose full and quick runs differ only in sizes (steps, widths,
seeds, repetitions) declares both once, as a module-level ``SIZES``; the
harness gives ``run`` the ones of the run it starts as ``args.size``
(:func:`pick_sizes`), so that the code of both runs is the same.

:func:`registry` finds them; ``python -m benchmarks`` lists, runs and
re-renders them (see :mod:`benchmarks.__main__`), and the documentation
builds its benchmarks page from the same declarations.
"""

import importlib
import pkgutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["KINDS", "PACKAGES", "Benchmark", "Output", "Sizes", "pick_sizes", "registry"]

# kind -> the subpackage holding the benchmarks of that kind, in the order of the documentation
KINDS = {"performance": "perf", "reproduction": "studies"}
PACKAGES = tuple(f"{__name__}.{sub}" for sub in KINDS.values())


class Sizes(dict):
    """The sizes of one run: a dict whose keys also read as attributes (``size.steps``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def pick_sizes(sizes, quick):
    """The sizes of a quick or a full run from a declaration ``{"full": {...}, "quick": {...}}``.

    Both name the same sizes (a quick run shrinks them, it has none of its
    own); returns a :class:`Sizes`.
    """
    if set(sizes) != {"full", "quick"} or set(sizes["full"]) != set(sizes["quick"]):
        raise ValueError(f"sizes must be {{'full': {{...}}, 'quick': {{...}}}} with the same keys, got {sizes}")
    return Sizes(sizes["quick" if quick else "full"])


@dataclass(frozen=True)
class Output:
    """One set of result files, ``<stem>.json`` and ``<stem>.rst`` (and a figure ``<stem>.png``).

    Parameters
    ----------
    stem : str
        File name without suffix, in the results directory.
    title : str
        Section title of these results on the documentation's benchmarks page.
    flags : str, default=""
        Options of ``python -m benchmarks run`` that this output needs
        beyond the benchmark's defaults (e.g. a variant written under its
        own name).
    """

    stem: str
    title: str
    flags: str = ""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark or a paper reproduction, as the harness sees it.

    Parameters
    ----------
    name : str
        What ``python -m benchmarks run`` takes; by convention the stem of
        its main output.
    kind : {"performance", "reproduction"}
    title : str
        One line saying what it measures.
    outputs : tuple of Output
        Every result file set a full run may write, in the documentation's order.
    run : callable
        ``run(args)`` computes and returns ``{stem: result}``, each result a
        JSON-able dict (the harness adds the environment record and writes it).
    report : callable
        ``report(results)`` turns stored results (``{stem: result}``, only
        the stems that exist) into a list of :class:`benchmarks.common.writer.Page`.
    add_arguments : callable, optional
        ``add_arguments(parser)`` adds the benchmark's own options to the
        common ones of the harness.
    requires : tuple of str, default=()
        Optional modules without which it cannot run at all (optional
        data sets and peers are skipped inside the benchmark instead).
    sizes : dict, optional
        ``{"full": {...}, "quick": {...}}``: the sizes of a full and of a
        quick run, the same keys in both; the harness sets the run's as
        ``args.size`` (:func:`pick_sizes`).
    """

    name: str
    kind: str
    title: str
    outputs: tuple
    run: Callable
    report: Callable
    add_arguments: Callable = None
    requires: tuple = field(default=())
    sizes: dict = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        if self.sizes is not None:
            pick_sizes(self.sizes, False)  # checks the declaration

    @property
    def stems(self):
        """The stems of every declared output."""
        return tuple(o.stem for o in self.outputs)

    def command(self, output=None):
        """The shell command that writes ``output`` (default: the main output)."""
        flags = output.flags if output is not None else ""
        return " ".join(["python -m benchmarks run", self.name, flags]).strip()

    def missing(self):
        """The first module of ``requires`` that cannot be imported, or None."""
        for module in self.requires:
            try:
                importlib.import_module(module)
            except ImportError:
                return module
        return None


def registry(strict=True):
    """Every declared benchmark, by name: performance first, then reproductions, each sorted by name.

    Importing a benchmark module must not need its optional dependencies
    (they are imported where used), so that the registry is complete on
    any installation.

    Parameters
    ----------
    strict : bool, default=True
        False: a module that fails to import is left out with a warning
        instead of raising (the documentation still builds and includes
        its stored results under a generic title).
    """
    found = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            try:
                module = importlib.import_module(f"{package_name}.{info.name}")
            except ImportError as error:
                if strict:
                    raise
                warnings.warn(f"benchmark module {package_name}.{info.name} left out: {error}", stacklevel=2)
                continue
            bench = getattr(module, "BENCHMARK", None)
            if bench is None:
                continue
            if KINDS[bench.kind] != package_name.rsplit(".", 1)[1]:
                raise ValueError(f"{module.__name__}: a {bench.kind} benchmark belongs in benchmarks.{KINDS[bench.kind]}")
            found.append(bench)
    found.sort(key=lambda b: (list(KINDS).index(b.kind), b.name))
    out = {}
    for bench in found:
        if bench.name in out:
            raise ValueError(f"two benchmarks are named {bench.name!r}")
        out[bench.name] = bench
    return out
