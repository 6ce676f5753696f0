"""Plots of fitted estimators, in the style of scikit-learn's displays.

- :class:`PredictionBandDisplay`: the posterior mean and the pointwise
  predictive and credible bands of a regressor along one input;
- :class:`InclusionDisplay`: which inputs and which weights a
  :class:`~skgibbs.SparseGibbsMLPRegressor` keeps;
- :class:`InputRelevanceDisplay`: the learned scale of each input under
  ``prior="ard"``;
- :class:`ReliabilityDisplay`: the reliability diagram of a probabilistic
  classifier.

Each has ``from_estimator`` (and, where the values come from elsewhere,
``from_predictions``) to compute and draw, and ``plot`` to draw again, on
new axes or on axes given with ``ax=``; the artists are kept in attributes
ending in an underscore (``line_``, ``bands_``, ``bars_``, ``ax_``,
``figure_``). matplotlib is imported only when something is drawn; install
it with the ``plot`` extra, ``pip install "skgibbs[plot]"``.
"""

from ._bands import PredictionBandDisplay
from ._inclusion import InclusionDisplay
from ._relevance import InputRelevanceDisplay
from ._reliability import ReliabilityDisplay

__all__ = ["PredictionBandDisplay", "InclusionDisplay", "InputRelevanceDisplay", "ReliabilityDisplay"]
