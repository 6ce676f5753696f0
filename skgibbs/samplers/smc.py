"""Adaptive tempered sequential Monte Carlo from the prior to ``pi_lambda``, with HMC moves.

**The tempered family.** For ``beta`` in ``[0, 1]``,

    ``pi_beta(theta) = Pi(theta) exp(-beta lambda R_n(theta)) / Z_beta``,
    ``Z_beta = int Pi(theta) exp(-beta lambda R_n(theta)) dtheta``,

runs from the prior (``beta = 0``, ``Z_0 = 1``) to the Gibbs posterior
(``beta = 1``); ``pi_beta`` is the :class:`~skgibbs.samplers.Target` with
``lam * beta``, the Gibbs posterior at the temperature ``temperature /
beta``. ``P`` particles drawn from the prior move through a sequence
``0 = beta_0 < beta_1 < ... < beta_S = 1`` (Del Moral, Doucet & Jasra,
2006); a stage ``beta -> beta'``

1. *reweights*: the incremental log weight of particle ``i`` is
   ``-(beta' - beta) lambda R_n(theta_i)``; ``beta'`` is found by bisection
   so that the conditional effective sample size (Zhou, Johansen & Aston,
   2016) of the incremental weights is ``target_ess * P``, capped at 1;
2. *estimates the evidence*: ``log Z_beta' / Z_beta`` is estimated by
   ``log sum_i W_i exp(incr_i)`` (``W_i`` the normalised weights before the
   stage); the running sum estimates ``log Z_beta`` (unbiased for ``Z``);
3. *resamples* systematically (one uniform per stage), at every stage, as
   BlackJAX's adaptive tempered SMC does: the weights before each stage
   are then uniform, and the conditional ESS is the ESS of the incremental
   weights;
4. *moves* every particle by ``n_mcmc_steps`` HMC transitions
   (:func:`skgibbs.samplers.hmc.step`) that leave ``pi_beta'`` invariant,
   with ``n_leapfrog`` leapfrog steps (or ``trajectory_length / h`` of
   them) in a metric chosen from the resampled particles (below).

**The metric.** A network posterior at a low temperature is stiff along
the combinations of weights the data fix and as wide as the prior along
the others; a leapfrog step small enough for the first barely moves the
second, and particles that do not move descend, after a few resamplings,
from a handful of ancestors. ``metric="fisher"`` (the default) runs HMC
with the mass ``M = D^-1 + U U'``: ``D`` the prior's variances, ``U U'``
the particles' mean Gauss-Newton matrix of ``beta lambda R_n``, sketched
by one random probe per particle (:func:`fisher_metric`), so that the
stiff directions the probes reach are scaled to the width of
``pi_beta`` there. It is applied as a linear change of coordinates
(:class:`LowRankMetric`), at ``O(Q P)`` per particle and leapfrog step
beside a gradient's ``O(n Q)``. ``metric="gradients"`` takes ``U U'``
from the covariance of the particles' data gradients instead, and
``metric="variances"`` is the diagonal metric of the particles'
per-coordinate variances.

**What the evidence is.** The weights hold only ``lambda R_n``: the
prior's normalising constant never enters, because the particles start as
exact draws of the normalised prior (a Gaussian, or the Gaussian restricted
to the box ``[-B, B]^Q``, normalised there). ``log Z_1`` is thus the log
Gibbs evidence ``log int Pi exp(-lambda R_n)`` with ``Pi`` normalised and
*no* likelihood normaliser. For the squared loss ``l_i = (y_i -
f(x_i))^2``, ``lambda R_n = sum_i l_i / temperature`` is the Gaussian
negative log-likelihood with ``sigma^2 = temperature / 2`` less its
normaliser, so ``log Z - (n / 2) log(pi temperature)`` is the log marginal
likelihood ``log p(y | sigma^2)`` of the targets as the loss sees them: a
density of ``y``, comparable across temperatures (its maximum over
``temperature`` is the empirical-Bayes noise level). For the
cross-entropy, ``lambda R_n = -sum_i log p(y_i | x_i) / temperature``, and
``Z_1`` is the marginal likelihood itself at ``temperature = 1``.

**Adaptation.** The metric follows the particles; the step size ``h``
(in the coordinates of the metric, in which the mass is the identity)
is updated after every transition from the particles' mean acceptance
``a``: under a Gaussian energy error of standard deviation ``s``,
``a = 2 Phi(-s / 2)`` and ``s`` grows as ``h^2``, so ``h`` is multiplied by
``sqrt(s* / s)`` (``s*`` the ``s`` of ``target_accept``), clipped to
``[1/2, 2]``. Each transition uses ``h`` times a quasi-random jitter in
``[0.8, 1.2]`` shared by the particles, which breaks the periodicity of
fixed-length trajectories. Parameters chosen from the particle population
leave every move ``pi_beta``-invariant given them.
"""

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import torch

from ..model import per_example_loss
from ..potential import LinearPotential, MLPPotential
from . import hmc
from .target import prior_variance
from ._progress import progress
from ._random import normal, uniform, uniforms
from .adaptation import halton
from .base import ChainResult, Sampler, check_setting, register
from .target import Target

__all__ = [
    "SMC",
    "SMCState",
    "init",
    "conditional_ess",
    "next_beta",
    "reweight",
    "systematic_resample",
    "resample",
    "particle_variance",
    "LowRankMetric",
    "fisher_metric",
    "gradient_metric",
    "tempered",
    "hmc_state",
    "move",
    "adapt_step_size",
    "stage_criteria",
]

