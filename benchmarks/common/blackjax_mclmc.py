"""BlackJAX's microcanonical samplers on the skgibbs Gibbs posterior (the ``bench`` extra), a peer of
:mod:`benchmarks.common.blackjax_nuts` on its target and with its check.

Unadjusted MCLMC (``blackjax.mclmc``: isokinetic Langevin dynamics, partial momentum refreshment, no
accept/reject step; one transition one integration step) tuned by ``blackjax.mclmc_find_L_and_step_size``
(step size from the energy-error variance, diagonal preconditioner, L from the autocorrelation), and
adjusted MCLMC (``blackjax.adjusted_mclmc_dynamic``: trajectories of random length, ``L / step_size``
steps on average, with a Metropolis-Hastings correction) tuned by ``adjusted_mclmc_find_L_and_step_size``
toward an acceptance of 0.9. Both integrate with ``isokinetic_mclachlan`` (BlackJAX 1.7.1's default,
passed explicitly): two gradients a step. One CPU thread, float32 by default, the chains in turn.
"""

import inspect
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp
import numpy as np

from .blackjax_nuts import _logdensity_fn, _precision, _run_sequentially, _target_arrays
from .blackjax_nuts import check_against_skgibbs

__all__ = ["ADJUSTED_TARGET_ACCEPT", "blackjax_mclmc_sampler", "check_against_skgibbs"]

#: Acceptance rate the adjusted kernel's dual averaging aims at.
ADJUSTED_TARGET_ACCEPT = 0.9

#: Gradient evaluations per step of ``isokinetic_mclachlan`` (two position updates per step).
GRADS_PER_INTEGRATION_STEP = 2


def _fractions(tuner):
    """The default ``frac_tune1``, ``frac_tune2`` and ``frac_tune3`` of a BlackJAX tuner."""
    params = inspect.signature(tuner).parameters
    return [params[f"frac_tune{i}"].default for i in (1, 2, 3)]


def _unadjusted_tuning_steps(num_steps):
    """Kernel steps ``mclmc_find_L_and_step_size`` runs for ``num_steps`` (diagonal preconditioning on).

    ``round(f1 N) + round(f2 N)`` for the step size and the variances, ``round(round(f2 N) / 3)``
    re-tuning it under the new preconditioner, then ``round(f3 N)`` for L (when at least 2).
    """
    import blackjax

    f1, f2, f3 = _fractions(blackjax.mclmc_find_L_and_step_size)
    n1, n2, n3 = round(num_steps * f1), round(num_steps * f2), round(num_steps * f3)
    return n1 + n2 + (round(n2 / 3) if n2 > 1 else 0) + (n3 if n3 >= 2 else 0)


def _adjusted_tuning_transitions(num_steps):
    """Transitions ``adjusted_mclmc_find_L_and_step_size`` runs for ``num_steps`` (no third phase).

    Dual averaging over ``int(f1 N) + int(f2 N)`` (the variances over the last ``int(f2 N)``), then, when
    ``int(f2 N) > 0``, again over ``int(f1 N)`` under the new preconditioner.
    """
    import blackjax

    f1, f2, f3 = _fractions(blackjax.adjusted_mclmc_find_L_and_step_size)
    if f3 != 0:
        raise RuntimeError("this adjusted MCLMC tuner defaults to frac_tune3 != 0; recount its steps.")
    n1, n2 = int(num_steps * f1), int(num_steps * f2)
    return n1 + n2 + (n1 if n2 != 0 else 0)


def _tuner_num_steps(n_warmup, count):
    """The ``num_steps`` (the run's length, of which the tuners warm up for fixed fractions) whose schedule
    runs the most transitions not above ``n_warmup``, and that number."""
    best_n, best = 1, count(1)
    for n in range(2, 20 * n_warmup + 21):
        c = count(n)
        if best < c <= n_warmup:
            best_n, best = n, c
    return best_n, best


def _scan_draws(transition, init, key, n_samples, thin):
    """``n_samples`` draws, each after ``thin`` transitions: the last carry and the draws' positions."""

    def draw(carry, k):
        carry, _ = jax.lax.scan(transition, carry, jax.random.split(k, thin))
        return carry, carry[0].position

    return jax.lax.scan(draw, init, jax.random.split(key, n_samples))


