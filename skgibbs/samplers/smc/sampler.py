"""The SMC sampler object: settings, the run over the stages, and its diagnosis.

The method is described in :mod:`skgibbs.samplers.smc`.
"""

import math
import time
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import torch

from ..._compat import Interval, StrOptions
from ..._progress import progress, progress_close
from ..._random import uniform
from ...criteria import stage_criteria
from ...priors import MixingPrior
from ..adaptation import halton
from ..base import ChainResult, Sampler, Unhonoured, register
from ..rj.rjhmc import reference_variance
from . import sparse
from .kernel import (
    JITTER,
    SMCState,
    _evaluate,
    _OneByOne,
    adapt_step_size,
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
from .metric import _InCoordinates, fisher_metric, gradient_metric

__all__ = ["SMC"]


#: the metrics of the moves: the prior's variances with the particles' mean Gauss-Newton matrix or
#: the covariance of their data gradients on top (low-rank), or the particles' variances (diagonal)
METRICS = ("fisher", "gradients", "variances")


#: most stages before a run gives up (the temperature steps have become negligible)
MAX_STAGES = 10_000


#: diagnose: a stage whose particles accepted less than this is reported
ACCEPT_WARN = 0.05


#: diagnose: a stage whose importance weights kept fewer particles than this is reported
ESS_WARN = 10.0


#: ``max_mcmc_steps="auto"`` on a sparse network: most RJHMC transitions of a stage
SPARSE_MAX_STEPS = 30


#: ``n_jumps="auto"``: one birth or death proposal per this many parameters in a transition ...
SPARSE_PARAMS_PER_JUMP = 8


#: ... at least this many ...
SPARSE_MIN_JUMPS = 8


#: ... and at most this many: each is an evaluation of the particles, and one per eight parameters
#: (121 on paper 001's p = 100 network) made its fits too slow
SPARSE_MAX_JUMPS = 32


#: ``max_beta_growth="auto"`` on a sparse network: ``beta'`` at most twice ``beta``
SPARSE_BETA_GROWTH = 2.0


def remaining_cost(path, max_growth=None, recent=3):
    """What the rest of an SMC run will cost, from the stages run so far: ``(stages, seconds)``.

    The stages left are ``-log beta`` over the mean ``log beta`` step of the
    last ``recent`` stages (at most ``log max_growth``, the cap on a
    stage's growth), the seconds those stages times the mean time of the
    last ``recent`` stages (``path["seconds"]``). Both are read off the path:
    a stage's step shrinks where the likelihood sharpens and its
    transitions grow (a sparse stage runs until its copies separate), so
    the estimate is an extrapolation from the recent stages and tightens as
    the run goes. ``(None, None)`` before the second stage (one step says
    nothing of the next) and ``(0, 0.0)`` at ``beta = 1``.

    Parameters
    ----------
    path : dict
        ``temperature_path_`` of a fit or a run in progress: lists or
        arrays ``beta`` and ``seconds``, one entry per stage from the
        prior (``beta = 0``).
    max_growth : float or None, default=None
        The sampler's cap on ``beta' / beta`` (``max_beta_growth``).
    recent : int, default=3
        The stages the extrapolation reads.

    Returns
    -------
    stages : int or None
    seconds : float or None

    Examples
    --------
    >>> path = {"beta": [0.0, 1e-4, 2e-4, 4e-4, 8e-4], "seconds": [0.1, 1.0, 2.0, 2.0, 2.0]}
    >>> remaining_cost(path)   # doubling from 8e-4, the eleventh reaches 1: eleven stages of two seconds
    (11, 22.0)
    """
    beta = np.asarray(path["beta"], dtype=np.float64)
    if beta[-1] >= 1.0:
        return 0, 0.0
    positive = beta[beta > 0]
    if len(positive) < 2:
        return None, None
    step = float(np.mean(np.diff(np.log(positive))[-recent:]))
    if max_growth is not None:
        step = min(step, math.log(max_growth))
    if not step > 0:
        return None, None
    stages = int(math.ceil(-math.log(positive[-1]) / step - 1e-9))
    seconds = np.asarray(path["seconds"], dtype=np.float64)[beta > 0][-recent:]
    return stages, stages * float(np.mean(seconds))


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

    Under the mixing prior of a sparse network
    (:class:`~skgibbs.priors.MixingPrior`, the
    :class:`~skgibbs.SparseGibbsMLPRegressor`) the same stages run along the
    bridge from a reference in which every parameter is active with
    probability ``prior.reference`` to the mixing posterior, with RJHMC
    transitions (HMC on the active parameters, births and deaths) as the
    moves and their number adapted per stage (:mod:`.sparse`); the log
    evidence is then that of the normalised mixing prior.

    Parameters
    ----------
    n_particles : int, default=128
        Particles ``P``: the number of draws, rounded up to a multiple of
        the number of seeds (one seed per ``P / K`` particles; the
        estimators pass ``K = 4``). The draws are one population of
        independent particles, of shape ``(1, P, Q)``: one group, not
        chains. The estimators' ``n_samples``, ``burn_in``, ``thin``,
        ``n_chains`` and ``chain_weights="stacking"`` do not apply, and a
        value other than their default is refused
        (:meth:`ignored_settings`).
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
    n_jumps : int or "auto", default="auto"
        Sparse networks: birth or death proposals after each HMC move of a
        transition (:mod:`skgibbs.samplers.rj.rjhmc`). ``"auto"``: one per
        eight parameters, from 8 to 32 (``ceil(Q / 8)`` clipped), so that
        every parameter of a small network is proposed about once in eight
        transitions. The active sets of the copies of a resampled particle
        come apart only through these proposals: with too few, the stages
        end at ``max_mcmc_steps`` with the copies' active sets still alike;
        each costs an evaluation of the particles, so on large networks
        their number is bounded (the user guide's section on sparse
        networks).
    max_mcmc_steps : int, "auto" or None, default="auto"
        Sparse networks: a stage's transitions go on past ``n_mcmc_steps``
        until the copies of the resampled particles have come apart
        (``decorrelation``), at most this many (``"auto"``: 30); None runs
        exactly ``n_mcmc_steps``. Dense networks always run
        ``n_mcmc_steps``.
    decorrelation : float in (0, 1), default=0.1
        Sparse networks: a stage stops once the variance within the families
        of copies of one ancestor, of the particles' data terms and active
        indicators, is at least ``1 - decorrelation`` of the variance over
        all particles (:func:`~skgibbs.samplers.smc.sparse.family_resemblance`).
    max_beta_growth : float > 1, "auto" or None, default="auto"
        ``beta'`` is at most ``max_beta_growth * beta``, and the first stage's
        at most ``1 / (lambda mean_i R_n(theta_i))``, whatever the
        conditional ESS allows: the moves get to follow the likelihood where
        the particles' losses barely differ. ``"auto"``: 2 on sparse
        networks, None (no bound) on dense ones.

    Notes
    -----
    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``log_evidence_`` : float
        ``log Z_1 = log int Pi exp(-lambda R_n)`` with ``Pi`` normalised
        and no likelihood normaliser (module docstring); on a sparse
        network ``Pi`` is the normalised mixing prior.
    ``log_marginal_likelihood_`` : float
        The squared loss only (not the classifier, nor
        ``noise="heteroscedastic"`` or ``"student"``): ``log_evidence_ -
        (n / 2) log(pi temperature_)``, the log density of the standardized
        targets under ``y_i ~ N(f(x_i), temperature_ / 2)``; subtract ``n
        log(y_scale_)`` for the density of ``y`` on its own scale.
    ``temperature_path_`` : dict of ndarray of shape (n_stages_ + 1,)
        One entry per stage from the prior: ``beta``, ``temperature`` (the
        estimator's divided by ``beta``, ``inf`` at ``beta = 0``),
        ``log_evidence`` (the running ``log Z_beta``), ``ess`` (of the
        reweighted particles before resampling), ``acceptance_rate`` and
        ``step_size`` (means over the stage's transitions, NaN at ``beta =
        0``), ``log_marginal_likelihood`` with the squared loss, and
        ``seconds``, the time each stage took (at ``beta = 0``, the start:
        the prior's draws and their losses), from which
        :func:`~skgibbs.samplers.smc.remaining_cost` estimates what the
        rest of a run costs (the ``verbose`` progress line shows it after
        every stage); ``pandas.DataFrame(reg.temperature_path_)``
        tabulates it. For the estimators' networks (and a linear
        potential) it also holds the criteria of each stage's particles
        after their moves, equally weighted draws of the Gibbs posterior at
        the stage's temperature (:func:`skgibbs.criteria.stage_criteria`):
        ``generalization_loss`` (Watanabe's WAIC per example, what
        ``generalization_loss_`` is at the target), ``functional_variance``
        (``lfv_``), ``train_loss``, ``langevin_waic`` and, with the squared
        loss, ``noise_variance``; on the scale of ``y`` for the regressors;
        NaN at ``beta = 0``. Choosing ``temperature`` by WAIC thus costs
        one fit (:func:`skgibbs.model_selection.compare_temperatures`). A
        stage's values are as good as its particles: a stage whose
        reweighting kept few of them (small ``ess``) or whose moves barely
        accepted carries copies of a few particles, and its functional
        variance is then too small. On a sparse network, the mutations' own
        records too: ``n_mcmc_steps`` (the transitions the stage ran),
        ``decorrelation`` (how much the copies still resembled each other
        at its end), ``death_acceptance``, ``birth_acceptance`` and
        ``active_fraction``.
    ``n_stages_``, ``n_particles_`` : int
        The stages run, and the particles (``n_particles`` rounded up to a
        multiple of the number of seeds).
    ``step_size_`` : ndarray of shape (1,)
        The final leapfrog step, in the coordinates of the metric.
    ``inverse_mass_`` : ndarray of shape (n_params,)
        The diagonal of the last stage's inverse metric ``M^-1`` (the
        particles' variances with ``metric="variances"``).

    ``acceptance_rate_`` (shape ``(1,)``) is the acceptance of the last
    stage's moves; ``rhat_``, ``ess_`` and the chains' diagnostics are NaN,
    the particles being independent. ``sample_stats_`` holds, per
    particle, ``acceptance_rate`` and ``step_size``.

    Cost: ``n_stages * (n_mcmc_steps * n_leapfrog + 2)`` gradients of the
    ``P`` particles, batched (``n_grad_evals_`` counts them per particle,
    the Gauss-Newton probes of ``metric="fisher"`` as one per stage).
    The ``smc`` benchmark's page compares the defaults with the default HMC
    fit on ``load_diabetes`` (stages, CPU time, held-out log-likelihood,
    predictive means). On a posterior much narrower than the prior (the
    data-gap regression) the Gauss-Newton metric fitted the data as the
    diagonal one did not (the user guide's section on SMC).

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
    >>> target = Target(pot, Prior(std=1.0), lambda_=20.0)
    >>> res = SMC(n_particles=64, n_mcmc_steps=2, n_leapfrog=5).sample(
    ...     target, torch.zeros(2, 1, dtype=torch.float64), [0, 1], RunSettings())
    >>> res.samples.shape, float(res.temperature_path["beta"][-1])
    ((1, 64, 1), 1.0)
    """

    name = "smc"
    prior_kinds = ("dense", "sparse")
    default_burn_in, default_thin = 0, 1
    mixing_diagnostics = False  # independent particles: R-hat across groups does not apply

    _parameter_constraints = {
        "n_particles": [Interval(Integral, 1, None, closed="left")],
        "target_ess": [Interval(Real, 0, 1, closed="neither")],
        "n_mcmc_steps": [Interval(Integral, 1, None, closed="left")],
        "n_leapfrog": [Interval(Integral, 1, None, closed="left")],
        "target_accept": [Interval(Real, 0, 1, closed="neither")],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "metric": [StrOptions(set(METRICS))],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), None],
        "max_leapfrog": [Interval(Integral, 1, None, closed="left")],
        "n_jumps": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_mcmc_steps": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "decorrelation": [Interval(Real, 0, 1, closed="neither")],
        "max_beta_growth": [Interval(Real, 1, None, closed="neither"), StrOptions({"auto"}), None],
    }

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
        n_jumps="auto",
        max_mcmc_steps="auto",
        decorrelation=0.1,
        max_beta_growth="auto",
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
        self.n_jumps = n_jumps
        self.max_mcmc_steps = max_mcmc_steps
        self.decorrelation = decorrelation
        self.max_beta_growth = max_beta_growth

    def check(self, prior, rho):
        super().check(prior, rho)
        if isinstance(prior, MixingPrior):
            prior.check()  # proper: its draws start the particles
        elif prior.std is None:
            raise ValueError(
                "sampler='smc' starts its particles from the prior, so it needs a proper Gaussian prior "
                "(a flat prior or a bare weight_bound box has no density to draw from): set prior_std to "
                "'auto' or a float (weight_bound may be kept)."
            )
        return 1.0

    _full_data_reads = "reweights and moves its particles on the full data at every stage (rho=1)"

    def ignored_settings(self):
        """A chain's budget (``n_samples``, ``burn_in``, ``thin``, ``n_chains``) and its weights: SMC has no chains."""
        particles = "set sampler=SMC(n_particles=...) for more draws"
        return {
            **super().ignored_settings(),
            "n_samples": Unhonoured(
                "returns its n_particles particles as the draws",
                f"Leave n_samples at its default and {particles}",
            ),
            "burn_in": Unhonoured(
                "has no burn-in: it carries its particles from the prior to the posterior through adaptive "
                "temperature stages",
                "Leave burn_in='auto' (raise sampler=SMC(target_ess=...) for more, smaller stages), or choose a "
                "Markov chain sampler such as sampler='hmc' for a burn-in",
                accepts=(0,),
            ),
            "thin": Unhonoured(
                "returns every particle: they are independent draws, with nothing to thin",
                "Leave thin='auto'",
                accepts=(1,),
            ),
            "n_chains": Unhonoured(
                "carries one population of n_particles particles, returned as one group of independent "
                "draws (samples_ of shape (1, n_particles, n_params)), not as chains",
                f"Leave n_chains at its default and {particles}",
            ),
            "chain_weights": Unhonoured(
                "returns one population of particles, not chains to weigh",
                "Leave chain_weights='equal'",
                accepts=("equal",),
            ),
            "n_jobs": Unhonoured(
                "moves all its particles as one batch in this process",
                "n_jobs has no effect here; leave it None",
                accepts=(1,),
                warn=True,
            ),
        }

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
        started = time.perf_counter()
        self.check(target.prior, run.rho)
        wrap = (lambda t: t) if vectorize else _OneByOne
        gens, resampler, per_group = self._generators(seeds, theta0.device)
        Q, like = theta0.shape[1], theta0
        is_sparse = isinstance(target.prior, MixingPrior)
        if is_sparse:  # the variance of one active coordinate (B^2 / 3 for the uniform density)
            reference = reference_variance(target.prior, Q, theta0)
        else:
            reference = target.prior.variance(Q, theta0.dtype, theta0.device)
        mutate = self._mutate_sparse if is_sparse else self._mutate
        # the particles start as exact draws of the prior (a sparse network's: of the reference at the
        # start of the bridge), each from its own generator
        start = sparse.reference_prior(target.prior) if is_sparse else target.prior
        state = init(gens, wrap(target), start.sample(gens, Q, like))
        path = {
            "beta": [0.0],
            "log_evidence": [0.0],
            "ess": [float(len(gens))],
            "acceptance_rate": [math.nan],
            "step_size": [math.nan],
        }
        path["seconds"] = [time.perf_counter() - started]
        h, n_grad, t = float(self.step_size), 1, 0
        growth = self._growth(is_sparse)
        while state.beta < 1.0:
            stage_start = time.perf_counter()
            if len(path["beta"]) > MAX_STAGES:
                raise RuntimeError(
                    f"sampler='smc' reached beta={state.beta:.3g} after {MAX_STAGES} stages; "
                    "lower target_ess or raise n_particles."
                )
            energy = sparse.bridge_energy(state, target) if is_sparse else None
            beta = next_beta(state, target, float(self.target_ess), energy)
            beta = min(beta, self._beta_cap(state, target, is_sparse))
            log_w, increment, ess = reweight(state, target, beta, energy)
            ancestors = systematic_resample(log_w, uniform([resampler], like))
            state = resample(state, ancestors)
            state = state._replace(log_evidence=state.log_evidence + increment)
            stage = mutate(
                gens, state, target, beta, h, t, run, reference=reference, wrap=wrap, ancestors=ancestors
            )
            state, h, t = stage.state, stage.step_size, t + stage.n_steps
            n_grad += stage.n_grad
            path["beta"].append(beta)
            path["log_evidence"].append(state.log_evidence)
            path["ess"].append(ess)
            path["acceptance_rate"].append(float(stage.accepted.mean()))
            path["step_size"].append(stage.mean_step_size)
            for name, value in (stage.records or {}).items():
                path.setdefault(name, [math.nan] * (len(path["beta"]) - 1)).append(value)
            criteria = stage_criteria(target.potential, state.theta, target.n_data / (target.lambda_ * beta))
            for name, value in criteria.items():
                path.setdefault(name, [math.nan] * (len(path["beta"]) - 1)).append(value)
            path["seconds"].append(time.perf_counter() - stage_start)
            if run.verbose:
                self._report(run, path, growth)
        return self._result(state, stage, path, target, h, len(seeds), per_group, n_grad)

    def _mutate(self, gens, state, target, beta, h, t, run, *, reference, wrap, ancestors=None):
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
        return _Stage(state, h, accepted / n_steps, step_sum / n_steps, grads, inverse_mass, n_steps)

    def _mutate_sparse(self, gens, state, target, beta, h, t, run, *, reference, wrap, ancestors):
        """The stage's RJHMC transitions at ``pi_beta`` until the copies separate (:mod:`.sparse`)."""
        target_b = wrap(sparse.bridged(target, beta))
        particles = sparse.rj_state(state, target_b)
        inverse_mass = sparse.active_variance(state.theta, particles.active, reference)
        least, most = int(self.n_mcmc_steps), self._max_mcmc_steps()
        n_jumps = self._n_jumps(state.theta.shape[1])
        accepted = torch.zeros(particles.theta.shape[0], dtype=torch.float64)
        jumps = torch.zeros(2, 2, dtype=torch.float64)  # (proposed, accepted) x (deaths, births)
        grads, step_sum, remembered = 0, 0.0, 1.0
        phase = f"SMC stage beta={beta:.3g}"
        for i in range(most):
            h_t = h * (1.0 + JITTER * (2.0 * halton(t + i + 1) - 1.0))
            particles, info = sparse.move(
                gens, particles, target_b, h_t, inverse_mass, self._n_leapfrog(h_t), n_jumps
            )
            accepted += info.hmc.is_accepted.double().cpu()
            jumps += torch.stack([info.jump_proposed.sum(0), info.jump_accepted.sum(0)]).double().cpu()
            grads += int(info.hmc.num_steps.max()) + n_jumps  # a jump costs one gradient
            step_sum += h_t
            h = adapt_step_size(h, float(info.hmc.acceptance_prob.mean()), self.target_accept)
            remembered = sparse.family_resemblance(ancestors, particles)
            if run.verbose:
                progress(run, phase, i, most, decorrelation=lambda r=remembered: f"{r:.2f}")
            if i + 1 >= least and remembered < float(self.decorrelation):
                break
        n_steps = i + 1
        progress_close(run, phase)
        state, grads = _evaluate(wrap(target), particles.theta, beta, state.log_evidence), grads + 1
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = (jumps[1] / jumps[0]).numpy()
        records = {
            "n_mcmc_steps": float(n_steps),
            "decorrelation": remembered,
            "death_acceptance": float(rates[0]),
            "birth_acceptance": float(rates[1]),
            "active_fraction": float(particles.active.double().mean()),
        }
        return _Stage(state, h, accepted / n_steps, step_sum / n_steps, grads, inverse_mass, n_steps, records)

    def _growth(self, is_sparse):
        """The cap on ``beta' / beta`` (``max_beta_growth`` with ``"auto"`` resolved), or None."""
        growth = self.max_beta_growth
        if growth == "auto":
            growth = SPARSE_BETA_GROWTH if is_sparse else None
        return None if growth is None else float(growth)

    @staticmethod
    def _report(run, path, growth):
        """One progress line a stage: ``beta``, and the stages and seconds left (:func:`remaining_cost`)."""
        done = len(path["beta"]) - 1
        stages, seconds = remaining_cost(path, growth)
        left = "n/a" if stages is None else f"about {stages} stages, {seconds:.0f} s"
        total = done + (stages if stages is not None else 1)
        progress(run, "SMC path", done - 1, total, beta=lambda: f"{path['beta'][-1]:.3g}", left=lambda: left)

    def _beta_cap(self, state, target, is_sparse):
        """The largest ``beta'`` that ``max_beta_growth`` allows after ``state`` (1 without a cap).

        From the prior, ``1 / (lambda mean_i R_n(theta_i))``: the mean
        particle's likelihood factor is then ``e^-1``.
        """
        growth = self._growth(is_sparse)
        if growth is None:
            return 1.0
        if state.beta > 0:
            return min(1.0, float(growth) * state.beta)
        mean = float(torch.nan_to_num(target.scale * state.loss.double(), nan=0.0, posinf=0.0).mean())
        return min(1.0, 1.0 / mean) if mean > 0 else 1.0

    def _n_jumps(self, n_params):
        """Births or deaths per transition: ``n_jumps``, or ``"auto"``'s ``ceil(Q / 8)`` within ``[8, 32]``."""
        if self.n_jumps == "auto":
            per_params = -(-int(n_params) // SPARSE_PARAMS_PER_JUMP)
            return min(SPARSE_MAX_JUMPS, max(SPARSE_MIN_JUMPS, per_params))
        return int(self.n_jumps)

    def _max_mcmc_steps(self):
        """Most transitions of a sparse stage: ``max_mcmc_steps`` (``"auto"`` resolved), at least ``n_mcmc_steps``."""
        most = self.max_mcmc_steps
        if most is None:
            return int(self.n_mcmc_steps)
        return max(SPARSE_MAX_STEPS if most == "auto" else int(most), int(self.n_mcmc_steps))

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
        path["temperature"] = n / (target.lambda_ * beta.clip(min=1e-300))
        path["temperature"][beta == 0] = np.inf
        info = {
            "log_evidence": float(state.log_evidence),
            "temperature_path": path,
            "n_stages": len(beta) - 1,
            "n_particles": K * per_group,
            "step_size": np.full(1, h),
            "inverse_mass": stage.inverse_mass.cpu().numpy(),
        }
        if getattr(target.potential, "loss", None) == "squared":
            # log p(y | sigma^2 = T_beta / 2) = log Z_beta - (n / 2) log(2 pi sigma^2); -inf at beta = 0
            path["log_marginal_likelihood"] = path["log_evidence"] - 0.5 * n * np.log(
                math.pi * path["temperature"]
            )
            info["log_marginal_likelihood"] = float(path["log_marginal_likelihood"][-1])
        # one population of independent particles: one group of draws, never K made-up chains
        samples = state.theta.reshape(1, K * per_group, -1).cpu().numpy()
        rate = stage.accepted.reshape(1, K * per_group).numpy()
        return ChainResult(
            samples, rate.mean(1), np.full(1, n_grad, dtype=np.int64), {"acceptance_rate": rate}, False, info
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
                f"after reweighting (at least {ESS_WARN:g} wanted; each stage aims at target_ess * n_particles = "
                f"{float(self.target_ess) * int(self.n_particles):.3g}), so the draws descend from a handful of "
                "particles. Raise n_particles or target_ess."
            )
        rate = path["acceptance_rate"][1:]
        if rate.size and np.nanmin(rate) < ACCEPT_WARN:
            s = int(np.nanargmin(rate)) + 1
            out.append(
                f"At SMC stage {s} (beta={path['beta'][s]:.3g}) the HMC moves accepted only "
                f"{rate[s - 1]:.1%} of their proposals, so the resampled particles stayed copies of each "
                "other. Raise n_mcmc_steps (the step size adapts from one move to the next) or lower step_size (the "
                "first stage's step)."
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
    n_steps: int  # transitions run
    records: dict = None  # per-stage values of the path beside the common ones
