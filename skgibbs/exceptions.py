"""Warnings raised by skgibbs."""

__all__ = ["SamplerWarning", "MultimodalWarning", "ControlVariateWarning"]


class SamplerWarning(UserWarning):
    """A Markov chain misbehaved or its target is a poor surrogate.

    Raised when a chain stops accepting, diverges, is interrupted, or when the
    stochastic Metropolis-Hastings surrogate is far from the Gibbs posterior.
    The message always says what to change (``rho``, ``temperature``,
    ``step_size``, ``burn_in``).
    """


class MultimodalWarning(SamplerWarning):
    """The chains converged each on its own but disagree: the posterior has several modes.

    Raised when every chain passes its own split R-hat and effective sample
    size checks while the chains' means differ (between-chain R-hat above
    1.05). Each chain then samples the mode it started in, and the pooled
    draws weight every mode ``1 / n_chains`` whatever its posterior mass, so
    intervals mix the modes with the wrong weights; longer or more chains of
    the same sampler do not change that. The message suggests a sampler
    that moves between modes (``sampler="smc"``) or weighting the chains by
    their predictive performance (``chain_weights="stacking"``). A subclass
    of :class:`SamplerWarning`, so that filters on the latter still apply.
    """


class ControlVariateWarning(UserWarning):
    """A Stein control variate is weaker, or less trustworthy, than asked for.

    Raised, for instance, for a ReLU network: it is not twice continuously
    differentiable, so its Laplacian vanishes almost everywhere and the
    control variate degenerates to the first-order one
    ``<grad log pi, grad phi>``. The message says what to change.
    """
