"""torch's thread count, set deliberately (:doc:`/developers`, Rules)."""

import contextlib

import torch

__all__ = ["torch_threads"]


@contextlib.contextmanager
def torch_threads(device=None):
    """Run torch on one CPU thread inside the block, then restore the count.

    Small matmuls run slower on two threads than on one, and a busy second
    core collapses two spinning OpenMP threads. On a GPU device nothing
    changes.
    """
    before = torch.get_num_threads()
    if device is None or torch.device(device).type == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
