"""Progress of the chain runner and the optimisers: one live bar per phase on stderr, with ``verbose``.

On a terminal, with ``tqdm`` installed (optional, the ``progress`` extra),
each phase is a tqdm bar (steps per second, ETA, and the acceptance rate so
far while sampling); otherwise one stderr line per phase is rewritten in
place, at most five times a second, with the same fields. Where stderr is
not a terminal (a log file, a pipe, a batch job) and not a notebook, each
report is a whole line ending in a newline, at the first step, then at most
every :data:`_LOG_INTERVAL` seconds, and at the last step. The rate is
measured from the end of the first step, which holds one-off costs (the
first gradient, allocations), so the first report has none. Nothing is
written at ``verbose=0``.
"""

import math
import sys
import time

try:  # optional
    from tqdm.auto import tqdm as _tqdm
except ImportError:  # pragma: no cover - depends on the environment
    _tqdm = None

__all__ = ["progress", "progress_close"]

_MIN_INTERVAL = 0.2  # seconds between two refreshes of a line on a terminal
_LOG_INTERVAL = 5.0  # seconds between two whole lines where stderr is not a terminal
_BARS = {}


def _terminal(stream):
    """Whether ``stream`` shows a line rewritten in place: a terminal, or a notebook's output."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
    return "ipykernel" in sys.modules


class _Line:
    """A phase's progress on stderr: one line rewritten in place (``\\r``) on a terminal, else whole lines.

    The rate is the steps after the first over the time since the first
    ended, so the first step's one-off costs do not inflate it; until a
    second step there is no rate (``n/a``). ``total`` may change between
    updates (a phase whose length is an estimate).
    """

    def __init__(self, desc, total, in_place=True):
        self.desc, self.total, self.n, self.in_place = desc, total, 0, in_place
        self.first, self.shown = None, -math.inf  # (steps, time) at the end of the first update
        self.open = False  # a line rewritten in place waits for its newline

    def update(self, n, stats):
        self.n = n
        now = time.perf_counter()
        if self.first is None:
            self.first = (n, now)
        interval = _MIN_INTERVAL if self.in_place else _LOG_INTERVAL
        if n < self.total and now - self.shown < interval:
            return
        self.shown = now
        done, since = n - self.first[0], now - self.first[1]
        if done > 0 and since > 0:
            rate = done / since
            timing = f"{rate:.1f} steps/s, ETA {(self.total - n) / rate:.0f} s"
        else:
            timing = "n/a steps/s, ETA n/a"
        extra = "".join(f", {k} {v()}" for k, v in stats.items())
        text = f"{self.desc}: {n}/{self.total} [{timing}{extra}]"
        if self.in_place:
            sys.stderr.write("\r" + text)
            self.open = True
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self):
        if self.open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.open = False


class _Bar:
    """A tqdm bar; ``stats`` are evaluated only when the bar refreshes."""

    def __init__(self, desc, total):
        self.bar = _tqdm(total=total, desc=desc, file=sys.stderr, mininterval=_MIN_INTERVAL, leave=True)
        self.shown = -math.inf

    @property
    def total(self):
        return self.bar.total

    @total.setter
    def total(self, value):
        self.bar.total = value

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
    :func:`progress_close`; a ``total`` that changes between calls (an
    estimate that the run refines) replaces the bar's.
    """
    if not cfg.verbose or not total:
        return
    key = (id(cfg), phase)
    if i == 0 or key not in _BARS:
        progress_close(cfg, phase)
        desc = f"[skgibbs] {phase}"
        terminal = _terminal(sys.stderr)
        _BARS[key] = _Bar(desc, total) if _tqdm is not None and terminal else _Line(desc, total, terminal)
    bar = _BARS[key]
    if bar.total != total:  # a phase whose length is an estimate that changes as it runs (an SMC path)
        bar.total = total
    bar.update(i + 1, stats)
    if i + 1 >= total:
        progress_close(cfg, phase)


def progress_close(cfg, phase):
    """End the bar of ``phase`` (e.g. when an optimiser stops early); nothing if there is none."""
    bar = _BARS.pop((id(cfg), phase), None)
    if bar is not None:
        bar.close()
