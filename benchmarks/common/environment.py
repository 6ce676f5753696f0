"""The one record of where a benchmark ran: versions, threads, CPU, load and date.

The harness adds :func:`record` to every result it writes (key
``"environment"``); benchmarks that quote versions or the machine in their
notes take them from :func:`versions` and :func:`machine_info` so that
every result file describes its environment the same way.
"""

import datetime
import os
import platform
from importlib import metadata

__all__ = ["PACKAGES", "cpu_model", "describe", "load_average", "machine_info", "record", "versions"]

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


def record(threads=None, packages=()):
    """The environment record of one run.

    Parameters
    ----------
    threads : int, optional
        The thread limit the harness set (torch and the BLAS pools).
    packages : iterable of str
        Optional packages to name beside :data:`PACKAGES`.
    """
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": cpu_count(),
        "threads": threads,
        "load_average": load_average(),
        "versions": versions(tuple(PACKAGES) + tuple(p for p in packages if p not in PACKAGES), python=True),
    }


def describe(env):
    """One sentence for the results files."""
    ver = ", ".join(f"{k} {v}" for k, v in env["versions"].items() if v)
    threads = env["threads"] if env.get("threads") is not None else "default"
    return (
        f"Environment: {env['date']}, {env['cpu_count']} CPUs ({env['cpu_model']}), {threads} thread(s), "
        f"load average {env['load_average']:.1f} at the end; {ver}."
    )
