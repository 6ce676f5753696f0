"""Low-level samplers: sampler objects, their kernels and the chain runner.

A user with their own model and per-example loss can run csMALA without the
estimator, in the style of BlackJAX::

    import torch
    from skgibbs.potential import FunctionPotential
    from skgibbs.samplers import CSMALA, HMC, Target, run_chains

    y = torch.randn(200, dtype=torch.float64)
    pot = FunctionPotential(lambda th, idx: (y[idx] - th[:, :1]) ** 2, n_data=200)
    target = Target(pot, lambda_=200.0)              # flat prior
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
stands for the object with its defaults. A kernel of one's own is a
:class:`ChainSampler` subclass and one :func:`register` (:doc:`/developers`).
"""

import importlib
import sys

from .._random import draw_batch
from . import adaptation, hmc, langevin, mclmc, rj, sghmc, smc, vi
from .base import (
    BatchSurrogate,
    ChainResult,
    RunSettings,
    Sampler,
    Unhonoured,
    available_samplers,
    choose_sampler,
    get_sampler,
    register,
    unhonoured_message,
)
from .hmc import HMC, HMCInfo, HMCParams, HMCState
from .langevin import CSMALA, MALA, SGLD, SMALA
from .langevin.mala import MALAInfo, MALAParams, MALAState, solve_correction, surrogate_constants
from .mclmc import MCLMC, AdjustedMCLMC
from .rj import RJHMC, RJMCMC
from .rj.rjhmc import RJHMCInfo, RJHMCParams, RJHMCState
from .rj.rjmcmc import RJInfo, RJParams, RJState
from .runner import ChainSampler, chain_groups, run_chains
from .sghmc import SGHMC
from .smc import SMC
from .target import Target
from .vi import MeanFieldVI

#: the modules the sampler classes lived in before their family's folder: old -> new. Estimators
#: pickled or saved (:mod:`skgibbs.persistence`) then name their sampler by the old path, and load.
FORMER_MODULES = {
    "skgibbs.samplers._hmc_chains": "skgibbs.samplers.hmc.sampler",
    "skgibbs.samplers._langevin_chains": "skgibbs.samplers.langevin.sampler",
    "skgibbs.samplers._rj_chains": "skgibbs.samplers.rj.sampler",
    "skgibbs.samplers._rjhmc_chains": "skgibbs.samplers.rj.hmc_sampler",
    "skgibbs.samplers._vi_sampler": "skgibbs.samplers.vi.sampler",
    "skgibbs.samplers.smc": "skgibbs.samplers.smc.sampler",  # a package now, which re-exports SMC
    "skgibbs.samplers.sghmc": "skgibbs.samplers.sghmc.sampler",  # likewise SGHMC
}
for _old, _new in FORMER_MODULES.items():
    if _old not in sys.modules:
        sys.modules[_old] = importlib.import_module(_new)


__all__ = [
    "Sampler",
    "ChainSampler",
    "BatchSurrogate",
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
    "Unhonoured",
    "unhonoured_message",
    "get_sampler",
    "choose_sampler",
    "available_samplers",
    "Target",
    "RunSettings",
    "ChainResult",
    "run_chains",
    "chain_groups",
    "draw_batch",
    "hmc",
    "langevin",
    "adaptation",
    "rj",
    "sghmc",
    "smc",
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
