"""Warnings raised by skgibbs."""

__all__ = ["SamplerWarning"]


class SamplerWarning(UserWarning):
    """A Markov chain misbehaved or its target is a poor surrogate.

    Raised when a chain stops accepting, diverges, is interrupted, or when the
    stochastic Metropolis-Hastings surrogate is far from the Gibbs posterior.
    The message always says what to change (``rho``, ``temperature``,
    ``step_size``, ``burn_in``).
    """
