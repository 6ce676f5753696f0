"""BlackJAX NUTS / HMC on the skgibbs Gibbs posterior (the ``bench`` extra).

The target is the Gibbs posterior that skgibbs samples,

    log pi(theta) = -lam * R_n(theta) - 0.5 * sum_j (theta_j / prior_std_j)^2 + const,
    R_n(theta)    = (1 / n) sum_i (y_i - f_theta(x_i))^2,

with ``f_theta`` the MLP of :class:`skgibbs.model.MLPSpec` evaluated on the flat
parameter vector in skgibbs' (scikit-learn's ``MLPRegressor``) order: for each
layer the weights ``(n_in, n_out)`` row-major, then the biases.

* :func:`make_logdensity` -- the log density in JAX on the flat vector.
* :func:`check_against_skgibbs` -- compares it (and its gradient) with the
  same quantity computed by skgibbs in torch float64.
* :func:`blackjax_sampler` -- ``blackjax.window_adaptation`` (Stan's windowed
  step-size and diagonal mass-matrix warm-up) followed by NUTS, or HMC with a
  fixed number of leapfrog steps, one chain after the other.

As in ``jax_peers``, everything runs on one CPU thread (``XLA_FLAGS`` is set
before JAX is imported unless the caller set it) and in float32 by default.
Import this module only when JAX and BlackJAX are installed.
"""

import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax
import jax.numpy as jnp
import numpy as np
from .jax_peers import versions

__all__ = ["blackjax_sampler", "check_against_skgibbs", "make_logdensity", "mlp_forward", "versions"]

_ACTIVATIONS = {
    "relu": jax.nn.relu,
    "tanh": jnp.tanh,
    "logistic": jax.nn.sigmoid,
    "identity": lambda h: h,
}


def _jnp_dtype(dtype):
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}.")
    return jnp.dtype(dtype)


def _precision(dtype):
    """Context in which JAX's default float type is ``dtype``.

    BlackJAX creates some scalars with the default type, so a float32 run
    needs 64-bit types off and a float64 run needs them on; the switch is
    scoped rather than global so the two can alternate in one process.
    """
    _jnp_dtype(dtype)
    return jax.enable_x64(dtype == "float64")


def _layer_shapes(n_features, hidden_layer_sizes):
    sizes = (int(n_features), *(int(h) for h in hidden_layer_sizes), 1)
    return list(zip(sizes[:-1], sizes[1:]))


def _n_params(shapes):
    return sum((n_in + 1) * n_out for n_in, n_out in shapes)


def mlp_forward(theta, X, shapes, activation):
    """Network outputs ``f_theta(X)`` of shape ``(n,)`` for one flat ``theta`` of shape ``(Q,)``.

    The layout is :class:`skgibbs.model.MLPSpec`'s: per layer ``n_in * n_out``
    weights (row-major ``(n_in, n_out)``) followed by ``n_out`` biases.
    """
    act = _ACTIVATIONS[activation]
    h, offset = X, 0
    for layer, (n_in, n_out) in enumerate(shapes):
        W = theta[offset : offset + n_in * n_out].reshape(n_in, n_out)
        offset += n_in * n_out
        b = theta[offset : offset + n_out]
        offset += n_out
        h = h @ W + b
        if layer < len(shapes) - 1:
            h = act(h)
    return h[:, 0]


def _prior_precision(prior_std, n_params, dtype):
    std = np.asarray(prior_std, dtype=np.float64)
    if std.ndim == 0:
        std = np.full(n_params, float(std))
    if std.shape != (n_params,):
        raise ValueError(f"prior_std must be a float or of shape ({n_params},), got shape {std.shape}.")
    if not np.all(std > 0):
        raise ValueError("prior_std must be positive.")
    return jnp.asarray(1.0 / std**2, dtype=dtype)


def _logdensity_fn(X, y, prec, lam, shapes, activation):
    def logdensity(theta):
        resid = y - mlp_forward(theta, X, shapes, activation)
        return -lam * jnp.mean(resid * resid) - 0.5 * jnp.sum(prec * theta * theta)

    return logdensity


