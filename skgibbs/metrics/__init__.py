"""Interval and classification metrics, and model-selection scorers.

The package has three parts.

Prediction intervals. :func:`coverage_score`, :func:`mean_width_score` and
:func:`interval_score` take arrays and return one value per confidence
level. Intervals have MAPIE's shape ``(n, 2, n_levels)`` (lower bounds in
``[:, 0]``, upper bounds in ``[:, 1]``, one slice per level); ``(n, 2)`` is
read as one level.

Calibration. :func:`expected_calibration_error`,
:func:`maximum_calibration_error` and :func:`reliability_curve` bin the
top-label confidence ``max_c p_c(x)``; a :class:`ReliabilityCurve` also
gives the ECE and MCE of bins stored elsewhere. :func:`predictive_entropy`
gives the entropy of each predictive distribution. Probabilities are
``(n, n_classes)`` arrays whose columns follow ``labels`` (by default
``np.unique(y_true)``, the convention of :func:`sklearn.metrics.log_loss`),
or ``(n,)`` arrays of the probability of the positive (second) class of a
binary problem. The two proper scoring rules come from scikit-learn and are
not re-implemented here: :func:`sklearn.metrics.log_loss` (the negative log
likelihood, NLL) and :func:`sklearn.metrics.brier_score_loss`, which takes
multiclass probabilities with ``labels=`` since scikit-learn 1.7 (its
default ``scale_by_half="auto"`` halves the binary score, to ``[0, 1]``, and
keeps the multiclass sum over classes, in ``[0, 2]``).

Scorers. They follow scikit-learn's
``scorer(estimator, X, y, sample_weight=None) -> float`` convention,
greater is better, and accept a :class:`~sklearn.pipeline.Pipeline`, whose
last step :func:`final_step` finds. Every scorer is one metric of one response of that last step:
``predict_interval`` for :func:`make_coverage_scorer`,
:func:`make_width_scorer` and :func:`make_interval_scorer` (a skgibbs
regressor), ``predict_proba`` for :func:`make_ece_scorer`,
:func:`make_mce_scorer` and the ready-made ``neg_*`` scorers (any fitted
classifier with ``classes_``), the posterior draws for
:func:`log_predictive_density_scorer` and the fitted WAIC for
:func:`waic_scorer`. Scorers pickle, and print as the call that made them.

Weights. The metric functions, :func:`predictive_entropy` aside, take
``sample_weight``, one weight per sample: means over the samples become
weighted means, and an integer weight ``k`` counts the sample ``k`` times.
The scorers of held-out rows pass ``sample_weight`` to their metric and,
with scikit-learn's metadata routing enabled, request it, so that a search
or :func:`~sklearn.model_selection.cross_validate` given ``sample_weight``
weighs each test fold by its weights; a scorer's ``set_score_request``
returns one that requests otherwise. :func:`waic_scorer` and the scorers
of :func:`make_diagnostic_scorers` read values of the fit, which the
weights given at fit already weigh: they ignore ``sample_weight``.
"""

from ._calibration import (
    ReliabilityCurve,
    expected_calibration_error,
    maximum_calibration_error,
    predictive_entropy,
    reliability_curve,
)
from ._intervals import coverage_score, interval_score, mean_width_score
from ._scorers import final_step
from ._scorers import (
    log_predictive_density_scorer,
    make_coverage_scorer,
    make_diagnostic_scorers,
    make_ece_scorer,
    make_interval_scorer,
    make_mce_scorer,
    make_width_scorer,
    neg_brier_scorer,
    neg_expected_calibration_error_scorer,
    neg_log_loss_scorer,
    neg_maximum_calibration_error_scorer,
    waic_scorer,
)

__all__ = [
    "coverage_score",
    "mean_width_score",
    "interval_score",
    "waic_scorer",
    "log_predictive_density_scorer",
    "make_coverage_scorer",
    "make_width_scorer",
    "make_interval_scorer",
    "ReliabilityCurve",
    "reliability_curve",
    "expected_calibration_error",
    "maximum_calibration_error",
    "predictive_entropy",
    "make_ece_scorer",
    "make_mce_scorer",
    "neg_expected_calibration_error_scorer",
    "neg_maximum_calibration_error_scorer",
    "neg_brier_scorer",
    "neg_log_loss_scorer",
    "make_diagnostic_scorers",
    "final_step",
]