#: the inverse mass is floored at this fraction of the prior variance
MASS_FLOOR = 1e-6
#: the step size of a transition is h (1 + JITTER (2 u - 1)), u quasi-random in (0, 1)
JITTER = 0.2
#: bisection steps on beta' (the interval halves each time)
BISECTION_STEPS = 60
#: the metrics of the moves: the prior's variances with the particles' mean Gauss-Newton matrix or
#: the covariance of their data gradients on top (low-rank), or the particles' variances (diagonal)
METRICS = ("fisher", "gradients", "variances")
#: most stages before a run gives up (the temperature steps have become negligible)
MAX_STAGES = 10_000
#: diagnose: a stage whose particles accepted less than this is reported
ACCEPT_WARN = 0.05
#: diagnose: a stage whose importance weights kept fewer particles than this is reported
ESS_WARN = 10.0


class SMCState(NamedTuple):
    """The particles at one temperature, with their full-data loss cached."""

    theta: torch.Tensor  # (P, Q)
    loss: torch.Tensor  # (P,) sum_i l_i(theta), the loss sum of the full data
    loss_grad: torch.Tensor  # (P, Q) its gradient
    beta: float
    log_evidence: float  # log Z_beta (estimate)


# -- the particles -------------------------------------------------------------------
class _OneByOne:
    """A target evaluated one particle at a time: networks too large to batch (``vectorize=False``)."""

    def __init__(self, target):
        self.target = target

    def __getattr__(self, name):
        return getattr(self.target, name)

    def _rows(self, evaluate, theta):
        parts = [evaluate(theta[k : k + 1]) for k in range(theta.shape[0])]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])

    def value_and_grad(self, theta):
        return self._rows(self.target.value_and_grad, theta)

    def loss_sum_and_grad(self, theta):
        return self._rows(self.target.loss_sum_and_grad, theta)


def _evaluate(target, theta, beta, log_evidence):
    loss, grad = target.loss_sum_and_grad(theta)
    return SMCState(theta.detach(), loss, grad, float(beta), float(log_evidence))


def init(generators, target, n_params, like):
    """``P = len(generators)`` exact draws of the normalised prior (``beta = 0``, ``log Z_0 = 0``).

    Particle ``i`` draws from ``generators[i]`` only: ``N(0, diag(std^2))``,
    each coordinate outside a box ``[-B, B]`` drawn again until inside (the
    Gaussian restricted to the box). One gradient per particle.

    Parameters
    ----------
    generators : list of torch.Generator
    target : Target
        Its prior must have ``std``.
    n_params : int
    like : torch.Tensor
        dtype and device of the particles.

    Returns
    -------
    SMCState
    """
    prior = target.prior
    std = torch.as_tensor(prior.std, dtype=like.dtype, device=like.device).expand(n_params)
    theta = normal(generators, n_params, like) * std
    if prior.bound is not None:
        for k, g in enumerate(generators):
            outside = theta[k].abs() > prior.bound
            while bool(outside.any()):
                fresh = torch.randn(int(outside.sum()), generator=g, dtype=like.dtype, device=like.device)
                theta[k, outside] = fresh * std[outside]
                outside = theta[k].abs() > prior.bound
    return _evaluate(target, theta, 0.0, 0.0)


def _incremental(state, target, beta_new):
    """``-(beta' - beta) lambda R_n`` per particle, float64 (NaN losses weigh nothing)."""
    scaled = target.scale * state.loss.double()
    incr = -(beta_new - state.beta) * scaled
    return torch.nan_to_num(incr, nan=-math.inf)


def conditional_ess(log_weights, incremental):
    """Conditional ESS of Zhou, Johansen & Aston (2016), as a fraction of ``P``.

    ``(sum_i W_i w_i)^2 / sum_i W_i w_i^2`` with ``W`` the normalised weights
    before the stage (``log_weights``, any constant) and ``w`` the
    incremental weights (``incremental``, on the log scale), both ``(P,)``;
    in ``(0, 1]``, and equal to ``ESS / P`` of the incremental weights when
    ``W`` is uniform.
    """
    log_W = log_weights - torch.logsumexp(log_weights, 0)
    a = torch.logsumexp(log_W + incremental, 0)
    b = torch.logsumexp(log_W + 2 * incremental, 0)
    return float(torch.exp(2 * a - b)) if torch.isfinite(b) else 0.0


def next_beta(state, target, target_ess):
    """``beta'`` whose conditional ESS is ``target_ess`` (as a fraction), capped at 1; by bisection.

    The weights before the stage are uniform (every stage resamples).
    """
    uniform_w = torch.zeros(state.loss.shape[0], dtype=torch.float64, device=state.loss.device)

    def cess(beta_new):
        return conditional_ess(uniform_w, _incremental(state, target, beta_new))

    if cess(1.0) >= target_ess:
        return 1.0
    low, high = state.beta, 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if cess(mid) >= target_ess:
            low = mid
        else:
            high = mid
    # the largest beta' found above the target; never the current beta
    return low if low > state.beta else high


def reweight(state, target, beta_new):
    """Incremental log weights, the evidence increment and the ESS of a stage ``beta -> beta'``.

    Returns
    -------
    log_weights : torch.Tensor of shape (P,), float64
        ``-(beta' - beta) lambda R_n(theta_i)`` (the weights before were uniform).
    log_evidence_increment : float
        ``log mean_i exp(log_weights_i)``, the estimate of ``log Z_beta' / Z_beta``.
    ess : float
        ``1 / sum_i W_i^2`` of the normalised new weights.
    """
    log_w = _incremental(state, target, beta_new)
    P = log_w.shape[0]
    log_sum = torch.logsumexp(log_w, 0)
    W = torch.exp(log_w - log_sum)
    return log_w, float(log_sum) - math.log(P), float(1.0 / (W * W).sum())