def _unadjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of unadjusted MCLMC (data enter as arguments)."""
    import blackjax
    from blackjax.mcmc import integrators, mclmc

    num_steps, n_tune = _tuner_num_steps(n_warmup, _unadjusted_tuning_steps)
    kernel = mclmc.build_kernel(integrator=integrators.isokinetic_mclachlan)

    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        init_key, tune_key = jax.random.split(key)
        state = mclmc.init(position, logdensity, init_key)
        state, params, _ = blackjax.mclmc_find_L_and_step_size(
            mclmc_kernel=kernel, num_steps=num_steps, state=state, rng_key=tune_key, logdensity_fn=logdensity
        )
        return state, params.step_size, params.L, params.inverse_mass_matrix

    def sample(key, state, step_size, L, inv_mass, X_, y_, prec_, lam_):
        algo = blackjax.mclmc(
            _logdensity_fn(X_, y_, prec_, lam_, shapes, activation),
            L=L,
            step_size=step_size,
            integrator=integrators.isokinetic_mclachlan,
            inverse_mass_matrix=inv_mass,
        )

        def transition(carry, k):
            s, bad, sq_energy = carry
            s, info = algo.step(k, s)
            return (s, bad + jnp.logical_not(info.nonans), sq_energy + info.energy_change**2), None

        init = (state, jnp.int32(0), jnp.zeros((), dtype=state.logdensity.dtype))
        (_, bad, sq_energy), positions = _scan_draws(transition, init, key, n_samples, thin)
        n_steps = n_samples * thin
        return positions, jnp.int32(n_steps), jnp.nan, bad, sq_energy / n_steps / positions.shape[-1]

    return warmup, sample, n_tune, (lambda _: n_tune)


def _adjusted_parts(shapes, activation, n_warmup, n_samples, thin):
    """Warm-up and sampling functions of adjusted MCLMC with dynamic trajectory length."""
    import blackjax
    from blackjax.mcmc import adjusted_mclmc_dynamic as amd
    from blackjax.mcmc import integrators

    num_steps, n_tune = _tuner_num_steps(n_warmup, _adjusted_tuning_transitions)
    steps_fn = amd.make_random_trajectory_length_fn(True)
    kernel = amd.build_kernel(integration_steps_fn=steps_fn, integrator=integrators.isokinetic_mclachlan)

    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        init_key, tune_key = jax.random.split(key)
        state = amd.init(position, logdensity, random_generator_arg=init_key)
        state, params, n_steps = blackjax.adjusted_mclmc_find_L_and_step_size(
            mclmc_kernel=kernel,
            logdensity_fn=logdensity,
            num_steps=num_steps,
            state=state,
            rng_key=tune_key,
            target=ADJUSTED_TARGET_ACCEPT,
        )
        return state, params.step_size, params.L, params.inverse_mass_matrix, n_steps

    def sample(key, state, step_size, L, inv_mass, X_, y_, prec_, lam_):
        algo = blackjax.adjusted_mclmc_dynamic(
            _logdensity_fn(X_, y_, prec_, lam_, shapes, activation),
            step_size,
            inverse_mass_matrix=inv_mass,
            integrator=integrators.isokinetic_mclachlan,
            integration_steps_fn=steps_fn,
            integration_steps_params=(L / step_size,),
        )

        def transition(carry, k):
            s, steps, accept, divergent = carry
            s, info = algo.step(k, s)
            steps, accept = steps + info.num_integration_steps, accept + info.acceptance_rate
            return (s, steps, accept, divergent + info.is_divergent), None

        init = (state, jnp.int32(0), jnp.zeros((), dtype=state.logdensity.dtype), jnp.int32(0))
        (_, steps, accept, divergent), positions = _scan_draws(transition, init, key, n_samples, thin)
        return positions, steps, accept / (n_samples * thin), divergent, jnp.nan

    return warmup, sample, n_tune, (lambda out: int(out[4]))


def blackjax_mclmc_sampler(
    X, y, hidden_layer_sizes, activation, lam, prior_std, theta0, *, n_warmup, n_samples, adjusted=True,
    seed=0, dtype="float32", thin=1,
):  # fmt: skip
    """BlackJAX MCLMC, adjusted (default) or unadjusted, from each row of ``theta0``.

    Each chain is tuned by its kernel's tuner with a budget of ``n_warmup`` transitions (the most its
    schedule allows: ``n_warmup_transitions``), then keeps every ``thin``-th of ``n_samples * thin``
    transitions. This BlackJAX's adjusted tuner pins ``L = 2 step_size``. Returns the keys of
    :func:`~benchmarks.common.blackjax_nuts.blackjax_sampler` (but ``n_divergent_warmup``: the tuners do
    not report it), ``n_integration_steps_sampling`` per chain, the tuned ``L`` (adjusted: the mean
    trajectory length; unadjusted: the momentum decoherence length) and ``energy_variance_per_dim``
    (unadjusted: the mean squared energy change per step and dimension, which the tuner aims at 5e-4);
    ``acceptance_rate`` is NaN unadjusted, and ``n_divergent`` counts energy errors above 1000 (adjusted)
    or non-finite steps, reverted with a fresh momentum (unadjusted).
    """
    n_warmup, n_samples, thin = int(n_warmup), int(n_samples), int(thin)
    if n_warmup < 1 or n_samples < 1 or thin < 1:
        raise ValueError(f"n_warmup, n_samples and thin must be positive: {n_warmup}, {n_samples}, {thin}.")
    parts = _adjusted_parts if adjusted else _unadjusted_parts
    with _precision(dtype):
        data, shapes, Q = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)
        warmup, sample, n_tune, warmup_steps = parts(shapes, activation, n_warmup, n_samples, thin)
        runs = _run_sequentially(warmup, sample, 4, theta0, Q, data, dtype, seed)
    compile_s, warm, draws, warm_s, samp_s = runs
    steps_w, steps_s = np.array([warmup_steps(w) for w in warm]), np.array([int(d[1]) for d in draws])
    g = GRADS_PER_INTEGRATION_STEP
    return {
        "samples": np.stack([np.asarray(d[0]) for d in draws]),
        "warmup_seconds": float(warm_s.sum()),
        "sampling_seconds": float(samp_s.sum()),
        "compile_seconds": compile_s,
        "n_grad_evals": int(g * (steps_w.sum() + steps_s.sum()) + len(warm)),
        "n_grad_evals_warmup": g * steps_w,
        "n_grad_evals_sampling": g * steps_s,
        "n_integration_steps_sampling": steps_s,
        "n_warmup_transitions": n_tune,
        "step_size": np.array([float(w[1]) for w in warm]),
        "L": np.array([float(w[2]) for w in warm]),
        "acceptance_rate": np.array([float(d[2]) for d in draws]),
        "n_divergent": np.array([int(d[3]) for d in draws]),
        "energy_variance_per_dim": np.array([float(d[4]) for d in draws]),
        "algorithm": "adjusted_mclmc" if adjusted else "mclmc",
        "integrator": "isokinetic_mclachlan",
    }
