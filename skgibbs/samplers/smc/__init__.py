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


The code: :mod:`.kernel` (the pure stages: reweighting on the next
temperature, resampling, the HMC moves at a temperature), :mod:`.metric`
(the low-rank metrics of the moves), :mod:`.sparse` (the stages on sparse
networks: the bridge from a reference over active sets, the RJHMC moves and
how many of them a stage runs) and :mod:`.sampler` (:class:`SMC`,
``sampler="smc"``: settings and the run). The criteria of each stage's
particles are :func:`skgibbs.criteria.stage_criteria`.
"""

from . import kernel, metric, sparse
from .kernel import (
    SMCState,
    adapt_step_size,
    conditional_ess,
    hmc_state,
    init,
    move,
    next_beta,
    particle_variance,
    resample,
    reweight,
    systematic_resample,
    tempered,
)
from .metric import LowRankMetric, fisher_metric, gradient_metric
from .sampler import SMC, remaining_cost

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
    "remaining_cost",
    "kernel",
    "metric",
    "sparse",
]
