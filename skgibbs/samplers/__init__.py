"""Low-level samplers: kernels and the chain runner.

A user with their own model and per-example loss can run csMALA without the
estimator, in the style of BlackJAX::

    import torch
    from skgibbs.potential import FunctionPotential
    from skgibbs.samplers import ChainConfig, run_chains

    y = torch.randn(200, dtype=torch.float64)
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    cfg = ChainConfig(sampler="csmala", lam=200.0, rho=0.5, n_samples=100, burn_in=200)
    res = run_chains(pot, torch.zeros(2, 1, dtype=torch.float64), seeds=[0, 1], config=cfg)
    res.samples.shape     # (2, 100, 1)

Exact Hamiltonian Monte Carlo on the same potential, with its step size,
metric and trajectory length adapted during burn-in::

    cfg = ChainConfig(sampler="hmc", lam=200.0, n_samples=100, burn_in=200)
    res = run_chains(pot, torch.zeros(4, 1, dtype=torch.float64), seeds=[0, 1, 2, 3], config=cfg)
    res.n_divergent, res.trajectory_length
"""

from . import adaptation, hmc, langevin, mala, rjmcmc, vi
from .hmc import HMCInfo, HMCParams, HMCState
from .mala import MALAInfo, MALAParams, MALAState, solve_correction, surrogate_constants
from .rjmcmc import RJInfo, RJParams, RJState
from .runner import ChainConfig, ChainResult, chain_groups, run_chains

__all__ = [
    "mala",
    "hmc",
    "langevin",
    "adaptation",
    "rjmcmc",
    "vi",
    "RJState",
    "RJInfo",
    "RJParams",
    "HMCState",
    "HMCInfo",
    "HMCParams",
    "MALAState",
    "MALAInfo",
    "MALAParams",
    "surrogate_constants",
    "solve_correction",
    "ChainConfig",
    "ChainResult",
    "run_chains",
    "chain_groups",
]