def make_logdensity(X, y, hidden_layer_sizes, activation, lam, prior_std, dtype="float32"):
    """``theta -> log pi(theta)`` (up to its constant) in JAX, with ``theta`` of shape ``(Q,)``.

    With ``dtype="float64"``, build and trace it inside ``jax.enable_x64(True)``.

    Returns
    -------
    logdensity : callable
    n_params : int
    """
    X, y, shapes, Q, prec, lam = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)
    return _logdensity_fn(X, y, prec, lam, shapes, activation), Q


def _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype):
    """Data, layer shapes, parameter count, prior precision and lambda as JAX arrays of ``dtype``."""
    dt = _jnp_dtype(dtype)
    X = jnp.asarray(np.asarray(X, dtype=np.float64), dtype=dt)
    y = jnp.asarray(np.asarray(y, dtype=np.float64).ravel(), dtype=dt)
    shapes = _layer_shapes(X.shape[1], hidden_layer_sizes)
    Q = _n_params(shapes)
    return X, y, shapes, Q, _prior_precision(prior_std, Q, dt), jnp.asarray(lam, dtype=dt)


def check_against_skgibbs(
    X, y, hidden_layer_sizes, activation, lam, prior_std, theta=None, *, seed=0, dtype="float32", rtol=None
):
    """Compare the JAX log density and its gradient with skgibbs' own, in torch float64.

    The reference is ``-lam * mean((y - f)^2) - 0.5 * sum((theta / prior_std)^2)``
    with ``f = MLPSpec(d, hidden_layer_sizes, activation).forward(theta, X)``,
    differentiated by torch autograd.

    Parameters
    ----------
    theta : array-like of shape (Q,) or (K, Q), default=None
        Points to check at; by default three draws: one from the prior
        ``N(0, diag(prior_std^2))``, one Glorot start of ``MLPSpec.init_params``
        and one at ten times the prior scale (large residuals).
    rtol : float, default=None
        Tolerance relative to the magnitude of the two terms of the log
        density (``lam * R_n + prior term``) and, for the gradient, to the
        largest gradient coordinate; ``5e-5`` for float32, ``1e-10`` for float64.

    Returns
    -------
    dict with ``logdensity_jax``, ``logdensity_torch``, ``rel_err`` (log
    density) and ``grad_rel_err`` per point, and ``ok``.

    Raises
    ------
    AssertionError
        When an error exceeds ``rtol``.
    """
    with _precision(dtype):
        args = (X, y, hidden_layer_sizes, activation, lam, prior_std, theta, seed, dtype, rtol)
        return _check_against_skgibbs(*args)


def _check_against_skgibbs(X, y, hidden_layer_sizes, activation, lam, prior_std, theta, seed, dtype, rtol):
    import torch

    from skgibbs.model import MLPSpec

    X64 = np.asarray(X, dtype=np.float64)
    y64 = np.asarray(y, dtype=np.float64).ravel()
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

    # skgibbs, torch float64
    t = torch.tensor(theta, requires_grad=True)
    Xt, yt, st = torch.from_numpy(X64), torch.from_numpy(y64), torch.from_numpy(std)
    risk = ((yt - spec.forward(t, Xt)) ** 2).mean(1)
    prior = 0.5 * ((t / st) ** 2).sum(1)
    lp_torch = -lam * risk - prior
    (grad_torch,) = torch.autograd.grad(lp_torch.sum(), t)
    scale = (lam * risk + prior).detach().numpy()
    lp_torch, grad_torch = lp_torch.detach().numpy(), grad_torch.numpy()

    # this module, JAX
    logdensity, Q_jax = make_logdensity(X64, y64, hidden_layer_sizes, activation, lam, std, dtype)
    assert Q_jax == Q, (Q_jax, Q)
    vg = jax.jit(jax.vmap(jax.value_and_grad(logdensity)))
    lp_jax, grad_jax = vg(jnp.asarray(theta, dtype=_jnp_dtype(dtype)))
    lp_jax, grad_jax = np.asarray(lp_jax, dtype=np.float64), np.asarray(grad_jax, dtype=np.float64)

    rel_err = np.abs(lp_jax - lp_torch) / scale
    grad_rel_err = np.abs(grad_jax - grad_torch).max(1) / np.abs(grad_torch).max(1)
    out = {
        "logdensity_jax": lp_jax,
        "logdensity_torch": lp_torch,
        "rel_err": rel_err,
        "grad_rel_err": grad_rel_err,
        "ok": bool(np.all(rel_err <= rtol) and np.all(grad_rel_err <= rtol)),
    }
    assert out["ok"], f"JAX log density differs from skgibbs': {out}"
    return out


