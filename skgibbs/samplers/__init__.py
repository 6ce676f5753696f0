"""Low-level samplers: sampler objects, their kernels and the chain runner.

A user with their own model and per-example loss can run csMALA without the
estimator, in the style of BlackJAX::

    import torch
    from skgibbs.potential import FunctionPotential
    from skgibbs.samplers import CSMALA, HMC, Target, run_chains

    y = torch.randn(200, dtype=torch.float64)
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    target = Target(pot, lam=200.0)              # flat prior
    res = run_chains(target, torch.zeros(2, 1, dtype=torch.float64), [0, 1], CSMALA(),
                     rho=0.5, n_samples=100, burn_in=200)
    res.samples.shape     # (2, 100, 1)

Exact Hamiltonian Monte Carlo on the same target, with its step size,
metric and trajectory length adapted during burn-in::

    res = run_chains(target, torch.zeros(4, 1, dtype=torch.float64), [0, 1, 2, 3], HMC(),
                     n_samples=100, burn_in=200)
    res.n_divergent, res.trajectory_length

Each sampler is an object owning its settings, warm-up and summary
(:class:`Sampler`); a name (``"csmala"``, ``"hmc"``, ``"vi"``, ``"auto"``)
stands for the object with its defaults. A new kernel is one module and one
:func:`register`.
"""

from . import adaptation, hmc, hmc_gibbs, langevin, mala, rjhmc, rjmcmc, sghmc, vi
from ._hmc_chains import HMC
from ._langevin_chains import CSMALA, MALA, SGLD, SMALA
from ._random import draw_batch
from ._rj_chains import RJMCMC
from ._rjhmc_chains import RJHMC
from ._vi_sampler import MeanFieldVI
from . import mclmc
from .mclmc import MCLMC, AdjustedMCLMC
from .sghmc import SGHMC
from .smc import SMC
from .base import ChainResult, RunSettings, Sampler, available_samplers, choose_sampler, get_sampler, register
from .hmc import HMCInfo, HMCParams, HMCState
from .mala import MALAInfo, MALAParams, MALAState, solve_correction, surrogate_constants
from .rjhmc import RJHMCInfo, RJHMCParams, RJHMCState
from .rjmcmc import RJInfo, RJParams, RJState
from .runner import chain_groups, run_chains
from .target import Target

__all__ = [
    "Sampler",
    "HMC",
    "MALA",
    "SMALA",
    "CSMALA",
    "SGLD",
    "SGHMC",
    "MCLMC",
    "AdjustedMCLMC",
    "mclmc",
    "SMC",
    "RJMCMC",
    "RJHMC",
    "MeanFieldVI",
    "register",
    "get_sampler",
    "choose_sampler",
    "available_samplers",
    "Target",
    "RunSettings",
    "ChainResult",
    "run_chains",
    "chain_groups",
    "draw_batch",
    "mala",
    "hmc",
    "hmc_gibbs",
    "langevin",
    "adaptation",
    "rjmcmc",
    "rjhmc",
    "sghmc",
    "vi",
    "RJState",
    "RJInfo",
    "RJParams",
    "RJHMCState",
    "RJHMCInfo",
    "RJHMCParams",
    "HMCState",
    "HMCInfo",
    "HMCParams",
    "MALAState",
    "MALAInfo",
    "MALAParams",
    "surrogate_constants",
    "solve_correction",
]
