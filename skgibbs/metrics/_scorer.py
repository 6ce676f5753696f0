"""The one design of the scorers: a metric of one response of the estimator's last step.

Every scorer of :mod:`skgibbs.metrics` is a :class:`Scorer`: it reaches the
last step of the estimator through a Pipeline (:func:`final_step`), asks it
for one *response* (``predict_interval``, ``predict_proba``,
``predict_samples`` or the fitted WAIC) and returns
``sign * metric(y, response, **kwargs)``, with ``sample_weight=`` added
when the scorer is given weights of the held-out rows. A scorer holds
module-level functions and plain values only, so it pickles (joblib sends
it to worker processes), and it prints as the call that made it. Under
scikit-learn's metadata routing a scorer of held-out rows requests
``sample_weight`` for its ``score`` (:meth:`Scorer.set_score_request`
changes that).
"""

import copy

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.metadata_routing import MetadataRequest

from .._chunks import row_chunks
from .._data import fit_weights
from ..model import STUDENT_DF

__all__ = ["Scorer", "final_step"]


def final_step(estimator, X=None):
    """The last step of a pipeline, and ``X`` pushed through the steps before it.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted estimator. A :class:`~sklearn.pipeline.Pipeline` (anything
        with ``steps`` that slices) is split into its transformers and its
        last step; any other estimator is its own last step.
    X : array-like of shape (n_samples, n_features), default=None
        Input of ``estimator``; None when only the last step is wanted.

    Returns
    -------
    final : estimator
        The last step.
    Xt : array-like or None
        ``X`` transformed by the steps before the last, ``X`` itself when
        there are none, None when ``X`` is None.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = [[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]
    >>> pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    >>> final, Xt = final_step(pipe, X)
    >>> type(final).__name__, Xt.ravel().round(3).tolist()
    ('LinearRegression', [-1.225, 0.0, 1.225])
    >>> final_step(final, X)[1] is X
    True
    """
    if not (hasattr(estimator, "steps") and hasattr(estimator, "__getitem__")):
        return estimator, X
    if X is not None and len(estimator.steps) > 1:
        X = estimator[:-1].transform(X)
    return estimator[-1], X


# ----------------------------------------------------------- responses
# Each response takes the last step, the transformed X and the scorer's
# keyword arguments, and returns the prediction with the keyword arguments
# of the metric.
def _interval_bounds(final, Xt, kwargs):
    _, y_pis = final.predict_interval(Xt, confidence_level=kwargs["confidence_level"])
    return y_pis, kwargs


def _probabilities(final, Xt, kwargs):
    # As scikit-learn's scorers, a binary classifier gives the column of
    # classes_[-1]; labels name the columns even when the test fold lacks a class.
    proba = final.predict_proba(Xt)
    if len(final.classes_) == 2:
        proba = proba[:, 1]
    return proba, {**kwargs, "labels": final.classes_}


def _posterior_draws(final, Xt, kwargs):
    # (rows, draws (S, rows)) pairs, chunk by chunk of rows: the (S, n) draws are never held at once
    out = {**kwargs, "noise_variance": final.noise_variance_, "weights": _draw_weights(final)}
    if getattr(final, "noise_", None) == "student":  # a Student-t noise of that variance
        out["noise_df"] = STUDENT_DF
    return _draw_chunks(final, Xt), out


def _draw_weights(final):
    """Weight of each column of ``predict_samples``: ``chain_weights_[k] / n_draws`` (None: equal weights)."""
    chain_weights, samples = getattr(final, "chain_weights_", None), getattr(final, "samples_", None)
    if chain_weights is None or samples is None or samples.ndim != 3 or np.all(chain_weights == chain_weights[0]):
        return None
    return np.repeat(np.asarray(chain_weights, dtype=float) / samples.shape[1], samples.shape[1])


def _draw_chunks(final, Xt):
    # with a noise that varies with the inputs, each chunk also carries the draws' variances (S, rows)
    n = len(Xt)
    samples = getattr(final, "samples_", None)
    n_draws = samples.shape[0] * samples.shape[1] if samples is not None and samples.ndim == 3 else 1
    varies = getattr(final, "noise_", None) in ("heteroscedastic", "student")
    for rows in row_chunks(n, n_draws, width=6 if varies else 4):
        X_rows = _safe_indexing(Xt, np.arange(rows.start, rows.stop))
        if varies:
            yield rows, final.predict_samples(X_rows).T, final.predict_noise_samples(X_rows).T
        else:
            yield rows, final.predict_samples(X_rows).T


def _fitted_waic(final, Xt, kwargs):
    return final.generalization_loss_, kwargs


# response name: (how to get it, what the last step needs, what it is)
_RESPONSES = {
    "predict_interval": (_interval_bounds, ("predict_interval",), "a skgibbs regressor"),
    "predict_proba": (_probabilities, ("predict_proba", "classes_"), "a fitted classifier"),
    "predict_samples": (
        _posterior_draws,
        ("predict_samples", "noise_variance_"),
        "a fitted skgibbs estimator",
    ),
    "waic": (_fitted_waic, ("generalization_loss_",), "a fitted skgibbs estimator (e.g. GibbsMLPRegressor)"),
}

#: responses read from the fit, not computed on the held-out rows: their weights do not apply
_FITTED = ("waic",)


