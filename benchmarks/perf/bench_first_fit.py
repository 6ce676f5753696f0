"""The first fits a reader runs: the README's and the quick start's, timed as a reader would run them.

The first code block of ``README.rst`` and of ``doc/quickstart.rst``, read from the file, runs in fresh
processes on one torch thread: the medians of the CPU time of ``import skgibbs`` (torch included), of the CPU
and wall time of the rest of the block, and of the pre-training's CPU time inside it (``initial_points``,
wrapped by the child). The README and the quick start state them, rounded to the second
(``tests/test_docs.py`` checks). The ``demo`` result keeps what ``make demo``'s script prints and its CPU
time. Each result records what its fit ran with (:func:`benchmarks.common.provenance.ran_with`), so that a
test fails once a default it rests on has changed. A quick run leaves the demo out and runs the README's
block alone on tiny data (:data:`QUICK_EDITS`). Run ``python -m benchmarks run first_fit``.
"""

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.provenance import FIRST_BLOCK, first_python_block
from ..common.writer import Page

NAME = "first_fit"
ROOT = Path(__file__).resolve().parents[2]
PAGES = {"README": ROOT / "README.rst", "quick start": ROOT.joinpath("doc", "quickstart.rst")}
DEMO = ROOT / "examples" / "plot_gap_regression.py"
#: the quick run's edits of a block (pattern, replacement), in order: tiny data, a short pre-training and
#: few draws; the block runs as it reads otherwise
QUICK_EDITS = (
    (r"\bpretrain_iter=\d+,\s*", ""),
    (r"\bn_samples=\d+", "n_samples=40"),
    (r"\bburn_in=\d+", "burn_in=20, pretrain_iter=20"),
)
SIZES = {
    "full": {"repeats": 3, "demo_runs": 1, "pages": tuple(PAGES), "edits": ()},
    "quick": {"repeats": 1, "demo_runs": 0, "pages": ("README",), "edits": QUICK_EDITS},
}

#: the child that runs a block (its source on stdin): its times, then what its fit ran with (one JSON line)
CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
c0, w0 = time.process_time(), time.perf_counter()
import torch
torch.set_num_threads(1)
import skgibbs
import skgibbs.problem
c1, w1 = time.process_time(), time.perf_counter()
spent = []
inner = skgibbs.problem.initial_points

def timed(*args, **kwargs):
    start = time.process_time()
    try:
        return inner(*args, **kwargs)
    finally:
        spent.append(time.process_time() - start)

skgibbs.problem.initial_points = timed
source, namespace = sys.stdin.read(), {"__name__": "__block__"}
exec(compile(source, "block", "exec"), namespace)
c2, w2 = time.process_time(), time.perf_counter()
sys.path.insert(0, sys.argv[1])
from benchmarks.common.provenance import ran_with
print(json.dumps({"import_cpu": c1 - c0, "import_wall": w1 - w0, "block_cpu": c2 - c1,
                  "block_wall": w2 - w1, "pretrain_cpu": sum(spent),
                  "ran_with": ran_with(namespace, [sys.argv[2]])}))
"""

#: ``make demo``'s script run as ``python SCRIPT OUTPUT`` would, then what its fit ran with (one line)
DEMO_CHILD = """
import json, runpy, sys
root, script, output = sys.argv[1:4]
sys.argv = [script, output]
namespace = runpy.run_path(script, run_name="__main__")
sys.path.insert(0, root)
from benchmarks.common.provenance import ran_with
print("RAN_WITH " + json.dumps(ran_with(namespace, ["examples/" + script.rsplit("/", 1)[-1]])))
"""


def _child(code, *argv, source=None):
    """The standard output of ``python -c code *argv`` in a fresh process on one thread."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    command = [sys.executable, "-c", code, *argv]
    return subprocess.run(command, input=source, capture_output=True, text=True, env=env, check=True).stdout


def time_block(source, name):
    """A fresh process on one thread running ``source`` (the source ``name``): the times of :data:`CHILD`."""
    return json.loads(_child(CHILD, str(ROOT), name, source=source).strip().splitlines()[-1])


def run_demo():
    """``make demo``'s script in a fresh process on one thread: its output, CPU time and what it ran with."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        out = _child(DEMO_CHILD, str(ROOT), str(DEMO), str(Path(tmp) / "demo.png")).splitlines()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in out if not line.startswith(("wrote ", "RAN_WITH "))]
    record = next(json.loads(line[9:]) for line in out if line.startswith("RAN_WITH "))
    return {"output": "\n".join(lines).strip(), "cpu": cpu, "ran_with": record}


def run(args):
    rows = {}
    for page in args.size.pages:
        source = first_python_block(PAGES[page])
        for pattern, replacement in args.size.edits:
            source = re.sub(pattern, replacement, source)
        name = str(PAGES[page].relative_to(ROOT)) + FIRST_BLOCK
        runs = [time_block(source, name) for _ in range(args.size.repeats)]
        records = [r.pop("ran_with") for r in runs]
        medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        rows[page] = {**medians, "runs": runs, "ran_with": records[0]}
        print(f"{page}: {medians['block_cpu']:.1f} s CPU, import {medians['import_cpu']:.1f} s", flush=True)
    results = {NAME: {"pages": rows, "repeats": args.size.repeats}}
    if args.size.demo_runs:
        results["demo"] = run_demo()
    return results


def report(results):
    result = results[NAME]
    header = ["first fit", "import skgibbs (CPU s)", "the block (CPU s)", "of it pre-training (CPU s)",
              "wall s"]  # fmt: skip
    keys = ("import_cpu", "block_cpu", "pretrain_cpu", "block_wall")
    table = [[page, *(f"{r[key]:.1f}" for key in keys)] for page, r in result["pages"].items()]
    notes = [
        f"The first code block of each page, in a fresh process on one torch thread; the median of "
        f"{result['repeats']} processes. 'import skgibbs' imports torch; 'the block' is the rest of the "
        "block (the fit and what follows it); wall seconds of the block. Load average "
        f"{load_after(result, lambda r: None):.1f} at the end."
    ]
    heading = "The first fits of the README and the quick start"
    pages = [Page(NAME, heading, [("CPU time", header, table)], notes)]
    if "demo" in results:
        demo = results["demo"]
        intro = (f"``make demo`` (``python examples/plot_gap_regression.py``) took {demo['cpu']:.0f} s "
                 "of CPU time in a fresh process on one torch thread and printed:")  # fmt: skip
        printed = ["   " + line if line else "" for line in demo["output"].splitlines()]
        pages.append(Page("demo", "make demo", rst=[intro, "", "::", "", *printed, ""]))
    return pages


TITLE = "The first fits of the README and the quick start, timed as a reader runs them"
OUTPUTS = (Output(NAME, TITLE), Output("demo", "What make demo prints"))
BENCHMARK = Benchmark(NAME, "performance", TITLE, OUTPUTS, run, report, sizes=SIZES)
