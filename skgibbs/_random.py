"""Randomness of the kernels: every draw from the chains' own generators.

Chain ``k`` draws only from ``generators[k]`` (:doc:`/developers`:
one ``torch.Generator`` per chain, the global RNG never touched), so that a
chain's path does not depend on how many chains run beside it. A single
chain draws with one call (no stacking), which keeps its stream identical
whether it runs alone or in a group of one.
"""

from typing import NamedTuple

import torch

__all__ = ["Batch", "normal", "uniform", "uniforms", "gamma", "select", "draw_batch"]


class Batch(NamedTuple):
    """Index sets of K chains.

    ``idx`` is ``None`` for the full data. Otherwise ``idx`` has shape
    ``(K, m)``, padded where chains drew fewer points, and ``mask`` (shape
    ``(K, m)``, or ``None`` without padding) marks the real entries.
    ``size`` has shape ``(K,)``: the number of points ``|Z|_1`` of each chain.
    """

    idx: torch.Tensor = None
    mask: torch.Tensor = None
    size: torch.Tensor = None



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


def gamma(generators, concentration):
    """Standard Gamma draws of shapes ``concentration`` ``(K, G)``; row ``k`` from ``generators[k]``.

    Marsaglia and Tsang's (2000) squeeze-rejection method: for shape
    ``a >= 1``, with ``d = a - 1/3``, ``c = 1 / sqrt(9 d)``, ``x ~ N(0, 1)``
    and ``v = (1 + c x)^3 > 0``, ``d v`` is accepted when
    ``log u < x^2 / 2 + d - d v + d log v``; a shape ``a < 1`` draws with
    ``a + 1`` and multiplies by ``u^(1/a)``. Every rejected entry of a row
    is drawn again from that row's generator, so a chain's draws do not
    depend on the chains beside it. Computed in float64.

    Examples
    --------
    >>> import torch
    >>> g = [torch.Generator().manual_seed(0)]
    >>> x = gamma(g * 1, torch.full((1, 20000), 3.0))
    >>> round(float(x.mean()), 1)
    3.0
    """
    a = concentration.to(torch.float64)
    out = torch.empty_like(a)
    boost = a < 1.0
    a1 = torch.where(boost, a + 1.0, a)
    d = a1 - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    for k, g in enumerate(generators):
        todo = torch.ones(a.shape[1], dtype=torch.bool, device=a.device)
        while bool(todo.any()):
            idx = todo.nonzero()[:, 0]
            x = torch.randn(len(idx), generator=g, dtype=a.dtype, device=a.device)
            u = torch.rand(len(idx), generator=g, dtype=a.dtype, device=a.device)
            dk, ck = d[k, idx], c[k, idx]
            v = (1.0 + ck * x) ** 3
            safe = torch.where(v > 0, v, torch.ones_like(v))
            ok = (v > 0) & (torch.log(u) < 0.5 * x * x + dk - dk * safe + dk * torch.log(safe))
            out[k, idx[ok]] = (dk * v)[ok]
            todo[idx[ok]] = False
        if bool(boost[k].any()):
            idx = boost[k].nonzero()[:, 0]
            u = torch.rand(len(idx), generator=g, dtype=a.dtype, device=a.device)
            out[k, idx] = out[k, idx] * u ** (1.0 / a[k, idx])
    return out


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
