"""What the estimators' responses differ in, read from :attr:`~skgibbs.plan.EstimatorTraits.response`.

The response is ``y``, what scikit-learn calls the targets (the word
``Target`` is kept for the density a kernel samples). A regressor's
response is ``"continuous"``: numbers, standardized for the
loss, one output (two for a noise model whose scale the network gives) and
a loss from the noise model (:class:`~skgibbs._noise_model.NoiseModel`).
The classifier's are ``"classes"``: labels, encoded ``0 .. C - 1``, one
output for two classes and ``C`` for more, and the cross-entropy. What the
chains' mixing checks judge follows too: the function values, or the
predicted probabilities. :func:`~skgibbs.problem.build_problem` reads these
functions with the class's declared kind, so an estimator class declares
its response as data and defines none of this as methods.
"""

import numpy as np
from scipy.special import log_expit, log_softmax
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets

from ._data import check_numeric, column_moments, validate_fit_data
from ._noise_model import NoiseModel
from ._out_of_core import is_lazy, validate_lazy_fit_data

__all__ = [
    "RESPONSES",
    "WATCHED",
    "validate_response",
    "encode_response",
    "n_outputs",
    "response_loss",
    "watched_values",
]

#: the kinds of response an estimator class declares
RESPONSES = ("continuous", "classes")

#: what the mixing checks judge for each kind of response (:func:`watched_values`), in words for the docs and warnings
WATCHED = {"continuous": "function values", "classes": "predicted probabilities"}


def validate_response(estimator, X, y, response):
    """The validated ``(X, y)`` and the input attributes of ``estimator``'s fit.

    A memmap or dask ``X`` is read by block, not copied
    (:func:`~skgibbs._out_of_core.validate_lazy_fit_data`); otherwise
    :func:`~skgibbs._data.validate_fit_data`. A continuous response must be
    numbers; classes, labels scikit-learn can classify.
    """
    classes = response == "classes"
    if not classes:
        check_numeric(y, "y")
    if is_lazy(X):
        X, y, inputs = validate_lazy_fit_data(X, y, y_numeric=not classes)
    elif classes:
        X, y, inputs = validate_fit_data(estimator, X, y, dtype=np.float64)
    else:
        X, y, inputs = validate_fit_data(estimator, X, y, y_numeric=True, dtype=np.float64)
    if classes:
        check_classification_targets(y)
    return X, y, inputs


def encode_response(response, y, sample_weight=None, owner="The estimator"):
    """The response the loss sees (NumPy) and the encoding's fitted attributes (a dict by name).

    A continuous response is standardized by its (weighted) mean and scale
    (``y_mean_``, ``y_scale_``); classes are encoded ``0 .. C - 1``
    (``classes_``), refused with fewer than two classes, or fewer than two
    of non-zero weight. ``owner`` names the estimator in the errors.

    Examples
    --------
    >>> encode_response("classes", np.array(["b", "a", "b"]))
    (array([1., 0., 1.]), {'classes_': array(['a', 'b'], dtype='<U1')})
    """
    if response == "continuous":
        mean, scale = column_moments(y[:, None], sample_weight)
        mean, scale = float(mean[0]), float(scale[0])
        return (y - mean) / scale, {"y_mean_": mean, "y_scale_": scale}
    encoder = LabelEncoder().fit(y)
    if len(encoder.classes_) < 2:
        raise ValueError(
            f"{owner} needs examples of at least 2 classes in y, got only the class {encoder.classes_[0]!r}."
        )
    if sample_weight is not None:
        weighted = np.unique(y[sample_weight > 0])
        if len(weighted) < 2:
            raise ValueError(
                f"{owner} needs examples of at least 2 classes with a non-zero sample_weight, got only the "
                f"class {weighted[0]!r} (the other classes' rows all weigh 0)."
            )
    return encoder.transform(y).astype(np.float64), {"classes_": encoder.classes_}


def _noise(noise):
    """The noise model of a regressor's fit; None (no noise model to choose) is the squared loss's."""
    return NoiseModel(noise or "homoscedastic")


def n_outputs(response, encoding, noise=None):
    """Width of the output layer: one per class beyond two classes, else the noise model's (1 or 2)."""
    if response == "classes":
        n_classes = len(encoding["classes_"])
        return 1 if n_classes == 2 else n_classes
    return _noise(noise).n_outputs


def response_loss(response, noise=None):
    """The per-example loss (:data:`skgibbs.model.LOSSES`) of ``R_n``: the cross-entropy, or the noise model's."""
    return "cross_entropy" if response == "classes" else _noise(noise).loss


def log_proba(outputs):
    """``log p_theta(c | x)``, ``(S, n, n_classes)``, of the outputs ``(S, n)`` (one logit) or ``(S, n, n_classes)``."""
    if outputs.ndim == 2:  # one logit: the log-probabilities of classes_[0] and classes_[1]
        return np.stack([log_expit(-outputs), log_expit(outputs)], axis=-1)
    return log_softmax(outputs, axis=-1)


def _function_values(outputs):
    """The function values (the first output) of draws ``(S, rows[, n_outputs])``."""
    return outputs[..., 0] if outputs.ndim == 3 else outputs


def _probabilities(outputs):
    """The predicted probabilities of the draws (of class 1 with two classes), ``(S, rows)`` or ``(S, rows * C)``."""
    P = np.exp(log_proba(outputs))
    return P[..., 1] if P.shape[-1] == 2 else P.reshape(P.shape[0], -1)


def watched_values(response):
    """The map from network outputs ``(S, rows[, n_outputs])`` to what ``rhat_`` and ``ess_`` judge, ``(S, m)``."""
    return _probabilities if response == "classes" else _function_values
