"""What every display shares: the lazy matplotlib import and the name of an estimator."""

from ..metrics import final_step


def _pyplot(display):
    """``matplotlib.pyplot``, or an ImportError naming ``display`` and the ``plot`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f'{display} needs matplotlib; install it with pip install "skgibbs[plot]".'
        ) from exc
    return plt


def _estimator_name(estimator):
    """Class name of ``estimator``, of its last step for a pipeline."""
    return type(final_step(estimator)[0]).__name__
