r"""Moves along the rescaling symmetry of a ReLU network: exact draws where the likelihood is flat.

A hidden unit ``j`` with a positively homogeneous activation (ReLU, or
none) computes the same function when its incoming weights and bias are
multiplied by ``c > 0`` and its outgoing weights divided by ``c``:
``relu(c a) / c = relu(a)``. A whole hidden layer can be rescaled in the
same way. Along these orbits the likelihood does not change; only the prior
does, and under a hierarchical prior it leaves them nearly free (a
layer's weights can shrink while the next layer's grow, the group
precisions following). A gradient-based kernel walks such directions as
slowly as any other, at the step size that the sharp directions allow: on
the non-centred target of :mod:`~skgibbs.samplers.noncentered` the default
chains drifted along them for their whole run (one layer's log-precision
rising by 1.6 while the next one's fell by 1.4 over 175 draws of a chain),
and the function values at the training inputs drifted with them.

This module draws the position along each orbit from its exact
conditional, between two transitions of the kernel: the generalised Gibbs
step of Liu and Sabatti (2000, *Biometrika* 87, 353-369). For a group of
transformations ``x -> g_s(x)`` indexed by ``s`` in the real line (a
translation group, whose Haar measure is ``ds``), drawing ``s`` from

.. math::

    p(s) \propto \pi(g_s(x))\, |J_{g_s}(x)|

and moving to ``g_s(x)`` leaves ``pi`` invariant. In the coordinates
``x = (z, eta)`` of the non-centred target, ``theta_j = z_j exp(-eta_g /
2)``, with ``s = log c``:

* **a layer**: ``eta_g -> eta_g - 2 s`` for every group of the layer's
  incoming weights and biases, ``eta_g -> eta_g + 2 s`` for the group of
  its outgoing weights (a translation, ``|J| = 1``); the potential changes
  by the groups' Gamma priors alone, so ``log p(s) = 2 s (A_out - A_in) -
  B_in e^{-2s} - B_out e^{2s}`` with ``A = sum a_g`` and ``B = sum b_g
  e^{eta_g}`` over each side's groups;
* **a unit**: ``z -> c z`` on its incoming coordinates (``m_in`` of them,
  squared norm ``P``), ``z -> z / c`` on its outgoing ones (``m_out``,
  ``R``); ``|J| = c^{m_in - m_out}`` and ``log p(s) = (m_in - m_out) s -
  P e^{2s} / 2 - R e^{-2s} / 2``.

Both are ``log p(s) = alpha s - beta e^{-2s} - gamma e^{2s}``: strictly
log-concave, with a closed-form mode ``e^{2 s*} = (alpha + sqrt(alpha^2 +
16 beta gamma)) / (4 gamma)`` and curvature ``4 (beta e^{-2s*} + gamma
e^{2s*})`` there. Each draw is :data:`ROUNDS` independence
Metropolis-Hastings steps from a Student-t of :data:`PROPOSAL_DF` degrees of
freedom centred at the mode, with the Laplace approximation's standard
deviation widened by :data:`WIDEN`. A log-concave density has tails at
most exponential, which a t's polynomial tails dominate, so the ratio of
target to proposal is bounded and the chain on ``s`` is uniformly ergodic:
from a start deep in a tail it leaves at once (a Gaussian proposal, whose
tails are lighter than an exponential's, stuck there). Each step leaves
``p(s)`` invariant whatever the number of steps. The
layers are visited from the first to the last, each layer's move then its
units' moves (the units of a layer have disjoint coordinates, so they move
at once). No network is evaluated: only ``z``, ``eta`` and the priors'
constants enter, and the caller evaluates the potential once at the new
point.
"""

import torch

from .._random import normal, uniforms

__all__ = ["RescalingMoves", "draw_log_scale", "HOMOGENEOUS", "ROUNDS", "WIDEN", "PROPOSAL_DF"]

#: activations ``a`` with ``a(c t) = c a(t)`` for ``c > 0``: the moves apply
HOMOGENEOUS = ("relu", "identity")
#: independence Metropolis-Hastings steps per draw of ``s``
ROUNDS = 3
#: the proposal's scale over the Laplace approximation's standard deviation
WIDEN = 1.2
#: degrees of freedom of the proposal's Student-t
PROPOSAL_DF = 4


