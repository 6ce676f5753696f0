"""Former path of :mod:`skgibbs.estimators.sparse`, kept for pickles saved before the move.

Estimators pickled or saved by earlier releases name their class under
``skgibbs.sparse``; this module gives the moved module's public names (the
same objects). New code imports from :mod:`skgibbs.estimators`.
"""

from .estimators.sparse import *  # noqa: F403
from .estimators.sparse import __all__  # noqa: F401
