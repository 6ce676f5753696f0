"""The tempered mean-field VI sampler (paper 002): settings, the optimisation, draws of q.

No chain: :func:`~skgibbs.samplers.vi.fit_target` optimises one mean-field
Gaussian ``q`` from one pre-trained network, and ``n_chains`` groups of
``n_samples`` independent draws of ``q`` (each group from its own
generator) stand in for the chains. It needs the network itself (the local
reparametrisation draws every example's pre-activations) where its
target's potential is a network's; any other potential (a
:class:`~skgibbs.potential.FunctionPotential`) is sampled by draws of the
weights. It needs a Gaussian prior (the KL term is computed in closed form).
"""

import math
from numbers import Integral, Real

import numpy as np
import torch
from scipy.special import gammaln

from ..._compat import Interval, StrOptions
from ..._random import gamma
from ...priors import HierarchicalPrior
from ..base import ChainResult, Sampler, Unhonoured, register
from . import kernel as vi
from .optimize import VIConfig, fit_target

__all__ = ["MeanFieldVI"]

PARAMETRIZATIONS = ("standard", "mean-field")
GRADIENTS = ("local", "reparam")
#: ``batch_size="auto"``: ``n / AUTO_BATCH_FRACTION`` rows per step, clipped to [AUTO_BATCH_MIN, AUTO_BATCH_MAX]
AUTO_BATCH_FRACTION, AUTO_BATCH_MIN, AUTO_BATCH_MAX = 50, 128, 1024


