"""Saving fitted estimators with ``skops.io``, the format scikit-learn recommends for files from others.

``pickle`` runs whatever code a file names, so a pickled model from an
untrusted source is unsafe to load. ``skops.io`` stores only data and the
names of the types it rebuilds, and refuses types it was not told to trust.
A fitted skgibbs estimator holds NumPy arrays, numbers, strings and one
skgibbs type besides itself, its network's description
:class:`skgibbs.model.MLPSpec`, and its sampler object, so the types to
trust are few: :data:`TRUSTED_TYPES` (every sampler class the library
registers is in it; a sampler class of the user's own is not). :func:`dump` and :func:`load` wrap ``skops.io`` with
that list; :func:`load` refuses a file that needs any other type beyond
those ``skops`` trusts by default (NumPy arrays, scikit-learn's own
estimators such as ``StandardScaler``).

``skops`` is optional (``pip install skops``); this module imports it only
when called::

    from skgibbs.persistence import dump, load
    dump(reg, "model.skops")
    reg = load("model.skops")
"""

from . import estimators
from .samplers import FORMER_MODULES, available_samplers, get_sampler

__all__ = ["TRUSTED_TYPES", "dump", "load"]


def _type_names(classes, former_modules):
    """``module.qualname`` of each library class, and of the modules it lived in before.

    A class is named under its module's name and under each former module
    that maps to it (``former_modules``: old -> new), so that files saved by
    earlier releases load; classes from outside the library (a user's
    registered sampler) are left out, and stay untrusted.
    """
    names = []
    for cls in classes:
        if not cls.__module__.startswith("skgibbs."):
            continue
        names.append(f"{cls.__module__}.{cls.__qualname__}")
        names += [f"{old}.{cls.__qualname__}" for old, new in former_modules.items() if new == cls.__module__]
    return tuple(names)


_ESTIMATORS = (estimators.GibbsMLPRegressor, estimators.SparseGibbsMLPRegressor, estimators.GibbsMLPClassifier)

#: The skgibbs types a saved estimator (or a :mod:`skgibbs.pipeline` pipeline ending in one) may
#: hold: the estimators (also under their paths before :mod:`skgibbs.estimators`,
#: :data:`skgibbs.estimators.FORMER_MODULES`) and every sampler class the library registers
#: (also under :data:`skgibbs.samplers.FORMER_MODULES`).
TRUSTED_TYPES = (
    "skgibbs.model.MLPSpec",
    "skgibbs.model.NumericEmbedding",
    "skgibbs.embeddings.PiecewiseLinearEmbedding",
    "skgibbs.embeddings.PeriodicEmbedding",
    "skgibbs.pipeline.Pipeline",
) + _type_names(_ESTIMATORS, estimators.FORMER_MODULES) + _type_names(
    [type(get_sampler(name)) for name in available_samplers()], FORMER_MODULES
)


def _skops_io():
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("skgibbs.persistence needs skops: pip install skops") from exc
    return sio


def dump(estimator, file):
    """Write a fitted estimator (or pipeline) to ``file`` in the ``skops`` format.

    Parameters
    ----------
    estimator : object
    file : str or path-like
    """
    _skops_io().dump(estimator, file)


def load(file, trusted=()):
    """Read an estimator written by :func:`dump`, trusting only :data:`TRUSTED_TYPES`.

    Parameters
    ----------
    file : str or path-like
    trusted : sequence of str, default=()
        Further type names to trust (e.g. a transformer of your own in a
        pipeline); check them with ``skops.io.get_untrusted_types`` first.

    Returns
    -------
    object

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        When the file holds a type outside the trusted ones.
    """
    return _skops_io().load(file, trusted=list(TRUSTED_TYPES) + list(trusted))
