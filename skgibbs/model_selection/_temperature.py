"""compare_temperatures: the temperature chosen by the evidence, WAIC, LFV and k-fold CV."""

import dataclasses
import time

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV

from ..metrics import final_step, log_predictive_density_scorer, neg_log_loss_scorer
from ._compare import _splitter
from ._search import _criterion

__all__ = ["TemperatureComparison", "compare_temperatures"]

METHODS = ("evidence", "waic", "lfv", "cv")


@dataclasses.dataclass(frozen=True, repr=False)
class TemperatureComparison:
    """What each method measures per candidate temperature, and what it picks.

    Every per-candidate array has shape ``(n_candidates,)``, in the order
    of ``temperatures`` as given. ``waic``, ``lfv`` and ``cv_loss`` are
    negative log-likelihoods per example (lower is better);
    ``log_marginal_likelihood`` is a log density of all the standardized
    targets (higher is better).

    Attributes
    ----------
    temperatures : ndarray
    log_marginal_likelihood : ndarray
        The evidence path's ``log_marginal_likelihood`` at the path stage
        nearest to each candidate in ``log(temperature)`` (the nearest stage,
        not interpolated); NaN above the path's hottest finite stage and for
        a classifier.
    stage_temperature : ndarray
        The temperature of that nearest stage (NaN where the value is).
    waic, lfv : ndarray
        The ``"waic"`` and ``"lfv"`` criteria of
        :class:`CriterionGridSearch` (NaN ``lfv`` for a classifier).
    cv_loss, cv_std : ndarray
        Minus the mean over the folds of the held-out log predictive density
        per example, and its standard deviation over the folds.
    temperature_path : dict of ndarray or None
        ``temperature_path_`` of the evidence fit (None for a classifier).
    picks : dict
        ``method -> temperature`` for ``"evidence"``, ``"waic"``, ``"lfv"``
        and ``"cv"``; None where the method does not apply.
    test_log_density : dict or None
        ``method ->`` the mean held-out log predictive density per example
        of the estimator refitted on all the training data at that method's
        pick (None without test data, or where the pick is None).
    times : dict
        Wall time in seconds: ``"evidence"`` (the one SMC fit),
        ``"criteria"`` (the candidate fits shared by WAIC and LFV, with both
        criteria), ``"cv"`` (the whole grid search).
    n_splits : int
    """

    temperatures: np.ndarray
    log_marginal_likelihood: np.ndarray
    stage_temperature: np.ndarray
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
            "waic": self.waic,
            "lfv": self.lfv,
            "cv_loss": self.cv_loss,
            "cv_std": self.cv_std,
        }

    def to_frame(self):
        """The per-candidate columns as a pandas DataFrame (needs pandas).

        Returns
        -------
        pandas.DataFrame of shape (n_candidates, 7)
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_frame needs pandas; use to_dict() or repr() instead.") from exc
        return pd.DataFrame(self.to_dict())

    def __repr__(self):
        lines = ["temperature   log_ml (stage T)        waic       lfv   cv_loss (std)"]
        for i, t in enumerate(self.temperatures):
            lines.append(
                f"{t:11.4g} {self.log_marginal_likelihood[i]:9.2f} ({self.stage_temperature[i]:7.3g})"
                f"  {self.waic[i]:9.4f} {self.lfv[i]:9.4f} {self.cv_loss[i]:9.4f} ({self.cv_std[i]:.4f})"
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
    lfv_params=None,
    random_state=None,
):
    r"""Choose ``temperature`` four ways: evidence, WAIC, LFV and k-fold CV.

    - **evidence**: one fit of ``estimator`` with ``sampler=smc`` at
      ``min(temperatures)``. Tempered SMC passes through every hotter
      temperature on its way from the prior, so its
      ``temperature_path_`` holds the log marginal likelihood
      ``log p(y | sigma^2 = T / 2)`` of the standardized targets at each of
      its stages (:class:`~skgibbs.samplers.SMC`); the pick is the stage
      temperature where it is largest, the empirical-Bayes temperature.
    - **waic** and **lfv**: each candidate fitted once on all the data with
      the estimator's own sampler, ranked by the ``"waic"`` and ``"lfv"``
      criteria of :class:`CriterionGridSearch` (one set of fits serves
      both).
    - **cv**: :class:`~sklearn.model_selection.GridSearchCV` over the
      candidates, scored by
      :func:`~skgibbs.metrics.log_predictive_density_scorer` (a classifier:
      :data:`~skgibbs.metrics.neg_log_loss_scorer`).

    Parameters
    ----------
    estimator : estimator or Pipeline
        A skgibbs estimator (or a pipeline ending in one) with a
        ``temperature`` parameter.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    temperatures : sequence of float > 0
        The candidates.
    cv : int, CV splitter or iterable, default=5
        An int k gives ``KFold(k, shuffle=True, random_state=random_state)``.
    X_test, y_test : array-like or None, default=None
        With both, each method's pick is scored on them: the estimator
        fitted on all of ``(X, y)`` at the picked temperature (a candidate's
        fit from the WAIC/LFV search is reused; the evidence pick, a stage
        temperature, is refitted with the estimator's own sampler).
    smc : "smc" or SMC, default="smc"
        The sampler of the evidence fit (an :class:`~skgibbs.samplers.SMC`
        object sets its particles and moves).
    lfv_params : dict or None, default=None
        Keyword arguments of the ``"lfv"`` criterion's Langevin run, as for
        :class:`CriterionGridSearch` (``n_iter``, ``burn_in``, ...).
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds; the estimators keep their own ``random_state``.

    Returns
    -------
    TemperatureComparison

    Raises
    ------
    ValueError
        If ``temperatures`` is empty or holds a value that is not a
        positive finite number.
    TypeError
        If ``estimator`` has no ``temperature`` parameter.

    Notes
    -----
    For the squared loss the path's ``log_marginal_likelihood`` at the
    stage temperature :math:`T_s` is
    :math:`\log Z_s - \tfrac n2 \log(\pi T_s)`, the log density of the
    standardized targets under :math:`y_i \sim N(f_\theta(x_i), T_s/2)`
    with :math:`\theta` from the prior: its maximiser estimates
    :math:`2\sigma^2` on the standardized scale. The pick is the best
    *stage*, so its resolution is the spacing of the adaptive stages (the
    ``beta`` steps of SMC, finer with a larger ``target_ess``), and
    ``log_marginal_likelihood`` per candidate is read at the nearest stage,
    not interpolated. For a classifier (cross-entropy) ``log Z`` is a
    normalised density of the labels only at ``temperature = 1``, so no
    temperature can be chosen by it: the evidence fit is skipped and its
    pick is None, as is the ``"lfv"`` pick (the Langevin functional
    variance is defined for regressors).

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
    >>> est = GibbsMLPRegressor((), n_samples=20, burn_in=20, n_chains=2, random_state=0)
    >>> res = compare_temperatures(est, X, y, [0.1, 0.3, 1.0], cv=3,
    ...                            smc=SMC(n_particles=32), random_state=0)  # doctest: +SKIP
    >>> sorted(res.picks)  # doctest: +SKIP
    ['cv', 'evidence', 'lfv', 'waic']
    """
    temps = _check_temperatures(temperatures)
    key = _parameter(estimator, "temperature")
    classifier = is_classifier(estimator)
    grid = {key: list(temps)}
    times = {}

    start = time.perf_counter()
    path = None if classifier else _evidence_path(estimator, X, y, key, temps.min(), smc)
    times["evidence"] = time.perf_counter() - start
    log_ml, stage_t, evidence_pick = _read_path(path, temps)

    start = time.perf_counter()
    fits, waic, lfv = [], np.empty(len(temps)), np.full(len(temps), np.nan)
    for i, t in enumerate(temps):
        est = clone(estimator).set_params(**{key: t}).fit(X, y)
        fits.append(est)
        waic[i] = _criterion(est, X, y, "waic", None)["criterion"]
        if not classifier:
            lfv[i] = _criterion(est, X, y, "lfv", lfv_params)["criterion"]
    times["criteria"] = time.perf_counter() - start

    scorer = neg_log_loss_scorer if classifier else log_predictive_density_scorer
    search = GridSearchCV(
        estimator, grid, scoring=scorer, cv=_splitter(cv, random_state), refit=False, error_score="raise"
    )
    start = time.perf_counter()
    search.fit(X, y)
    times["cv"] = time.perf_counter() - start
    folds = -np.column_stack([search.cv_results_[f"split{k}_test_score"] for k in range(search.n_splits_)])

    picks = {
        "evidence": evidence_pick,
        "waic": float(temps[np.argmin(waic)]),
        "lfv": None if classifier else float(temps[np.nanargmin(lfv)]),
        "cv": float(search.best_params_[key]),
    }
    test = None
    if X_test is not None and y_test is not None:
        test = _held_out(estimator, key, X, y, X_test, y_test, picks, temps, fits, scorer)
    return TemperatureComparison(
        temperatures=temps,
        log_marginal_likelihood=log_ml,
        stage_temperature=stage_t,
        waic=waic,
        lfv=lfv,
        cv_loss=folds.mean(1),
        cv_std=folds.std(1),
        temperature_path=path,
        picks=picks,
        test_log_density=test,
        times=times,
        n_splits=search.n_splits_,
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


def _evidence_path(estimator, X, y, key, temperature, smc):
    sampler_key = key[: -len("temperature")] + "sampler"
    sampler = smc if isinstance(smc, str) else clone(smc)
    est = clone(estimator).set_params(**{key: float(temperature), sampler_key: sampler})
    est.fit(X, y)
    final, _ = final_step(est)
    return {k: np.asarray(v).copy() for k, v in final.temperature_path_.items()}


def _read_path(path, temps):
    nan = np.full(len(temps), np.nan)
    if path is None or "log_marginal_likelihood" not in path:
        return nan, nan.copy(), None
    t, lml = path["temperature"], path["log_marginal_likelihood"]
    finite = np.isfinite(t) & np.isfinite(lml)
    t, lml = t[finite], lml[finite]
    # the nearest stage on the log scale; candidates hotter than the hottest stage are off the path
    nearest = np.abs(np.log(temps)[:, None] - np.log(t)[None, :]).argmin(1)
    reached = temps <= t.max() * (1 + 1e-12)
    log_ml = np.where(reached, lml[nearest], np.nan)
    stage_t = np.where(reached, t[nearest], np.nan)
    return log_ml, stage_t, float(t[np.argmax(lml)])


def _held_out(estimator, key, X, y, X_test, y_test, picks, temps, fits, scorer):
    out = {}
    for method, t in picks.items():
        if t is None:
            out[method] = None
            continue
        match = np.flatnonzero(np.isclose(temps, t, rtol=1e-12, atol=0.0))
        est = fits[match[0]] if match.size else clone(estimator).set_params(**{key: t}).fit(X, y)
        out[method] = float(scorer(est, X_test, y_test))
    return out