def systematic_resample(log_weights, u):
    """Ancestors of systematic resampling: ``P`` indices from one uniform ``u`` in (0, 1).

    Index ``i`` appears ``floor(P W_i)`` or ``ceil(P W_i)`` times (Kitagawa, 1996).

    Examples
    --------
    >>> import torch
    >>> systematic_resample(torch.log(torch.tensor([0.5, 0.25, 0.25, 0.0])), 0.3).tolist()
    [0, 0, 1, 2]
    """
    W = torch.exp(log_weights.double() - torch.logsumexp(log_weights.double(), 0))
    P = W.shape[0]
    cumulative = torch.cumsum(W, 0)
    cumulative[-1] = 1.0  # rounding must not leave a point beyond the last particle
    points = (torch.arange(P, dtype=torch.float64, device=W.device) + float(u)) / P
    return torch.searchsorted(cumulative, points).clamp_max(P - 1)


def resample(state, ancestors):
    """The particles ``ancestors`` (a long tensor ``(P,)``), with their cached loss."""
    return state._replace(
        theta=state.theta[ancestors], loss=state.loss[ancestors], loss_grad=state.loss_grad[ancestors]
    )


def particle_variance(theta, reference):
    """Per-coordinate variance of the particles, floored at ``MASS_FLOOR * reference``: the inverse mass."""
    var = theta.var(0, unbiased=False)
    return torch.maximum(var, MASS_FLOOR * reference)


class LowRankMetric:
    """The metric ``M = D^-1 + U U'`` of a stage's moves, as a linear change of coordinates.

    ``D`` is diagonal (a variance per coordinate) and ``U`` has ``r``
    columns. HMC with mass ``M`` is HMC with unit mass in the coordinates
    ``phi`` of ``theta = L phi``, ``L L' = M^-1``; with ``V = D^1/2 U =
    W S Z'`` (thin SVD),

        ``M^-1 = D^1/2 (I + V V')^-1 D^1/2``,  ``L = D^1/2 (I + W (c - 1) W')``,  ``c = (1 + S^2)^-1/2``,

    so that ``L``, ``L'`` and ``L^-1`` cost ``O(Q r)`` per particle. The
    map is linear, so its Jacobian is a constant and the moves in ``phi``
    leave the image of ``pi_beta`` invariant.

    Parameters
    ----------
    variance : torch.Tensor of shape (Q,)
        ``D``.
    factor : torch.Tensor of shape (Q, r)
        ``U``; ``r = 0`` gives the diagonal metric ``D^-1``.
    """

    def __init__(self, variance, factor):
        work = torch.float64
        sd = variance.to(work).sqrt()
        if factor.shape[1]:
            W, S, _ = torch.linalg.svd(sd[:, None] * factor.to(work), full_matrices=False)
        else:
            W, S = factor.to(work), factor.new_zeros(0, dtype=work)
        keep = S > 1e-8 * float(S.max()) if S.numel() else S > 0
        W, S = W[:, keep], S[keep]
        c = (1.0 + S * S).rsqrt()
        dtype = variance.dtype
        self.sd, self.W = sd.to(dtype), W.to(dtype)
        self.shrink, self.grow = (c - 1.0).to(dtype), (1.0 / c - 1.0).to(dtype)
        # diag(M^-1) = D (1 + sum_k W_jk^2 (c_k^2 - 1)): the inverse mass reported
        self.inverse_mass = (variance.to(work) * (1.0 + (W * W) @ (c * c - 1.0))).to(dtype)

    def _mix(self, x, coef):
        return x + ((x @ self.W) * coef) @ self.W.T if self.W.shape[1] else x

    def to_theta(self, phi):
        """``theta = L phi`` (rows)."""
        return self._mix(phi, self.shrink) * self.sd

    def to_phi(self, theta):
        """``phi = L^-1 theta`` (rows)."""
        return self._mix(theta / self.sd, self.grow)

    def grad_to_phi(self, grad):
        """``L' grad``: the gradient in ``phi`` of a function of ``theta`` (rows)."""
        return self._mix(grad * self.sd, self.shrink)


def gradient_metric(state, target_beta, variance):
    """:class:`LowRankMetric`: ``D = variance``, ``U U'`` the particles' covariance of ``grad c R_n``.

    For a Gaussian ``pi_beta`` of precision ``A = D^-1 + B`` (``B`` from
    the data), the gradients ``B (theta - theta*)`` of the data term have
    covariance ``B A^-1 B``, which is ``B`` in the directions the data
    determine (``B >> D^-1``) and small in the others: ``M = D^-1 + U U'``
    is then close to ``A``, and HMC in ``M`` sees a nearly isotropic target
    whatever the conditioning the data give ``pi_beta``, in the at most
    ``P - 1`` directions the gradients span; ``D`` (the prior's variances)
    covers the rest. Particles whose gradient is not finite are left out.
    """
    g = target_beta.scale * state.loss_grad.double()
    g = g[torch.isfinite(g).all(1)]
    if g.shape[0] < 2:
        return LowRankMetric(variance, variance.new_zeros(variance.shape[0], 0))
    U = (g - g.mean(0)).T / math.sqrt(g.shape[0])
    return LowRankMetric(variance, U)