def _log_p(s, alpha, beta, gamma):
    return alpha * s - beta * torch.exp(-2.0 * s) - gamma * torch.exp(2.0 * s)


def draw_log_scale(generators, alpha, beta, gamma, rounds=ROUNDS, widen=WIDEN):
    """Draws of ``s`` with ``log p(s) = alpha s - beta e^{-2s} - gamma e^{2s}``, started at ``s = 0``.

    ``alpha``, ``beta`` and ``gamma`` are float64 ``(K, m)`` (``beta`` and
    ``gamma`` positive; an entry where either is not stays at 0). Row
    ``k`` draws from ``generators[k]``: ``(PROPOSAL_DF + 2) rounds`` numbers a
    column.

    Examples
    --------
    >>> import torch
    >>> gens = [torch.Generator().manual_seed(0)]
    >>> one = torch.ones(1, 20000, dtype=torch.float64)
    >>> s = draw_log_scale(gens, 0.0 * one, 2.0 * one, 2.0 * one)
    >>> # log p(s) = -4 cosh(2 s): mean 0, sd 0.237 (numerical integration)
    >>> abs(float(s.mean())) < 0.01, round(float(s.std()), 2)
    (True, 0.24)
    """
    ok = (beta > 0) & (gamma > 0) & torch.isfinite(beta) & torch.isfinite(gamma)
    b = torch.where(ok, beta, torch.ones_like(beta))
    g = torch.where(ok, gamma, torch.ones_like(gamma))
    v = (alpha + torch.sqrt(alpha * alpha + 16.0 * b * g)) / (4.0 * g)
    mode = 0.5 * torch.log(v)
    scale = widen / torch.sqrt(4.0 * (b / v + g * v))
    K, m = alpha.shape
    df = PROPOSAL_DF
    s = torch.zeros_like(alpha)

    def log_q(t):  # the proposal's log density, up to its constant
        return -0.5 * (df + 1) * torch.log1p(((t - mode) / scale) ** 2 / df)

    for _ in range(rounds):
        xi = normal(generators, (df + 1) * m, alpha).view(K, df + 1, m)
        u = uniforms(generators, m, alpha).view(K, m)
        t = xi[:, 0] / torch.sqrt(xi[:, 1:].square().mean(1))  # a Student-t of df degrees of freedom
        proposal = mode + scale * t
        log_ratio = (_log_p(proposal, alpha, b, g) - log_q(proposal)) - (_log_p(s, alpha, b, g) - log_q(s))
        s = torch.where(torch.log(u) < log_ratio, proposal, s)
    return torch.where(ok, s, torch.zeros_like(s))


