"""Command line of the benchmarks.

::

    python -m benchmarks list                       # every benchmark, its kind, title and result files
    python -m benchmarks run NAME [options]         # run it, write benchmarks/results/NAME.{json,rst}
    python -m benchmarks run NAME --quick           # a tiny run of the same code, into a temporary directory
    python -m benchmarks run all [--quick]          # every benchmark in turn (hours on one core)
    python -m benchmarks report NAME                # re-render the tables from the stored JSON
    python -m benchmarks run NAME --help            # the common options and NAME's own

The common options mean the same for every benchmark; a benchmark ignores
those that do not apply to it (``--n-splits`` where nothing is split).
"""

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import KINDS, pick_sizes, registry
from .common import environment
from .common.writer import RESULTS, load, save_json, write_page

__all__ = ["common_parser", "main"]


def common_parser(bench=None, command="run"):
    """The parser of ``run`` or ``report``: the common options, then ``bench``'s own."""
    name = bench.name if bench is not None else "NAME"
    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks {command} {name}",
        description=bench.title if bench is not None else None,
    )
    common = parser.add_argument_group("common options")
    common.add_argument("--out", type=Path, default=None, help=f"results directory (default {RESULTS})")
    if command == "run":
        common.add_argument(
            "--quick", action="store_true", help="a tiny run of the same code; writes to a temporary directory"
        )
        common.add_argument("--seed", type=int, default=0, help="first random seed (default 0)")
        common.add_argument("--n-splits", type=int, default=None, help="data splits (default: the benchmark's)")
        common.add_argument("--n-jobs", type=int, default=None, help="parallel workers (default: the benchmark's)")
        common.add_argument("--threads", type=int, default=1, help="torch and BLAS threads (default 1)")
    if bench is not None and bench.add_arguments is not None:
        bench.add_arguments(parser.add_argument_group(f"options of {bench.name}"))
    return parser


def _select(name, benches):
    if name == "all":
        return list(benches.values())
    if name not in benches:
        raise SystemExit(f"unknown benchmark {name!r}; `python -m benchmarks list` shows them")
    return [benches[name]]


def _out_dir(args):
    if args.out is None:
        if getattr(args, "quick", False):
            return Path(tempfile.mkdtemp(prefix="skgibbs-benchmarks-"))
        return RESULTS
    if getattr(args, "quick", False) and args.out.resolve() == RESULTS.resolve():
        raise SystemExit(f"--quick never writes to {RESULTS}: give another --out")
    return args.out


def _stems(bench, args):
    """The declared outputs, and a renamed one (``--output``) where the benchmark has that option."""
    extra = getattr(args, "output", None)
    return bench.stems + ((extra,) if extra and extra not in bench.stems else ())


def list_benchmarks(benches):
    """Print every benchmark: name, kind, title and result files."""
    for kind in KINDS:
        print(f"{kind}:")
        for bench in (b for b in benches.values() if b.kind == kind):
            print(f"  {bench.name:24} {bench.title}")
            print(f"  {'':24} writes {', '.join(f'{s}.{{json,rst}}' for s in bench.stems)}")
    return 0


def run_benchmark(bench, args):
    """Run ``bench``, write its results through the writer; return the paths written.

    Every result gets the record of the run (:func:`benchmarks.common.environment.record`): the machine,
    the versions, the load average before and after, the seed and whether it was quick.
    """
    missing = bench.missing()
    if missing:
        print(f"skipping {bench.name}: the optional module {missing} is not installed")
        return None
    import torch
    from threadpoolctl import threadpool_limits

    if bench.sizes is not None:
        args.size = pick_sizes(bench.sizes, args.quick)
    torch.set_num_threads(args.threads)
    load_before = environment.load_average()
    with threadpool_limits(args.threads):
        results = bench.run(args)
    env = environment.record(args.threads, bench.requires, load_before, seed=args.seed, quick=args.quick)
    written = []
    for stem, result in results.items():
        result["environment"] = env
        written.append(save_json(args.out, stem, result))
    for page in bench.report(results):
        written += write_page(args.out, page, results.get(page.stem, {}).get("environment"))
    return written


def report_benchmark(bench, args):
    """Re-render ``bench``'s reStructuredText from its stored JSON; return the paths written."""
    results = load(args.out, _stems(bench, args))
    if not results:
        print(f"{bench.name}: no stored results in {args.out}")
        return None
    written = []
    for page in bench.report(results):
        written += write_page(args.out, page, results.get(page.stem, {}).get("environment"))
    return written


def _each(benches, argv, command):
    """Parse ``argv`` with each benchmark's parser, run ``command`` on it; the exit code."""
    action = run_benchmark if command == "run" else report_benchmark
    failed, out = [], None
    for bench in benches:
        args = common_parser(bench, command).parse_args(argv)
        args.out = out = out or _out_dir(args)  # one directory for all of `run all --quick`
        start = time.perf_counter()
        try:
            written = action(bench, args)
        except Exception:  # one failure must not stop `run all`
            traceback.print_exc()
            failed.append(bench.name)
            written = None
        status = "failed" if bench.name in failed else "skipped" if written is None else f"{len(written)} files"
        print(f"== {bench.name}: {status} in {out} after {time.perf_counter() - start:.1f} s", flush=True)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


def main(argv=None):
    """Entry point: ``list``, ``run NAME|all [options]`` or ``report NAME|all [options]``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "python -m benchmarks {list | run NAME|all [options] | report NAME|all [options]}"
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    command, rest = argv[0], argv[1:]
    benches = registry()
    if command == "list":
        return list_benchmarks(benches)
    if command not in ("run", "report") or not rest or rest[0].startswith("-"):
        raise SystemExit(f"usage: {usage}")
    return _each(_select(rest[0], benches), rest[1:], command)


if __name__ == "__main__":
    sys.exit(main())
