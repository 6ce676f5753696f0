"""BlackJAX NUTS on the skgibbs Gibbs posterior (the ``bench`` extra: JAX and BlackJAX).

The target is the Gibbs posterior that skgibbs samples,

    log pi(theta) = -lam * R_n(theta) - 0.5 * sum_j (theta_j / prior_std_j)^2 + const,
    R_n(theta)    = (1 / n) sum_i (y_i - f_theta(x_i))^2,

with ``f_theta`` the MLP of :class:`skgibbs.model.MLPSpec` on the flat parameter vector in skgibbs'
order (per layer the weights ``(n_in, n_out)`` row-major, then the biases).
:func:`check_against_skgibbs` compares this log density and its gradient with skgibbs' own in torch
float64; :func:`blackjax_sampler` runs NUTS after Stan's window adaptation. Everything runs on one CPU
thread (``XLA_FLAGS`` is set before JAX is imported unless the caller set it), in float32 by default.
Import this module only when JAX and BlackJAX are installed.
"""

import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["blackjax_sampler", "check_against_skgibbs", "mlp_forward"]

_ACTIVATIONS = {"relu": jax.nn.relu, "tanh": jnp.tanh, "logistic": jax.nn.sigmoid, "identity": lambda h: h}


def _precision(dtype):
    """Context in which JAX's default float type is ``dtype`` (BlackJAX makes some scalars of that type)."""
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}.")
    return jax.enable_x64(dtype == "float64")


def mlp_forward(theta, X, shapes, activation):
    """Network outputs ``f_theta(X)`` of shape ``(n,)`` for one flat ``theta`` in skgibbs' layout."""
    h, offset = X, 0
    for layer, (n_in, n_out) in enumerate(shapes):
        W = theta[offset : offset + n_in * n_out].reshape(n_in, n_out)
        b = theta[offset + n_in * n_out : offset + (n_in + 1) * n_out]
        offset += (n_in + 1) * n_out
        h = h @ W + b
        if layer < len(shapes) - 1:
            h = _ACTIVATIONS[activation](h)
    return h[:, 0]


def _logdensity_fn(X, y, prec, lam, shapes, activation):
    def logdensity(theta):
        resid = y - mlp_forward(theta, X, shapes, activation)
        return -lam * jnp.mean(resid * resid) - 0.5 * jnp.sum(prec * theta * theta)

    return logdensity


def _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype):
    """``((X, y, prior precision, lam), layer shapes, Q)``, the arrays in JAX of ``dtype``."""
    X = jnp.asarray(np.asarray(X, dtype=np.float64), dtype=dtype)
    y = jnp.asarray(np.asarray(y, dtype=np.float64).ravel(), dtype=dtype)
    sizes = (X.shape[1], *(int(h) for h in hidden_layer_sizes), 1)
    shapes = list(zip(sizes[:-1], sizes[1:]))
    Q = sum((n_in + 1) * n_out for n_in, n_out in shapes)
    std = np.broadcast_to(np.asarray(prior_std, dtype=np.float64), (Q,))
    if not np.all(std > 0):
        raise ValueError("prior_std must be positive.")
    prec = jnp.asarray(1.0 / std**2, dtype=dtype)
    return (X, y, prec, jnp.asarray(lam, dtype=dtype)), shapes, Q


