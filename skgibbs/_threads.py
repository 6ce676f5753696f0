"""torch's thread count, set deliberately (:doc:`/developers`, Rules).

The rule, in :func:`thread_count`: a gradient smaller than
:data:`THREAD_WORK` (rows times weights times chains in one batch) runs on
one thread; a larger one uses the thread budget, shared out among the
worker processes that run at once. The budget is ``torch.get_num_threads()``
when the fit starts: the machine's cores by default, or what the user set
with ``torch.set_num_threads`` (respected as a ceiling), or what joblib's
loky backend allows each of its workers (``cpu_count() // n_jobs``) under
``GridSearchCV(n_jobs=...)``.
"""

import contextlib

import torch

__all__ = ["THREAD_WORK", "thread_count", "gradient_work", "torch_threads"]

#: Work of one gradient (rows in the batch x weights x chains batched together)
#: from which the thread budget is used. The value is a choice, not a
#: measurement: a few milliseconds of one core (the default 100-100 network on
#: 4,000 rows), long matrix products that threads can share on free cores.
#: Whether two threads win on a given machine is what the ``gradient_rate``
#: benchmark's thread-crossover table shows; on a shared machine,
#: ``torch.set_num_threads(1)`` before ``fit`` keeps every gradient on one
#: thread.
THREAD_WORK = 50_000_000


def gradient_work(n_rows, n_params, n_chains=1):
    """Work of one gradient: rows in the batch x weights x chains batched together.

    Examples
    --------
    >>> gradient_work(10_000, 12_301)
    123010000
    """
    return round(n_rows * n_params * n_chains)


def thread_count(work=None, n_workers=1, budget=None):
    """torch threads for each of ``n_workers`` processes running a gradient of size ``work``.

    Parameters
    ----------
    work : float or None, default=None
        Rows x weights x chains of one gradient (:func:`gradient_work`);
        None for work of unknown or small size.
    n_workers : int, default=1
        Processes (or threads) that run such gradients at the same time,
        e.g. the joblib jobs of ``n_jobs``.
    budget : int, default=None
        Threads to share out; ``torch.get_num_threads()`` when None.

    Returns
    -------
    int
        1 when ``work`` is None or below :data:`THREAD_WORK`; otherwise
        ``budget // n_workers``, at least 1, so that the workers together
        never use more threads than the budget.

    Examples
    --------
    >>> thread_count(work=10_000 * 12_301, n_workers=1, budget=8)
    8
    >>> thread_count(work=10_000 * 12_301, n_workers=3, budget=8)
    2
    >>> thread_count(work=128 * 12_301, budget=8)
    1
    """
    if work is None or work < THREAD_WORK:
        return 1
    budget = torch.get_num_threads() if budget is None else int(budget)
    return max(1, budget // max(1, int(n_workers)))


@contextlib.contextmanager
def torch_threads(device=None, work=None, n_workers=1):
    """Run torch on :func:`thread_count` CPU threads inside the block, then restore the count.

    Parameters
    ----------
    device : str or torch.device, default=None
        On a GPU device nothing changes.
    work, n_workers
        As in :func:`thread_count`; the budget is the thread count on entry.
        Without ``work`` the block runs on one thread: small matmuls run
        slower on two threads than on one, and a busy second core collapses
        two spinning OpenMP threads.

    Notes
    -----
    The thread count can change the rounding of large reductions and matrix
    products, so draws above :data:`THREAD_WORK` are reproducible for the
    same thread budget, not across budgets.
    """
    before = torch.get_num_threads()
    if device is None or torch.device(device).type == "cpu":
        torch.set_num_threads(thread_count(work, n_workers, before))
    try:
        yield
    finally:
        torch.set_num_threads(before)