class Scorer:
    """``scorer(estimator, X, y, sample_weight=None) = sign * metric(y, response, **kwargs)``.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, response, **kwargs) -> float``, which also takes
        ``sample_weight=`` unless the response is ``"waic"``; a
        module-level function, so that the scorer pickles.
    response : {"predict_interval", "predict_proba", "predict_samples", "waic"}
        What the last step of the estimator is asked for. ``"predict_samples"``
        gives the metric an iterator of ``(rows, draws)`` pairs, the draws
        ``(S, rows)`` of consecutive slices of rows, so that the draws at
        every row are never held at once, with the keyword arguments
        ``noise_variance`` and ``weights`` (the weight of every draw, from
        the estimator's ``chain_weights_``, or None); an estimator with
        ``noise="heteroscedastic"`` gives ``(rows, draws, variances)``
        triples, the variances of the draws at those rows in place of
        ``noise_variance``; one with ``noise="student"`` gives those triples
        and the keyword ``noise_df``, the degrees of freedom of its t noise.
    sign : {1, -1}
        -1 turns a loss into a greater-is-better score.
    name : str
        The ``repr``: the call that makes an equal scorer.
    **kwargs : dict
        Passed to ``metric`` (and ``confidence_level`` to ``predict_interval``).

    Notes
    -----
    Called with ``sample_weight`` (one weight per row of ``X``), the
    scorer checks the weights before it asks for the response (a
    ValueError names ``sample_weight`` when they are not finite and
    ``>= 0``, not all 0, one per row) and passes them to ``metric`` as
    ``sample_weight=``; weights all 1 are passed as no weights, so that the
    score is the unweighted one exactly. The ``"waic"`` response is a value
    of the fit, not of the rows scored: it ignores ``sample_weight`` (the
    weights given at fit already weigh it).

    With scikit-learn's metadata routing enabled, the scorer requests
    ``sample_weight`` for ``score`` (except for ``"waic"``, which
    requests nothing): a search or :func:`~sklearn.model_selection.cross_validate`
    that is given ``sample_weight`` passes each test fold's weights to it.
    :meth:`set_score_request` returns a scorer that requests otherwise.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.metrics import log_loss
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    >>> clf = LogisticRegression().fit(X, y)
    >>> scorer = Scorer(log_loss, "predict_proba", sign=-1, name="neg_nll")
    >>> scorer
    neg_nll
    >>> bool(abs(scorer(clf, X, y) + log_loss(y, clf.predict_proba(X))) < 1e-12)
    True
    """

    def __init__(self, metric, response, *, sign, name, **kwargs):
        if response not in _RESPONSES:
            raise ValueError(f"response must be one of {sorted(_RESPONSES)}, got {response!r}.")
        if sign not in (1, -1):
            raise ValueError(f"sign must be 1 or -1, got {sign!r}.")
        self.metric = metric
        self.response = response
        self.sign = sign
        self.name = name
        self.kwargs = kwargs
        self._sample_weight_request = True

    def __call__(self, estimator, X=None, y=None, sample_weight=None):
        """The score of ``estimator`` on ``(X, y)``, the rows weighted by ``sample_weight``.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
        X : array-like of shape (n_samples, n_features), default=None
        y : array-like of shape (n_samples,), default=None
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row of ``X``, finite and ``>= 0``, not all 0;
            ignored by the ``"waic"`` response (see Notes).

        Returns
        -------
        float
        """
        weights = None
        if sample_weight is not None and self.response not in _FITTED:
            weights = fit_weights(sample_weight, len(y))  # None for weights all 1
        final, Xt = final_step(estimator, X)
        get, needs, what = _RESPONSES[self.response]
        missing = [attribute for attribute in needs if not hasattr(final, attribute)]
        if missing:
            raise TypeError(
                f"{self!r} needs {what}, or a Pipeline ending in one, with {' and '.join(needs)}; "
                f"{type(final).__name__} lacks {' and '.join(missing)}."
            )
        response, kwargs = get(final, Xt, self.kwargs)
        if weights is not None:
            kwargs = {**kwargs, "sample_weight": weights}
        return self.sign * float(self.metric(y, response, **kwargs))

    def set_score_request(self, *, sample_weight=True):
        """A copy of the scorer that requests ``sample_weight`` as told, under metadata routing.

        Parameters
        ----------
        sample_weight : bool, None or str, default=True
            True: the weights given to a search (or to
            :func:`~sklearn.model_selection.cross_validate`) reach the
            scorer; False: they do not, and the score is unweighted; None:
            passing weights is an error; a str: the weights passed under
            that name reach the scorer. The values of scikit-learn's
            ``set_score_request``.

        Returns
        -------
        Scorer
            A new scorer, printed as this one followed by the call; this
            one is unchanged (the ready-made scorers are shared).

        Examples
        --------
        >>> from skgibbs.metrics import make_coverage_scorer
        >>> make_coverage_scorer(0.9).set_score_request(sample_weight=False)
        make_coverage_scorer(confidence_level=0.9).set_score_request(sample_weight=False)
        """
        # the request checks the value as scikit-learn does
        MetadataRequest(owner=self.name).score.add_request(param="sample_weight", alias=sample_weight)
        scorer = copy.copy(self)
        scorer._sample_weight_request = sample_weight
        scorer.name = f"{self.name}.set_score_request(sample_weight={sample_weight!r})"
        return scorer

    def get_metadata_routing(self):
        """The scorer's metadata request: ``sample_weight`` for ``score``, as :meth:`set_score_request` says.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
        """
        request = MetadataRequest(owner=self.name)
        if self.response not in _FITTED:
            request.score.add_request(param="sample_weight", alias=self._sample_weight_request)
        return request

    def _accept_sample_weight(self):
        # asked by scikit-learn's multi-metric scorer when it passes sample_weight without metadata routing
        return True

    def __repr__(self):
        return self.name
