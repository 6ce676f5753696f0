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
    if name == "GibbsMLPRegressor":
        from .regressor import GibbsMLPRegressor

        return GibbsMLPRegressor
    if name == "GibbsMLPClassifier":
        from .classifier import GibbsMLPClassifier

        return GibbsMLPClassifier
    if name == "SparseGibbsMLPRegressor":
        from .sparse import SparseGibbsMLPRegressor

        return SparseGibbsMLPRegressor
    if name in ("NeuralControlVariate", "PolynomialControlVariate"):
        from . import control_variates

        return getattr(control_variates, name)
    raise AttributeError(name)
