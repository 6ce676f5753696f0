"""The kernels of the dense Gibbs MLPs (HMC, the Langevin family), shared by regressor and classifier."""

from numbers import Integral, Real

from ._base import BaseGibbsMLP
from ._compat import Interval, StrOptions

__all__ = ["DenseKernelMixin", "fill_doc"]

# burn_in="auto" and thin="auto" (see GibbsMLPRegressor's docstring and benchmarks/bench_mixing.py).
_HMC_BURN_IN, _LANGEVIN_BURN_IN, _LANGEVIN_THIN = 250, 1000, 10


class DenseKernelMixin:
    """``sampler``, ``rho`` and the HMC/Langevin settings of an estimator over every parameter."""

    _parameter_constraints = {
        **BaseGibbsMLP._parameter_constraints,
        "sampler": [StrOptions({"auto", "hmc", "csmala", "mala", "smala", "sgld"})],
        "rho": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "correction": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "metric": [StrOptions({"prior", "adaptive", "identity"})],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "restart_after": [Interval(Integral, 1, None, closed="left"), None],
    }

    def _resolve_sampler(self):
        """``(sampler_, rho_)``: "auto" is HMC on the full data and csMALA on batches."""
        if self.sampler in ("mala", "hmc"):
            return self.sampler, 1.0
        rho = 1.0 if self.rho == "auto" else float(self.rho)
        if self.sampler == "auto":
            return ("hmc" if rho >= 1.0 else "csmala"), rho
        return self.sampler, rho

    def _chain_config(self):
        hmc = self.sampler_ == "hmc"
        return self._config(
            self.sampler_,
            _HMC_BURN_IN if hmc else _LANGEVIN_BURN_IN,
            1 if hmc else _LANGEVIN_THIN,
            rho=self.rho_,
            correction=self.correction,
            restart_after=self.restart_after,
            metric=self.metric,
            trajectory_length=self.trajectory_length,
        )


# Docstring parts every dense estimator shares, inserted by ``fill_doc`` (indented for a class docstring).
_KERNEL_PARAMETERS = """\
    step_size : float > 0, default=1e-4
        Initial Langevin step ``h`` of the proposal
        ``theta' = theta - h grad U_B(theta) + s xi``, ``U_B`` the batch
        potential. With ``proposal_std="auto"`` it is first rescaled by
        doubling/halving and then adapted during burn-in toward an acceptance
        rate of 0.574 (frozen afterwards).
    proposal_std : float > 0 or "auto", default="auto"
        ``s``. ``"auto"`` is ``sqrt(2 h)`` (standard MALA, step size
        adapted); a float gives the decoupled proposal of paper 000 §5, with
        ``step_size`` and ``proposal_std`` both fixed.
    n_samples : int, default=175
        Draws kept per chain.
    burn_in : int or "auto", default="auto"
        Transitions discarded (and used for adaptation) per chain; ``"auto"``
        is 250 for HMC and 1000 for the Langevin kernels. On the diabetes data
        (442 rows, the default 10-100-100-1 network) a default HMC fit (250
        warm-up transitions, 175 draws per chain) spends about 6500
        gradients per chain (the four chains batched, 3.5 ms a batched
        gradient) after 6 s of pre-training: 27 to 32 s on one core; R-hat
        of the function values 1.03, bulk ESS 150 to 250 (three seeds). The
        cost of a gradient grows with ``n`` times the number of weights, and
        the leapfrog steps per transition (at most 64) with the
        concentration of the posterior: see ``benchmarks/bench_large_n.py``.
    thin : int or "auto", default="auto"
        Keep every ``thin``-th state after burn-in; ``"auto"`` is 1 for HMC
        (whose draws are nearly independent) and 10 for the Langevin
        kernels.
    n_chains : int, default=4
        Independent chains, each started from its own pre-trained network.
        HMC adapts its trajectory length across them.
    target_accept : float in (0, 1) or "auto", default="auto"
        Acceptance rate aimed at by the step-size adaptation: ``"auto"`` is
        0.8 for HMC (Stan's default) and 0.574 for the Langevin kernels.
    metric : {"prior", "adaptive", "identity"}, default="prior"
        HMC's diagonal metric (inverse mass): the prior variances, so that
        the sampler moves in the coordinates the prior makes isotropic;
        ``"adaptive"`` re-estimates it from the warm-up draws in Stan's
        windows; ``"identity"``.
    trajectory_length : float > 0 or "auto", default="auto"
        HMC's integration time ``T``: transition ``t`` runs ``ceil(u_t T /
        h)`` leapfrog steps (at most 64), ``u_t`` a quasi-random jitter in
        (0, 1). ``"auto"`` is ``T = pi / 2`` in the coordinates of the metric,
        a quarter period of a direction the data leave at its prior scale
        (measured against the ChEES criterion of Hoffman, Radul & Sountsov
        (2021) in ``benchmarks/bench_mixing.py``).
    restart_after : int or None, default=100
        After this many rejections in a row the current state's batch is
        redrawn (paper 000 §5). This perturbs the target slightly; restarts
        are counted in ``n_restarts_``. ``None`` disables it. Only active
        for ``rho < 1``.
    pretrain_iter : int, default=1000
        Adam steps (learning rate 1e-3) on 80% of the data before sampling,
        keeping the iterate with the lowest loss on the other 20%. 0 starts
        the chains at the random initialisation.
    weight_bound : float or None, default=None
        ``B`` of the uniform prior box ``[-B, B]^Q`` (proposals outside are
        rejected); None is no box.
    prior_std : float, "auto" or None, default="auto"
        Standard deviation of a Gaussian prior on the flat parameters (on
        the standardized scale). ``"auto"`` gives each weight and bias
        ``g / sqrt(n_in)`` of its layer, so that every unit's pre-activation
        has prior variance of order one: ``g = 1`` for the regressors, ``g =
        2`` for the classifier, whose logits must reach a few units (see
        :class:`~skgibbs.GibbsMLPClassifier`). A float is the same for all;
        None is the flat prior (with ``weight_bound``, the uniform box of
        paper 000).
    confidence_level : float in (0, 1), default=0.95
        Default level of :meth:`predict_interval` (and of the regressors'
        ``credible_radius_``).
    n_jobs : int, default=None
        joblib workers running chains in parallel when the network is too
        large for chains to be batched in one process.
    device : str, default="cpu"
        torch device for sampling (``"cuda"`` where available). Fitted
        state is NumPy either way.
    random_state : int, RandomState instance or None, default=None
        Seeds one ``torch.Generator`` per chain. The global torch RNG is
        never used.
    verbose : int, default=0
        Print progress to stderr.
"""