def check_against_skgibbs(
    X, y, hidden_layer_sizes, activation, lam, prior_std, theta=None, *, seed=0, dtype="float32", rtol=None
):
    """Compare the JAX log density and its gradient with skgibbs' (``MLPSpec.forward``, torch float64).

    ``theta`` (``(Q,)`` or ``(K, Q)``) defaults to three points: a prior draw, a Glorot start and ten
    times the prior scale. Errors are relative to ``lam * R_n + prior term`` and to the largest gradient
    coordinate; ``rtol`` defaults to 5e-5 in float32, 1e-10 in float64. Returns the two log densities,
    ``rel_err`` and ``grad_rel_err`` per point; raises AssertionError beyond ``rtol``.
    """
    import torch

    from skgibbs.model import MLPSpec

    X64, y64 = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64).ravel()
    spec = MLPSpec(X64.shape[1], tuple(hidden_layer_sizes), activation)
    Q = spec.n_params
    std = np.broadcast_to(np.asarray(prior_std, dtype=np.float64), (Q,)).copy()
    if theta is None:
        rng = np.random.default_rng(seed)
        glorot = spec.init_params(torch.Generator().manual_seed(seed), 1).numpy()[0]
        theta = np.stack([rng.normal(size=Q) * std, glorot, 10 * rng.normal(size=Q) * std])
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
    if rtol is None:
        rtol = 5e-5 if dtype == "float32" else 1e-10

    t = torch.tensor(theta, requires_grad=True)
    risk = ((torch.from_numpy(y64) - spec.forward(t, torch.from_numpy(X64))) ** 2).mean(1)
    prior = 0.5 * ((t / torch.from_numpy(std)) ** 2).sum(1)
    lp_torch = -lam * risk - prior
    (grad_torch,) = torch.autograd.grad(lp_torch.sum(), t)
    scale = (lam * risk + prior).detach().numpy()
    lp_torch, grad_torch = lp_torch.detach().numpy(), grad_torch.numpy()

    with _precision(dtype):
        data, shapes, Q_jax = _target_arrays(X64, y64, hidden_layer_sizes, std, lam, dtype)
        assert Q_jax == Q, (Q_jax, Q)
        vg = jax.jit(jax.vmap(jax.value_and_grad(_logdensity_fn(*data, shapes, activation))))
        lp_jax, grad_jax = (np.asarray(a, dtype=np.float64) for a in vg(jnp.asarray(theta, dtype=dtype)))

    rel_err = np.abs(lp_jax - lp_torch) / scale
    grad_rel_err = np.abs(grad_jax - grad_torch).max(1) / np.abs(grad_torch).max(1)
    out = {
        "logdensity_jax": lp_jax,
        "logdensity_torch": lp_torch,
        "rel_err": rel_err,
        "grad_rel_err": grad_rel_err,
    }
    if not (np.all(rel_err <= rtol) and np.all(grad_rel_err <= rtol)):
        raise AssertionError(f"JAX log density differs from skgibbs': {out}")
    return out


def _run_sequentially(warmup, sample, n_carry, theta0, Q, data, dtype, seed):
    """Compile ``warmup`` and ``sample`` once, then run the chains from the rows of ``theta0`` in turn.

    ``warmup(key, position, *data)`` returns the state and the tuned parameters (its first ``n_carry``
    outputs, which ``sample(key, *carry, *data)`` takes), then anything else. Returns the compilation
    seconds, each chain's warm-up and sampling outputs and the seconds of each phase per chain.
    """
    theta0 = np.atleast_2d(np.asarray(theta0, dtype=np.float64))
    if theta0.shape[1] != Q:
        raise ValueError(f"theta0 must have {Q} columns for this network, got shape {theta0.shape}.")
    K = theta0.shape[0]
    keys = jax.random.split(jax.random.PRNGKey(seed), 2 * K).reshape(K, 2, -1)
    t0 = time.perf_counter()
    lowered = jax.jit(warmup).lower(keys[0, 0], jnp.asarray(theta0[0], dtype=dtype), *data)
    warmup_exe = lowered.compile()
    sample_exe = jax.jit(sample).lower(keys[0, 1], *lowered.out_info[:n_carry], *data).compile()
    compile_seconds = time.perf_counter() - t0
    warm, draws, warm_s, samp_s = [], [], np.zeros(K), np.zeros(K)
    for k in range(K):
        position = jnp.asarray(theta0[k], dtype=dtype)
        t0 = time.perf_counter()
        warm.append(jax.block_until_ready(warmup_exe(keys[k, 0], position, *data)))
        warm_s[k] = time.perf_counter() - t0
        t0 = time.perf_counter()
        draws.append(jax.block_until_ready(sample_exe(keys[k, 1], *warm[k][:n_carry], *data)))
        samp_s[k] = time.perf_counter() - t0
    return compile_seconds, warm, draws, warm_s, samp_s


