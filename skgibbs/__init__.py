"""skgibbs: Gibbs-posterior neural networks for scikit-learn."""

from .exceptions import ControlVariateWarning, MultimodalWarning, SamplerWarning

__version__ = "0.2.0.dev0"

__all__ = [
    "ControlVariateWarning",
    "MultimodalWarning",
    "SamplerWarning",
    "GibbsMLPRegressor",
    "GibbsMLPClassifier",
    "SparseGibbsMLPRegressor",
    "NeuralControlVariate",
    "PolynomialControlVariate",
    "__version__",
]


def __getattr__(name):
    if name in ("GibbsMLPRegressor", "GibbsMLPClassifier", "SparseGibbsMLPRegressor"):
        from . import estimators

        return getattr(estimators, name)
    if name in ("NeuralControlVariate", "PolynomialControlVariate"):
        from . import control_variates

        return getattr(control_variates, name)
    raise AttributeError(name)
