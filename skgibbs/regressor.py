"""GibbsMLPRegressor: a multilayer perceptron sampled from its Gibbs posterior."""

import copy
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, column_or_1d

from ._arviz import from_groups
from ._data import check_numeric, safe_scale
from ._levels import check_levels, mixture_quantiles
from ._compat import Interval, StrOptions, check_is_fitted, validate_data
from ._threads import torch_threads
from .credible import credible_radius, parameter_radius
from .criteria import gaussian_log_likelihood, langevin_waic, waic
from .model import ACTIVATIONS, MLPSpec
from ._pretrain import pretrain
from ._reliability import function_space_mixing, warn_if_unreliable
from .potential import MLPPotential, Prior
from .samplers import ChainConfig, run_chains, surrogate_constants

__all__ = ["GibbsMLPRegressor"]

# burn_in="auto" and thin="auto" (see the class docstring and benchmarks/bench_mixing.py).
_HMC_BURN_IN, _LANGEVIN_BURN_IN, _LANGEVIN_THIN = 250, 1000, 10
# Chains are advanced together in one process while a step is this cheap
# (examples in the batch times parameters); see benchmarks/bench_speed.py.
_VECTORIZE_WORK = 5_000_000


class GibbsMLPRegressor(RegressorMixin, BaseEstimator):
    r"""Multilayer perceptron regressor sampled from its Gibbs posterior.

    The weights ``theta`` are drawn by Metropolis-adjusted Langevin chains
    from the Gibbs posterior

    .. math::

        \pi_\lambda(\theta) \propto \Pi(\theta) \exp(-\lambda R_n(\theta)),
        \quad R_n(\theta) = \frac1n \sum_{i=1}^n \ell_i(\theta),
        \quad \lambda = n / \mathrm{temperature},

    with ``ell_i(theta) = (y_i - f_theta(x_i))**2`` computed on the
    *standardized* data: every column of ``X`` and ``y`` is centred and
    scaled to unit variance inside ``fit`` (constant columns are only
    centred), so that the defaults work on targets of any scale. All
    predictions are returned on the original scale of ``y``.
    ``temperature = 2 sigma^2`` (sigma^2 on the standardized scale) is the
    Bayesian posterior under Gaussian noise; ``temperature="auto"`` sets it
    from the held-out residuals of the pre-training.

    Each ``sampler`` draws from the following density, exactly:

    - ``"hmc"``: :math:`\pi_\lambda` itself, by Hamiltonian Monte Carlo on
      the full data (:mod:`skgibbs.samplers.hmc`): jittered leapfrog
      trajectories with a diagonal metric, step size adapted per chain during
      burn-in; the default whenever the full data is used.
    - ``"mala"``: :math:`\pi_\lambda` itself (Metropolis-Hastings on the full
      data).
    - ``"smala"`` (paper 000 §2.2, (2.10)), batches
      :math:`Z_i \sim \mathrm{Ber}(\rho)` and risk normalised by
      :math:`n\rho`:
      :math:`\bar\pi(\theta) \propto \Pi(\theta) \prod_i (\rho e^{-\lambda
      \ell_i(\theta)/(n\rho)} + 1 - \rho)`.
    - ``"csmala"`` (Alg. 1 of paper 000, per-example term
      :math:`\lambda'\ell_i/n + \zeta\log\rho`):
      :math:`\tilde\pi(\theta) \propto \Pi(\theta) \prod_i (a e^{-\lambda'
      \ell_i(\theta)/n} + 1 - \rho)` with :math:`a = \rho^{1-\zeta}`
      (:math:`\zeta = 1` is (2.12)) and the compensated
      :math:`\lambda' = \lambda (a + 1 - \rho)/a`, which makes
      :math:`\tilde\pi` agree with :math:`\pi_\lambda` to first order in
      :math:`\lambda'\ell_i/n` (:math:`\zeta = 1`: :math:`\lambda' =
      (2-\rho)\lambda`, Lemma 3). The drift uses the same :math:`\lambda'`.
    - ``"sgld"``: unadjusted Langevin on Bernoulli(rho) batches, which
      targets :math:`\pi_\lambda` only as the step size goes to zero.

    At ``rho = 1`` ``"smala"`` and ``"csmala"`` are ``"mala"``. For
    ``rho < 1`` the surrogates are close to :math:`\pi_\lambda` only while
    :math:`\lambda'\ell_i/n \ll 1`; the fitted ``surrogate_scale_`` reports
    this quantity and a :class:`~skgibbs.SamplerWarning` asks to raise
    ``rho`` or ``temperature`` when it exceeds 0.1. At the Bayesian
    temperature :math:`2\sigma^2` it is about 1/2, so stochastic batches are
    for tempered (larger) temperatures.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(100, 100)
        Widths of the hidden layers; ``()`` is the linear model.
    activation : {"relu", "tanh", "logistic", "identity"}, default="relu"
        Hidden-layer activation.
    sampler : {"auto", "hmc", "csmala", "mala", "smala", "sgld"}, default="auto"
        Markov kernel (see above). ``"auto"`` is ``"hmc"`` when the full
        data is used (``rho_ == 1``) and ``"csmala"`` when ``rho_ < 1``.
    temperature : float > 0 or "auto", default="auto"
        ``n / lambda`` on the standardized scale; ``"auto"`` is
        ``2 sigma^2`` with ``sigma^2`` the held-out mean squared error of the
        pre-trained networks (2 when ``pretrain_iter=0``).
    rho : float in (0, 1] or "auto", default="auto"
        Bernoulli batch probability. ``"auto"`` is 1 (the full data, exact
        HMC or MALA) whatever ``n``: at the Bayesian temperature the batch
        surrogates are far from the posterior (``surrogate_scale_`` about
        1/2 whatever ``n``), so batches are left to an explicit ``rho < 1``
        with a tempered ``temperature``.
    correction : float >= 0 or "auto", default="auto"
        csMALA's ``zeta``. ``"auto"`` (paper 000 §5) centres the per-example
        term during burn-in, ``zeta log rho = -lambda' Rbar_n / n`` with
        ``Rbar_n`` the full-data risk averaged over chains, recomputed every
        100 steps, then freezes it.
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
        (0, 1). ``"auto"`` adapts ``T`` during burn-in by the ChEES criterion
        across the chains (Hoffman, Radul & Sountsov, 2021).
    restart_after : int or None, default=100
        After this many rejections in a row the current state's batch is
        redrawn (paper 000 §5). This perturbs the target slightly; restarts
        are counted in ``n_restarts_``. ``None`` disables it. Only active
        for ``rho < 1``.
    pretrain_iter : int, default=1000
        Adam steps (learning rate 1e-3) on 80% of the data before sampling,
        keeping the iterate with the best error on the other 20%. 0 starts
        the chains at the random initialisation.
    weight_bound : float or None, default=None
        ``B`` of the uniform prior box ``[-B, B]^Q`` (proposals outside are
        rejected); None is no box.
    prior_std : float, "auto" or None, default="auto"
        Standard deviation of a Gaussian prior on the flat parameters (on
        the standardized scale). ``"auto"`` gives each weight and bias
        ``1 / sqrt(n_in)`` of its layer, so that every unit's pre-activation
        has prior variance of order one; a float is the same for all; None
        is the flat prior (with ``weight_bound``, the uniform box of paper
        000).
    confidence_level : float in (0, 1), default=0.95
        Level of ``credible_radius_`` and the default of
        :meth:`predict_interval`.
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

    Attributes
    ----------
    samples_ : ndarray of shape (n_chains, n_samples, n_params)
        Posterior draws of the flat parameters (scikit-learn's
        ``MLPRegressor`` order: per layer ``coefs_[l]`` row-major, then
        ``intercepts_[l]``), for the standardized data.
    n_features_in_ : int
    temperature_ : float
        Temperature used (standardized scale).
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
    noise_variance_ : float
        ``sigma^2``: the posterior mean of the training risk,
        ``E_theta[R_n(theta)]``, on the scale of ``y``. In the Gaussian linear
        model at temperature ``2 sigma^2`` with flat prior it is unbiased for
        the noise variance (the residual sum of squares plus the posterior
        spread, i.e. equipartition). Used by ``return_std``, predictive
        intervals, :meth:`sample_y` and the log-likelihood.
    rhat_ : float
        Largest rank-normalised split R-hat (Vehtari et al., 2021) of the
        function values ``f_theta(x_i)`` at the training inputs, over the
        chains (:func:`skgibbs.diagnostics.rhat`). Above 1.05 a
        :class:`~skgibbs.SamplerWarning` says that the chains have not mixed
        (Vehtari et al. recommend 1.01 for final results). NaN with fewer
        than 8 draws per chain.
    ess_ : float
        Smallest bulk effective sample size of those function values
        (:func:`skgibbs.diagnostics.effective_sample_size`); below 100 a
        :class:`~skgibbs.SamplerWarning` is raised.
    credible_radius_ : float
        ``tau_alpha`` of paper 000 (3.4) at ``confidence_level`` on the
        training inputs (scale of ``y``).
    credible_radius_params_ : float
        Quantile of ``|theta - theta_bar|_2`` over the draws (parameter level).
    lfv_ : float
        Functional variance ``sum_i Var_theta[log N(y_i; f_theta(x_i),
        sigma^2)]`` over the draws (paper 004 (13)).
    train_loss_ : float
        ``(1/n) sum_i (y_i - fbar(x_i))^2 / (2 sigma^2)`` with ``fbar`` the
        posterior mean.
    waic_ : float
        ``train_loss_ + lfv_ / n``: the Langevin-WAIC of paper 004 §4.3 per
        sample (on the scale of its Table 7). Its training loss divides by
        the model's own ``sigma^2``, so it compares fits on one data set only
        through ``lfv_``: rank models by ``generalization_loss_``.
    generalization_loss_ : float
        Watanabe's WAIC per sample for the tempered posterior,
        ``-(1/n) [sum_i log mean_theta p(y_i | theta) - beta sum_i
        Var_theta log p(y_i | theta)]`` with ``p = N(f_theta(x_i),
        noise_variance_)`` and ``beta = 2 sigma^2 / temperature_`` (the
        power of this likelihood in the Gibbs posterior, ``sigma^2`` on the
        standardized scale; 1 at the Bayesian temperature): an estimate of
        the negative log predictive density of a new example (nats, on the
        scale of ``y``). Lower is better; it is what
        :class:`~skgibbs.model_selection.CriterionGridSearch` ranks with
        ``criterion="waic"``.
    waic_tempering_ : float
        The ``beta`` of ``generalization_loss_``.

    See Also
    --------
    sklearn.neural_network.MLPRegressor : the same network, trained.
    sklearn.linear_model.BayesianRidge : ``return_std`` in the same sense.

    Notes
    -----
    One transition (Alg. 1 (c) of paper 000): draw ``Z' ~ Ber(rho)^n``,
    propose ``theta' ~ N(theta - h grad U_Z(theta), s^2 I)``, accept with
    probability ``min(1, exp(U_Z(theta) - U_Z'(theta') + log q(theta |
    theta') - log q(theta' | theta)))`` where ``U_Z(theta) = c sum_i Z_i
    l_i(theta) + d |Z|_1 - log Pi(theta)`` (``c = lambda'/n``, ``d = zeta log
    rho`` for csMALA). The value and gradient of the current point are cached,
    so a step costs one forward and one backward pass on the batch.

    One HMC transition: draw ``p ~ N(0, M)`` with ``M = diag(1 / m)`` (``m``
    the prior variances by default), run ``L = ceil(u T / h)`` leapfrog steps
    on ``H = U(theta) + p' diag(m) p / 2`` with ``U = lambda R_n - log Pi``
    and accept the end point with probability ``min(1, exp(H_0 - H_L))``;
    ``L`` full-data gradients per transition.

    References
    ----------
    .. [1] Bieringer, Kasieczka, Steffen, Trabs. The surrogate
       Gibbs-posterior of a corrected stochastic MALA.
    .. [2] Okuno, Yano. A generalization gap estimation for
       overparameterized models via the Langevin functional variance.
    .. [3] Neal. MCMC using Hamiltonian dynamics. Handbook of Markov Chain
       Monte Carlo, 2011.
    .. [4] Hoffman, Gelman. The No-U-Turn sampler, JMLR 2014 (dual averaging).
    .. [5] Vehtari, Gelman, Simpson, Carpenter, Bürkner. Rank-normalization,
       folding, and localization: an improved R-hat, Bayesian Analysis 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skgibbs import GibbsMLPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (60, 1))
    >>> y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=60)
    >>> reg = GibbsMLPRegressor(hidden_layer_sizes=(16,), n_samples=20, burn_in=100,
    ...                         pretrain_iter=200, random_state=0).fit(X, y)
    >>> reg.samples_.shape
    (4, 20, 49)
    >>> y_pred, y_pis = reg.predict_interval(X[:3], confidence_level=0.9)
    >>> y_pis.shape
    (3, 2, 1)
    """

    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "sampler": [StrOptions({"auto", "hmc", "csmala", "mala", "smala", "sgld"})],
        "temperature": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "rho": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "correction": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "proposal_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "burn_in": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "thin": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "target_accept": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "metric": [StrOptions({"prior", "adaptive", "identity"})],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "restart_after": [Interval(Integral, 1, None, closed="left"), None],
        "pretrain_iter": [Interval(Integral, 0, None, closed="left")],
        "weight_bound": [Interval(Real, 0, None, closed="neither"), None],
        "prior_std": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "device": [str],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100, 100),
        activation="relu",
        *,
        sampler="auto",
        temperature="auto",
        rho="auto",
        correction="auto",
        step_size=1e-4,
        proposal_std="auto",
        n_samples=175,
        burn_in="auto",
        thin="auto",
        n_chains=4,
        target_accept="auto",
        metric="prior",
        trajectory_length="auto",
        restart_after=100,
        pretrain_iter=1000,
        weight_bound=None,
        prior_std="auto",
        confidence_level=0.95,
        n_jobs=None,
        device="cpu",
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.sampler = sampler
        self.temperature = temperature
        self.rho = rho
        self.correction = correction
        self.step_size = step_size
        self.proposal_std = proposal_std
        self.n_samples = n_samples
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.target_accept = target_accept
        self.metric = metric
        self.trajectory_length = trajectory_length
        self.restart_after = restart_after
        self.pretrain_iter = pretrain_iter
        self.weight_bound = weight_bound
        self.prior_std = prior_std
        self.confidence_level = confidence_level
        self.n_jobs = n_jobs
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Sample the posterior of the network weights given ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : GibbsMLPRegressor
        """
        saved = copy.copy(self.__dict__)
        try:
            return self._fit(X, y)
        except BaseException:
            # a failed re-fit leaves the earlier fit intact
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _fit(self, X, y):
        self._validate_params()
        layers = self._check_layers()
        device = self._check_device()
        check_numeric(X, "X")
        check_numeric(y, "y")
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"GibbsMLPRegressor needs at least 2 samples to fit, got n_samples={n}.")
        self.x_mean_, self.x_scale_ = X.mean(0), safe_scale(X.std(0))
        self.y_mean_, self.y_scale_ = float(y.mean()), float(safe_scale(np.array([y.std()]))[0])
        spec = MLPSpec(X.shape[1], layers, self.activation)
        Xt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32, device=device)
        yt = torch.as_tensor((y - self.y_mean_) / self.y_scale_, dtype=torch.float32, device=device)
        seeds = np.random.SeedSequence(check_random_state(self.random_state).randint(2**31)).generate_state(
            self.n_chains + 1
        )
        with torch_threads(device):
            theta0, heldout_mse = self._initial_points(spec, Xt, yt, seeds)
            self.temperature_ = 2.0 * heldout_mse if self.temperature == "auto" else float(self.temperature)
            self.sampler_, self.rho_ = self._resolve_sampler()
            self.lambda_ = n / self.temperature_
            result = run_chains(
                MLPPotential(spec, Xt, yt),
                theta0,
                [int(s) for s in seeds[1:]],
                self._chain_config(),
                prior=self._prior(spec, device),
                vectorize=self._vectorize(n, spec.n_params, device),
                n_jobs=self.n_jobs,
            )
        self._store(result, spec)
        self._summarise(X, y)
        return self

    def _prior(self, spec, device):
        std = self.prior_std
        if std == "auto":
            std = spec.fan_in_std(torch.float32).to(device)
        return Prior(std, self.weight_bound)

    def _check_layers(self):
        layers = self.hidden_layer_sizes
        layers = (layers,) if isinstance(layers, Integral) else tuple(layers)
        if any(not isinstance(w, Integral) or isinstance(w, bool) or w < 1 for w in layers):
            raise ValueError(
                f"hidden_layer_sizes must hold positive integers (use () for a linear model), got {layers!r}."
            )
        return tuple(int(w) for w in layers)

    def _check_device(self):
        try:
            device = torch.device(self.device)
        except RuntimeError as exc:
            raise ValueError(f"device={self.device!r} is not a torch device; use 'cpu' or 'cuda'.") from exc
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device='cuda' was requested but torch sees no GPU; use device='cpu'.")
        return device

    def _resolve_sampler(self):
        """``(sampler_, rho_)``: "auto" is HMC on the full data and csMALA on batches."""
        if self.sampler in ("mala", "hmc"):
            return self.sampler, 1.0
        rho = 1.0 if self.rho == "auto" else float(self.rho)
        if self.sampler == "auto":
            return ("hmc" if rho >= 1.0 else "csmala"), rho
        return self.sampler, rho

    def _vectorize(self, n, n_params, device):
        if self.n_chains == 1 or device.type == "cuda":
            return True
        batch = n * (self.rho_ if self.rho_ < 1 else 1.0)
        return batch * n_params <= _VECTORIZE_WORK

    def _chain_config(self):
        hmc = self.sampler_ == "hmc"
        return ChainConfig(
            sampler=self.sampler_,
            lam=self.lambda_,
            rho=self.rho_,
            correction=self.correction,
            step_size=float(self.step_size),
            proposal_std=self.proposal_std,
            n_samples=self.n_samples,
            burn_in=(_HMC_BURN_IN if hmc else _LANGEVIN_BURN_IN) if self.burn_in == "auto" else self.burn_in,
            thin=(1 if hmc else _LANGEVIN_THIN) if self.thin == "auto" else self.thin,
            restart_after=self.restart_after,
            target_accept=None if self.target_accept == "auto" else float(self.target_accept),
            verbose=self.verbose,
            metric=self.metric,
            trajectory_length=self.trajectory_length,
        )

    def _initial_points(self, spec, Xt, yt, seeds):
        """Glorot initialisation per chain, then Adam with early stopping (paper 000 §5)."""
        gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds[1:]]
        theta = torch.cat([spec.init_params(g, 1, torch.float32) for g in gens]).to(Xt.device)
        if self.pretrain_iter == 0:
            return theta, 1.0
        return pretrain(spec, theta, Xt, yt, self.pretrain_iter, int(seeds[0]))

    def _store(self, result, spec):
        self.spec_ = spec
        self.samples_ = result.samples.astype(np.float32)
        self.acceptance_rate_ = result.acceptance_rate
        self.n_restarts_ = result.n_restarts
        self.step_size_ = result.step_size
        self.proposal_std_ = result.proposal_std
        self.correction_ = float(result.correction)
        self.lambda_prime_ = float(result.lambda_prime)
        self.accepted_batch_sizes_ = result.accepted_batch_sizes
        self.n_divergent_ = result.n_divergent
        self.trajectory_length_ = result.trajectory_length
        self.n_grad_evals_ = result.n_grad
        S = self.samples_.shape[1]
        self.sample_stats_ = dict(result.draw_stats)
        self.sample_stats_["step_size"] = np.repeat(result.step_size[:, None], S, axis=1)

    def _summarise(self, X, y):
        F = self._draws(X)  # (S, n) on the scale of y
        fbar = F.mean(0)
        resid2 = (y[None, :] - F) ** 2
        self.noise_variance_ = float(resid2.mean())
        std_losses = resid2 / self.y_scale_**2
        # log pi_lambda of each draw up to a constant: -lambda R_n(theta) + log Pi(theta)
        with torch.no_grad():
            theta = torch.as_tensor(self.samples_.reshape(-1, self.spec_.n_params))
            log_prior = self._prior(self.spec_, torch.device("cpu")).log_density(theta).double().numpy()
        lp = log_prior - self.lambda_ * std_losses.mean(1)
        self.sample_stats_["lp"] = lp.reshape(self.samples_.shape[:2])
        # the per-example term of the batch potential is c * l_i: lambda' l_i / n
        # for csMALA, lambda l_i / (n rho) for sMALA (Lemmas 1 and 3)
        c, d, _ = surrogate_constants(self.sampler_, self.lambda_, X.shape[0], self.rho_, self.correction_)
        self.surrogate_scale_ = float(c * std_losses.mean())
        # Var(sum_i Z_i t_i) = rho (1 - rho) sum_i t_i^2 for Z_i ~ Ber(rho), t_i = c l_i + d;
        # the MH ratio holds the difference of two independent batches
        terms = c * std_losses + d
        noise = np.sqrt(2 * self.rho_ * (1 - self.rho_) * (terms**2).sum(1))
        self.batch_noise_ = float(noise.mean()) if self.sampler_ != "sgld" else 0.0
        self.rhat_, self.ess_ = function_space_mixing(F, self.samples_.shape[0])
        self.credible_radius_ = credible_radius(F, self.confidence_level)
        self.credible_radius_params_ = parameter_radius(
            self.samples_.reshape(-1, self.samples_.shape[-1]), self.confidence_level
        )
        log_lik = gaussian_log_likelihood(y, F, self.noise_variance_)
        # N(y; f, sigma^2) enters pi_lambda with the power beta = 2 sigma^2 / temperature
        # (standardized scale): Watanabe's equation of state scales the penalty by beta
        beta = 2.0 * self.noise_variance_ / self.y_scale_**2 / self.temperature_
        self.waic_tempering_ = float(beta)
        tempered = waic(log_lik, beta=beta)
        self.generalization_loss_ = -tempered.elpd_waic / X.shape[0]
        crit = langevin_waic(y, fbar, tempered.p_pointwise, self.noise_variance_)
        self.lfv_, self.train_loss_, self.waic_ = crit.functional_variance, crit.train_loss, crit.waic
        warn_if_unreliable(self)

    # -------------------------------------------------------------- predict
    def _draws(self, X):
        """Function values of every retained draw, shape (S, n), scale of y."""
        Xs = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32)
        theta = torch.as_tensor(self.samples_.reshape(-1, self.samples_.shape[-1]))
        width = max(self.spec_.layer_sizes)
        chunk = max(1, int(2e7 // max(1, X.shape[0] * width)))
        with torch.no_grad():
            F = torch.cat([self.spec_.forward(theta[i : i + chunk], Xs) for i in range(0, len(theta), chunk)])
        return F.double().numpy() * self.y_scale_ + self.y_mean_

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X, return_std=False):
        """Posterior mean of ``f(x)``, and optionally the predictive standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return ``sqrt(Var_theta f_theta(x) + noise_variance_)``, the
            standard deviation of the posterior predictive distribution of a
            new observation, as ``BayesianRidge`` does.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only if ``return_std``
        """
        F = self._draws(self._validated(X))
        mean = F.mean(0)
        if not return_std:
            return mean
        return mean, np.sqrt(F.var(0) + self.noise_variance_)

    def predict_samples(self, X):
        """Function values of every retained draw, chain by chain.

        Returns
        -------
        ndarray of shape (n_samples, n_chains * n_draws)
        """
        return self._draws(self._validated(X)).T

    def predict_interval(self, X, confidence_level=None, kind="predictive"):
        """Equal-tailed posterior intervals, in MAPIE's shapes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        confidence_level : float or array-like of floats in (0, 1), default=None
            ``self.confidence_level`` when None.
        kind : {"predictive", "credible"}, default="predictive"
            ``"predictive"``: quantiles of the posterior predictive of a new
            observation (the mixture over draws of ``N(f_theta(x),
            noise_variance_)``); ``"credible"``: quantiles of ``f_theta(x)``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        y_pis : ndarray of shape (n_samples, 2, n_levels)
        """
        if kind not in ("predictive", "credible"):
            raise ValueError(f"kind must be 'predictive' or 'credible', got {kind!r}.")
        levels = check_levels(self.confidence_level if confidence_level is None else confidence_level)
        F = self._draws(self._validated(X))
        probs = np.concatenate([(1 - levels) / 2, (1 + levels) / 2])
        if kind == "credible":
            q = np.quantile(F, probs, axis=0)
        else:
            q = mixture_quantiles(F, np.sqrt(self.noise_variance_), probs)
        k = len(levels)
        y_pis = np.stack([q[:k].T, q[k:].T], axis=1)
        return F.mean(0), y_pis

    def sample_y(self, X, n_samples=1, random_state=None):
        """Draw from the posterior predictive at ``X``.

        Each draw picks a retained parameter draw at random and adds
        ``N(0, noise_variance_)`` noise.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        ndarray of shape (n_samples_X, n_samples)
        """
        F = self._draws(self._validated(X))
        rng = check_random_state(random_state)
        pick = rng.randint(F.shape[0], size=n_samples)
        noise = rng.normal(scale=np.sqrt(self.noise_variance_), size=(F.shape[1], n_samples))
        return F[pick].T + noise

    def credible_radius(self, X, confidence_level=None):
        """Radius of the empirical-L2 credible ball (paper 000 (3.4)) on the inputs ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        confidence_level : float, default=None
            ``self.confidence_level`` when None.

        Returns
        -------
        float
        """
        level = self.confidence_level if confidence_level is None else confidence_level
        if not 0 < level < 1:
            raise ValueError(f"confidence_level must lie in (0, 1), got {level!r}.")
        return credible_radius(self._draws(self._validated(X)), level)

    def unpack_samples(self):
        """Every draw as scikit-learn ``coefs_`` / ``intercepts_`` lists (standardized data).

        Returns
        -------
        list of (coefs, intercepts)
        """
        check_is_fitted(self)
        return [self.spec_.unpack(t) for t in self.samples_.reshape(-1, self.samples_.shape[-1])]

    def to_arviz(self, X=None, y=None):
        """The posterior draws as ArviZ data, with ``(chain, draw)`` dimensions.

        Groups: ``posterior`` holds every layer's ``coefs_<l>`` (shape
        ``(chain, draw, n_in, n_out)``) and ``intercepts_<l>`` (``(chain, draw,
        n_out)``) on the standardized scale of ``samples_``; ``sample_stats``
        holds ``acceptance_rate`` (fraction of accepted proposals over the
        ``thin`` steps before each draw) and ``lp`` (``log pi_lambda`` up to a
        constant). With ``X`` and ``y`` (e.g. the training data) it adds
        ``log_likelihood`` (``y``: ``log N(y_i; f_theta(x_i),
        noise_variance_)``, shape ``(chain, draw, n)``) and
        ``observed_data``, so that ``az.waic`` / ``az.loo`` apply. ArviZ is
        optional and imported here.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
        y : array-like of shape (n_samples,), default=None

        Returns
        -------
        arviz.InferenceData (ArviZ 0.x) or xarray.DataTree (ArviZ 1.x)
        """
        check_is_fitted(self)
        K, S, _ = self.samples_.shape
        coefs, intercepts = self.spec_.unpack(self.samples_)
        posterior, dims = {}, {}
        for layer, (W, b) in enumerate(zip(coefs, intercepts)):
            posterior[f"coefs_{layer}"], posterior[f"intercepts_{layer}"] = W, b
            dims[f"coefs_{layer}"] = [f"n_in_{layer}", f"n_out_{layer}"]
            dims[f"intercepts_{layer}"] = [f"n_out_{layer}"]
        groups = {"posterior": posterior, "sample_stats": dict(self.sample_stats_)}
        if (X is None) != (y is None):
            raise ValueError("Pass both X and y (the data of the log-likelihood), or neither.")
        if X is not None:
            X = self._validated(X)
            y = column_or_1d(check_array(y, ensure_2d=False, dtype=np.float64, input_name="y"))
            if len(y) != X.shape[0]:
                raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
            log_lik = gaussian_log_likelihood(y, self._draws(X), self.noise_variance_)
            groups["log_likelihood"] = {"y": log_lik.reshape(K, S, -1)}
            groups["observed_data"] = {"y": y}
            dims["y"] = ["obs"]
        return from_groups(groups, dims=dims)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags

