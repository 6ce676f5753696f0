"""Priors on the flat parameters of a network.

:class:`Prior` is the flat prior, a Gaussian ``N(0, diag(std^2))`` or the
uniform box ``[-B, B]^Q`` of paper 000 §2.1 (or the Gaussian restricted to
the box); :class:`MixingPrior` is the sparse mixing prior (2.4) of paper 001
over active sets, sampled by reversible jump. Both give ``log Pi`` and its
gradient on ``(K, Q)`` tensors; the kernels reach them through a
:class:`~skgibbs.samplers.Target`. :class:`HierarchicalPrior` gives groups
of parameters a shared Gaussian precision with a Gamma prior (Neal, 1996),
drawn by Gibbs steps between HMC transitions
(:mod:`skgibbs.samplers.hmc.gibbs`).
"""

import math
from typing import NamedTuple

import numpy as np
import torch

from ._random import normal, uniform, uniforms

__all__ = ["Prior", "MixingPrior", "HierarchicalPrior", "PRIOR_KINDS"]


def _variance(std, n_params, dtype, device):
    """``std^2`` of every parameter, shape ``(n_params,)``; ones where there is no ``std`` (a flat prior)."""
    if std is None:
        return torch.ones(n_params, dtype=dtype, device=device)
    std = torch.as_tensor(std, dtype=dtype, device=device)
    return (std * std).expand(n_params).clone()


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

    def variance(self, n_params, dtype=torch.float64, device=None):
        """The prior's variance of every parameter, shape ``(n_params,)`` (ones under a flat prior).

        The reference scale of the kernels' metrics and preconditioners.
        """
        return _variance(self.std, n_params, dtype, device)

    def sample(self, generators, n_params, like):
        """One exact draw per generator, ``(len(generators), n_params)`` with ``like``'s dtype and device.

        Draw ``k`` reads ``generators[k]`` only: ``N(0, diag(std^2))``, each
        coordinate outside the box ``[-B, B]`` drawn again until inside (the
        Gaussian restricted to the box). Needs ``std``.
        """
        std = torch.as_tensor(self.std, dtype=like.dtype, device=like.device).expand(n_params)
        theta = normal(generators, n_params, like) * std
        if self.bound is not None:
            for k, g in enumerate(generators):
                outside = theta[k].abs() > self.bound
                while bool(outside.any()):
                    fresh = torch.randn(int(outside.sum()), generator=g, dtype=like.dtype, device=like.device)
                    theta[k, outside] = fresh * std[outside]
                    outside = theta[k].abs() > self.bound
        return theta


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
    power : float in [0, 1], default=1.0
        The geometric bridge between this prior (``power = 1``) and the
        *reference* ``Pi_0`` in which every coordinate is active with
        probability ``reference``, independently (given ``|I| >= 1``), the
        active values from the same ``p_i``: the density is
        ``Pi^power Pi_0^(1 - power)`` up to a constant, a mixing prior whose
        weight of a set of size ``k`` is
        ``power log(s^(-k) / binom(Q, k)) + (1 - power) k log(r / (1 - r))``
        (``r = reference``). Tempered SMC moves its particles along it
        (:mod:`skgibbs.samplers.smc.sparse`); the reversible-jump chains
        sample ``power = 1``.
    reference : float in (0, 1), default=0.5
        ``r``, the reference's probability that a coordinate is active.
    """

    base: Prior
    sparsity: float = 2.0
    power: float = 1.0
    reference: float = 0.5

    def variance(self, n_params, dtype=torch.float64, device=None):
        """The base density's variance of every parameter, shape ``(n_params,)``: the kernels' reference scale."""
        return self.base.variance(n_params, dtype, device)

    def check(self):
        """Raise ValueError unless the prior is proper and ``s >= 2``."""
        if self.base.std is None and self.base.bound is None:
            raise ValueError(
                "The mixing prior needs a proper density on the active weights: give prior_std "
                "(Gaussian) or weight_bound (uniform on [-B, B])."
            )
        if not self.sparsity >= 2:
            raise ValueError(f"sparsity must be >= 2 (paper 001 (2.4)), got {self.sparsity!r}.")
        if not (0 <= self.power <= 1 and 0 < self.reference < 1):
            raise ValueError(
                f"power must be in [0, 1] and reference in (0, 1), got {self.power!r} and {self.reference!r}."
            )
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

        ``C_s`` is dropped: it is the same for every ``k``. On the bridge
        (``power < 1``), ``power`` times this plus ``(1 - power) k log(r / (1 - r))``.
        """
        log_s, top = math.log(self.sparsity), math.lgamma(n_params + 1)
        out = [
            -size * log_s - top + math.lgamma(size + 1) + math.lgamma(n_params - size + 1)
            if size >= 1
            else -math.inf
            for size in k
        ]
        if self.power == 1:
            return out
        logit = math.log(self.reference / (1.0 - self.reference))
        return [self.power * w + (1.0 - self.power) * size * logit for w, size in zip(out, k)]

    def log_size_step(self, k, n_params):
        """``log_size_weight(k + 1) - log_size_weight(k)`` for sizes ``k`` (a float64 array), an array.

        What one more active coordinate changes in ``log Pi`` besides its
        ``log p_i``: ``-log s + log((k + 1) / (Q - k))`` at ``power = 1``.
        """
        k = np.asarray(k, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.log((k + 1) / (n_params - k)) - math.log(self.sparsity)
        if self.power == 1:
            return step
        return self.power * step + (1.0 - self.power) * math.log(self.reference / (1.0 - self.reference))

    def reference_log_ratio(self, k, n_params):
        """``log Pi(I) - log Pi_0(I)`` of active sets of sizes ``k`` (a tensor), both normalised; float64.

        ``Pi(I) = s^(-k) / (C_s binom(Q, k))`` and ``Pi_0(I) = r^k (1 -
        r)^(Q - k) / (1 - (1 - r)^Q)``: the log ratio of the two ends of the
        bridge (the densities ``p_i`` of the values cancel). Tempered SMC's
        weights add it to ``-lambda R_n`` along the bridge.
        """
        Q, s, r = n_params, float(self.sparsity), float(self.reference)
        k = k.to(torch.float64)
        log_c = math.log1p(-(s ** -float(Q))) - math.log(s - 1.0)  # C_s = (1 - s^-Q) / (s - 1)
        log_binom = math.lgamma(Q + 1) - torch.lgamma(k + 1) - torch.lgamma(Q - k + 1)
        log_pi = -k * math.log(s) - log_binom - log_c
        log_pi0 = k * math.log(r) + (Q - k) * math.log1p(-r) - math.log1p(-((1.0 - r) ** Q))
        return log_pi - log_pi0

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

    def active_norm(self, active, like):
        """``sum_{i in I} log c_i`` per chain ``(K,)``, the normalising constants of the active
        coordinates when they differ (None when :meth:`size_part` holds them): fixed while the
        active sets are, so a move inside the sets computes it once."""
        if self.base.std is None or self._scalar_log_norm() is not None:
            return None
        return (active.to(like.dtype) * self._log_norm(like)).sum(1)

    def coordinate_part(self, theta, active, norm=None):
        """The rest of ``log Pi``, shape ``(K,)``: ``log Pi(theta) - size_part``.

        ``theta`` must be zero off ``active``; ``-inf`` outside the box.
        ``norm`` is :meth:`active_norm` of ``active`` when known.
        """
        std, bound = self.base.std, self.base.bound
        if std is None:
            per = torch.zeros(theta.shape[0], dtype=theta.dtype, device=theta.device)
        else:
            # inactive coordinates are exact zeros: the quadratic term needs no mask
            per = ((theta / std) ** 2).sum(1).mul_(-0.5)
            norm = self.active_norm(active, theta) if norm is None else norm
            if norm is not None:
                per = per - norm
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

    def sample(self, generators, n_params, like):
        """One exact draw of the mixing prior per generator, ``(len(generators), n_params)``.

        Draw ``k`` reads ``generators[k]`` only: the size ``|I|`` with
        probability ``s^(-|I|) / C_s`` (``|I| = 1, ..., Q``, by inverting the
        distribution function at one uniform; on the bridge, ``binom(Q, |I|)``
        times ``exp(log_size_weight)``, e.g. Binomial(``Q``, ``r``) given
        ``|I| >= 1`` at ``power = 0``), the set uniformly among those of that
        size (the first ``|I|`` entries of a random permutation), and its
        values from ``p_i`` (:meth:`Prior.sample`, or uniform on ``[-B,
        B]``); the other coordinates are exact zeros. The starting particles
        of tempered SMC on a sparse network.

        Examples
        --------
        >>> import torch
        >>> prior = MixingPrior(Prior(std=1.0), sparsity=2.0)
        >>> gens = [torch.Generator().manual_seed(k) for k in range(4000)]
        >>> theta = prior.sample(gens, 5, torch.empty(0, dtype=torch.float64))
        >>> size = float((theta != 0).sum(1).double().mean())  # E|I| = 57 / 31 at s = 2, Q = 5
        >>> abs(size - 57 / 31) < 0.05
        True
        """
        self.check()
        K = len(generators)
        sizes = list(range(1, n_params + 1))
        log_w = torch.tensor(self.log_size_weight(sizes, n_params), dtype=torch.float64, device=like.device)
        log_w = log_w + torch.tensor(  # the number of sets of each size
            [math.lgamma(n_params + 1) - math.lgamma(k + 1) - math.lgamma(n_params - k + 1) for k in sizes],
            dtype=torch.float64,
            device=like.device,
        )
        cdf = torch.cumsum(torch.softmax(log_w, 0), 0)
        sizes = torch.searchsorted(cdf, uniform(generators, cdf)).clamp_max(n_params - 1) + 1
        active = torch.zeros(K, n_params, dtype=torch.bool, device=like.device)
        for k, g in enumerate(generators):
            active[k, torch.randperm(n_params, generator=g, device=like.device)[: int(sizes[k])]] = True
        if self.base.std is None:
            values = (2.0 * uniforms(generators, n_params, like) - 1.0) * self.base.bound
        else:
            values = self.base.sample(generators, n_params, like)
        return torch.where(active, values, torch.zeros((), dtype=like.dtype, device=like.device))


#: the ``prior`` options of the dense estimators
PRIOR_KINDS = ("fixed", "layer", "ard")


class HierarchicalPrior(NamedTuple):
    r"""Gaussian priors whose precisions are parameters with Gamma priors (Neal, 1996, ch. 2).

    Parameter ``j`` of group ``g = group[j] >= 0`` is ``N(0, 1 / tau_g)``
    given the group's precision ``tau_g``, and

    .. math::

        \tau_g \sim \mathrm{Gamma}(a_g, b_g), \qquad
        \tau_g \mid \theta \sim \mathrm{Gamma}\Big(a_g + \frac{n_g}{2},\;
        b_g + \frac12 \sum_{j : g(j) = g} \theta_j^2\Big)

    (shape, rate; ``n_g`` parameters in the group), the conditional a Gibbs
    step draws exactly. A parameter with ``group[j] = -1`` keeps the fixed ``N(0, std_j^2)``. With
    ``noise_shape`` given, the squared loss is a Gaussian likelihood whose
    precision ``s`` (of the standardized targets) has the prior
    ``Gamma(noise_shape, noise_rate)`` and the conditional
    ``Gamma(noise_shape + n / 2, noise_rate + sum_i l_i / 2)``.

    Parameters
    ----------
    group : torch.Tensor of shape (Q,), long
        The group of each parameter, ``-1`` for none.
    shape, rate : torch.Tensor of shape (G,)
        ``a_g`` and ``b_g``; the prior mean of ``tau_g`` is ``a_g / b_g``.
    std : torch.Tensor of shape (Q,)
        The fixed prior's standard deviation of every parameter: the scale
        of the ungrouped ones, and the one the grouped precisions centre on
        (``b_g = a_g std_g^2``), which also serves as the reference metric.
    names : tuple of str
        A name per group.
    noise_shape, noise_rate : float or None
        The Gamma prior of the noise precision; None keeps the temperature
        fixed.

    Examples
    --------
    >>> import torch
    >>> from skgibbs.model import MLPSpec
    >>> prior = HierarchicalPrior.for_network(MLPSpec(3, (4,), "tanh"), "ard", torch.ones(21), 0.5)
    >>> prior.names
    ('input 0', 'input 1', 'input 2', 'biases 1', 'output weights', 'output biases')
    >>> prior.conditional(torch.zeros(1, 21))[0].tolist()   # a_g + n_g / 2
    [2.5, 2.5, 2.5, 2.5, 2.5, 1.0]
    """

    group: torch.Tensor
    shape: torch.Tensor
    rate: torch.Tensor
    std: torch.Tensor
    names: tuple
    noise_shape: float = None
    noise_rate: float = None

    # -- construction ---------------------------------------------------------
    @classmethod
    def for_network(cls, spec, kind, std, shape, noise=False, input_names=None):
        """The groups of ``prior=kind`` on an :class:`~skgibbs.model.MLPSpec` network.

        ``"layer"``: one precision for each layer's weights and one for its
        biases; ``"ard"``: as ``"layer"``, with the first layer's weights
        split into one group per input (the weights out of input ``i``);
        ``"fixed"``: no group (the noise precision only). An input
        embedding (:class:`~skgibbs.model.NumericEmbedding`) adds one group
        per kind of its parameters (``"embedding frequencies"``,
        ``"embedding weights"``, ``"embedding biases"``) after the others;
        under ``"ard"`` input ``i``'s group is then the first dense layer's
        weights out of its embedded values. ``std`` ``(Q,)``
        is the fixed prior's scale (``1 / sqrt(fan_in)`` by default, Neal's
        scaling of the widths with the number of units feeding a layer),
        which each group's Gamma prior takes as its mean precision
        ``1 / std^2``; ``shape`` is every ``a_g``. With ``noise``, the noise
        precision gets ``Gamma(shape, shape)`` (mean 1 on standardized targets).
        The groups of the inputs are named ``"input <name>"`` after
        ``input_names`` (``"input <index>"`` without).
        """
        if kind not in PRIOR_KINDS:
            raise ValueError(f"prior must be one of {PRIOR_KINDS}, got {kind!r}.")
        Q = spec.n_params
        std = torch.as_tensor(std, dtype=torch.float64).expand(Q).clone()
        group = torch.full((Q,), -1, dtype=torch.long)
        names = []
        if kind != "fixed":
            layers = list(spec._slices())
            for layer, (n_in, n_out, w, b) in enumerate(layers):
                last = layer == len(layers) - 1
                if kind == "ard" and layer == 0:
                    # input i's rows: its own, or those of its embedded values
                    per = 1 if spec.embedding is None else spec.embedding.d_embedding
                    rows = torch.arange(w.start, w.stop).view(spec.n_features, per * n_out)
                    for i in range(spec.n_features):
                        group[rows[i]] = len(names)
                        names.append(f"input {i if input_names is None else input_names[i]}")
                else:
                    group[w] = len(names)
                    names.append("output weights" if last else f"weights {layer + 1}")
                group[b] = len(names)
                names.append("output biases" if last else f"biases {layer + 1}")
            # the embedding's groups come last, so that the inputs' stay the first n_features
            for part, where in ({} if spec.embedding is None else spec.embedding.slices()).items():
                group[where] = len(names)
                names.append(f"embedding {part}")
        G = len(names)
        # each group's mean prior variance: the fixed prior's scale
        grouped = group >= 0
        counts = torch.zeros(G, dtype=torch.float64).index_add_(0, group[grouped], grouped[grouped].double())
        variance = torch.zeros(G, dtype=torch.float64).index_add_(0, group[grouped], std[grouped].square())
        a = torch.full((G,), float(shape), dtype=torch.float64)
        noise_shape = float(shape) if noise else None
        return cls(group, a, a * variance / counts.clamp(min=1), std, tuple(names), noise_shape, noise_shape)

    # -- what the kernels use ---------------------------------------------------
    def variance(self, n_params, dtype=torch.float64, device=None):
        """``std^2`` of every parameter, shape ``(n_params,)``: the reference scale of the kernels' metrics."""
        return _variance(self.std, n_params, dtype, device)

    @property
    def n_groups(self):
        return len(self.names)

    @property
    def learns_noise(self):
        return self.noise_shape is not None

    def counts(self):
        """``n_g``, the parameters in each group, ``(G,)``."""
        g = self.group[self.group >= 0]
        return torch.zeros(self.n_groups, dtype=torch.float64, device=g.device).index_add_(
            0, g, torch.ones(g.shape, dtype=torch.float64, device=g.device)
        )

    def sum_squares(self, theta):
        """``sum_{j in g} theta_j^2`` per chain and group, ``(K, G)`` in float64."""
        grouped = (self.group >= 0).to(theta.device)
        sq = theta.detach().to(torch.float64)[:, grouped].square()
        out = torch.zeros(theta.shape[0], self.n_groups, dtype=torch.float64, device=theta.device)
        return out.index_add_(1, self.group.to(theta.device)[grouped], sq)

    def conditional(self, theta):
        """Shape ``(G,)`` and rates ``(K, G)`` of the Gamma conditionals of the precisions given ``theta``."""
        shape = self.shape.to(theta.device) + 0.5 * self.counts().to(theta.device)
        return shape, self.rate.to(theta.device) + 0.5 * self.sum_squares(theta)

    def mean_precision(self):
        """The prior mean ``a_g / b_g`` of each group's precision, ``(G,)``."""
        return self.shape / self.rate

    def parameter_precision(self, precision):
        """Every parameter's prior precision ``(K, Q)`` given the groups' ``(K, G)``, in their dtype."""
        g = self.group.to(precision.device)
        fixed = self.std.to(precision.device, precision.dtype).pow(-2)
        if self.n_groups == 0:
            return fixed.expand(precision.shape[0], -1)
        return torch.where(g >= 0, precision[:, g.clamp(min=0)], fixed)

    def log_density(self, theta, precision):
        """``log p(theta | tau) + log p(tau)`` up to a constant, ``(K,)``; ``precision`` ``(K, G)``."""
        prec = self.parameter_precision(precision.to(theta.dtype))
        out = 0.5 * (torch.log(prec) - prec * theta * theta).sum(1)
        if self.n_groups:
            tau = precision.to(torch.float64)
            shape, rate = self.shape.to(tau.device), self.rate.to(tau.device)
            out = out + ((shape - 1.0) * torch.log(tau) - rate * tau).sum(1).to(out.dtype)
        return out
