"""skgibbs: Gibbs-posterior neural networks for scikit-learn."""

from .exceptions import SamplerWarning

__version__ = "0.1.0"

__all__ = ["SamplerWarning", "GibbsMLPRegressor", "__version__"]


def __getattr__(name):
    if name == "GibbsMLPRegressor":
        from .regressor import GibbsMLPRegressor

        return GibbsMLPRegressor
    raise AttributeError(name)
