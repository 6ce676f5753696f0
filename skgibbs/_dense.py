"""The kernels of the dense Gibbs MLPs (HMC, the Langevin family), shared by regressor and classifier."""

from numbers import Integral, Real

from ._base import BaseGibbsMLP
from ._compat import Interval, StrOptions

__all__ = ["DenseKernelMixin"]

# burn_in="auto" and thin="auto" (see GibbsMLPRegressor's docstring and benchmarks/bench_mixing.py).
_HMC_BURN_IN, _LANGEVIN_BURN_IN, _LANGEVIN_THIN = 250, 1000, 10


class DenseKernelMixin:
    """``sampler``, ``rho`` and the HMC/Langevin settings of an estimator over every parameter."""

    _parameter_constraints = {
        **BaseGibbsMLP._parameter_constraints,
        "sampler": [StrOptions({"auto", "hmc", "csmala", "mala", "smala", "sgld"})],
        "rho": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "correction": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "metric": [StrOptions({"prior", "adaptive", "identity"})],
        "trajectory_length": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "restart_after": [Interval(Integral, 1, None, closed="left"), None],
    }

    def _resolve_sampler(self):
        """``(sampler_, rho_)``: "auto" is HMC on the full data and csMALA on batches."""
        if self.sampler in ("mala", "hmc"):
            return self.sampler, 1.0
        rho = 1.0 if self.rho == "auto" else float(self.rho)
        if self.sampler == "auto":
            return ("hmc" if rho >= 1.0 else "csmala"), rho
        return self.sampler, rho

    def _chain_config(self):
        hmc = self.sampler_ == "hmc"
        return self._config(
            self.sampler_,
            _HMC_BURN_IN if hmc else _LANGEVIN_BURN_IN,
            1 if hmc else _LANGEVIN_THIN,
            rho=self.rho_,
            correction=self.correction,
            restart_after=self.restart_after,
            metric=self.metric,
            trajectory_length=self.trajectory_length,
        )