def blackjax_sampler(
    X, y, hidden_layer_sizes, activation, lam, prior_std, theta0, *, n_warmup=500, n_samples=500, seed=0,
    target_accept=0.8, dtype="float32", max_num_doublings=10, initial_step_size=1.0,
):  # fmt: skip
    """NUTS from each row of ``theta0`` after ``blackjax.window_adaptation`` (Stan's), every draw kept.

    The warm-up adapts the step size (dual averaging from ``initial_step_size`` toward
    ``target_accept``) and a diagonal inverse mass matrix per chain. The chains run one after the
    other: vmapped, every chain would wait at every step for the longest NUTS trajectory of the batch.

    Returns ``samples`` ``(K, n_samples, Q)``; ``warmup_seconds``, ``sampling_seconds`` (summed over
    chains) and ``compile_seconds`` (apart); gradient evaluations ``n_grad_evals`` (all, one a chain at
    the start included) and per chain ``n_grad_evals_warmup``, ``n_grad_evals_sampling``; per chain the
    adapted ``step_size``, the mean ``acceptance_rate``, ``n_divergent`` and ``n_divergent_warmup``.
    """
    import blackjax
    from blackjax.adaptation.base import get_filter_adapt_info_fn

    keep = get_filter_adapt_info_fn(info_keys={"num_integration_steps", "is_divergent"})
    with _precision(dtype):
        data, shapes, Q = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)

        # data enter as arguments, not as constants folded into the executable
        def warmup(key, position, X_, y_, prec_, lam_):
            adapt = blackjax.window_adaptation(
                blackjax.nuts,
                _logdensity_fn(X_, y_, prec_, lam_, shapes, activation),
                is_mass_matrix_diagonal=True,
                initial_step_size=initial_step_size,
                target_acceptance_rate=target_accept,
                adaptation_info_fn=keep,
                max_num_doublings=max_num_doublings,
            )
            (state, params), info = adapt.run(key, position, num_steps=n_warmup)
            steps, divergent = jnp.sum(info.info.num_integration_steps), jnp.sum(info.info.is_divergent)
            return state, params["step_size"], params["inverse_mass_matrix"], steps, divergent

        def sample(key, state, step_size, inv_mass, X_, y_, prec_, lam_):
            logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
            kernel = blackjax.nuts(logdensity, step_size, inv_mass, max_num_doublings=max_num_doublings)

            def one_step(s, k):
                s, info = kernel.step(k, s)
                return s, (s.position, info.num_integration_steps, info.acceptance_rate, info.is_divergent)

            keys = jax.random.split(key, n_samples)
            _, (positions, steps, accept, divergent) = jax.lax.scan(one_step, state, keys)
            return positions, jnp.sum(steps), jnp.mean(accept), jnp.sum(divergent)

        runs = _run_sequentially(warmup, sample, 3, theta0, Q, data, dtype, seed)
    compile_s, warm, draws, warm_s, samp_s = runs
    grads_w, grads_s = np.array([int(w[3]) for w in warm]), np.array([int(d[1]) for d in draws])
    return {
        "samples": np.stack([np.asarray(d[0]) for d in draws]),
        "warmup_seconds": float(warm_s.sum()),
        "sampling_seconds": float(samp_s.sum()),
        "compile_seconds": compile_s,
        "n_grad_evals": int(grads_w.sum() + grads_s.sum() + len(warm)),
        "n_grad_evals_warmup": grads_w,
        "n_grad_evals_sampling": grads_s,
        "step_size": np.array([float(w[1]) for w in warm]),
        "acceptance_rate": np.array([float(d[2]) for d in draws]),
        "n_divergent": np.array([int(d[3]) for d in draws]),
        "n_divergent_warmup": np.array([int(w[4]) for w in warm]),
    }
