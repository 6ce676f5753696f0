"""The estimators: the layer a user meets, above the problem and the samplers.

The three scikit-learn estimators live here, one module each, with what they
share:

- :mod:`~skgibbs.estimators.regressor`: :class:`~skgibbs.GibbsMLPRegressor`
  (and its three noise models);
- :mod:`~skgibbs.estimators.classifier`: :class:`~skgibbs.GibbsMLPClassifier`;
- :mod:`~skgibbs.estimators.sparse`: :class:`~skgibbs.SparseGibbsMLPRegressor`,
  a subclass of the regressor under the mixing prior, and its helpers
  (:func:`~skgibbs.estimators.sparse.input_relevance`, ...);
- ``_base.py`` (``fit``, the one writer of fitted state), ``_dense.py`` (the
  settings the dense networks add and their shared docs) and
  ``_chain_weights.py`` (the chains' weights).

An estimator builds its posterior through :mod:`skgibbs.problem` and samples
it with :mod:`skgibbs.samplers`; nothing below this package imports it.

The estimators are also importable from the package's root
(``from skgibbs import GibbsMLPRegressor``). Before this package the three
modules sat at the root; :data:`FORMER_MODULES` names those paths, which
estimators pickled or saved by earlier releases refer to, and which still
import.

Examples
--------
>>> from skgibbs.estimators import GibbsMLPRegressor
>>> from skgibbs import GibbsMLPRegressor as same
>>> GibbsMLPRegressor is same
True
>>> GibbsMLPRegressor.__module__
'skgibbs.estimators.regressor'
"""

from .classifier import GibbsMLPClassifier
from .regressor import HETEROSCEDASTIC_ROWS, GibbsMLPRegressor
from .sparse import SparseGibbsMLPRegressor

#: the modules the estimator classes lived in before this package: old -> new. Estimators
#: pickled or saved (:mod:`skgibbs.persistence`) then name their class by the old path, and load.
FORMER_MODULES = {
    "skgibbs.regressor": "skgibbs.estimators.regressor",
    "skgibbs.classifier": "skgibbs.estimators.classifier",
    "skgibbs.sparse": "skgibbs.estimators.sparse",
}

__all__ = [
    "GibbsMLPRegressor",
    "GibbsMLPClassifier",
    "SparseGibbsMLPRegressor",
    "HETEROSCEDASTIC_ROWS",
    "FORMER_MODULES",
]