def fisher_metric(state, target_beta, variance, generators):
    """:class:`LowRankMetric`: ``D = variance``, ``U U'`` the particles' mean Gauss-Newton matrix, sketched.

    The Hessian of ``c sum_i l(y_i, f_theta(x_i))`` (``c = beta lambda / n``)
    is ``c sum_i J_i' H_i J_i`` plus terms that vanish where the residuals
    do, with ``J_i = d f_theta(x_i) / d theta`` and ``H_i`` the Hessian of
    the loss in the outputs (2 for the squared loss, ``diag(p) - p p'`` for
    the softmax cross-entropy). For ``omega_i ~ N(0, H_i)`` the probe ``g =
    sum_i J_i' omega_i`` (one backward pass through the outputs) has
    ``E[g g'] = sum_i J_i' H_i J_i``: ``omega_i = sqrt(2) z`` for the squared
    loss, ``p - e_k`` with ``k`` drawn from the network's own ``p`` for the
    cross-entropy (the sampled Fisher). Every particle draws one probe
    (from its own generator), and ``U U' = c / P sum_k g_k g_k'`` is the
    particles' mean Gauss-Newton matrix, of rank at most ``P``: ``M = D^-1
    + U U'`` is the precision of a Gaussian ``pi_beta`` whose loss is
    quadratic in the outputs, in the directions the probes reach. Unlike a
    diagonal metric, it measures the curvature along the combinations of
    weights that the data fix, which set the leapfrog step of a network
    posterior.

    Potentials without network outputs (neither an
    :class:`~skgibbs.potential.MLPPotential` nor a
    :class:`~skgibbs.potential.LinearPotential`) fall back to
    :func:`gradient_metric`.
    """
    potential, theta = target_beta.potential, state.theta
    if isinstance(target_beta, _OneByOne):  # a network too large to batch: one particle at a time
        parts = [
            _gauss_newton_probes(potential, theta[k : k + 1], generators[k : k + 1])
            for k in range(len(theta))
        ]
        probes = None if parts[0] is None else torch.cat(parts)
    else:
        probes = _gauss_newton_probes(potential, theta, generators)
    if probes is None:
        return gradient_metric(state, target_beta, variance)
    probes = probes[torch.isfinite(probes).all(1)]  # a particle whose outputs overflowed adds nothing
    P = max(probes.shape[0], 1)
    return LowRankMetric(variance, probes.T * math.sqrt(target_beta.scale / P))


def _gauss_newton_probes(potential, theta, generators):
    """One probe ``sum_i J_i' omega_i`` per particle, ``(P, Q)``; None for a potential without outputs."""
    P = theta.shape[0]
    if isinstance(potential, LinearPotential) and potential.y.dim() == 1:
        omega = math.sqrt(2.0) * normal(generators, potential.n_data, potential.X)
        return (omega @ potential.X).to(theta.dtype)
    if not isinstance(potential, MLPPotential):
        return None
    total = torch.zeros_like(theta)
    for rows, X, _ in _row_blocks(potential, P):
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            out = potential.spec.forward(th, X)
            omega = _output_noise(potential.loss, out.detach(), generators, rows.stop - rows.start)
            (grad,) = torch.autograd.grad(out, th, grad_outputs=omega)
        total += grad
    return total


def _output_noise(loss, out, generators, m):
    """``omega ~ N(0, H)`` (or with covariance ``H``) for outputs ``out`` ``(P, m[, C])`` of ``m`` rows."""
    if loss == "squared":
        return math.sqrt(2.0) * normal(generators, m, out).reshape(out.shape)
    u = uniforms(generators, m, out)
    if out.dim() == 2:  # one logit: p - y with y ~ Bernoulli(p), variance p (1 - p)
        p = torch.sigmoid(out)
        return p - (u < p).to(out.dtype)
    p = torch.softmax(out, -1)
    k = torch.searchsorted(torch.cumsum(p, -1), u[..., None]).clamp_max(p.shape[-1] - 1)
    return p - torch.zeros_like(p).scatter_(-1, k, 1.0)


class _InCoordinates:
    """A target seen in the coordinates ``phi`` of a :class:`LowRankMetric` (``theta = L phi``)."""

    def __init__(self, target, metric):
        self.target, self.metric = target, metric

    def value_and_grad(self, phi):
        u, grad = self.target.value_and_grad(self.metric.to_theta(phi))
        return u, self.metric.grad_to_phi(grad)


def tempered(target, beta):
    """``pi_beta``: the target with ``lam * beta``."""
    return Target(target.potential, target.prior, target.lam * beta)


def hmc_state(state, target_beta):
    """The HMC state of the particles under ``pi_beta`` from their cached loss (no gradient evaluated)."""
    theta = state.theta
    u = target_beta.scale * state.loss - target_beta.log_prior(theta)
    return hmc.HMCState(theta, u, target_beta.grad(state.loss_grad, theta))


def move(generators, particles, target_beta, step_size, inverse_mass, n_leapfrog):
    """One HMC transition of every particle at ``pi_beta``: :func:`skgibbs.samplers.hmc.step`.

    ``particles`` is an :class:`~skgibbs.samplers.HMCState` (see
    :func:`hmc_state`); ``step_size`` a float shared by the particles.
    """
    P = particles.theta.shape[0]
    dtype, device = particles.theta.dtype, particles.theta.device
    params = hmc.HMCParams(
        torch.full((P,), float(step_size), dtype=dtype, device=device),
        inverse_mass,
        torch.full((P,), int(n_leapfrog), dtype=torch.long, device=device),
    )
    return hmc.step(generators, particles, target_beta, params)


_NORMAL = NormalDist()


def adapt_step_size(step_size, acceptance, target_accept, max_factor=2.0):
    """The next step size from the mean acceptance ``acceptance`` of the last transition.

    Under a Gaussian energy error of standard deviation ``s`` the mean
    acceptance is ``2 Phi(-s / 2)``, and ``s`` grows as ``h^2``: the step
    size is multiplied by ``sqrt(s* / s)`` (``s*`` that of ``target_accept``),
    clipped to ``[1 / max_factor, max_factor]``.

    Examples
    --------
    >>> round(adapt_step_size(0.1, 0.8, 0.8), 12)
    0.1
    >>> adapt_step_size(0.1, 0.0, 0.8), adapt_step_size(0.1, 1.0, 0.8)
    (0.05, 0.2)
    """
    a = min(max(float(acceptance), 1e-6), 1.0 - 1e-6)
    s = -2.0 * _NORMAL.inv_cdf(a / 2.0)
    s_star = -2.0 * _NORMAL.inv_cdf(float(target_accept) / 2.0)
    factor = min(max(math.sqrt(s_star / s), 1.0 / max_factor), max_factor)
    return float(step_size) * factor


