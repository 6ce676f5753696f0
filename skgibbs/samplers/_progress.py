"""Progress lines of the chain runner (stderr, only with ``verbose``)."""

import sys

__all__ = ["progress"]


def progress(cfg, phase, i, total):
    """Print ``phase: i + 1/total`` ten times per phase when ``cfg.verbose``."""
    if cfg.verbose and total and (i + 1) % max(1, total // 10) == 0:
        print(f"[skgibbs] {phase}: {i + 1}/{total}", file=sys.stderr, flush=True)