_KERNEL_ATTRIBUTES = """\
    sampler_ : str
        The kernel used (``"auto"`` resolved).
    rho_ : float
        Batch probability used.
    lambda_ : float
        ``n / temperature_``.
    lambda_prime_ : float
        Inverse temperature of the batch terms (``lambda'`` for csMALA).
    correction_ : float
        Frozen ``zeta`` (0 unless csMALA with ``rho < 1``).
    n_divergent_ : ndarray of shape (n_chains,)
        Divergent HMC transitions after burn-in (energy error above 1000 or
        a non-finite trajectory; always 0 for the Langevin kernels). Any
        divergence raises a :class:`~skgibbs.SamplerWarning`.
    trajectory_length_ : float or None
        Frozen HMC integration time ``T`` (None for the Langevin kernels).
    n_grad_evals_ : ndarray of shape (n_chains,)
        Gradient evaluations of the full (or batch) potential per chain,
        burn-in included: the cost of the fit.
    sample_stats_ : dict of ndarray of shape (n_chains, n_samples)
        Per draw, over the ``thin`` transitions before it:
        ``acceptance_rate``, ``step_size``, ``lp`` (``log pi_lambda`` up to
        a constant) and, for HMC, ``diverging``, ``n_steps`` (leapfrog
        steps) and ``energy_error``; what :meth:`to_arviz` puts in
        ``sample_stats``.
    step_size_, proposal_std_ : ndarray of shape (n_chains,)
        Frozen proposal parameters: the Langevin ``h`` and ``s``, or HMC's
        leapfrog step (in the coordinates of its metric; ``proposal_std_`` is
        NaN for HMC).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after burn-in.
    n_restarts_ : ndarray of shape (n_chains,)
    accepted_batch_sizes_ : ndarray of shape (n_accepted,)
        ``|Z|_1`` of every accepted step after burn-in (paper 000 Fig. 4);
        empty for ``rho = 1``.
    batch_noise_ : float
        Standard deviation of the log Metropolis-Hastings ratio caused by
        drawing two independent Bernoulli batches,
        ``sqrt(2 rho (1 - rho) sum_i (c l_i + d)^2)`` averaged over the draws
        (0 for ``rho = 1``). Above about 2 the chains stick to favourable
        batches and a :class:`~skgibbs.SamplerWarning` is raised.
    surrogate_scale_ : float
        Mean over draws and examples of the per-example term ``c l_i(theta)``
        of the batch potential: ``lambda' l_i / n`` for csMALA, ``lambda l_i /
        (n rho)`` for sMALA (and ``lambda l_i / n`` otherwise).
"""


def fill_doc(cls):
    """Insert the shared parameter and attribute entries into ``cls.__doc__``."""
    cls.__doc__ = cls.__doc__.replace("    {kernel_parameters}\n", _KERNEL_PARAMETERS).replace(
        "    {kernel_attributes}\n", _KERNEL_ATTRIBUTES
    )
    return cls
