"""The test suite's lanes, timed as the Makefile runs them: what README's "Commands" states.

Each lane is the pytest command of a Makefile target (``make test``, what CI runs, and ``make test-fast``),
read from the Makefile and run in a fresh process from the repository root: wall time, the counts of pytest's
last line and the exit status (``tests/test_docs.py`` holds README's minutes to them). A quick run times the
fast lane on one small test module in pytest's own process.
"""

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from .. import Benchmark, Output
from ..common.environment import load_after
from ..common.writer import Page

NAME = "test_suite"
ROOT = Path(__file__).resolve().parents[2]
#: the lanes timed, and what follows a lane's command: options (over the Makefile's), then the tests
SIZES = {
    "full": {"targets": ("test", "test-fast"), "options": (), "paths": ()},
    "quick": {"targets": ("test-fast",), "options": ("-n", "0"), "paths": ("tests/test_priors.py",)},
}
_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)")


def target_command(target, makefile=ROOT / "Makefile"):
    """The pytest command of a Makefile target: its recipe line that runs ``-m pytest``, as a list."""
    lines = Path(makefile).read_text().splitlines()
    start = lines.index(next(line for line in lines if re.match(rf"^{re.escape(target)}\s*:", line)))
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        if "-m pytest" in line:
            words = shlex.split(line.strip())
            return [sys.executable, *words[words.index("-m") :]]
    raise ValueError(f"the Makefile's target {target!r} runs no pytest command")


def counts(output):
    """The counts of pytest's summary line (``{"passed": 2933, "skipped": 28}``)."""
    summary = [line for line in output.splitlines() if re.search(r"\b(passed|failed|error)", line)]
    found = _COUNTS.findall(summary[-1]) if summary else []
    return {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in found}


def run(args):
    rows = {}
    for target in args.size.targets:
        command = target_command(target) + list(args.size.options) + list(args.size.paths)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        code, found = done.returncode, counts(done.stdout)
        rows[target] = {"command": shlex.join(command[1:]), "wall": wall, "returncode": code, "counts": found}
        print(f"make {target}: {wall:.0f} s, exit {code}, {found}", flush=True)
    return {NAME: {"lanes": rows}}


def report(results):
    result = results[NAME]
    header = ["target", "command", "wall s", "minutes", "passed", "skipped", "failed", "exit"]
    table = []
    for target, r in result["lanes"].items():
        n, wall = r["counts"], r["wall"]
        counted = [n.get("passed", 0), n.get("skipped", 0), n.get("failed", 0) + n.get("error", 0)]
        cells = [f"{wall:.0f}", f"{wall / 60:.0f}", *counted, r["returncode"]]
        table.append([f"make {target}", f"``python {r['command']}``", *map(str, cells)])
    notes = [
        "Each lane is the pytest command of its Makefile target, run from the repository root with nothing "
        f"else running; wall seconds on the machine of the environment record. Load average "
        f"{load_after(result, lambda r: None):.1f} at the end."
    ]
    return [Page(NAME, "The test suite's lanes", [("Wall time", header, table)], notes)]


TITLE = "The test suite's lanes (make test, make test-fast), timed"
BENCHMARK = Benchmark(NAME, "performance", TITLE, (Output(NAME, TITLE),), run, report, sizes=SIZES)
