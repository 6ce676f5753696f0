"""Warnings raised by skgibbs."""

__all__ = ["SamplerWarning", "MultimodalWarning", "ControlVariateWarning"]


class SamplerWarning(UserWarning):
    """A Markov chain misbehaved or its target is a poor surrogate.

    Raised when a chain stops accepting, diverges, is interrupted, or when the
    stochastic Metropolis-Hastings surrogate is far from the Gibbs posterior.
    The message always says what to change (``rho``, ``temperature``,
    ``step_size``, ``burn_in``).

    The first line of the text, without its numbers, is the same for every
    fit that falls short the same way, so that the default filter shows it
    once however many fits of a search raise it (skgibbs keeps the record
    of what was shown, which scikit-learn's input validation clears in
    Python's on every fit; ``warnings.simplefilter("always",
    SamplerWarning)`` shows them all); the text states what was measured,
    and so do the attributes. Every keyword
    of the constructor is an attribute and an entry of :attr:`details`:
    ``estimator`` (the class name of the estimator that was fitted) and,
    for the mixing warnings, ``rhat``, ``ess``, ``within_chain_rhat``,
    ``within_chain_ess``, ``between_chain_rhat`` and ``n_chains`` (the
    fitted ``rhat_``, ``ess_``, ... of that fit); for a sampler's own
    checks ``values``, the numbers of its first sentence (what it
    measured), in order, and ``text``, the text.

    Examples
    --------
    >>> w = SamplerWarning("The chains have not mixed.", rhat=1.3, ess=40.0)
    >>> str(w), w.rhat, w.details["ess"]
    ('The chains have not mixed.', 1.3, 40.0)
    """

    def __init__(self, message="", **details):
        super().__init__(message)
        self.details = dict(details)
        for name, value in details.items():
            setattr(self, name, value)


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
