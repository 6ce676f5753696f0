"""Model-selection criteria without cross-validation (paper 004).

Pure functions, arrays in and arrays out:

- from posterior draws: :func:`functional_variance` ((5), (13)),
  :func:`waic`, :func:`langevin_waic` (training loss + FV per sample, §4.3);
- from a fitted model: :func:`langevin_functional_variance`, the Langevin
  process (10) started at the fitted parameters and LFV (13);
- closed forms for the ridge-regularised linear model: the generalization
  gap ``tr(H_alpha)`` (6), ``E_y[FV]`` (7), the exact FV under the
  quasi-posterior (1), and the TIC baseline with the kappa-generalised
  inverse (§3.4).
"""

from ._langevin import LangevinFVChains, LFVResult, langevin_functional_variance, langevin_fv_chains
from ._linear import (
    expected_functional_variance_linear,
    functional_variance_linear,
    gibbs_generalization_gap_linear,
    quasi_posterior_linear,
    ridge_hat_matrix,
    tic_linear,
)
from ._stages import stage_criteria
from ._waic import (
    GibbsCriterion,
    WAICResult,
    functional_variance,
    gaussian_log_likelihood,
    langevin_waic,
    student_log_likelihood,
    waic,
)

__all__ = [
    "stage_criteria",
    "gaussian_log_likelihood",
    "student_log_likelihood",
    "functional_variance",
    "waic",
    "WAICResult",
    "langevin_waic",
    "GibbsCriterion",
    "langevin_functional_variance",
    "LFVResult",
    "langevin_fv_chains",
    "LangevinFVChains",
    "ridge_hat_matrix",
    "gibbs_generalization_gap_linear",
    "expected_functional_variance_linear",
    "quasi_posterior_linear",
    "functional_variance_linear",
    "tic_linear",
]