def _gaussian_loss(potential):
    """Whether the per-example loss is the squared error (a Gaussian likelihood less its normaliser)."""
    return isinstance(potential, LinearPotential) or (
        isinstance(potential, MLPPotential) and potential.loss == "squared"
    )


# -- the criteria of a stage's particles --------------------------------------------------
#: elements of the widest ``(P, rows, width)`` array a block of the stage criteria holds at once
CRITERIA_BLOCK = 1 << 22


def _row_blocks(potential, P):
    """``(rows slice, X rows, y rows)`` of consecutive blocks of about ``CRITERIA_BLOCK / (P width)`` rows."""
    n = potential.n_data
    spec = getattr(potential, "spec", None)
    width = max(spec.layer_sizes) if spec is not None else potential.X.shape[1]
    step = max(1, CRITERIA_BLOCK // max(P * width, 1))
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        yield rows, potential.X[rows], potential.y[rows]


def _blocks(potential, theta):
    """Blocks ``(P, rows)`` of what the stage criteria read, float64, and their kind.

    ``"gaussian"``: the residuals ``y_i - f_theta(x_i)`` of the squared loss
    (a linear model or a network); ``"log_loss"``: ``log p_theta(y_i | x_i)``
    of a network's cross-entropy. None for any other potential.
    """
    P = theta.shape[0]
    if isinstance(potential, LinearPotential) and potential.y.dim() == 1:

        def residuals():
            for rows, X, y in _row_blocks(potential, P):
                yield rows, (y - theta @ X.T).double()

        return "gaussian", residuals
    if not isinstance(potential, MLPPotential):
        return None, None

    def outputs():
        with torch.no_grad():
            for rows, X, y in _row_blocks(potential, P):
                out = potential.spec.forward(theta, X)
                if potential.loss == "squared":
                    yield rows, (y - out.reshape(P, -1)).double()
                else:
                    y_rows = y.expand(out.shape[:2]) if y.dim() == 1 else y
                    yield rows, -per_example_loss(potential.loss, out, y_rows).double()

    return ("gaussian" if potential.loss == "squared" else "log_loss"), outputs


def stage_criteria(potential, theta, temperature):
    """WAIC, functional variance and training losses of equally weighted particles at ``temperature``.

    The particles ``theta`` (``(P, Q)``) are draws of the Gibbs posterior at
    ``temperature`` (the estimators' scale: ``lambda = n / temperature``).
    The values are those a fitted estimator computes from its draws
    (:mod:`skgibbs.criteria`), with the likelihood its loss implies:

    - squared loss (``"gaussian"``): ``N(y_i; f_theta(x_i), sigma^2)`` with
      ``sigma^2`` the posterior mean of the mean squared residual
      (``noise_variance``, on the scale of the potential's ``y``); it enters
      the Gibbs posterior with the power ``2 sigma^2 / temperature``;
    - cross-entropy (``"log_loss"``): ``p_theta(y_i | x_i)``, with the power
      ``1 / temperature``.

    Returns a dict of floats: ``generalization_loss`` (minus Watanabe's
    WAIC per example, its penalty scaled by the power: the estimators'
    ``generalization_loss_``), ``functional_variance`` (``sum_i Var
    log p(y_i | theta)``, their ``lfv_``), ``train_loss`` (of the posterior
    mean prediction, per example: their ``train_loss_``) and
    ``langevin_waic`` (``train_loss + functional_variance / n``), with
    ``noise_variance`` for the squared loss; an empty dict for a potential
    with another loss. Squared residuals enter in float64; one pass over
    the rows for the cross-entropy, two for the squared loss (the power
    needs ``sigma^2`` first).
    """
    kind, blocks = _blocks(potential, theta)
    if kind is None:
        return {}
    P, n = theta.shape[0], potential.n_data
    out = {}
    if kind == "gaussian":
        sq = fbar_sq = 0.0
        for _, R in blocks():
            sq += float((R * R).sum())
            fbar_sq += float((R.mean(0) ** 2).sum())
        sigma2 = max(sq / (P * n), 1e-300)
        power, out["noise_variance"] = 2.0 * sigma2 / temperature, sigma2
        out["train_loss"] = fbar_sq / (2.0 * sigma2 * n)

        def log_lik():
            for rows, R in blocks():
                yield rows, -0.5 * R * R / sigma2 - 0.5 * math.log(2.0 * math.pi * sigma2)

    else:
        power, log_lik = 1.0 / temperature, blocks
    # imported here: criteria is a higher layer, which imports the samplers
    from ..criteria import waic

    elpd = penalty = 0.0
    for _, L in log_lik():
        block = waic(L.cpu().numpy(), beta=power)  # WAIC is a sum over rows: blocks add up
        elpd, penalty = elpd + block.elpd_waic, penalty + block.p_waic
    log_pbar = elpd + power * penalty  # sum_i log mean_k p(y_i | theta_k)
    if kind == "log_loss":
        out["train_loss"] = -log_pbar / n  # the log loss of the posterior predictive
    out["generalization_loss"] = -elpd / n
    out["functional_variance"] = penalty
    out["langevin_waic"] = out["train_loss"] + penalty / n
    return out


@register
class SMC(Sampler):
    """Adaptive tempered SMC from the prior to ``pi_lambda`` with HMC moves, ``sampler="smc"``.

    ``n_particles`` independent draws of the prior are carried to the Gibbs
    posterior through the tempered posteriors ``pi_beta ∝ Pi exp(-beta
    lambda R_n)``, ``beta`` from 0 to 1, chosen adaptively (module
    docstring). Every stage reweights, resamples and moves the particles
    by HMC; the run estimates the log evidence ``log Z_beta`` at every
    stage. The particles start from the prior, not from pre-trained
    networks: a posterior with several modes is represented in proportion
    to their mass, which chains started in one mode do not do.

    Parameters
    ----------
    n_particles : int, default=128
        Particles ``P``: the number of draws. With ``K`` groups (the
        estimators' ``n_chains``) it is rounded up to a multiple of ``K``
        and the draws have shape ``(K, P / K, Q)``; the estimators'
        ``n_samples``, ``burn_in`` and ``thin`` do not apply.
    target_ess : float in (0, 1), default=0.5
        Conditional effective sample size of each stage's incremental
        weights, as a fraction of ``P``: larger values take smaller
        temperature steps (more stages).
    n_mcmc_steps : int, default=3
        HMC transitions per stage.
    n_leapfrog : int, default=10
        Leapfrog steps per transition (``n_leapfrog`` gradients); with
        ``trajectory_length``, the fewest.
    target_accept : float in (0, 1), default=0.8
        Mean acceptance the step size is adapted toward.
    step_size : float > 0, default=0.1
        Initial leapfrog step, in the coordinates of the metric (those of
        the prior's standard deviations at the first stage).
    metric : {"fisher", "gradients", "variances"}, default="fisher"
        Mass of the HMC moves (module docstring): the prior's variances
        with the particles' mean Gauss-Newton matrix of the data term on
        top (a low-rank metric, one probe per particle and stage, about a
        gradient's cost); the same with the covariance of the particles'
        data gradients; or the particles' per-coordinate variances alone.
    trajectory_length : float > 0 or None, default=None
        With a float, each transition takes ``trajectory_length / h``
        leapfrog steps (at least ``n_leapfrog``, at most
        ``max_leapfrog``), so that the moves keep their length as the
        step size shrinks with the temperature; None keeps
        ``n_leapfrog``.
    max_leapfrog : int, default=64
        Most leapfrog steps of a transition under ``trajectory_length``.

    Notes
    -----
    A fitted estimator gains, from the run's ``info``:

    - ``log_evidence_``: ``log Z_1 = log int Pi exp(-lambda R_n)`` with
      ``Pi`` normalised and no likelihood normaliser (module docstring);
    - ``log_marginal_likelihood_`` (squared loss only): ``log_evidence_ -
      (n / 2) log(pi temperature_)``, the log density of the standardized
      targets under ``y_i ~ N(f(x_i), temperature_ / 2)``; subtract
      ``n log(y_scale_)`` for the density of ``y`` on its own scale;
    - ``temperature_path_``: a dict of arrays of shape ``(n_stages_ + 1,)``,
      one entry per stage from the prior: ``beta``, ``temperature`` (the
      estimator's divided by ``beta``, ``inf`` at ``beta = 0``),
      ``log_evidence`` (the running ``log Z_beta``), ``ess`` (of the
      reweighted particles before resampling), ``acceptance_rate`` and
      ``step_size`` (means over the stage's transitions, NaN at
      ``beta = 0``), and ``log_marginal_likelihood`` with the squared
      loss; ``pandas.DataFrame(reg.temperature_path_)`` tabulates it;
    - in ``temperature_path_`` too, for the estimators' networks (and a
      linear potential), the criteria of each stage's particles after their
      moves, equally weighted draws of the Gibbs posterior at the stage's
      temperature (:func:`stage_criteria`): ``generalization_loss``
      (Watanabe's WAIC per example, what ``generalization_loss_`` is at the
      target), ``functional_variance`` (``lfv_``), ``train_loss``,
      ``langevin_waic`` and, with the squared loss, ``noise_variance``; on
      the scale of ``y`` for the regressors; NaN at ``beta = 0``. Choosing
      ``temperature`` by WAIC thus costs one fit
      (:func:`skgibbs.model_selection.compare_temperatures`). A stage's
      values are as good as its particles: a stage whose reweighting kept
      few of them (small ``ess``) or whose moves barely accepted carries
      copies of a few particles, and its functional variance is then
      too small;
    - ``n_stages_``, ``n_particles_``, ``step_size_`` (the final one, per
      group) and ``inverse_mass_`` (the diagonal of the last stage's
      inverse metric ``M^-1``: the particles' variances with
      ``metric="variances"``); ``acceptance_rate_`` is the acceptance of the last stage's
      moves, per group.

    Cost: ``n_stages * (n_mcmc_steps * n_leapfrog + 2)`` gradients of the
    ``P`` particles, batched (``n_grad_evals_`` counts them per particle,
    the Gauss-Newton probes of ``metric="fisher"`` as one per stage).
    The defaults were measured on ``load_diabetes`` (331 training rows) with
    the default network (11 301 weights) at the temperature of the default
    HMC fit: 14 stages, 1.4 to 2.3 times the CPU time of the default HMC fit
    (4 chains of 175 draws), with the same held-out log-likelihood and
    predictive means within 0.13 posterior standard deviations of HMC's
    (``benchmarks/perf/bench_smc.py``). On a posterior much narrower than the prior (the
    data-gap regression, 52 stages) the Gauss-Newton metric fitted the data
    as the diagonal one did not (the user guide's section on SMC).

    References
    ----------
    .. [1] Del Moral, Doucet, Jasra. Sequential Monte Carlo samplers. JRSS B, 2006.
    .. [2] Zhou, Johansen, Aston. Toward automatic model comparison: an adaptive
       sequential Monte Carlo approach. JCGS, 2016.

    Examples
    --------
    >>> import torch
    >>> from skgibbs.potential import FunctionPotential
    >>> from skgibbs.priors import Prior
    >>> from skgibbs.samplers import SMC, RunSettings, Target
    >>> y = torch.randn(20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=20)
    >>> target = Target(pot, Prior(std=1.0), lam=20.0)
    >>> res = SMC(n_particles=64, n_mcmc_steps=2, n_leapfrog=5).sample(
    ...     target, torch.zeros(2, 1, dtype=torch.float64), [0, 1], RunSettings())
    >>> res.samples.shape, float(res.temperature_path["beta"][-1])
    ((2, 32, 1), 1.0)
    """

    name = "smc"
    default_burn_in, default_thin = 0, 1
    mixing_diagnostics = False  # independent particles: R-hat across groups does not apply
    has_chains = False

    def __init__(
        self,
        n_particles=128,
        target_ess=0.5,
        n_mcmc_steps=3,
        n_leapfrog=10,
        target_accept=0.8,
        step_size=0.1,
        metric="fisher",
        trajectory_length=None,
        max_leapfrog=64,
    ):
        self.n_particles = n_particles
        self.target_ess = target_ess
        self.n_mcmc_steps = n_mcmc_steps
        self.n_leapfrog = n_leapfrog
        self.target_accept = target_accept
        self.step_size = step_size
        self.metric = metric
        self.trajectory_length = trajectory_length
        self.max_leapfrog = max_leapfrog

    def check(self, prior, rho):
        super().check(prior, rho)
        check_setting("n_particles", self.n_particles, "count")
        check_setting("target_ess", self.target_ess, "probability")
        check_setting("n_mcmc_steps", self.n_mcmc_steps, "count")
        check_setting("n_leapfrog", self.n_leapfrog, "count")
        if self.trajectory_length is not None:
            check_setting("trajectory_length", self.trajectory_length, "positive")
        check_setting("max_leapfrog", self.max_leapfrog, "count")
        check_setting("target_accept", self.target_accept, "probability")
        check_setting("step_size", self.step_size, "positive")
        if self.metric not in METRICS:
            raise ValueError(
                f"metric={self.metric!r} is not a metric of sampler='smc': choose one of "
                + ", ".join(repr(m) for m in METRICS)
                + "."
            )
        if float(rho) < 1.0:
            raise ValueError(
                f"rho={rho!r} asks for Bernoulli batches; sampler='smc' reweights and moves on the full "
                "data. Leave rho='auto'."
            )
        if prior.std is None:
            raise ValueError(
                "sampler='smc' starts its particles from the prior, so it needs a proper Gaussian prior "
                "(a flat prior or a bare weight_bound box has no density to draw from): set prior_std to "
                "'auto' or a float (weight_bound may be kept)."
            )
        return 1.0

    def n_starts(self, n_chains):
        # one pre-trained network: its held-out loss sets temperature="auto" as for every sampler;
        # the particles themselves start from the prior
        return 1

    # -- the run ------------------------------------------------------------------------
    def _generators(self, seeds, device):
        """One generator per particle (``P / K`` per seed) and one for resampling, from ``seeds`` only."""
        per_group = -(-int(self.n_particles) // len(seeds))
        gens = []
        for s in seeds:
            for child in np.random.SeedSequence(int(s)).generate_state(per_group):
                gens.append(torch.Generator(device=device).manual_seed(int(child)))
        master = int(np.random.SeedSequence([int(s) for s in seeds]).generate_state(1)[0])
        return gens, torch.Generator(device=device).manual_seed(master), per_group

    def sample(self, target, theta0, seeds, run, *, vectorize=True, n_jobs=None):
        """Carry the particles from the prior to ``target``; ``theta0`` gives only ``Q``, dtype and device."""
        self.check(target.prior, run.rho)
        wrap = (lambda t: t) if vectorize else _OneByOne
        gens, resampler, per_group = self._generators(seeds, theta0.device)
        Q, like = theta0.shape[1], theta0
        reference = prior_variance(target.prior, Q, theta0.dtype, theta0.device)
        state = init(gens, wrap(target), Q, like)
        path = {
            "beta": [0.0],
            "log_evidence": [0.0],
            "ess": [float(len(gens))],
            "acceptance_rate": [math.nan],
            "step_size": [math.nan],
        }
        h, n_grad, t = float(self.step_size), 1, 0
        while state.beta < 1.0:
            if len(path["beta"]) > MAX_STAGES:
                raise RuntimeError(
                    f"sampler='smc' reached beta={state.beta:.3g} after {MAX_STAGES} stages; "
                    "lower target_ess or raise n_particles."
                )
            beta = next_beta(state, target, float(self.target_ess))
            log_w, increment, ess = reweight(state, target, beta)
            state = resample(state, systematic_resample(log_w, uniform([resampler], like)))
            state = state._replace(log_evidence=state.log_evidence + increment)
            stage = self._mutate(gens, state, target, beta, h, t, run, reference=reference, wrap=wrap)
            state, h, t = stage.state, stage.step_size, t + int(self.n_mcmc_steps)
            n_grad += stage.n_grad
            path["beta"].append(beta)
            path["log_evidence"].append(state.log_evidence)
            path["ess"].append(ess)
            path["acceptance_rate"].append(float(stage.accepted.mean()))
            path["step_size"].append(stage.mean_step_size)
            criteria = stage_criteria(target.potential, state.theta, target.n_data / (target.lam * beta))
            for name, value in criteria.items():
                path.setdefault(name, [math.nan] * (len(path["beta"]) - 1)).append(value)
        return self._result(state, stage, path, target, h, len(seeds), per_group, n_grad)

    def _mutate(self, gens, state, target, beta, h, t, run, *, reference, wrap):
        """The stage's HMC transitions at ``pi_beta`` (``t`` transitions before): a :class:`_Stage`."""
        target_b = wrap(tempered(target, beta))
        particles = hmc_state(state, target_b)
        metric = self._metric(state, target_b, reference, gens)
        if metric is not None:  # HMC with unit mass in the metric's coordinates
            target_b = _InCoordinates(target_b, metric)
            particles = particles._replace(
                theta=metric.to_phi(particles.theta), grad=metric.grad_to_phi(particles.grad)
            )
            m, inverse_mass = torch.ones_like(reference), metric.inverse_mass
        else:
            m = inverse_mass = particle_variance(state.theta, reference)
        n_steps = int(self.n_mcmc_steps)
        accepted = torch.zeros(particles.theta.shape[0], dtype=torch.float64)
        grads, step_sum = int(self.metric == "fisher"), 0.0  # the probes cost about a gradient
        phase = f"SMC stage beta={beta:.3g}"
        for i in range(n_steps):
            h_t = h * (1.0 + JITTER * (2.0 * halton(t + i + 1) - 1.0))
            particles, info = move(gens, particles, target_b, h_t, m, self._n_leapfrog(h_t))
            accepted += info.is_accepted.double().cpu()
            grads += int(info.num_steps.max())
            step_sum += h_t
            h = adapt_step_size(h, float(info.acceptance_prob.mean()), self.target_accept)
            if run.verbose:
                rate = float(accepted.mean()) / (i + 1)
                progress(run, phase, i, n_steps, acceptance=lambda rate=rate: f"{rate:.2f}")
        theta = particles.theta if metric is None else metric.to_theta(particles.theta)
        if beta < 1.0:  # the next stage's weights need the loss at the moved particles
            state, grads = _evaluate(wrap(target), theta, beta, state.log_evidence), grads + 1
        else:
            state = state._replace(theta=theta, beta=beta)
        return _Stage(state, h, accepted / n_steps, step_sum / n_steps, grads, inverse_mass)

    def _metric(self, state, target_beta, reference, generators):
        """The stage's :class:`LowRankMetric`, or None for the diagonal metric of the particles' variances."""
        if self.metric == "fisher":
            return fisher_metric(state, target_beta, reference, generators)
        if self.metric == "gradients":
            return gradient_metric(state, target_beta, reference)
        return None

    def _n_leapfrog(self, step_size):
        """Leapfrog steps: ``n_leapfrog``, or ``trajectory_length / h`` (at most ``max_leapfrog``)."""
        if self.trajectory_length is None:
            return int(self.n_leapfrog)
        steps = math.ceil(float(self.trajectory_length) / float(step_size))
        return int(min(max(steps, int(self.n_leapfrog)), int(self.max_leapfrog)))

    def _result(self, state, stage, path, target, h, K, per_group, n_grad):
        n = target.n_data
        path = {key: np.asarray(value, dtype=np.float64) for key, value in path.items()}
        beta = path["beta"]
        path["temperature"] = n / (target.lam * beta.clip(min=1e-300))
        path["temperature"][beta == 0] = np.inf
        info = {
            "log_evidence": float(state.log_evidence),
            "temperature_path": path,
            "n_stages": len(beta) - 1,
            "n_particles": K * per_group,
            "step_size": np.full(K, h),
            "inverse_mass": stage.inverse_mass.cpu().numpy(),
        }
        if _gaussian_loss(target.potential):
            # log p(y | sigma^2 = T_beta / 2) = log Z_beta - (n / 2) log(2 pi sigma^2); -inf at beta = 0
            path["log_marginal_likelihood"] = path["log_evidence"] - 0.5 * n * np.log(
                math.pi * path["temperature"]
            )
            info["log_marginal_likelihood"] = float(path["log_marginal_likelihood"][-1])
        samples = state.theta.reshape(K, per_group, -1).cpu().numpy()
        rate = stage.accepted.reshape(K, per_group).numpy()
        return ChainResult(
            samples, rate.mean(1), np.full(K, n_grad, dtype=np.int64), {"acceptance_rate": rate}, False, info
        )

    # -- what the estimators ask ------------------------------------------------------------
    def diagnose(self, fit):
        """Stages whose importance weights kept a handful of particles, or whose moves barely accepted."""
        path, out = fit["temperature_path_"], []
        ess = path["ess"][1:]
        if ess.size and ess.min() < ESS_WARN:
            s = int(np.argmin(ess)) + 1
            out.append(
                f"SMC stage {s} (beta={path['beta'][s]:.3g}) kept an effective {ess[s - 1]:.3g} particles "
                "after reweighting, so the draws descend from a handful of particles. Raise target_ess or "
                "n_particles."
            )
        rate = path["acceptance_rate"][1:]
        if rate.size and np.nanmin(rate) < ACCEPT_WARN:
            s = int(np.nanargmin(rate)) + 1
            out.append(
                f"At SMC stage {s} (beta={path['beta'][s]:.3g}) the HMC moves accepted only "
                f"{rate[s - 1]:.1%} of their proposals, so the resampled particles stayed copies of each "
                "other. Raise target_ess (smaller temperature steps) or n_mcmc_steps."
            )
        return out


class _Stage(NamedTuple):
    """What one stage's moves leave: the particles, the step size, and the records."""

    state: SMCState
    step_size: float
    accepted: torch.Tensor  # (P,) fraction of the stage's transitions accepted
    mean_step_size: float
    n_grad: int  # batched gradients
    inverse_mass: torch.Tensor
