"""Warnings raised by skgibbs."""

__all__ = ["SamplerWarning", "ControlVariateWarning"]


class SamplerWarning(UserWarning):
    """A Markov chain misbehaved or its target is a poor surrogate.

    Raised when a chain stops accepting, diverges, is interrupted, or when the
    stochastic Metropolis-Hastings surrogate is far from the Gibbs posterior.
    The message always says what to change (``rho``, ``temperature``,
    ``step_size``, ``burn_in``).
    """


class ControlVariateWarning(UserWarning):
    """A Stein control variate is weaker, or less trustworthy, than asked for.

    Raised, for instance, for a ReLU network: it is not twice continuously
    differentiable, so its Laplacian vanishes almost everywhere and the
    control variate degenerates to the first-order one
    ``<grad log pi, grad phi>``. The message says what to change.
    """