def blackjax_sampler(
    X,
    y,
    hidden_layer_sizes,
    activation,
    lam,
    prior_std,
    theta0,
    *,
    algorithm="nuts",
    n_warmup=500,
    n_samples=500,
    seed=0,
    target_accept=0.8,
    dtype="float32",
    num_integration_steps=16,
    max_num_doublings=10,
    initial_step_size=1.0,
):
    """BlackJAX NUTS (or fixed-length HMC) with Stan's window adaptation on the skgibbs Gibbs posterior.

    Warm-up is ``blackjax.window_adaptation`` (dual-averaging step size and a
    diagonal inverse mass matrix estimated over Stan's doubling windows,
    per chain, no pooling across chains); sampling then runs the adapted
    kernel for ``n_samples`` steps and keeps every draw.

    The chains run one after the other, each in one call of an executable
    compiled once: NUTS trajectories have random lengths, and vmapping the
    chains would make every chain wait, at every step, for the longest
    trajectory of the batch (``vmap`` of a ``while_loop`` runs until all
    predicates are false), which on one core costs time that no chain uses.
    Sequential chains make the wall time the sum of what each chain needs,
    the quantity to put beside a torch sampler's ESS per second.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
        Standardized data.
    hidden_layer_sizes : tuple of int
    activation : {"relu", "tanh", "logistic", "identity"}
    lam : float
        Inverse temperature of the empirical risk ``R_n`` (mean squared error).
    prior_std : float or array-like of shape (Q,)
        Standard deviations of the Gaussian prior, e.g. ``MLPSpec.fan_in_std()``.
    theta0 : array-like of shape (K, Q)
        One start per chain, skgibbs flat order.
    algorithm : {"nuts", "hmc"}, default="nuts"
    n_warmup, n_samples : int, default=500
    seed : int, default=0
    target_accept : float, default=0.8
        Target acceptance statistic of the step-size adaptation.
    dtype : {"float32", "float64"}, default="float32"
    num_integration_steps : int, default=16
        Leapfrog steps per HMC transition (``algorithm="hmc"`` only).
    max_num_doublings : int, default=10
        NUTS tree depth limit (Stan's ``max_treedepth``), warm-up and sampling.
    initial_step_size : float, default=1.0
        Starting point of the dual averaging (Stan's ``stepsize``).

    Returns
    -------
    dict with
        ``samples`` : ndarray of shape (K, n_samples, Q), skgibbs flat order;
        ``warmup_seconds``, ``sampling_seconds`` : float, summed over chains,
        compilation excluded;
        ``compile_seconds`` : float, tracing and compiling the warm-up and the
        sampling executables (once, reused by every chain);
        ``n_grad_evals`` : int, all gradient evaluations: the sum of
        ``num_integration_steps`` over warm-up and sampling transitions, plus
        one per chain at the start;
        ``n_grad_evals_warmup``, ``n_grad_evals_sampling`` : ndarray (K,)
        (``num_integration_steps`` sums, without the start);
        ``step_size`` : ndarray (K,), adapted step sizes;
        ``inverse_mass_matrix`` : ndarray (K, Q), adapted diagonals;
        ``acceptance_rate`` : ndarray (K,), mean acceptance statistic over
        the sampling transitions;
        ``n_divergent`` : ndarray (K,), divergent sampling transitions;
        ``n_divergent_warmup`` : ndarray (K,);
        ``warmup_seconds_per_chain``, ``sampling_seconds_per_chain`` : ndarray (K,);
        ``versions`` : dict.
    """
    if algorithm not in ("nuts", "hmc"):
        raise ValueError(f"algorithm must be 'nuts' or 'hmc', got {algorithm!r}.")
    options = {
        "algorithm": algorithm,
        "n_warmup": n_warmup,
        "n_samples": n_samples,
        "seed": seed,
        "target_accept": target_accept,
        "dtype": dtype,
        "num_integration_steps": num_integration_steps,
        "max_num_doublings": max_num_doublings,
        "initial_step_size": initial_step_size,
    }
    with _precision(dtype):
        return _run_chains(X, y, hidden_layer_sizes, activation, lam, prior_std, theta0, **options)