class RescalingMoves:
    """The rescaling moves of a network's hidden layers and units on a non-centred target.

    Build with :meth:`for_target`, which returns None where they do not
    apply (an activation that is not positively homogeneous, no hidden
    layer, groups that do not follow the layers).

    Examples
    --------
    >>> import torch
    >>> from skgibbs.model import MLPSpec
    >>> from skgibbs.potential import MLPPotential
    >>> from skgibbs.priors import HierarchicalPrior
    >>> from skgibbs.samplers import Target
    >>> from skgibbs.samplers.noncentered import NonCenteredTarget
    >>> spec = MLPSpec(2, (4,), "relu")
    >>> X = torch.randn(20, 2, generator=torch.Generator().manual_seed(0))
    >>> prior = HierarchicalPrior.for_network(spec, "ard", torch.ones(spec.n_params), 0.5, noise=True)
    >>> nc = NonCenteredTarget(Target(MLPPotential(spec, X, X[:, 0]), prior))
    >>> moves = RescalingMoves.for_target(nc, spec)
    >>> x = nc.from_theta(0.5 * torch.randn(1, spec.n_params, generator=torch.Generator().manual_seed(1)))
    >>> x2 = moves.move([torch.Generator().manual_seed(2)], x)
    >>> f, f2 = spec.forward(nc.to_theta(x), X), spec.forward(nc.to_theta(x2), X)
    >>> bool(torch.allclose(f, f2, atol=1e-5)), bool((x2 != x).any())
    (True, True)
    """

    def __init__(self, n_weights, layers):
        self.n_weights = n_weights
        self.layers = layers  # per hidden layer: (group sides or None, unit in-index, unit out-index)

    @classmethod
    def for_target(cls, target, spec):
        """The moves of ``spec``'s network on the non-centred ``target``, or None where they do not apply."""
        if spec is None or spec.activation not in HOMOGENEOUS or not spec.hidden_layer_sizes:
            return None
        group = target.prior.group
        if not bool((group >= 0).all()):
            return None
        slices = list(spec._slices())
        layers = []
        for h in range(len(slices) - 1):  # hidden layer h + 1: fed by slices[h], feeding slices[h + 1]
            n_in, width, w_in, b_in = slices[h]
            _, n_next, w_out, _ = slices[h + 1]
            incoming = torch.arange(w_in.start, w_in.stop).view(n_in, width)
            in_index = torch.cat(
                [incoming.T, torch.arange(b_in.start, b_in.stop)[:, None]], 1
            )  # (width, n_in + 1)
            out_index = torch.arange(w_out.start, w_out.stop).view(width, n_next)  # (width, n_next)
            in_groups = torch.unique(group[in_index.reshape(-1)])
            out_groups = torch.unique(group[out_index.reshape(-1)])
            # the layer's move needs groups that lie wholly on one side: every member of each in
            # (out) group among the incoming (outgoing) coordinates
            members = lambda gs: torch.isin(group, gs).nonzero().view(-1)  # noqa: E731
            aligned = set(members(in_groups).tolist()) == set(in_index.reshape(-1).tolist()) and set(
                members(out_groups).tolist()
            ) == set(out_index.reshape(-1).tolist())
            sides = (in_groups, out_groups) if aligned else None
            layers.append((sides, in_index, out_index))
        return cls(group.numel(), layers).bind(target)

    def move(self, generators, x, shape=None, rate=None):
        """``x`` ``(K, Q + G)`` moved along every orbit in turn (module docstring); a new tensor.

        ``shape`` and ``rate`` are the groups' Gamma constants ``a_g`` and
        ``b_g`` (float64 ``(G,)``); None reads them from the target given to
        :meth:`for_target` (stored by :meth:`bind`).
        """
        dev, dtype = x.device, x.dtype
        a = (self._shape if shape is None else shape).to(dev)
        b = (self._rate if rate is None else rate).to(dev)
        z = x[:, : self.n_weights].to(torch.float64).clone()
        eta = x[:, self.n_weights :].to(torch.float64).clone()
        K = x.shape[0]
        for sides, in_index, out_index in self.layers:
            in_index, out_index = in_index.to(dev), out_index.to(dev)
            if sides is not None:
                ins, outs = (side.to(dev) for side in sides)
                alpha = (
                    2.0 * (a[outs].sum() - a[ins].sum()) * torch.ones(K, 1, dtype=torch.float64, device=dev)
                )
                beta = (b[ins] * torch.exp(eta[:, ins])).sum(1, keepdim=True)
                gamma = (b[outs] * torch.exp(eta[:, outs])).sum(1, keepdim=True)
                s = draw_log_scale(generators, alpha, beta, gamma)
                eta[:, ins] -= 2.0 * s
                eta[:, outs] += 2.0 * s
            z_in, z_out = z[:, in_index], z[:, out_index]  # (K, width, m_in), (K, width, m_out)
            m_in, m_out = in_index.shape[1], out_index.shape[1]
            alpha = torch.full(z_in.shape[:2], float(m_in - m_out), dtype=torch.float64, device=dev)
            s = draw_log_scale(generators, alpha, 0.5 * z_out.square().sum(2), 0.5 * z_in.square().sum(2))
            c = torch.exp(s)[:, :, None]
            z[:, in_index] = z_in * c
            z[:, out_index] = z_out / c
        return torch.cat([z, eta], 1).to(dtype)

    def bind(self, target):
        """Keep ``target``'s Gamma constants (float64 ``(G,)``) for :meth:`move`; returns self."""
        self._shape = target.prior.shape.to(torch.float64)
        self._rate = target.prior.rate.to(torch.float64)
        return self
