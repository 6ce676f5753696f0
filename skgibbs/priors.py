"""Priors on the flat parameters of a network.

:class:`Prior` is the flat prior, a Gaussian ``N(0, diag(std^2))`` or the
uniform box ``[-B, B]^Q`` of paper 000 §2.1 (or the Gaussian restricted to
the box); :class:`MixingPrior` is the sparse mixing prior (2.4) of paper 001
over active sets, sampled by reversible jump. Both give ``log Pi`` and its
gradient on ``(K, Q)`` tensors; the kernels reach them through a
:class:`~skgibbs.samplers.Target`.
"""

import math
from typing import NamedTuple

import torch

__all__ = ["Prior", "MixingPrior"]


class Prior(NamedTuple):
    """Prior on the flat parameters.

    Parameters
    ----------
    std : float, torch.Tensor of shape (Q,) or None
        ``None`` is the flat prior; otherwise the Gaussian
        ``N(0, diag(std**2))``.
    bound : float or None
        ``B`` of the uniform box ``[-B, B]^Q`` (paper 000 §2.1); proposals
        outside are rejected. ``None`` is no box.
    """

    std: float = None
    bound: float = None

    def log_density(self, theta):
        """``log Pi(theta)`` up to a constant, ``-inf`` outside the box; shape ``(K,)``."""
        out = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
        if self.std is not None:
            out = out - 0.5 * ((theta / self.std) ** 2).sum(1)
        if self.bound is not None:
            inside = (theta.abs() <= self.bound).all(1)
            out = torch.where(inside, out, torch.full_like(out, -torch.inf))
        return out

    def grad_log_density(self, theta):
        if self.std is None:
            return None
        return -theta / self.std**2


