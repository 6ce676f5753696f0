"""Stein control variates for Markov chain averages (paper 003).

A chain ``X_0, ..., X_{n-1}`` from a target ``pi`` on ``R^d`` and values
``f(X_k)`` give the estimate ``pi_n(f)`` of ``pi(f)``. A Stein control variate
``g_phi = Laplacian phi + <grad log pi, grad phi>`` has ``pi(g_phi) = 0``, so
``pi_n(f - g_phi)`` estimates the same quantity; choosing ``phi`` by empirical
spectral variance minimisation (ESVM) makes its error bars smaller.

- :func:`stein_operator`, :func:`mlp_derivatives`: (3.3) for a neural ``phi``
  with an exact, batched Laplacian (torch, differentiable).
- :func:`spectral_variance_torch`: the ESVM objective (3.2) in torch.
- :class:`NeuralControlVariate`: ESVM over an MLP ``phi`` (Alg. 1).
- :class:`PolynomialControlVariate`: ESVM or least squares over polynomial
  ``phi``, the baseline of paper 003's Table 2.
"""

from .esvm import default_truncation, esvrr, spectral_variance_torch, windowed
from .neural import NeuralControlVariate
from .polynomial import PolynomialControlVariate, monomial_exponents, polynomial_stein_features
from .stein import STEIN_ACTIVATIONS, evaluate_score, mlp_derivatives, stein_operator

__all__ = [
    "NeuralControlVariate",
    "PolynomialControlVariate",
    "STEIN_ACTIVATIONS",
    "default_truncation",
    "esvrr",
    "evaluate_score",
    "mlp_derivatives",
    "monomial_exponents",
    "polynomial_stein_features",
    "spectral_variance_torch",
    "stein_operator",
    "windowed",
]
