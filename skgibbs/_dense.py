"""The kernels of the dense Gibbs MLPs (HMC, the Langevin family), shared by regressor and classifier."""

from numbers import Integral, Real

import numpy as np
import torch

from ._base import BaseGibbsMLP
from ._compat import Interval, StrOptions
from .samplers import ChainResult, vi

__all__ = ["DenseKernelMixin", "fill_doc"]

# burn_in="auto" and thin="auto" (see GibbsMLPRegressor's docstring and benchmarks/bench_mixing.py).
_HMC_BURN_IN, _LANGEVIN_BURN_IN, _LANGEVIN_THIN = 250, 1000, 10


class DenseKernelMixin:
    """``sampler``, ``rho`` and the HMC/Langevin settings of an estimator over every parameter."""

    _parameter_constraints = {
        **BaseGibbsMLP._parameter_constraints,
        "sampler": [StrOptions({"auto", "hmc", "csmala", "mala", "smala", "sgld", "vi"})],
        "rho": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "correction": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "metric": [StrOptions({"prior", "adaptive", "identity"})],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "restart_after": [Interval(Integral, 1, None, closed="left"), None],
        "kl_weight": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "parametrization": [StrOptions({"standard", "mean-field"})],
        "vi_max_iter": [Interval(Integral, 1, None, closed="left")],
        "vi_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "vi_batch_size": [Interval(Integral, 1, None, closed="left")],
        "vi_early_stopping": ["boolean"],
        "vi_gradient": [StrOptions({"local", "reparam"})],
    }

    def _check_extra_params(self):
        if self.sampler == "vi":
            if self.rho != "auto" and float(self.rho) < 1.0:
                raise ValueError(
                    f"rho={self.rho!r} is the batch probability of the Langevin kernels; sampler='vi' draws "
                    "its own minibatches of vi_batch_size examples. Leave rho='auto'."
                )
            if self.prior_std is None or self.weight_bound is not None:
                raise ValueError(
                    "sampler='vi' needs a Gaussian prior (the KL term of the ELBO is computed in closed "
                    "form): set prior_std to 'auto' or a float, and weight_bound=None."
                )
            return
        if self.kl_weight != "auto":
            raise ValueError(
                f"kl_weight={self.kl_weight!r} weighs the KL term of the variational objective and only "
                f"applies to sampler='vi' (got sampler={self.sampler!r}). Leave kl_weight='auto' or set "
                "sampler='vi'."
            )
        if self.parametrization != "standard":
            raise ValueError(
                f"parametrization={self.parametrization!r} sets the coordinates of the variational "
                f"optimisation and only applies to sampler='vi' (got sampler={self.sampler!r})."
            )

    def _n_starts(self):
        # VI optimises one q from one pre-trained network
        return 1 if self.sampler == "vi" else self.n_chains

    def _resolve_sampler(self):
        """``(sampler_, rho_)``: "auto" is HMC on the full data and csMALA on batches."""
        if self.sampler in ("mala", "hmc", "vi"):
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

    # ---------------------------------------------------- variational inference
    def _output_scale(self, spec):
        """``theta = scale * w``: 1, but ``1 / N_L`` on the mean-field parametrization's output weights."""
        scale = torch.ones(spec.n_params, dtype=torch.float32)
        if self.parametrization == "mean-field" and spec.hidden_layer_sizes:
            n_in, _, w, _ = spec.output_layer()
            scale[w] = 1.0 / n_in
        return scale

    def _pretrain_scale(self, spec):
        # the mean-field parametrization pre-trains in its own coordinates, so that q starts
        # with output weights a_j of the prior's order (N theta_j of a standard network is of
        # order sqrt(N), far in the prior's tail)
        if self.sampler == "vi" and self.parametrization == "mean-field" and spec.hidden_layer_sizes:
            return self._output_scale(spec)
        return None

    def _prior(self, spec, device):
        prior = super()._prior(spec, device)
        if self.parametrization != "mean-field" or not spec.hidden_layer_sizes:
            return prior
        # paper 002 (3): f = (1/N) sum_j a_j h_j with the prior on a_j; on the network's output
        # weights theta = a / N that is the prior std divided by N ("auto": its fan-in factor
        # g / sqrt(N) becomes g / N, i.e. a_j ~ N(0, g^2))
        std = torch.as_tensor(prior.std, dtype=torch.float32).expand(spec.n_params).clone()
        n_in, _, w, _ = spec.output_layer()
        std[w] = std[w] * (n_in**-0.5 if self.prior_std == "auto" else 1.0 / n_in)
        return prior._replace(std=std.to(device))

    def _kl_weights(self, spec):
        """``eta`` per coordinate, and its value on the hidden layers (``kl_weight_``)."""
        Q = spec.n_params
        if self.kl_weight != "auto":
            return torch.full((Q,), float(self.kl_weight)), float(self.kl_weight)
        if not spec.hidden_layer_sizes:  # no neurons to balance: Prop. 5 does not apply
            return torch.full((Q,), float(self.tau)), float(self.tau)
        # Prop. 5: eta = tau n / N, N the width of the widest hidden layer
        eta = float(self.tau) * self.n_train_ / max(spec.hidden_layer_sizes)
        weights = torch.full((Q,), eta)
        if self.parametrization == "standard":
            # App. D: with the 1/sqrt(N) output scale only the KL of the hidden layers is cooled
            _, _, w, b = spec.output_layer()
            weights[w.start : b.stop] = 1.0
        return weights, eta

    def _record_losses(self, losses):
        super()._record_losses(losses)
        if self.sampler_ == "vi":
            # E_q sum_i log L(y_i | x_i, theta) with log L = -lambda l_i / n, by the draws
            self.expected_log_likelihood_ = float(-self.lambda_ * losses.mean())

    def _sample(self, spec, Xt, yt, theta0, seeds, prior):
        if self.sampler_ != "vi":
            return super()._sample(spec, Xt, yt, theta0, seeds, prior)
        eta, self.kl_weight_ = self._kl_weights(spec)
        config = vi.VIConfig(
            lam=self.lambda_,
            eta=eta,
            n_iter=self.vi_max_iter,
            learning_rate=float(self.vi_learning_rate),
            batch_size=self.vi_batch_size,
            local=self.vi_gradient == "local",
            early_stopping=bool(self.vi_early_stopping),
            verbose=self.verbose,
        )
        seed = int(np.random.SeedSequence(seeds).generate_state(1)[0])
        gen = torch.Generator(device=Xt.device).manual_seed(seed)
        scale = self._output_scale(spec)
        res = vi.fit(spec, Xt, yt, theta0[0], prior.std, config, gen, loss=self._loss, scale=scale)
        self.elbo_, self.kl_, self.n_iter_ = res.elbo, res.kl, res.n_iter
        self.vi_stopped_early_, self.vi_validation_objective_ = res.stopped_early, res.validation_objective
        self.variational_mean_, self.variational_std_ = res.mean, res.std
        # the draws: n_samples from q per group ("chain"), each group from its own generator
        draws, log_q = [], []
        for s in seeds:
            gen = torch.Generator().manual_seed(s)
            d = vi.sample(res.mean, res.std, self.n_samples, gen).double().numpy()
            draws.append(d)
            log_q.append(-0.5 * (((d - res.mean) / res.std) ** 2).sum(1) - np.log(res.std).sum())
        K = len(seeds)
        nan = np.full(K, np.nan)
        return ChainResult(
            samples=np.stack(draws),
            acceptance_rate=nan,
            n_restarts=np.zeros(K, dtype=np.int64),
            step_size=nan,
            proposal_std=nan,
            correction=0.0,
            lambda_prime=self.lambda_,
            accepted_batch_sizes=np.empty(0, dtype=np.int64),
            interrupted=False,
            n_divergent=np.zeros(K, dtype=np.int64),
            n_grad=np.full(K, res.n_iter, dtype=np.int64),
            draw_stats={"log_q": np.stack(log_q)},
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
    kl_weight : float > 0 or "auto", default="auto"
        ``sampler="vi"`` only (a float with another sampler raises): the
        cooling ``eta`` of the KL term of the tempered ELBO (paper 002 (6),
        (9)), ``ELBO_eta(q) = E_q[-lambda R_n] - eta KL(q || Pi)``, where
        ``-lambda R_n`` is the log-likelihood at this estimator's
        ``temperature``: the two knobs are separate, ``temperature`` sets the
        target ``pi_lambda`` and ``eta`` how strongly ``q`` is pulled to the
        prior (the maximiser over all distributions is
        ``pi_{lambda / eta}``). ``1.0`` is the classical ELBO. ``"auto"`` is
        Prop. 5's ``eta = tau n / N``, ``n`` the training examples and ``N``
        the width of the widest hidden layer: for one hidden layer the
        paper's number of neurons, and for deeper networks the layer whose
        neurons (and fan-out weights) the KL term counts most of, so that the
        balance holds as that layer widens. With
        ``parametrization="standard"`` (output scaled by ``1 / sqrt(N)``)
        ``eta`` multiplies the KL of the hidden layers and the output layer's
        keeps weight 1 (App. D); with ``"mean-field"`` it multiplies all of
        it. Without hidden layers ``"auto"`` is ``eta = tau``.
    tau : float > 0, default=0.03
        The constant of ``kl_weight="auto"``. The default is the value
        chosen by ``benchmarks/sweep_vi_tau.py`` over eight data sets (four
        classification, four regression; splits the other benchmarks do not
        use) with a rule fixed beforehand: the smallest geometric mean of the
        test log loss relative to each data set's best ``tau`` (1.09, against
        1.10 for 0.01). No single value suits all: digits and Ripley's data
        did best at 0.003, Pima and breast cancer at 0.1. Larger values pull
        ``q`` toward the prior (underconfident), smaller ones toward a point
        mass (overconfident); ``GridSearchCV`` over ``tau`` is cheap.
    parametrization : {"standard", "mean-field"}, default="standard"
        ``sampler="vi"`` only. ``"standard"``: the network as the other
        samplers see it, whose default prior scales the output weights by
        ``1 / sqrt(N)`` (App. D). ``"mean-field"``: the output is
        ``(1 / N) sum_j a_j h_j`` (paper 002 (3)), ``N`` the last hidden
        layer's width, with the prior on the unscaled ``a_j``
        (``prior_std="auto"`` gives ``a_j`` the standard deviation ``g``, a
        float ``s`` gives ``s``) and Adam moving ``a``; ``samples_`` and
        ``variational_*_`` hold the network's weights ``a_j / N`` either way.
    vi_max_iter : int, default=5000
        ``sampler="vi"``: most Adam steps (the learning rate is
        cosine-annealed to 1% of ``vi_learning_rate`` over them).
    vi_learning_rate : float > 0, default=1e-2
        ``sampler="vi"``: Adam's initial learning rate on the means and on
        ``rho`` (``sigma = softplus(rho)``, started at 1% of the prior
        standard deviation).
    vi_batch_size : int, default=128
        ``sampler="vi"``: examples per step (an epoch's permutation), so
        that each step's ELBO estimate is unbiased.
    vi_early_stopping : bool, default=True
        ``sampler="vi"``: hold out 10% of the examples, estimate the
        held-out negative ELBO (their risk in place of the training risk,
        8 draws of ``q``) every 50 steps, stop after 10 estimates without
        improvement and keep the best ``q``. False uses every example and
        all ``vi_max_iter`` steps.
    vi_gradient : {"local", "reparam"}, default="local"
        ``sampler="vi"``: ``"local"`` draws every example's pre-activations
        from their Gaussian law under ``q`` (the local reparametrisation of
        Kingma, Salimans & Welling (2015): exact in each example's marginal,
        gradients 2.5 to 50 times less variable, steps 1.5 to 1.7 times
        dearer: ``benchmarks/bench_vi_gradient.py``); ``"reparam"`` draws one
        weight vector per step (Bayes by Backprop, App. F).
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
        joblib jobs over groups of chains. Chains of a network too large to
        batch run one per job; batched chains are split into ``n_jobs``
        groups when it is a positive integer (HMC's warm-up stays joint,
        its sampling is split). Jobs run under the active joblib backend,
        e.g. on Dask workers inside ``joblib.parallel_backend("dask")``
        (see :doc:`/user_guide/distributed`). Draws depend on
        ``random_state`` and on the groups, never on the backend or the
        worker: a run on a cluster repeats a local one bit for bit. With
        ``device="cuda"`` all chains are batched on the device and
        ``n_jobs`` is not used.
    device : str, default="cpu"
        torch device for sampling (``"cuda"`` where available). Fitted
        state is NumPy either way.
    random_state : int, RandomState instance or None, default=None
        Seeds one ``torch.Generator`` per chain. The global torch RNG is
        never used.
    verbose : int, default=0
        With 1, one live progress bar per phase on stderr (warm-up,
        sampling, or the VI optimisation): steps per second, ETA and, while
        sampling, the acceptance rate so far; a ``tqdm`` bar when tqdm is
        installed (the ``progress`` extra), else one line rewritten in
        place. Nothing at 0.
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
        burn-in included: the cost of the fit. For VI, the Adam steps of its
        one optimisation (on batches of ``vi_batch_size``), in every entry.
    sample_stats_ : dict of ndarray of shape (n_chains, n_samples)
        Per draw, over the ``thin`` transitions before it:
        ``acceptance_rate``, ``step_size``, ``lp`` (``log pi_lambda`` up to
        a constant) and, for HMC, ``diverging``, ``n_steps`` (leapfrog
        steps) and ``energy_error``; for VI, ``lp``, ``step_size`` (NaN) and
        ``log_q`` (``log q`` of the draw, so that ``lp - log_q`` are the log
        importance ratios of ``q`` against ``pi_lambda``); what
        :meth:`to_arviz` puts in ``sample_stats``.
    step_size_, proposal_std_ : ndarray of shape (n_chains,)
        Frozen proposal parameters: the Langevin ``h`` and ``s``, or HMC's
        leapfrog step (in the coordinates of its metric; ``proposal_std_`` is
        NaN for HMC).
    acceptance_rate_ : ndarray of shape (n_chains,)
        Fraction of accepted proposals after burn-in (NaN for VI, as are
        ``step_size_`` and ``proposal_std_``).
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
    elbo_ : ndarray
        ``sampler="vi"`` only, as are the attributes below: the estimate of
        ``ELBO_eta`` at every Adam step (``n_iter_`` entries) (one batch, one draw, scaled to the
        full data).
    kl_ : float
        ``KL(q || Pi)`` of the fitted ``q`` (unweighted).
    kl_weight_ : float
        ``eta`` (of the hidden layers, see ``kl_weight``).
    expected_log_likelihood_ : float
        ``E_q sum_i log L(y_i | x_i, theta) = -lambda E_q R_n``, from the
        draws on the training data.
    variational_mean_, variational_std_ : ndarray of shape (n_params,)
        ``mu`` and ``sigma`` of ``q`` in the order of ``samples_``
        (standardized data).
    n_iter_ : int
        Adam steps taken.
    vi_stopped_early_ : bool
        Whether the held-out objective stopped improving before
        ``vi_max_iter``; when it did not, a :class:`~skgibbs.SamplerWarning`
        asks for more steps.
    vi_validation_objective_ : ndarray
        The held-out negative ELBO at every check (empty without early
        stopping).
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