class MixingPrior(NamedTuple):
    r"""Mixing prior over sparse active sets, (2.4) of paper 001.

    The active set ``I = {i : theta_i != 0}`` has size ``k = |I| >= 1`` with
    probability proportional to ``s^(-k)``, given ``k`` it is uniform over
    the ``binom(Q, k)`` sets of that size, and given ``I`` the active
    coordinates are independent with density ``p_i`` (``base``) while the
    others are exactly zero. With respect to the sum over ``I`` of Lebesgue
    measure on ``R^I``, the density is

    .. math::

        \Pi(\theta) = \frac{s^{-k}}{C_s \binom{Q}{k}} \prod_{i \in I} p_i(\theta_i),
        \qquad C_s = \frac{1 - s^{-Q}}{s - 1},

    where ``p_i`` is the uniform density ``1 / (2B)`` on ``[-B, B]`` (paper
    001, ``base = Prior(bound=B)``), the Gaussian ``N(0, std_i^2)``
    (``base = Prior(std)``), or that Gaussian truncated to ``[-B, B]`` (both).
    Unlike :class:`Prior`, every constant that depends on ``k`` is kept:
    reversible-jump moves compare densities on spaces of different dimension.

    Parameters
    ----------
    base : Prior
        Density of one active coordinate; it must be proper (``std`` or
        ``bound`` given).
    sparsity : float >= 2
        ``s``; larger values favour sparser networks.
    """

    base: Prior
    sparsity: float = 2.0

    def check(self):
        """Raise ValueError unless the prior is proper and ``s >= 2``."""
        if self.base.std is None and self.base.bound is None:
            raise ValueError(
                "The mixing prior needs a proper density on the active weights: give prior_std "
                "(Gaussian) or weight_bound (uniform on [-B, B])."
            )
        if not self.sparsity >= 2:
            raise ValueError(f"sparsity must be >= 2 (paper 001 (2.4)), got {self.sparsity!r}.")
        return self

    def _log_norm(self, like):
        """``-log`` of each active coordinate's normalising constant, ``(Q,)`` or a float."""
        std, bound = self.base.std, self.base.bound
        if std is None:
            return math.log(2.0 * bound)
        std = torch.as_tensor(std, dtype=like.dtype, device=like.device)
        out = torch.log(std) + 0.5 * math.log(2.0 * math.pi)
        if bound is not None:  # truncated to [-B, B]: divide by its mass
            out = out + torch.log(torch.special.erf(bound / (std * math.sqrt(2.0))))
        return out

    def coordinate_log_density(self, theta):
        """``log p_i(theta_i)`` of every coordinate as if active, normalised; shape ``(K, Q)``."""
        std, bound = self.base.std, self.base.bound
        out = -torch.as_tensor(self._log_norm(theta), dtype=theta.dtype, device=theta.device).expand_as(theta)
        if std is not None:
            out = out - 0.5 * (theta / torch.as_tensor(std, dtype=theta.dtype, device=theta.device)) ** 2
        if bound is not None:
            out = torch.where(theta.abs() <= bound, out, -torch.inf)
        return out

    def log_size_weight(self, k, n_params):
        """``log(s^(-k) / binom(Q, k))`` per chain for sizes ``k`` (a list of int); ``-inf`` for ``k = 0``.

        ``C_s`` is dropped: it is the same for every ``k``.
        """
        log_s, top = math.log(self.sparsity), math.lgamma(n_params + 1)
        return [
            -size * log_s - top + math.lgamma(size + 1) + math.lgamma(n_params - size + 1)
            if size >= 1
            else -math.inf
            for size in k
        ]

    def _scalar_log_norm(self):
        """The ``-log`` normalising constant shared by every coordinate, or None when it varies."""
        std, bound = self.base.std, self.base.bound
        if std is None:
            return math.log(2.0 * bound)
        if torch.is_tensor(std) and std.numel() > 1:
            return None
        std = float(std)
        out = math.log(std) + 0.5 * math.log(2.0 * math.pi)
        return out if bound is None else out + math.log(math.erf(bound / (std * math.sqrt(2.0))))

    def size_part(self, k, n_params):
        """The part of ``log Pi`` that depends on ``theta`` only through ``k = |I|``, per chain (list).

        ``log(s^(-k) / binom(Q, k))``, and ``-k log c`` when every active
        coordinate has the same normalising constant ``c`` (``2B`` for the
        uniform density, ``std sqrt(2 pi)`` for one Gaussian scale).
        """
        sizes = self.log_size_weight(k, n_params)
        c = self._scalar_log_norm()
        return sizes if c is None else [w - size * c for w, size in zip(sizes, k)]

    def coordinate_part(self, theta, active):
        """The rest of ``log Pi``, shape ``(K,)``: ``log Pi(theta) - size_part``.

        ``theta`` must be zero off ``active``; ``-inf`` outside the box.
        """
        std, bound = self.base.std, self.base.bound
        if std is None:
            per = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
        else:
            # inactive coordinates are exact zeros: the quadratic term needs no mask
            per = ((theta / std) ** 2).sum(1).mul_(-0.5)
            if self._scalar_log_norm() is None:
                per = per - (active.to(theta.dtype) * self._log_norm(theta)).sum(1)
        if bound is not None:
            per = torch.where((theta.abs() <= bound).all(1), per, -torch.inf)
        return per

    def log_density(self, theta, active=None, k=None):
        """``log Pi(theta)`` up to ``-log C_s``, shape ``(K,)``.

        ``theta`` must be zero off ``active``, which defaults to ``theta !=
        0``; ``k`` (list of int), the sizes of the active sets, is counted
        from ``active`` when None.
        """
        active = theta != 0 if active is None else active
        k = active.sum(1).tolist() if k is None else k
        sizes = torch.tensor(self.size_part(k, theta.shape[1]), dtype=theta.dtype, device=theta.device)
        return self.coordinate_part(theta, active) + sizes

    def grad_log_density(self, theta):
        """Gradient of ``sum_i log p_i(theta_i)`` (zero at inactive coordinates, which are 0)."""
        return self.base.grad_log_density(theta)
