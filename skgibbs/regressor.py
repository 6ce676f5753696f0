"""Former path of :mod:`skgibbs.estimators.regressor`, kept for pickles saved before the move.

Estimators pickled or saved by earlier releases name their class under
``skgibbs.regressor``; this module gives the moved module's public names (the
same objects). New code imports from :mod:`skgibbs.estimators`.
"""

from .estimators.regressor import *  # noqa: F403
from .estimators.regressor import __all__  # noqa: F401
