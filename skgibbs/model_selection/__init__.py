"""Model selection by an information criterion instead of cross-validation.

:class:`CriterionGridSearch` fits every candidate of a grid once, on all the
data, and ranks the candidates by a criterion (Langevin-WAIC, lower is
better); :func:`compare_with_cv` runs it beside k-fold cross-validation over
the same grid and reports how well the two rankings agree and how much time
the criterion saves (paper 004, §4.3).
"""

from ._compare import CVComparison, compare_with_cv
from ._search import CriterionGridSearch

__all__ = ["CriterionGridSearch", "compare_with_cv", "CVComparison"]
