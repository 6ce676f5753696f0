"""Run every benchmark: the same as ``python -m benchmarks run all`` (options are passed on)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout holds the package
from benchmarks.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["run", "all", *sys.argv[1:]]))
