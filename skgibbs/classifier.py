"""Former path of :mod:`skgibbs.estimators.classifier`, kept for pickles saved before the move.

Estimators pickled or saved by earlier releases name their class under
``skgibbs.classifier``; this module gives the moved module's public names (the
same objects). New code imports from :mod:`skgibbs.estimators`.
"""

from .estimators.classifier import *  # noqa: F403
from .estimators.classifier import __all__  # noqa: F401
