"""Progress of the chain runner and the optimisers: one live bar per phase on stderr, with ``verbose``.

With ``tqdm`` installed (optional, the ``progress`` extra) each phase is a
tqdm bar (steps per second, ETA, and the acceptance rate so far while
sampling); otherwise one stderr line per phase is rewritten in place, at
most five times a second, with the same fields. Nothing is written at
``verbose=0``.
"""

import math
import sys
import time

try:  # optional
    from tqdm.auto import tqdm as _tqdm
except ImportError:  # pragma: no cover - depends on the environment
    _tqdm = None

__all__ = ["progress", "progress_close"]

_MIN_INTERVAL = 0.2  # seconds between two refreshes of a line
_BARS = {}


class _Line:
    """A phase's progress as one stderr line rewritten in place (``\\r``)."""

    def __init__(self, desc, total):
        self.desc, self.total, self.n = desc, total, 0
        self.start, self.shown = time.perf_counter(), -math.inf

    def update(self, n, stats):
        self.n = n
        now = time.perf_counter()
        if n < self.total and now - self.shown < _MIN_INTERVAL:
            return
        self.shown = now
        rate = n / max(now - self.start, 1e-9)
        eta = (self.total - n) / rate if rate > 0 else math.nan
        extra = "".join(f", {k} {v()}" for k, v in stats.items())
        sys.stderr.write(f"\r{self.desc}: {n}/{self.total} [{rate:.1f} steps/s, ETA {eta:.0f} s{extra}]")
        sys.stderr.flush()

    def close(self):
        sys.stderr.write("\n")
        sys.stderr.flush()


class _Bar:
    """A tqdm bar; ``stats`` are evaluated only when the bar refreshes."""

    def __init__(self, desc, total):
        self.bar = _tqdm(total=total, desc=desc, file=sys.stderr, mininterval=_MIN_INTERVAL, leave=True)
        self.shown = -math.inf

    def update(self, n, stats):
        self.bar.update(n - self.bar.n)
        now = time.perf_counter()
        if stats and (now - self.shown >= _MIN_INTERVAL or n >= self.bar.total):
            self.shown = now
            self.bar.set_postfix({k: v() for k, v in stats.items()}, refresh=False)

    def close(self):
        self.bar.close()


def progress(cfg, phase, i, total, **stats):
    """Report step ``i`` (0-based) of ``total`` of ``phase`` when ``cfg.verbose``.

    ``cfg`` is whatever runs the phase and has a ``verbose`` attribute (a
    :class:`~skgibbs.samplers.RunSettings`, an estimator); its bars are
    keyed by its identity.

    ``stats`` are callables returning short strings (e.g. the acceptance
    rate so far), evaluated only when the display refreshes. The bar of a
    phase starts at ``i = 0`` and ends at ``i = total - 1`` or with
    :func:`progress_close`.
    """
    if not cfg.verbose or not total:
        return
    key = (id(cfg), phase)
    if i == 0 or key not in _BARS:
        progress_close(cfg, phase)
        desc = f"[skgibbs] {phase}"
        _BARS[key] = _Bar(desc, total) if _tqdm is not None else _Line(desc, total)
    _BARS[key].update(i + 1, stats)
    if i + 1 >= total:
        progress_close(cfg, phase)


def progress_close(cfg, phase):
    """End the bar of ``phase`` (e.g. when an optimiser stops early); nothing if there is none."""
    bar = _BARS.pop((id(cfg), phase), None)
    if bar is not None:
        bar.close()
