"""The one record of a benchmark run: where it ran (versions, threads, CPU, date), the load, the seed, quick or not.

The harness (``python -m benchmarks run``) adds :func:`record` to every
result it writes (key ``"environment"``): the 1-minute load average before
and after the run, the ``--seed`` and ``--quick`` it ran with, besides the
machine and the versions. A benchmark stores none of these itself; its
report reads them back with :func:`was_quick`, :func:`recorded` and
:func:`loads` (which also read the keys that results stored before the
harness kept them). Benchmarks that quote versions or the machine in their
notes take them from :func:`versions` and :func:`machine_info`, so that
every result file describes its environment the same way.
"""

import datetime
import os
import platform
from importlib import metadata

__all__ = [
    "PACKAGES", "cpu_model", "describe", "keep_parts", "load_after", "load_average", "loads", "machine_info", "part_loads",
    "record", "recorded", "same_run", "session_loads", "versions", "was_quick",
]

# the packages every record names; a benchmark adds its optional peers
PACKAGES = ("skgibbs", "numpy", "scipy", "scikit-learn", "torch")


def cpu_model():
    """The CPU model from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_count():
    """CPUs this process may use (the affinity mask, as ``nproc`` reports), else all of them."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def load_average():
    """The 1-minute load average, NaN where the system has none."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def versions(packages=PACKAGES, python=False):
    """``{package: version}``, None for a package that is not installed (``python`` adds Python's)."""
    out = {"python": platform.python_version()} if python else {}
    for package in packages:
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def machine_info():
    """CPUs, CPU model, Python and torch versions and torch's thread count."""
    import torch

    return {
        "nproc": cpu_count(),
        "cpu_model": cpu_model(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def record(threads=None, packages=(), load_before=None, seed=None, quick=None):
    """The environment record of one run, taken when the run has ended.

    Parameters
    ----------
    threads : int, optional
        The thread limit the harness set (torch and the BLAS pools).
    packages : iterable of str
        Optional packages to name beside :data:`PACKAGES`.
    load_before : float, optional
        The 1-minute load average when the run started (``"load_average"``
        is the one at its end).
    seed : int, optional
        The run's ``--seed``.
    quick : bool, optional
        Whether it was a ``--quick`` run.
    """
    out = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": cpu_count(),
        "threads": threads,
        "load_average": load_average(),
        "versions": versions(tuple(PACKAGES) + tuple(p for p in packages if p not in PACKAGES), python=True),
    }
    if load_before is not None:
        out["load_before"] = load_before
    if seed is not None:
        out["seed"] = seed
    if quick is not None:
        out["quick"] = bool(quick)
    return out


def describe(env):
    """One sentence for the results files."""
    ver = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v)
    threads = env["threads"] if env.get("threads") is not None else "default"
    if "load_before" in env:
        load = f"load average {env['load_before']:.1f} before and {env['load_average']:.1f} after the run"
    else:  # recorded before the harness kept the load at the start
        load = f"load average {env['load_average']:.1f} at the end"
    run = ("quick run, " if env.get("quick") else "") + (f"seed {env['seed']}, " if "seed" in env else "")
    return (
        f"Environment: {env['date']}, {env['cpu_count']} CPUs ({env['cpu_model']}), {threads} thread(s), "
        f"{run}{load}; {ver}."
    )


# ---------------------------------------------------------------- reading the record back
def recorded(result, key, default=None):
    """What the harness recorded of ``result``'s run under ``key`` (``"seed"``, ``"quick"``, ...).

    Results stored before the harness kept it hold it at their top level; it is read there then.
    """
    env = result.get("environment") or {}
    return env[key] if key in env else result.get(key, default)


def was_quick(result):
    """Whether ``result`` comes from a ``--quick`` run."""
    return bool(recorded(result, "quick", False))


def same_run(result, seed, quick):
    """Whether the stored ``result`` ran with ``seed`` and, quick or not, as ``quick`` (its parts may be kept)."""
    return recorded(result, "seed") == seed and was_quick(result) == bool(quick)


def loads(result):
    """``(before, after)``: the 1-minute load average the harness recorded at the start and the end of the run
    that wrote ``result``; None for a result stored before it recorded both (the benchmark's own keys then)."""
    env = result.get("environment") or {}
    return (env["load_before"], env["load_average"]) if "load_before" in env else None


def load_after(result, own):
    """The load average at the end of the run that wrote ``result``.

    ``own(result)`` gives it for a result stored before the harness recorded
    the load at the start and the end: what the benchmark kept itself.
    """
    pair = loads(result)
    return pair[1] if pair is not None else own(result)


def session_loads(result):
    """``result["sessions"]``, each with its ``"load_average"`` (before, after).

    A benchmark that merges the fits of several runs into one result keeps
    one session per run. The last one is the run that the harness recorded
    (:func:`loads`); the earlier ones were given theirs when a later run
    merged them (by this function: ``result["sessions"] = session_loads(previous)``),
    or stored their own before the harness recorded the load.
    """
    sessions = [dict(s) for s in result.get("sessions", [])]
    if sessions and "load_average" not in sessions[-1]:
        sessions[-1]["load_average"] = list(loads(result) or (float("nan"), float("nan")))
    return sessions


def session_text(session):
    """``"<runtime> s, load average <before> before, <after> after"``: one session of :func:`session_loads`."""
    before, after = session["load_average"]
    return f"{session['runtime_s']:.0f} s, load average {before:.1f} before, {after:.1f} after"


def part_loads(result, part):
    """``(before, after)`` of the run that measured ``part`` of ``result`` (see :func:`keep_parts`), or None."""
    kept = result.get("kept_records", {}).get(part)
    return loads({"environment": kept}) if kept is not None else loads(result)


def keep_parts(previous, result, parts):
    """Carry ``parts`` (keys) of the stored ``previous`` result into the new ``result``, with the harness's
    record of the run that measured each (``result["kept_records"]``), so that the page quotes the load of
    that run (:func:`part_loads`) and not of the run that kept it. Returns ``result``.
    """
    env = previous.get("environment")
    for part in parts:
        if part not in previous:
            continue
        result[part] = previous[part]
        kept = previous.get("kept_records", {}).get(part, env)
        if kept is not None:
            result.setdefault("kept_records", {})[part] = kept
    return result
