"""compare_temperatures: the temperature chosen by the evidence, WAIC, LFV and k-fold CV.

The evidence and the path criteria come from one tempered-SMC fit; WAIC and
LFV also from one fit per candidate, and CV from k per candidate.
"""

import dataclasses
import time

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV
from sklearn.utils.validation import _num_samples

from .._data import check_sample_weight
from ..metrics import final_step, log_predictive_density_scorer, neg_log_loss_scorer
from ..samplers import get_sampler
from ._compare import _splitter
from ._search import _criterion, _fit_params

__all__ = ["TemperatureComparison", "compare_temperatures"]

#: every pick, in the order they are printed: one SMC fit gives the first three
METHODS = ("evidence", "waic_path", "lfv_path", "waic", "lfv", "cv")


@dataclasses.dataclass(frozen=True, repr=False)
class TemperatureComparison:
    """What each method measures per candidate temperature, and what it picks.

    Every per-candidate array has shape ``(n_candidates,)``, in the order
    of ``temperatures`` as given. ``waic_path``, ``lfv_path``, ``waic``,
    ``lfv`` and ``cv_loss`` are estimates of the held-out negative
    log-likelihood per example (lower is better);
    ``log_marginal_likelihood`` is a log density of all the standardized
    targets (higher is better). The values read from the SMC path are
    those of the path stage nearest to each candidate in
    ``log(temperature)`` (not interpolated); the path picks are the best
    *stages*, so their resolution is the spacing of the stages.

    Attributes
    ----------
    temperatures : ndarray
    log_marginal_likelihood : ndarray
        The evidence path's ``log_marginal_likelihood`` at the path stage
        nearest to each candidate in ``log(temperature)`` (the nearest stage,
        not interpolated); NaN above the path's hottest finite stage and for
        a classifier.
    stage_temperature : ndarray
        The temperature of that nearest stage (NaN above the path's hottest
        finite stage).
    waic_path : ndarray
        The path's ``generalization_loss`` at that stage: Watanabe's WAIC
        per example of the stage's particles, what a fit at the stage
        temperature reports as ``generalization_loss_``.
    lfv_path : ndarray
        The path's ``langevin_waic`` plus ``log(2 pi sigma^2) / 2`` with the
        stage's ``noise_variance``: the "training loss + functional
        variance" of paper 004 §4.3 with the functional variance of the
        stage's particles, on the scale of the ``"lfv"`` criterion (NaN
        for a classifier).
    waic, lfv : ndarray
        The ``"waic"`` and ``"lfv"`` criteria of
        :class:`CriterionGridSearch`, one fit per candidate (NaN ``lfv``
        for a classifier; all NaN with ``refit=False``).
    cv_loss, cv_std : ndarray
        Minus the mean over the folds of the held-out log predictive density
        per example, and its standard deviation over the folds (NaN with
        ``cv=None``).
    temperature_path : dict of ndarray
        ``temperature_path_`` of the SMC fit.
    picks : dict
        ``method -> temperature`` for ``"evidence"``, ``"waic_path"``,
        ``"lfv_path"`` (stage temperatures of the one SMC fit), ``"waic"``,
        ``"lfv"`` and ``"cv"`` (candidates); None where the method does not
        apply or was not run.
    test_log_density : dict or None
        ``method ->`` the mean held-out log predictive density per example
        of the estimator refitted on all the training data at that method's
        pick (None without test data, or where the pick is None).
    times : dict
        Wall time in seconds: ``"path"`` (the one SMC fit, which gives the
        evidence and the path criteria), ``"criteria"`` (the candidate fits
        shared by WAIC and LFV, with both criteria), ``"cv"`` (the whole
        grid search).
    n_splits : int
    """

    temperatures: np.ndarray
    log_marginal_likelihood: np.ndarray
    stage_temperature: np.ndarray
    waic_path: np.ndarray
    lfv_path: np.ndarray
    waic: np.ndarray
    lfv: np.ndarray
    cv_loss: np.ndarray
    cv_std: np.ndarray
    temperature_path: dict
    picks: dict
    test_log_density: dict
    times: dict
    n_splits: int

    def to_dict(self):
        """The per-candidate columns as a dict of arrays of shape (n_candidates,).

        Returns
        -------
        dict
        """
        return {
            "temperature": self.temperatures,
            "log_marginal_likelihood": self.log_marginal_likelihood,
            "stage_temperature": self.stage_temperature,
            "waic_path": self.waic_path,
            "lfv_path": self.lfv_path,
            "waic": self.waic,
            "lfv": self.lfv,
            "cv_loss": self.cv_loss,
            "cv_std": self.cv_std,
        }

    def to_frame(self):
        """The per-candidate columns as a pandas DataFrame (needs pandas).

        Returns
        -------
        pandas.DataFrame of shape (n_candidates, 9)
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_frame needs pandas; use to_dict() or repr() instead.") from exc
        return pd.DataFrame(self.to_dict())

    def __repr__(self):
        lines = ["temperature   log_ml (stage T)   waic_path  lfv_path      waic       lfv   cv_loss (std)"]
        for i, t in enumerate(self.temperatures):
            lines.append(
                f"{t:11.4g} {self.log_marginal_likelihood[i]:9.2f} ({self.stage_temperature[i]:7.3g})"
                f"  {self.waic_path[i]:9.4f} {self.lfv_path[i]:9.4f}"
                f" {self.waic[i]:9.4f} {self.lfv[i]:9.4f} {self.cv_loss[i]:9.4f} ({self.cv_std[i]:.4f})"
            )
        for method in METHODS:
            pick = self.picks[method]
            text = "does not apply" if pick is None else f"{pick:.4g}"
            if self.test_log_density is not None and self.test_log_density.get(method) is not None:
                text += f", held-out log density {self.test_log_density[method]:.4f}"
            lines.append(f"{method} picks: {text}")
        lines.append(
            "time: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in self.times.items())
            + f"; {self.n_splits}-fold CV"
        )
        return "\n".join(lines)


def compare_temperatures(
    estimator,
    X,
    y,
    temperatures,
    *,
    cv=5,
    X_test=None,
    y_test=None,
    smc="smc",
    refit=True,
    lfv_params=None,
    random_state=None,
    sample_weight=None,
):
    r"""Choose ``temperature`` by the evidence, WAIC, LFV and k-fold CV, from one SMC fit and beside refits.

    - **evidence**, **waic_path** and **lfv_path**: one fit of ``estimator``
      with ``sampler=smc`` at ``min(temperatures)``. Tempered SMC passes
      through every hotter temperature on its way from the prior, and its
      ``temperature_path_`` holds, at each stage, the log marginal
      likelihood ``log p(y | sigma^2 = T / 2)`` of the standardized targets
      and the criteria of the stage's particles
      (:class:`~skgibbs.samplers.SMC`). The evidence pick is the stage
      temperature where the log marginal likelihood is largest (the
      empirical-Bayes temperature), the path picks those where the stage's
      WAIC (``generalization_loss``) and its "training loss + functional
      variance" are smallest: choosing the temperature costs this one fit.
    - **waic** and **lfv**: each candidate fitted once on all the data with
      the estimator's own sampler, ranked by the ``"waic"`` and ``"lfv"``
      criteria of :class:`CriterionGridSearch` (one set of fits serves
      both); skipped with ``refit=False``.
    - **cv**: :class:`~sklearn.model_selection.GridSearchCV` over the
      candidates, scored by
      :func:`~skgibbs.metrics.log_predictive_density_scorer` (a classifier:
      :data:`~skgibbs.metrics.neg_log_loss_scorer`); skipped with
      ``cv=None``.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A skgibbs estimator (or a pipeline ending in one) with a
        ``temperature`` parameter.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    temperatures : sequence of float > 0
        The candidates; the SMC fit runs at the smallest and its path
        covers every larger one.
    cv : int, CV splitter, iterable or None, default=5
        An int k gives ``KFold(k, shuffle=True, random_state=random_state)``;
        None skips the grid search.
    X_test, y_test : array-like or None, default=None
        With both, each method's pick is scored on them: the estimator
        fitted on all of ``(X, y)`` at the picked temperature (a candidate's
        fit from the WAIC/LFV search is reused; a path pick, a stage
        temperature, is refitted with the estimator's own sampler).
    smc : "smc" or SMC, default="smc"
        The sampler of the path fit (an :class:`~skgibbs.samplers.SMC`
        object sets its particles and moves).
    refit : bool, default=True
        Whether to fit every candidate for the ``"waic"`` and ``"lfv"``
        picks. With False the path picks stand alone.
    lfv_params : dict or None, default=None
        Keyword arguments of the ``"lfv"`` criterion's Langevin run, as for
        :class:`CriterionGridSearch` (``n_iter``, ``burn_in``, ...).
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds; the estimators keep their own ``random_state``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows of ``(X, y)``, given to every fit (the path's,
        the candidates', each fold's; to the last step of a pipeline), so
        that the evidence, the criteria and the folds' fits are the
        weighted ones. The folds' held-out scores and the test scores are
        unweighted means over their rows.

    Returns
    -------
    TemperatureComparison

    Raises
    ------
    ValueError
        If ``temperatures`` is empty or holds a value that is not a
        positive finite number.
    TypeError
        If ``estimator`` has no ``temperature`` parameter, or ``refit`` is
        not a bool.

    Notes
    -----
    For the squared loss the path's ``log_marginal_likelihood`` at the
    stage temperature :math:`T_s` is
    :math:`\log Z_s - \tfrac n2 \log(\pi T_s)`, the log density of the
    standardized targets under :math:`y_i \sim N(f_\theta(x_i), T_s/2)`
    with :math:`\theta` from the prior: its maximiser estimates
    :math:`2\sigma^2` on the standardized scale. The path picks are the
    best *stages*, so their resolution is the spacing of the adaptive
    stages (the ``beta`` steps of SMC, finer with a larger ``target_ess``),
    and the per-candidate columns are read at the nearest stage, not
    interpolated. A stage's criteria are as good as its particles: where
    the reweighting kept few of them (the path's ``ess``) they are copies
    of a few draws and the functional variance is biased low. For a
    classifier (cross-entropy) ``log Z`` is a normalised density of the
    labels only at ``temperature = 1``, so no temperature can be chosen by
    it: its evidence pick is None, as are both LFV picks (the Langevin
    functional variance is defined for regressors); ``waic_path`` applies.

    Examples
    --------
    >>> from skgibbs import GibbsMLPRegressor
    >>> compare_temperatures(GibbsMLPRegressor(), [[0.0]], [0.0], [0.5, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: temperatures must be positive finite numbers, got [0.5, -1.0].
    >>> import numpy as np
    >>> from skgibbs.samplers import SMC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = X @ [1.0, -1.0] + 0.5 * rng.normal(size=80)
    >>> est = GibbsMLPRegressor((), random_state=0)
    >>> res = compare_temperatures(est, X, y, [0.1, 0.3, 1.0], cv=None, refit=False,
    ...                            smc=SMC(n_particles=32))
    >>> [m for m, t in res.picks.items() if t is not None]
    ['evidence', 'waic_path', 'lfv_path']
    """
    temps = _check_temperatures(temperatures)
    if not isinstance(refit, (bool, np.bool_)):
        raise TypeError(f"refit must be True or False (whether to fit every candidate), got {refit!r}.")
    key = _parameter(estimator, "temperature")
    classifier = is_classifier(estimator)
    times = {}
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, _num_samples(X))
    fit_params = _fit_params(estimator, sample_weight)

    start = time.perf_counter()
    path = _smc_path(estimator, X, y, key, temps.min(), smc, fit_params)
    times["path"] = time.perf_counter() - start
    read = _read_path(path, temps, classifier)

    n = len(temps)
    waic, lfv = np.full(n, np.nan), np.full(n, np.nan)
    fits = [None] * n
    if refit:
        start = time.perf_counter()
        for i, t in enumerate(temps):
            est = clone(estimator).set_params(**{key: t}).fit(X, y, **fit_params)
            fits[i] = est
            waic[i] = _criterion(est, X, y, "waic", None, sample_weight)["criterion"]
            if not classifier:
                lfv[i] = _criterion(est, X, y, "lfv", lfv_params, sample_weight)["criterion"]
        times["criteria"] = time.perf_counter() - start

    scorer = neg_log_loss_scorer if classifier else log_predictive_density_scorer
    cv_loss, cv_std, n_splits, cv_pick = np.full(n, np.nan), np.full(n, np.nan), 0, None
    if cv is not None:
        search = GridSearchCV(
            estimator,
            {key: list(temps)},
            scoring=scorer,
            cv=_splitter(cv, random_state),
            refit=False,
            error_score="raise",
        )
        start = time.perf_counter()
        search.fit(X, y, **fit_params)
        times["cv"] = time.perf_counter() - start
        n_splits = search.n_splits_
        folds = -np.column_stack([search.cv_results_[f"split{k}_test_score"] for k in range(n_splits)])
        cv_loss, cv_std, cv_pick = folds.mean(1), folds.std(1), float(search.best_params_[key])

    picks = dict(read["picks"])
    picks["waic"] = float(temps[np.argmin(waic)]) if refit else None
    picks["lfv"] = float(temps[np.nanargmin(lfv)]) if refit and not classifier else None
    picks["cv"] = cv_pick
    test = None
    if X_test is not None and y_test is not None:
        test = _held_out(estimator, key, X, y, X_test, y_test, picks, temps, fits, scorer, fit_params)
    return TemperatureComparison(
        temperatures=temps,
        log_marginal_likelihood=read["log_marginal_likelihood"],
        stage_temperature=read["stage_temperature"],
        waic_path=read["waic_path"],
        lfv_path=read["lfv_path"],
        waic=waic,
        lfv=lfv,
        cv_loss=cv_loss,
        cv_std=cv_std,
        temperature_path=path,
        picks={m: picks[m] for m in METHODS},
        test_log_density=test,
        times=times,
        n_splits=n_splits,
    )


def _check_temperatures(temperatures):
    try:
        temps = np.asarray(temperatures, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"temperatures must be a sequence of positive numbers, got {temperatures!r}."
        ) from exc
    if temps.size == 0:
        raise ValueError("temperatures must hold at least one candidate, got an empty sequence.")
    if not np.all(np.isfinite(temps) & (temps > 0)):
        raise ValueError(f"temperatures must be positive finite numbers, got {list(temperatures)!r}.")
    return temps


def _parameter(estimator, name):
    """``name`` or the one ``<step>__name`` of a pipeline's parameters."""
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    if name in params:
        return name
    nested = [k for k in params if k.endswith(f"__{name}") and k.count("__") == 1]
    if len(nested) == 1:
        return nested[0]
    raise TypeError(
        f"{type(estimator).__name__} has no {name!r} parameter; pass a skgibbs estimator, or a "
        "pipeline ending in one."
    )


def _smc_path(estimator, X, y, key, temperature, smc, fit_params=None):
    prefix = key[: -len("temperature")]
    sampler = smc if isinstance(smc, str) else clone(smc)
    est = clone(estimator).set_params(**{key: float(temperature), prefix + "sampler": sampler})
    # the estimator's budget of chains (n_samples, burn_in, ...) is not SMC's: back to the defaults
    final, _ = final_step(est)
    params = final.get_params(deep=False)
    defaults = {name: value for name, value in final._traits.sampler_setting_defaults.items() if name in params}
    unhonoured = get_sampler(sampler).ignored_settings()
    est.set_params(**{prefix + name: defaults[name] for name in unhonoured if name in defaults})
    est.fit(X, y, **(fit_params or {}))
    final, _ = final_step(est)
    return {k: np.asarray(v).copy() for k, v in final.temperature_path_.items()}


def _path_columns(path, classifier):
    """``name -> (values along the path, higher is better)`` of each path method that applies."""
    columns = {}
    if not classifier and "log_marginal_likelihood" in path:
        columns["evidence"] = (path["log_marginal_likelihood"], True)
    if "generalization_loss" in path:
        columns["waic_path"] = (path["generalization_loss"], False)
    if not classifier and "langevin_waic" in path:
        # paper 004's "training loss + LFV" with the normalising constant of each stage's sigma^2
        lfv = path["langevin_waic"] + 0.5 * np.log(2.0 * np.pi * path["noise_variance"])
        columns["lfv_path"] = (lfv, False)
    return columns


def _read_path(path, temps, classifier):
    """The path's columns at the stage nearest each candidate, and each path method's best stage."""
    t = path["temperature"]
    finite = np.isfinite(t) & (path["beta"] > 0)
    # the nearest stage on the log scale; candidates hotter than the hottest stage are off the path
    stages = np.flatnonzero(finite)
    nearest = stages[np.abs(np.log(temps)[:, None] - np.log(t[stages])[None, :]).argmin(1)]
    reached = temps <= t[stages].max() * (1 + 1e-12)
    out = {"stage_temperature": np.where(reached, t[nearest], np.nan), "picks": {}}
    columns = _path_columns(path, classifier)
    names = {"evidence": "log_marginal_likelihood", "waic_path": "waic_path", "lfv_path": "lfv_path"}
    for method, name in names.items():
        if method not in columns:
            out[name], out["picks"][method] = np.full(len(temps), np.nan), None
            continue
        values, higher = columns[method]
        out[name] = np.where(reached, values[nearest], np.nan)
        ok = finite & np.isfinite(values)
        best = np.flatnonzero(ok)[np.argmax(values[ok]) if higher else np.argmin(values[ok])]
        out["picks"][method] = float(t[best])
    return out


def _held_out(estimator, key, X, y, X_test, y_test, picks, temps, fits, scorer, fit_params=None):
    """Each pick's held-out score: a candidate's fit where there is one, else one refit per temperature."""
    out, scores = {}, {}
    for method, t in picks.items():
        if t is None:
            out[method] = None
            continue
        if t not in scores:
            match = np.flatnonzero(np.isclose(temps, t, rtol=1e-12, atol=0.0))
            est = fits[match[0]] if match.size else None
            if est is None:
                est = clone(estimator).set_params(**{key: t}).fit(X, y, **(fit_params or {}))
            scores[t] = float(scorer(est, X_test, y_test))
        out[method] = scores[t]
    return out
