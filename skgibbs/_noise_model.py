"""The regressors' noise models: what the noise of ``y`` given ``f`` is, in one object.

A regressor's noise is one of three (``noise_``): ``"homoscedastic"``, one
variance for every input (the squared loss; learned or plugged in);
``"heteroscedastic"``, a normal whose log-variance is the network's second
output (the ``"gaussian"`` loss of :data:`skgibbs.model.LOSSES`); and
``"student"``, a Student-t of :data:`~skgibbs.model.STUDENT_DF` degrees of
freedom whose log squared scale is that output. :class:`NoiseModel` says,
for each, which loss the potential takes, how many outputs the network
has, and how the predictive distribution, its likelihood and its draws
read a noise variance: the variances the regressors report are the
noise's (for a t, ``nu / (nu - 2)`` times its squared scale).
"""

from dataclasses import dataclass

import numpy as np

from .criteria import gaussian_log_likelihood, student_log_likelihood
from .model import NOISE_LOSSES, SCALE_LOSSES, STUDENT_DF

__all__ = ["NoiseModel"]


@dataclass(frozen=True)
class NoiseModel:
    """The noise model ``name`` of a regressor.

    Examples
    --------
    >>> noise = NoiseModel("student")
    >>> noise.loss, noise.n_outputs, noise.df, round(noise.variance_per_squared_scale, 3)
    ('student', 2, 5.0, 1.667)
    >>> NoiseModel.of_loss("squared")
    NoiseModel(name='homoscedastic')
    """

    name: str = "homoscedastic"

    @classmethod
    def of_loss(cls, loss):
        """The noise model whose potential takes ``loss``."""
        return cls({v: k for k, v in NOISE_LOSSES.items()}[loss])

    @property
    def loss(self):
        """The loss of the potential (:data:`skgibbs.model.LOSSES`)."""
        return NOISE_LOSSES[self.name]

    @property
    def varies(self):
        """Whether the noise varies with the input: the network's second output is its log scale."""
        return self.loss in SCALE_LOSSES

    @property
    def n_outputs(self):
        """The network's outputs: the mean, and the log scale where the noise varies."""
        return 2 if self.varies else 1

    @property
    def df(self):
        """The degrees of freedom of a Student-t noise, None for a normal one."""
        return STUDENT_DF if self.name == "student" else None

    @property
    def variance_per_squared_scale(self):
        """The noise's variance over its squared scale: 1 for a normal, ``nu / (nu - 2)`` for a t."""
        df = self.df
        return 1.0 if df is None else df / (df - 2.0)

    def log_likelihood(self, y, F, V):
        """``log p(y_i | draw k)`` ``(S, rows)`` of draws ``F`` and their noise variances ``V``."""
        df = self.df
        return gaussian_log_likelihood(y, F, V) if df is None else student_log_likelihood(y, F, V, df)

    def scale(self, V):
        """The scale of the noise of variance ``V``: its sd for a normal, ``sqrt(V (nu - 2) / nu)`` for a t."""
        return np.sqrt(V / self.variance_per_squared_scale)

    def standard(self, rng, size):
        """Standard draws of the noise's shape (normal, or t of :attr:`df`), to scale by :meth:`scale`."""
        df = self.df
        return rng.standard_normal(size) if df is None else rng.standard_t(df, size)