def _run_chains(
    X,
    y,
    hidden_layer_sizes,
    activation,
    lam,
    prior_std,
    theta0,
    *,
    algorithm,
    n_warmup,
    n_samples,
    seed,
    target_accept,
    dtype,
    num_integration_steps,
    max_num_doublings,
    initial_step_size,
):
    import blackjax
    from blackjax.adaptation.base import get_filter_adapt_info_fn

    dt = _jnp_dtype(dtype)
    Xj, yj, shapes, Q, prec, lam_j = _target_arrays(X, y, hidden_layer_sizes, prior_std, lam, dtype)
    theta0 = np.atleast_2d(np.asarray(theta0, dtype=np.float64))
    if theta0.shape[1] != Q:
        raise ValueError(f"theta0 must have {Q} columns for this network, got shape {theta0.shape}.")
    K = theta0.shape[0]

    if algorithm == "nuts":
        kind, extra = blackjax.nuts, {"max_num_doublings": max_num_doublings}
    else:
        kind, extra = blackjax.hmc, {"num_integration_steps": num_integration_steps}
    keep = get_filter_adapt_info_fn(info_keys={"num_integration_steps", "is_divergent"})

    # data enter as arguments, not as constants folded into the executable
    def warmup(key, position, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        adapt = blackjax.window_adaptation(
            kind,
            logdensity,
            is_mass_matrix_diagonal=True,
            initial_step_size=initial_step_size,
            target_acceptance_rate=target_accept,
            adaptation_info_fn=keep,
            **extra,
        )
        (state, params), info = adapt.run(key, position, num_steps=n_warmup)
        info = info.info
        return (
            state,
            params["step_size"],
            params["inverse_mass_matrix"],
            jnp.sum(info.num_integration_steps),
            jnp.sum(info.is_divergent),
        )

    def sample(key, state, step_size, inv_mass, X_, y_, prec_, lam_):
        logdensity = _logdensity_fn(X_, y_, prec_, lam_, shapes, activation)
        kernel = kind(logdensity, step_size, inv_mass, **extra)

        def one_step(s, k):
            s, info = kernel.step(k, s)
            return s, (s.position, info.num_integration_steps, info.acceptance_rate, info.is_divergent)

        keys = jax.random.split(key, n_samples)
        _, (positions, steps, accept, divergent) = jax.lax.scan(one_step, state, keys)
        return positions, jnp.sum(steps), jnp.mean(accept), jnp.sum(divergent)

    data = (Xj, yj, prec, lam_j)
    keys = jax.random.split(jax.random.PRNGKey(seed), 2 * K).reshape(K, 2, -1)
    start = jnp.asarray(theta0[0], dtype=dt)

    t0 = time.perf_counter()
    lowered = jax.jit(warmup).lower(keys[0, 0], start, *data)
    warmup_exe = lowered.compile()
    sample_exe = jax.jit(sample).lower(keys[0, 1], *lowered.out_info[:3], *data).compile()
    compile_seconds = time.perf_counter() - t0

    samples = np.empty((K, n_samples, Q), dtype=np.dtype(dtype))
    warm_s, samp_s = np.zeros(K), np.zeros(K)
    step_size, accept = np.zeros(K), np.zeros(K)
    grads_w, grads_s = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    div_w, div_s = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    inv_mass = np.zeros((K, Q))
    for k in range(K):
        position = jnp.asarray(theta0[k], dtype=dt)
        t0 = time.perf_counter()
        state, eps, imm, n_steps, n_div = jax.block_until_ready(warmup_exe(keys[k, 0], position, *data))
        warm_s[k] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = jax.block_until_ready(sample_exe(keys[k, 1], state, eps, imm, *data))
        samp_s[k] = time.perf_counter() - t0
        samples[k] = np.asarray(out[0])
        grads_w[k], div_w[k] = int(n_steps), int(n_div)
        grads_s[k], accept[k], div_s[k] = int(out[1]), float(out[2]), int(out[3])
        step_size[k], inv_mass[k] = float(eps), np.asarray(imm)

    return {
        "samples": samples,
        "warmup_seconds": float(warm_s.sum()),
        "sampling_seconds": float(samp_s.sum()),
        "compile_seconds": compile_seconds,
        "n_grad_evals": int(grads_w.sum() + grads_s.sum() + K),
        "n_grad_evals_warmup": grads_w,
        "n_grad_evals_sampling": grads_s,
        "step_size": step_size,
        "inverse_mass_matrix": inv_mass,
        "acceptance_rate": accept,
        "n_divergent": div_s,
        "n_divergent_warmup": div_w,
        "warmup_seconds_per_chain": warm_s,
        "sampling_seconds_per_chain": samp_s,
        "algorithm": algorithm,
        "versions": versions(),
    }


def _demo(hidden_layer_sizes=(50,), n_warmup=500, n_samples=500, n_chains=4, temperature=1.0):
    import torch
    from sklearn.datasets import load_diabetes

    from skgibbs.diagnostics import effective_sample_size, rhat
    from skgibbs.model import MLPSpec

    torch.set_num_threads(1)
    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    n = X.shape[0]
    spec = MLPSpec(X.shape[1], hidden_layer_sizes, "relu")
    lam = n / temperature
    prior_std = spec.fan_in_std().numpy()
    theta0 = spec.init_params(torch.Generator().manual_seed(0), n_chains).numpy()
    print(f"versions: {versions()}")
    print(f"diabetes n={n}, d={X.shape[1]}, hidden={hidden_layer_sizes}, Q={spec.n_params}, lam={lam:g}")

    chk = check_against_skgibbs(X, y, hidden_layer_sizes, "relu", lam, prior_std)
    print(
        "check vs skgibbs (torch float64): log density "
        + ", ".join(f"{a:.6f}/{b:.6f}" for a, b in zip(chk["logdensity_jax"], chk["logdensity_torch"]))
        + f"; max rel err {chk['rel_err'].max():.2e}, grad max rel err {chk['grad_rel_err'].max():.2e}"
    )

    res = blackjax_sampler(
        X, y, hidden_layer_sizes, "relu", lam, prior_std, theta0, n_warmup=n_warmup, n_samples=n_samples
    )
    print(
        f"NUTS, {n_chains} chains x ({n_warmup} warm-up + {n_samples} draws), one after the other: "
        f"compile {res['compile_seconds']:.1f} s, warm-up {res['warmup_seconds']:.1f} s, "
        f"sampling {res['sampling_seconds']:.1f} s"
    )
    print(
        f"gradient evaluations: {res['n_grad_evals']} (warm-up {res['n_grad_evals_warmup'].tolist()}, "
        f"sampling {res['n_grad_evals_sampling'].tolist()})"
    )
    print(f"step sizes: {np.array2string(res['step_size'], precision=4)}")
    print(f"acceptance: {np.array2string(res['acceptance_rate'], precision=3)}")
    print(f"divergent: sampling {res['n_divergent'].tolist()}, warm-up {res['n_divergent_warmup'].tolist()}")

    draws = torch.from_numpy(res["samples"].reshape(-1, spec.n_params)).double()
    f = spec.forward(draws, torch.from_numpy(X)).numpy().reshape(n_chains, n_samples, n)
    ess = effective_sample_size(f, split=True, rank_normalize=True)
    r = rhat(f)
    print(
        f"f(x_i), i=1..{n}: bulk ESS min {np.nanmin(ess):.1f}, median {np.nanmedian(ess):.1f}; "
        f"R-hat max {np.nanmax(r):.3f}, median {np.nanmedian(r):.3f}"
    )
    total = res["sampling_seconds"] + res["warmup_seconds"]
    print(
        f"min bulk ESS per second: {np.nanmin(ess) / res['sampling_seconds']:.2f} (sampling), "
        f"{np.nanmin(ess) / total:.2f} (warm-up + sampling)"
    )
    return res


if __name__ == "__main__":
    t_start = time.perf_counter()
    _demo()
    print(f"total wall time {time.perf_counter() - t_start:.1f} s")
