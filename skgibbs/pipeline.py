"""scikit-learn's ``Pipeline`` with the posterior methods of a skgibbs estimator forwarded.

scikit-learn's :class:`~sklearn.pipeline.Pipeline` forwards only the methods
it knows (``predict``, ``predict_proba``, ``score`` ...), so with
``sklearn.pipeline.make_pipeline``,
``make_pipeline(StandardScaler(), GibbsMLPRegressor()).fit(X, y).predict_interval(X)``
raises ``AttributeError: 'Pipeline' object has no attribute
'predict_interval'``. The fix is to import ``make_pipeline`` (or
``Pipeline``) from ``skgibbs.pipeline`` instead: :class:`Pipeline` here is
a subclass that also forwards :meth:`~skgibbs.GibbsMLPRegressor.predict_interval`,
``predict_samples``, ``predict_noise_samples``, ``sample_y``, ``credible_radius`` and
``credible_sets``: ``X`` goes through the transformers, then to the last
step. Each is available only when the last step has it (as scikit-learn
does for its own methods), so ``hasattr`` tells whether a pipeline can
give intervals. Everything else (``fit``, parameters, slicing, ``clone``,
``set_output``, ``GridSearchCV``) is scikit-learn's.

A plain scikit-learn pipeline that is already fitted needs no refit: its
last step's methods are reachable as
``pipe[-1].predict_interval(pipe[:-1].transform(X))``, and the scorers of
:mod:`skgibbs.metrics` and
:class:`~skgibbs.model_selection.CriterionGridSearch` split either kind of
pipeline this way themselves.

Examples
--------
>>> import numpy as np
>>> from sklearn.preprocessing import StandardScaler
>>> from skgibbs import GibbsMLPRegressor
>>> from skgibbs.pipeline import make_pipeline
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(60, 2)); y = X[:, 0] + 0.1 * rng.normal(size=60)
>>> pipe = make_pipeline(StandardScaler(), GibbsMLPRegressor(
...     hidden_layer_sizes=(8,), n_samples=20, burn_in=20, pretrain_iter=100, random_state=0))
>>> y_pred, y_pis = pipe.fit(X, y).predict_interval(X[:3], confidence_level=0.9)
>>> y_pis.shape
(3, 2, 1)
"""

from sklearn import pipeline as _sk
from sklearn.utils.metaestimators import available_if

__all__ = ["Pipeline", "make_pipeline"]


def _final_step_has(name):
    def check(self):
        return hasattr(self._final_estimator, name)

    return check


class Pipeline(_sk.Pipeline):
    """A :class:`sklearn.pipeline.Pipeline` that forwards the posterior methods of its last step.

    Parameters, attributes and every other method are those of
    :class:`sklearn.pipeline.Pipeline`. The forwarded methods push ``X``
    through the transformers' ``transform`` and call the last step's method
    with the other arguments unchanged; each exists only when the last step
    has it.
    """

    def _through_transformers(self, X):
        Xt = X
        for _, transform in self.steps[:-1]:
            if transform is not None and transform != "passthrough":
                Xt = transform.transform(Xt)
        return Xt

    def _forward(self, name, X, *args, **kwargs):
        return getattr(self._final_estimator, name)(self._through_transformers(X), *args, **kwargs)

    @available_if(_final_step_has("predict_interval"))
    def predict_interval(self, X, *args, **kwargs):
        """``predict_interval`` of the last step on the transformed ``X`` (see the estimator's).

        Returns
        -------
        tuple
            What the last step returns: ``(y_pred, y_pis)`` for the
            regressors, ``(proba, bands)`` for the classifier.
        """
        return self._forward("predict_interval", X, *args, **kwargs)

    @available_if(_final_step_has("predict_samples"))
    def predict_samples(self, X):
        """``predict_samples`` of the last step on the transformed ``X``."""
        return self._forward("predict_samples", X)

    @available_if(_final_step_has("predict_noise_samples"))
    def predict_noise_samples(self, X):
        """``predict_noise_samples`` of the last step on the transformed ``X``."""
        return self._forward("predict_noise_samples", X)

    @available_if(_final_step_has("sample_y"))
    def sample_y(self, X, *args, **kwargs):
        """``sample_y`` of the last step on the transformed ``X``."""
        return self._forward("sample_y", X, *args, **kwargs)

    @available_if(_final_step_has("credible_radius"))
    def credible_radius(self, X, *args, **kwargs):
        """``credible_radius`` of the last step on the transformed ``X``."""
        return self._forward("credible_radius", X, *args, **kwargs)

    @available_if(_final_step_has("credible_sets"))
    def credible_sets(self, X, *args, **kwargs):
        """``credible_sets`` of the last step on the transformed ``X``."""
        return self._forward("credible_sets", X, *args, **kwargs)


def make_pipeline(*steps, **kwargs):
    """:func:`sklearn.pipeline.make_pipeline` returning this module's :class:`Pipeline`.

    Parameters
    ----------
    *steps : estimators
    **kwargs
        ``memory``, ``verbose`` (and ``transform_input`` where scikit-learn
        has it), passed to :class:`Pipeline`.

    Returns
    -------
    Pipeline
    """
    named = _sk.make_pipeline(*steps, **kwargs)
    return Pipeline(named.steps, **kwargs)