@register
class MeanFieldVI(Sampler):
    """Tempered mean-field Gaussian variational inference (paper 002), ``sampler="vi"``.

    ``q = prod_j N(mu_j, sigma_j^2)`` maximises the tempered ELBO
    ``E_q[-lambda R_n] - eta KL(q || Pi)`` (paper 002 (6), (9)), whose
    maximiser over all distributions is ``pi_{lambda / eta}``: an
    approximation, documented as one. ``temperature`` sets the target,
    ``eta`` how strongly ``q`` is pulled to the prior.

    Parameters
    ----------
    kl_weight : float > 0 or "auto", default="auto"
        ``eta``. ``1.0`` is the classical ELBO. ``"auto"`` is ``eta = tau``
        on the hidden layers whatever ``n`` and ``N`` (the ``sweep_vi_tau``
        study chose among ``tau (n / N)^a``, ``a`` in {0, 1/2, 1}, on 250 to
        50 000 rows with ``N = 100``; Prop. 5's ``tau n / N`` made ``eta``
        too large at large ``n``). With
        ``parametrization="standard"`` it weighs the hidden layers' KL and
        the output layer's keeps weight 1 (App. D); with ``"mean-field"``
        all of it.
    tau : float > 0, default=0.3
        The constant of ``kl_weight="auto"``, the value the sweep chose.
    parametrization : {"standard", "mean-field"}, default="standard"
        ``"mean-field"``: the output is ``(1 / N) sum_j a_j h_j`` (paper 002
        (3)) with the prior on the unscaled ``a_j`` and Adam moving ``a``;
        the draws hold the network's weights either way.
    max_iter : int, default=10000
        Most Adam steps (the plateau rule ends most fits sooner: about
        3,600 steps on 10^4 to 10^5 rows).
    learning_rate : float > 0, default=1e-2
        Adam's learning rate on the means and on ``raw_std`` (``sigma =
        softplus(raw_std)``) until the decay phase, which anneals it to 30% and
        averages the iterates (Notes).
    batch_size : int or "auto", default="auto"
        Examples per step (an epoch's permutation; all of them when ``n``
        is smaller). ``"auto"`` is ``n / 50`` between 128 and 1024, so
        that a window of the plateau rule (100 steps) is two passes over
        the data up to 51,200 rows, as scikit-learn's MLP stops after
        ``n_iter_no_change`` epochs. A fixed small batch let the plateau
        rule stop early at large ``n``, and a fixed large one ran hundreds
        of passes over mid-sized data with narrower intervals (the
        ``tabular`` and ``large_n`` benchmarks).
    early_stopping : bool, default=True
        Begin the decay phase once the objective has stopped improving:
        the mean of the steps' estimates of the negative ELBO over each
        window of 100 steps has not fallen by twice its standard error in
        5 windows. False: the decay phase is the last 30% of ``max_iter``.
    gradient : {"local", "reparam"}, default="local"
        Local reparametrisation of the pre-activations (Kingma, Salimans &
        Welling, 2015) or one weight draw per step (Bayes by Backprop).

    Notes
    -----
    The means start at the pre-trained network and each ``sigma_j`` at the
    mean-field optimum of the Gauss-Newton (Laplace) approximation there,
    ``sigma_j^-2 = lambda H_jj / (n eta_j) + prior_std_j^-2``
    (:func:`~skgibbs.samplers.vi.laplace_std`). Adam runs at
    ``learning_rate`` until the plateau (``early_stopping``), then a decay
    phase of 30% of all the steps (at least 1000) anneals the rate to 30% of
    it and ``q`` is the average of the iterates over that phase
    (Polyak-Ruppert), which removes the gradient noise the last iterate
    keeps. A step that throws ``q`` far off (its ELBO estimate far below
    the last window's, or non-finite parameters) sends it back to a
    checkpoint at half the learning rate (``vi_rollbacks_``;
    :func:`~skgibbs.samplers.vi.fit_target`). With the squared loss the output layer is integrated out of each
    step's loss (only the hidden layers are drawn), so for a linear model
    the gradients of the ``sigma_j`` carry no Monte Carlo noise.

    Under a hierarchical prior (``prior="layer"`` or ``"ard"``) ``q`` has a
    mean-field Gamma factor per group of parameters, updated at every epoch
    from ``q(theta)`` (:func:`~skgibbs.samplers.vi.precision_factors`); the
    draws carry draws of it (``sample_stats_["precision"]``, and its log
    density in ``log_q``), and ``precision_shape_`` and ``precision_rate_``
    are the factors. A factor rather than type-II maximisation of the ELBO
    in the precisions: with the Gamma shape below 1 (the default 0.5), a
    group of one parameter (the output bias) has its type-II optimum at a
    precision of 0, the flat prior, while the factor's mean stays finite.
    The noise cannot be learned (``temperature="learn"`` needs HMC).

    A fit by this sampler sets these attributes on the estimator, besides
    those every fit has (the estimator's Attributes):

    ``variational_mean_``, ``variational_std_`` : ndarray of shape (n_params,)
        ``mu`` and ``sigma`` of ``q`` in the order of ``samples_``
        (standardized data).
    ``precision_shape_``, ``precision_rate_`` : ndarray of shape (n_groups,)
        Under ``prior="layer"`` or ``"ard"``: the mean-field Gamma factor of
        each group's precision (shape and rate), in the order of
        ``prior_groups_``.
    ``elbo_`` : ndarray of shape (n_iter_,)
        The estimate of ``ELBO_eta`` at every Adam step (one batch, one
        draw, scaled to the full data).
    ``kl_`` : float
        ``KL(q || Pi)`` of the fitted ``q`` (unweighted).
    ``kl_weight_`` : float
        ``eta`` of the hidden layers (``kl_weight`` resolved).
    ``expected_log_likelihood_`` : float
        ``E_q sum_i log L(y_i | x_i, theta) = -lambda E_q R_n``, from the
        draws on the training data.
    ``batch_size_`` : int
        Rows per Adam step (``batch_size`` resolved).
    ``n_iter_`` : int
        Adam steps taken.
    ``vi_stopped_early_`` : bool
        Whether the objective reached its plateau (and the decay phase
        began) before ``max_iter``; when it did not, a
        :class:`~skgibbs.SamplerWarning` asks for more steps.
    ``vi_rollbacks_`` : int
        Steps at which the optimisation diverged (a non-finite step, or an
        estimate of the ELBO far below the last window's) and ``q`` went
        back to a checkpoint, the average of the iterates included, at
        half the learning rate; after five the fit fails with a
        ``FloatingPointError``.
    ``vi_validation_objective_`` : ndarray of shape (n_windows,)
        The mean of the steps' estimates of the negative ELBO over each
        window of 100 steps up to the plateau (the name is kept from the
        held-out objective of earlier releases).

    There is no ``acceptance_rate_`` or ``step_size_``, and ``rhat_``,
    ``ess_`` and the chains' diagnostics are NaN: the draws of ``q`` are
    independent. ``n_grad_evals_`` holds the Adam steps in every entry,
    and ``sample_stats_`` holds, per draw, ``log_q`` (``log q`` of the
    draw, so that ``lp - log_q`` are the log importance ratios of ``q``
    against ``pi_lambda``) and, under a hierarchical prior, ``precision``.

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> from skgibbs.samplers import MeanFieldVI
    >>> GibbsMLPRegressor(sampler=MeanFieldVI(tau=0.1)).get_params()["sampler__tau"]
    0.1
    """

    name = "vi"
    default_burn_in, default_thin = 0, 1
    # independent draws: four groups of 50 are 200 draws, each worth a draw (no autocorrelation), and
    # every summary of a large fit is a pass of the network per draw over the training rows (half the
    # fit's time at 400 draws on the tabular tables). On the seven tables of the tabular benchmark,
    # 200 draws against 400 moved the test log-likelihood by at most 2e-4, the 90% coverage by 7e-4
    # and WAIC by 4e-4: the predictive spread is the noise's far more than the weights'
    default_n_samples = 50
    mixing_diagnostics = False  # independent draws of q: R-hat and ESS cannot judge q
    hierarchical = True  # a mean-field Gamma factor per group of a HierarchicalPrior

    _parameter_constraints = {
        "kl_weight": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tau": [Interval(Real, 0, None, closed="neither")],
        "parametrization": [StrOptions(set(PARAMETRIZATIONS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "early_stopping": ["boolean"],
        "gradient": [StrOptions(set(GRADIENTS))],
    }

    def __init__(
        self,
        kl_weight="auto",
        tau=0.3,
        parametrization="standard",
        max_iter=10000,
        learning_rate=1e-2,
        batch_size="auto",
        early_stopping=True,
        gradient="local",
    ):
        self.kl_weight = kl_weight
        self.tau = tau
        self.parametrization = parametrization
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.early_stopping = early_stopping
        self.gradient = gradient

    def check(self, prior, rho):
        super().check(prior, rho)
        if prior.std is None or getattr(prior, "bound", None) is not None:
            raise ValueError(
                "sampler='vi' needs a Gaussian prior (the KL term of the ELBO is computed in closed "
                "form): set prior_std to 'auto' or a float, and weight_bound=None."
            )
        return 1.0

    # -- what the estimators ask ------------------------------------------------------
    _full_data_reads = (
        "draws its own minibatches of sampler=MeanFieldVI(batch_size=...) rows, not Bernoulli(rho) batches"
    )

    def ignored_settings(self):
        """``burn_in``, ``thin`` and the chains' weights: the draws of ``q`` are independent, in groups of one ``q``.

        ``n_samples`` and ``n_chains`` are honoured: ``n_chains`` groups of
        ``n_samples`` draws of ``q``.
        """
        return {
            **super().ignored_settings(),
            "burn_in": Unhonoured(
                "has no burn-in: it optimises q for at most sampler=MeanFieldVI(max_iter=...) Adam steps, then "
                "draws independently from it",
                "Leave burn_in='auto' (set max_iter for a longer optimisation), or choose a Markov chain "
                "sampler such as sampler='hmc' for a burn-in",
                accepts=(0,),
            ),
            "thin": Unhonoured(
                "keeps every draw of q: they are independent, with nothing to thin",
                "Leave thin='auto'",
                accepts=(1,),
            ),
            "chain_weights": Unhonoured(
                "draws every group from the same q, so there are no chains in different modes to weigh",
                "Leave chain_weights='equal'",
                accepts=("equal",),
            ),
            "n_jobs": Unhonoured(
                "fits one q in this process",
                "n_jobs has no effect here; leave it None",
                accepts=(1,),
                warn=True,
            ),
        }

    def n_starts(self, n_chains):
        return 1  # one q from one pre-trained network

    def output_scale(self, spec, n_params=None):
        """``theta = scale * w``: 1, but ``1 / N_L`` on the mean-field parametrization's output weights.

        ``spec`` is None for a potential without a network (``n_params``
        weights, all of scale 1).
        """
        scale = torch.ones(spec.n_params if spec is not None else n_params, dtype=torch.float32)
        if spec is not None and self.parametrization == "mean-field" and spec.hidden_layer_sizes:
            n_in, _, w, _ = spec.output_layer()
            scale[w] = 1.0 / n_in
        return scale

    def pretrain_scale(self, spec):
        # the mean-field parametrization pre-trains in its own coordinates, so that q starts
        # with output weights a_j of the prior's order (N theta_j of a standard network is of
        # order sqrt(N), far in the prior's tail)
        if self.parametrization == "mean-field" and spec.hidden_layer_sizes:
            return self.output_scale(spec)
        return None

    def adjust_prior(self, prior, spec, prior_std, device):
        if self.parametrization != "mean-field" or not spec.hidden_layer_sizes:
            return prior
        # paper 002 (3): f = (1/N) sum_j a_j h_j with the prior on a_j; on the network's output
        # weights theta = a / N that is the prior std divided by N ("auto": its fan-in factor
        # g / sqrt(N) becomes g / N, i.e. a_j ~ N(0, g^2))
        std = torch.as_tensor(prior.std, dtype=torch.float32).expand(spec.n_params).clone()
        n_in, _, w, _ = spec.output_layer()
        std[w] = std[w] * (n_in**-0.5 if isinstance(prior_std, str) else 1.0 / n_in)
        return prior._replace(std=std.to(device))

    def kl_weights(self, spec, n, n_params=None):
        """``eta`` per coordinate, and its value on the hidden layers (``kl_weight_``).

        ``spec`` is None for a potential without a network: every one of its
        ``n_params`` coordinates weighs ``kl_weight``, or ``tau`` under
        ``"auto"``, as a network without hidden layers.
        """
        Q = spec.n_params if spec is not None else n_params
        if self.kl_weight != "auto":
            return torch.full((Q,), float(self.kl_weight)), float(self.kl_weight)
        if spec is None or not spec.hidden_layer_sizes:  # no hidden layers: every coordinate weighs tau
            return torch.full((Q,), float(self.tau)), float(self.tau)
        # eta = tau whatever n and N: the sweep_vi_tau study's rule on 250 to 50 000 rows (Prop. 5's
        # tau n / N gave eta = 15 at n = 50 000, N = 100, a fit held near the prior); the sweep held
        # N = 100, and tau / N made a network of width 8 far too warm (accuracy 0.69 where eta = tau
        # gives over 0.7 in the classifier test)
        eta = float(self.tau)
        weights = torch.full((Q,), eta)
        if self.parametrization == "standard":
            # App. D: with the 1/sqrt(N) output scale only the KL of the hidden layers is cooled
            _, _, w, b = spec.output_layer()
            weights[w.start : b.stop] = 1.0
        return weights, eta

    def rows_per_batch(self, n):
        """Rows per Adam step on ``n`` rows: ``batch_size``, or ``n / 50`` in [128, 1024] for ``"auto"``."""
        if self.batch_size == "auto":
            return int(min(AUTO_BATCH_MAX, max(AUTO_BATCH_MIN, n // AUTO_BATCH_FRACTION)))
        return int(self.batch_size)

    # -- the fit ----------------------------------------------------------------------------
    def sample(self, target, theta0, seeds, run, *, vectorize=True, n_jobs=None):
        """Fit ``q`` from ``theta0[0]``, then ``len(seeds)`` groups of ``run.n_samples`` draws of it."""
        self.check(target.prior, run.rho)
        pot = target.potential
        spec = getattr(pot, "spec", None)  # a network's potential; any other is sampled by weight draws
        Q = theta0.shape[1]
        eta, kl_weight = self.kl_weights(spec, target.n_data, Q)
        config = VIConfig(
            lam=target.lambda_,
            eta=eta,
            n_iter=self.max_iter,
            learning_rate=float(self.learning_rate),
            batch_size=self.rows_per_batch(getattr(target, "n_rows", target.n_data)),
            local=self.gradient == "local",
            early_stopping=bool(self.early_stopping),
            verbose=run.verbose,
        )
        seed = int(np.random.SeedSequence(list(seeds)).generate_state(1)[0])
        gen = torch.Generator(device=getattr(pot, "X", theta0).device).manual_seed(seed)
        scale = self.output_scale(spec, Q)
        hyper = target.prior if isinstance(target.prior, HierarchicalPrior) else None
        res = fit_target(target, theta0[0], config, gen, scale=scale, hyper=hyper)
        draws, log_q, precision = [], [], []
        for s in seeds:
            g = torch.Generator().manual_seed(int(s))
            d = vi.sample(res.mean, res.std, run.n_samples, g).numpy()
            draws.append(d)
            z = (d.astype(np.float64) - res.mean) / res.std
            log_q.append(-0.5 * (z**2).sum(1) - np.log(res.std).sum())
            if hyper is not None:  # draws of the Gamma factors q(tau_g), and their log density in log_q
                shape, rate = res.precision_shape, res.precision_rate
                conc = torch.as_tensor(np.tile(shape, run.n_samples))[None]  # one row: one generator
                tau = gamma([g], conc).numpy().reshape(run.n_samples, -1) / rate
                precision.append(tau)
                log_q[-1] = log_q[-1] + (
                    shape * np.log(rate) - gammaln(shape) + (shape - 1) * np.log(tau) - rate * tau
                ).sum(1)
        info = {
            "elbo": res.elbo,
            "kl": res.kl,
            "kl_weight": float(kl_weight),
            "batch_size": config.batch_size,
            "n_iter": res.n_iter,
            "vi_stopped_early": res.stopped_early,
            "vi_rollbacks": res.rollbacks,
            "vi_validation_objective": res.window_objective,
            "variational_mean": res.mean,
            "variational_std": res.std,
        }
        K = len(seeds)
        n_grad = np.full(K, res.n_iter, dtype=np.int64)
        stats = {"log_q": np.stack(log_q)}
        if hyper is not None:
            stats["precision"] = np.stack(precision)
            info.update(precision_shape=res.precision_shape, precision_rate=res.precision_rate)
        return ChainResult(np.stack(draws), None, n_grad, stats, False, info)

    def loss_statistics(self, loss_sum, loss_square_sum, n, lam, rho, info):
        out = super().loss_statistics(loss_sum, loss_square_sum, n, lam, rho, info)
        # E_q sum_i log L(y_i | x_i, theta) with log L = -lambda l_i / n, by the draws
        loss_sum = np.asarray(loss_sum, dtype=np.float64)
        out["expected_log_likelihood"] = float(-lam * (loss_sum.sum() / (loss_sum.size * n)))
        return out

    def diagnose(self, fit):
        out = []
        if self.early_stopping and not fit["vi_stopped_early_"]:
            out.append(
                f"The variational optimisation ran all max_iter={fit['n_iter_']} steps while its objective "
                "was still improving, so q may be far from the optimum of the tempered ELBO. "
                "Raise the sampler's max_iter or learning_rate."
            )
        fall = elbo_fall(fit.get("elbo_"))
        if fall is not None:
            best, last, noise, start = fall
            spread = (best - last) / noise
            if start is None:
                reached = f"estimate of its first step, at the start q ({spread:.3g} standard errors of the last "
                reached += "steps' median)"
            else:
                reached = f"it reached at steps {start}-{start + ELBO_WINDOW} ({spread:.3g} median absolute "
                reached += "deviations of a step's estimate there)"
            out.append(
                f"The variational optimisation ended with an ELBO estimate of {last:.4g} (the median of its last "
                f"{ELBO_WINDOW} steps), far below the {best:.4g} {reached}: a stretch of "
                "steps threw q off and it did not come back, so the draws may be far from the posterior. Lower "
                f"the sampler's learning_rate (e.g. MeanFieldVI(learning_rate={self.learning_rate / 3:.2g}))."
            )
        return out


#: windows of this many steps' ELBO estimates judge whether a fit ended far below its best
ELBO_WINDOW = 100
#: a last window whose median falls below the best window's by this many of the best window's median
#: absolute deviations, and by this fraction of its size, ended far below its best
ELBO_FALL_MADS, ELBO_FALL_FRACTION = 5.0, 0.5


def elbo_fall(elbo):
    """``(best, last, noise, first step of the best)`` of an ELBO trace that ended far below its best, else None.

    The trace is cut into windows of :data:`ELBO_WINDOW` steps; the best
    window has the highest median, the last is the end of the run. A fit
    that ends within the noise of its best does not count; ``noise`` is the
    best window's median absolute deviation. A trace that ends far below
    its first step's estimate (``q`` as it started: the pre-trained means
    with their Laplace widths) fell as well, even when the fall came within
    the first window, where no window before it can show it: then ``best``
    is that estimate, ``noise`` the standard error of the last window's
    median and the first step ``None``. A poor start (a first estimate
    below the rest) never counts as a fall.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> healthy = -100 + 10 * rng.normal(size=600)
    >>> elbo_fall(healthy) is None
    True
    >>> thrown_off = np.concatenate([healthy[:300], -1000 + 10 * rng.normal(size=300)])
    >>> best, last, mad, start = elbo_fall(thrown_off)
    >>> round(last), start
    (-1000, 0)
    >>> at_once = np.concatenate([[-100.0], -1000 + 10 * rng.normal(size=599)])
    >>> best, last, mad, start = elbo_fall(at_once)
    >>> best, round(last), start
    (-100.0, -999, None)
    """
    if elbo is None:
        return None
    e = np.asarray(elbo, dtype=np.float64)
    e = e[np.isfinite(e)]
    if e.size < 2 * ELBO_WINDOW:
        return None
    starts = range(0, e.size - ELBO_WINDOW + 1, ELBO_WINDOW)
    medians = np.array([np.median(e[i:i + ELBO_WINDOW]) for i in starts])
    b = int(np.argmax(medians))
    best, last = medians[b], float(np.median(e[-ELBO_WINDOW:]))
    mad = float(np.median(np.abs(e[b * ELBO_WINDOW:(b + 1) * ELBO_WINDOW] - best)))
    if best - last > max(ELBO_FALL_MADS * mad, ELBO_FALL_FRACTION * abs(best)):
        return float(best), last, max(mad, 1e-12), b * ELBO_WINDOW
    # thrown off within the first window (dead units after a few steps too long): the first estimate is the
    # reference, and the noise the standard error of the last window's median (a q thrown off can be far
    # noisier than at its start, so its steps' spread would hide the fall), 1.253 sd / sqrt(window) with the
    # sd from the MAD
    first = float(e[0])
    se_last = 1.253 * 1.4826 * float(np.median(np.abs(e[-ELBO_WINDOW:] - last))) / math.sqrt(ELBO_WINDOW)
    if first - last > max(ELBO_FALL_MADS * se_last, ELBO_FALL_FRACTION * abs(first)):
        return first, last, max(se_last, 1e-12), None
    return None
