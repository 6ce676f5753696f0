"""Model selection by an information criterion instead of cross-validation.

:class:`CriterionGridSearch` fits every candidate of a grid once, on all the
data, and ranks the candidates by a criterion (Langevin-WAIC, lower is
better); :func:`compare_with_cv` runs it beside k-fold cross-validation over
the same grid and reports how well the two rankings agree and how much time
the criterion saves (paper 004, §4.3); :func:`compare_temperatures` chooses
``temperature`` by the SMC evidence path, WAIC and LFV along that path (one
fit for the three), WAIC and LFV of refits, and k-fold cross-validation
side by side.
"""

from ._compare import CVComparison, compare_with_cv
from ._search import CriterionGridSearch
from ._temperature import TemperatureComparison, compare_temperatures

__all__ = [
    "CVComparison",
    "CriterionGridSearch",
    "TemperatureComparison",
    "compare_temperatures",
    "compare_with_cv",
]
