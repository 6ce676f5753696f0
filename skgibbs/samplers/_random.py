"""Randomness of the kernels: every draw from the chains' own generators.

Chain ``k`` draws only from ``generators[k]`` (:doc:`/developers`:
one ``torch.Generator`` per chain, the global RNG never touched), so that a
chain's path does not depend on how many chains run beside it. A single
chain draws with one call (no stacking), which keeps its stream identical
whether it runs alone or in a group of one.
"""

import torch

from ..potential import Batch

__all__ = ["normal", "uniform", "uniforms", "select", "draw_batch"]


def normal(generators, shape, like):
    """``(K, shape)`` standard normals, row ``k`` from ``generators[k]``."""
    if len(generators) == 1:
        return torch.randn(1, shape, generator=generators[0], dtype=like.dtype, device=like.device)
    return torch.stack([torch.randn(shape, generator=g, dtype=like.dtype, device=like.device) for g in generators])


def uniform(generators, like):
    """``(K,)`` uniforms on (0, 1), entry ``k`` from ``generators[k]``."""
    if len(generators) == 1:
        return torch.rand(1, generator=generators[0], dtype=like.dtype, device=like.device)
    return torch.cat([torch.rand(1, generator=g, dtype=like.dtype, device=like.device) for g in generators])


def uniforms(generators, n, like):
    """``(K, n)`` uniforms, row ``k`` from ``generators[k]``."""
    if len(generators) == 1:
        return torch.rand(1, n, generator=generators[0], dtype=like.dtype, device=like.device)
    return torch.stack([torch.rand(n, generator=g, dtype=like.dtype, device=like.device) for g in generators])


def select(mask, new, old):
    """Row-wise ``new if mask else old`` over the fields of two States of the same type."""
    if mask.numel() == 1:  # one chain: pick, don't blend
        return new if bool(mask) else old
    out = []
    for a, b in zip(new, old):
        m = mask.view(-1, *([1] * (a.dim() - 1)))
        out.append(torch.where(m, a, b))
    return type(old)(*out)


def draw_batch(generators, n, rho, device=None):
    """Bernoulli(rho) index sets, one per chain and generator (Alg. 1 (c)(i)).

    Batches are gathered by index, never by masking the full data (:doc:`/developers`, Rules).
    """
    if rho >= 1.0:
        return Batch(None, None, torch.full((len(generators),), n, device=device))
    rows = [_bernoulli_indices(g, n, rho, device) for g in generators]
    sizes = torch.tensor([len(r) for r in rows], device=device)
    if len(rows) == 1:
        return Batch(rows[0][None], None, sizes)
    m = max(int(sizes.max()), 1)
    idx = torch.zeros(len(rows), m, dtype=torch.long, device=device)
    mask = torch.zeros(len(rows), m, device=device)
    for k, r in enumerate(rows):
        idx[k, : len(r)] = r
        mask[k, : len(r)] = 1.0
    return Batch(idx, mask, sizes)


def _bernoulli_indices(generator, n, rho, device=None):
    """Indices ``{i : Z_i = 1}`` of ``Z ~ Ber(rho)^n`` in O(n rho) work.

    The gaps between successive successes of a Bernoulli sequence are i.i.d.
    Geometric(rho), so the index set is the running sum of geometric draws
    that stays below n: the same law as thresholding n uniforms, without
    touching all n of them.
    """
    mean = n * rho
    chunk = int(mean + 6.0 * (mean * (1 - rho)) ** 0.5 + 16)
    parts, last = [], 0
    while True:
        gaps = torch.empty(chunk, device=device).geometric_(rho, generator=generator)
        # the gaps are whole numbers: summed as integers, shifted in place
        pos = torch.cumsum(gaps, 0, dtype=torch.long).add_(last - 1)
        parts.append(pos)
        end = int(pos[-1])
        if end >= n - 1:
            break
        last = end + 1
    pos = torch.cat(parts) if len(parts) > 1 else parts[0]
    return pos[: int(torch.searchsorted(pos, n))]
