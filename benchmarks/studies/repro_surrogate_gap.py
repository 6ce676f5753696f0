"""How far the sMALA and csMALA surrogates are from MALA as rho and the temperature vary.

Paper 000 (Lemmas 1 and 3; the target of doc/user_guide/surrogate.rst) says that the csMALA surrogate
``prod_i (a exp(-lambda' l_i / n) + 1 - rho)`` agrees with the Gibbs posterior ``exp(-lambda R_n)`` to
first order in ``lambda' l_i / n``, whereas the sMALA surrogate (2.10) is close only while
``lambda l_i / (n rho)`` is small. This script measures the gap with :class:`~skgibbs.GibbsMLPRegressor`
for ``rho in {0.1, 0.3, 0.5, 1}`` and temperatures ``{1, 10, 100} x 2 sigma^2`` (``sigma^2`` the noise
variance on the standardized scale, so ``1 x`` is the Bayesian posterior), on two problems:

* ``linear``: ``y = 0.5 + 0.5 u + N(0, 0.1^2)``, ``u ~ U(0, 1)``, ``n = 2000``, ``hidden_layer_sizes=()``,
  flat prior: the Gibbs posterior is Gaussian in closed form and the surrogates are integrated on a grid
  over the two parameters.
* ``mlp``: :func:`~skgibbs.datasets.make_gap_regression`, ``n = 2000``, a ReLU network 1-16-16-1;
  MALA's draws at the same temperature are the reference.

Per configuration: the ratio of credible radii ``tau`` (paper 000 (3.4), level 0.9, empirical L2 on the
training inputs) to MALA's; the coverage of the 90% pointwise credible intervals of ``f`` at test points
(the mean probability, under the exact Gibbs posterior or MALA's draws, that ``f(x)`` lies in the
interval); the fitted ``surrogate_scale_``; whether ``fit`` raised the surrogate ``SamplerWarning``; the
acceptance rate. Chains use the samplers' defaults. ``--problems`` runs only the named problems and
keeps the other from the stored results of a run alike.
"""

import math
import re
import time

import numpy as np
from scipy.stats import chi2, norm

from skgibbs import GibbsMLPRegressor, SamplerWarning
from skgibbs.datasets import make_gap_regression
from skgibbs.samplers import CSMALA, MALA, SMALA

from .. import Benchmark, Output
from ..common import paper000 as P
from ..common.stats import timed_fit
from ..common.writer import Page

RHOS = (0.1, 0.3, 0.5)
MULTIPLES = (1, 10, 100)
LEVEL = 0.9
LINEAR_NOISE, GAP_NOISE = 0.1, 0.02
NAME = "surrogate_gap"
PROBLEMS = ("linear", "mlp")


def linear_data(n, seed):
    rng = np.random.default_rng(seed)
    u = rng.uniform(size=n)
    return u[:, None], 0.5 + 0.5 * u + LINEAR_NOISE * rng.normal(size=n)


def fit(problem, sampler, temperature, rho, X, y, chains, seed, step_size=None, correction="auto"):
    """One fit: the estimator, the messages of the SamplerWarnings it raised and its runtime; ``step_size``
    fixes the Langevin step (and ``proposal_std = sqrt(2 h)``) instead of adapting it during burn-in."""
    proposal = (
        {} if step_size is None else {"step_size": step_size, "proposal_std": math.sqrt(2.0 * step_size)}
    )
    if sampler == "csmala":
        proposal["correction"] = correction
    kw = dict(temperature=temperature, confidence_level=LEVEL, random_state=seed, **chains)
    kw["sampler"] = {"mala": MALA, "smala": SMALA, "csmala": CSMALA}[sampler](**proposal)
    if sampler != "mala":
        kw["rho"] = rho
    if problem == "linear":
        kw.update(hidden_layer_sizes=(), activation="identity", prior_std=None)
    else:
        kw.update(hidden_layer_sizes=(16, 16), activation="relu")
    reg = GibbsMLPRegressor(**kw)
    timed = timed_fit(reg, X, y)
    return reg, timed.messages(SamplerWarning), timed.seconds


def credible_intervals(F, level=LEVEL):
    """Equal-tailed pointwise intervals of draws ``F`` (S, m): arrays ``(m,)``, ``(m,)``."""
    lo, hi = np.quantile(F, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


# ------------------------------------------------------------------ exact linear truth
def _standardized(reg, X):
    return (X[:, 0] - reg.x_mean_[0]) / reg.x_scale_[0]


def exact_gibbs(reg, X, y):
    """Closed-form Gibbs posterior of ``(w, b)`` on the standardized scale: with flat prior, Gaussian with
    precision ``2 (lambda/n) A'A``, ``A = [xs, 1]`` (``= n I``: ``xs`` is centred with unit variance)."""
    xs = _standardized(reg, X)
    A = np.column_stack([xs, np.ones_like(xs)])
    theta_ls = np.linalg.lstsq(A, (y - reg.y_mean_) / reg.y_scale_, rcond=None)[0]
    cov = np.linalg.inv(2.0 * reg.lambda_ / len(y) * A.T @ A)
    return theta_ls, cov, A


def exact_gibbs_radius(reg, X, y, level=LEVEL):
    """``tau`` of the exact Gibbs posterior, empirical L2 on the training inputs (scale of y)."""
    _, cov, A = exact_gibbs(reg, X, y)
    # h^2 = d' M d, M = A'A / n, a quadratic form of a Gaussian: s^2 chi2_2 if M cov = s^2 I (here exactly)
    evals = np.linalg.eigvals(A.T @ A / len(A) @ cov).real
    if np.allclose(evals, evals[0], rtol=1e-6):
        return reg.y_scale_ * math.sqrt(evals[0] * chi2.ppf(level, 2))
    raise ValueError("design not whitened; the closed form used here does not apply")


def surrogate_grid(reg, X, y, m=161, width=10.0):
    """Grid over ``(w, b)`` and the normalised weights of the estimator's exact target.

    The grid spans ``width`` Gibbs-posterior standard deviations around the least-squares fit and is
    widened until the mass on its border is negligible (the sMALA surrogate at low temperature is wider).
    """
    xs, ys = _standardized(reg, X), (y - reg.y_mean_) / reg.y_scale_
    theta_ls, cov, _ = exact_gibbs(reg, X, y)
    sd = np.sqrt(np.diag(cov))
    for _ in range(8):
        t = np.linspace(-width, width, m)
        W, B = np.meshgrid(theta_ls[0] + t * sd[0], theta_ls[1] + t * sd[1], indexing="ij")
        theta = np.column_stack([W.ravel(), B.ravel()])
        logp = np.zeros(len(theta))
        for start in range(0, len(theta), 4096):  # chunks keep memory small
            th = theta[start : start + 4096]
            losses = (ys[None, :] - th[:, :1] * xs[None, :] - th[:, 1:]) ** 2
            logp[start : start + 4096] = P.log_surrogate(
                losses, reg.sampler_name_, reg.lambda_, reg.rho_, reg.correction_, reg.lambda_prime_
            )
        w = np.exp(logp - logp.max())
        w /= w.sum()
        border = (np.abs(W.ravel() - theta_ls[0]) >= t[-2] * sd[0]) | (
            np.abs(B.ravel() - theta_ls[1]) >= t[-2] * sd[1]
        )
        if w[border].sum() < 1e-8:
            break
        width *= 2.0
    return theta, w, float(w[border].sum())


def exact_surrogate_summary(reg, X, y, X_test):
    """Radius and interval coverage of the exact surrogate, and the mass on the border of its grid."""
    theta, w, border = surrogate_grid(reg, X, y)
    d = theta - w @ theta
    # h^2 = mean_i ((d_w xs_i + d_b) y_scale)^2 = y_scale^2 (d_w^2 + d_b^2): xs centred, unit variance
    h = reg.y_scale_ * np.sqrt((d**2).sum(1))
    radius = float(P.weighted_quantiles(h, w, [LEVEL])[0])
    probs = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    f = [P.weighted_quantiles(theta[:, 0] * x + theta[:, 1], w, probs) for x in _standardized(reg, X_test)]
    lo, hi = np.array(f).T * reg.y_scale_ + reg.y_mean_
    return {"radius": radius, "coverage": gibbs_coverage(reg, X, y, X_test, lo, hi), "border_mass": border}


def gibbs_coverage(reg, X, y, X_test, lo, hi):
    """Mean over test points of ``P(lo <= f(x) <= hi)`` under the exact Gibbs posterior."""
    theta_ls, cov, _ = exact_gibbs(reg, X, y)
    xt = _standardized(reg, X_test)
    a = np.column_stack([xt, np.ones_like(xt)])
    m = (a @ theta_ls) * reg.y_scale_ + reg.y_mean_
    s = np.sqrt(np.einsum("ij,jk,ik->i", a, cov, a)) * reg.y_scale_
    return float(np.mean(norm.cdf((hi - m) / s) - norm.cdf((lo - m) / s)))


def draw_coverage(F_ref, lo, hi):
    """Mean over test points of the fraction of reference draws ``F_ref`` (S, m) inside ``[lo, hi]``."""
    return float(np.mean((F_ref >= lo) & (F_ref <= hi)))


# ------------------------------------------------------------------ study
def study(problem, X, y, X_test, chains, seed, multiples=MULTIPLES, rhos=RHOS):
    """All fits of one problem: MALA per temperature, then sMALA and csMALA per rho and step rule."""
    linear = problem == "linear"
    # 2 sigma^2 on the standardized scale (the estimator divides y by its std)
    t_bayes = 2.0 * (LINEAR_NOISE if linear else GAP_NOISE) ** 2 / float(np.var(y))
    rows = []
    for k, mult in enumerate(multiples):
        T = mult * t_bayes
        ref, msgs, sec = fit(problem, "mala", T, 1.0, X, y, chains, seed + 100 * k)
        F_ref = ref.predict_samples(X_test).T  # (S, m)
        if linear:
            exact_r = exact_gibbs_radius(ref, X, y)
            cov_ref = gibbs_coverage(ref, X, y, X_test, *credible_intervals(F_ref))
        else:  # MALA against itself: intervals of one chain, draws of the other
            S = F_ref.reshape(ref.n_chains, -1, F_ref.shape[1])
            cov_ref = float(np.mean([draw_coverage(S[1 - c], *credible_intervals(S[c])) for c in (0, 1)]))
        ref_row = {"problem": problem, "multiple": mult, "temperature": T, "radius": ref.credible_radius_}
        rows.append(_row(ref_row, "mala", 1.0, "adapted", ref, msgs, sec, cov_ref, cov_ref))
        if linear:
            rows[-1].update(exact_radius_ratio=1.0, exact_coverage=LEVEL, gibbs_radius=exact_r)
        # the step MALA adapted to at this temperature, fixed, separates the surrogate from the adaptation
        h_mala = float(np.mean(ref.step_size_))
        runs = [
            (rho, s, rule, "auto") for rho in rhos for rule in ("adapted", "MALA's h") for s in P.METHODS[1:]
        ]
        if linear:  # zeta = 1, the correction of (2.12) and Lemma 3, beside the centred "auto" zeta
            runs += [(rho, "csmala", "MALA's h", 1.0) for rho in rhos]
        for j, (rho, sampler, rule, zeta) in enumerate(runs):
            h = h_mala if rule == "MALA's h" else None
            reg, msgs, sec = fit(problem, sampler, T, rho, X, y, chains, seed + 100 * k + j + 1, h, zeta)
            label = sampler if zeta == "auto" else f"{sampler} ζ={zeta:g}"
            lo, hi = credible_intervals(reg.predict_samples(X_test).T)
            cov = gibbs_coverage(reg, X, y, X_test, lo, hi) if linear else draw_coverage(F_ref, lo, hi)
            row = _row(ref_row, label, rho, rule, reg, msgs, sec, cov, cov_ref)
            if linear:
                ex = exact_surrogate_summary(reg, X, y, X_test)
                row.update(
                    exact_radius_ratio=ex["radius"] / exact_r,
                    exact_coverage=ex["coverage"],
                    exact_border_mass=ex["border_mass"],
                    mcmc_vs_exact_radius=reg.credible_radius_ / ex["radius"],
                )
            print(
                f"  {problem:6s} T={mult:3d}x rho={rho:.1f} {label:10s} {rule:8s} ratio "
                f"{row['radius_ratio']:.3f} cov {row['coverage']:.3f} scale {row['surrogate_scale']:.3g} "
                f"acc {row['acceptance']:.2f} warned {row['surrogate_warning']} ({sec:.1f} s)"
            )
            rows.append(row)
    return {"bayes_temperature": t_bayes, "rows": rows}


def _row(ref, sampler, rho, rule, reg, msgs, sec, cov, cov_ref):
    """One fit's row; ``ref`` holds the problem, the temperature and MALA's radius at it."""
    return {
        "problem": ref["problem"],
        "sampler": sampler,
        "step_rule": rule,
        "multiple": ref["multiple"],
        "temperature": ref["temperature"],
        "rho": rho,
        "radius": float(reg.credible_radius_),
        "radius_ratio": float(reg.credible_radius_ / ref["radius"]),
        "coverage": cov,
        "coverage_ratio": cov / cov_ref,
        "surrogate_scale": float(reg.surrogate_scale_),
        "lambda": float(reg.lambda_),
        "lambda_prime": float(reg.lambda_prime_),
        "correction": float(reg.correction_),
        "acceptance": float(np.mean(reg.acceptance_rate_)),
        "restarts": float(np.mean(reg.n_restarts_)) if hasattr(reg, "n_restarts_") else 0.0,  # MALA: none
        "step_size": float(np.mean(reg.step_size_)),
        "surrogate_warning": any("surrogate" in m for m in msgs),
        "acceptance_warning": any("accepted only" in m for m in msgs),
        "seconds": sec,
    }


# ------------------------------------------------------------------ reporting
#: the table's columns but the last ("warned"): header and cell of a row (the exact ones: linear model only)
COLUMNS = {
    "T / 2σ²": "{multiple}",
    "rho": "{rho:.1f}",
    "sampler": "{sampler}",
    "step": "{step_rule}",
    "tau ratio": "{radius_ratio:.3f}",
    "exact tau ratio": "{exact_radius_ratio:.3f}",
    "cover 90%": "{coverage:.3f}",
    "exact cover": "{exact_coverage:.3f}",
    "cover ratio": "{coverage_ratio:.3f}",
    "cℓ": "{surrogate_scale:.3g}",
    "acc": "{acceptance:.2f}",
}


def table(block, exact):
    """Header and rows of one problem's table (exact columns for the linear model)."""
    columns = {h: cell for h, cell in COLUMNS.items() if exact or not h.startswith("exact")}
    rows = []
    for r in block["rows"]:
        warned = [w for w in ("surrogate", "acceptance") if r[f"{w}_warning"]]
        rows.append([cell.format(**r) for cell in columns.values()] + [", ".join(warned) or "no"])
    return [*columns, "warned"], rows


def _span(values, fmt="{:.2f}"):
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def _select(rows, **kw):
    return [r for r in rows if all(r[k] == v for k, v in kw.items())]


def _stochastic(rows):
    return [r for r in rows if r["sampler"] != "mala"]


def _gap_slope(rows, max_scale=0.2):
    """Least-squares k in ``exact ratio - 1 = k (1 - rho) c l`` over rows with ``c l <= max_scale``."""
    sel = [r for r in _stochastic(rows) if r["step_rule"] == "MALA's h" and r["surrogate_scale"] <= max_scale]
    if not sel:
        return float("nan"), float("nan"), 0
    x = np.array([(1 - r["rho"]) * r["surrogate_scale"] for r in sel])
    y = np.array([r["exact_radius_ratio"] - 1 for r in sel])
    k = float(x @ y / (x @ x))
    return k, float(np.max(np.abs(y - k * x))), len(sel)


def _batch_noise(r, n):
    """``(2 n rho (1 - rho))^(1/2) c l``: the spread of the batch potential for chi-square residuals."""
    return math.sqrt(2 * n * r["rho"] * (1 - r["rho"])) * r["surrogate_scale"]


def _mixing_text(rows, n, mults):
    """Acceptance by temperature, which fits mix, and how their MCMC radii compare with the exact ones."""
    centred = [r for r in _stochastic(rows) if "ζ" not in r["sampler"]]
    by_t = "; ".join(
        f"{m}x: {_span([r['acceptance'] for r in centred if r['multiple'] == m])}" for m in mults
    )
    stuck = [r for r in centred if r["acceptance"] < 0.2]
    moving = [r for r in centred if r["acceptance"] >= 0.2]
    text = f"Acceptance of the sMALA and csMALA (centred ζ) chains by temperature: {by_t}. "
    if stuck:
        text += (
            f"{len(stuck)} of {len(centred)} fits accept less than 20%; their batch noise "
            f"(2nρ(1 − ρ))^½ cℓ is {_span([_batch_noise(r, n) for r in stuck], '{:.3g}')}, so acceptance "
            "is capped whatever the step, and their MCMC radii (column 'tau ratio') describe stuck chains, "
            "not the surrogates; the estimator's acceptance warning (below 1%) fired for "
            f"{sum(r['acceptance_warning'] for r in stuck)} of them. "
        )
    if moving:
        text += (
            f"In the {len(moving)} fits that mix (batch noise "
            f"{_span([_batch_noise(r, n) for r in moving], '{:.3g}')}), the MCMC radius over the exact "
            f"target's radius is {_span([r['mcmc_vs_exact_radius'] for r in moving])}, against "
            f"{_span([r['radius'] / r['gibbs_radius'] for r in _select(rows, sampler='mala')])} for MALA "
            "over the exact Gibbs posterior. "
        )
    return text


def _linear_text(block, n):
    rows = block["rows"]

    def pick(sampler, multiple, rho):
        return _select(rows, sampler=sampler, multiple=multiple, rho=rho, step_rule="MALA's h")[0]

    k, dev, count = _gap_slope(rows)
    mults = sorted({r["multiple"] for r in rows})
    exact = "; ".join(
        f"{m}x: sMALA {pick('smala', m, 0.1)['exact_radius_ratio']:.2f}, csMALA "
        f"{pick('csmala', m, 0.1)['exact_radius_ratio']:.2f}, csMALA ζ=1 "
        f"{pick('csmala ζ=1', m, 0.1)['exact_radius_ratio']:.3f}"
        for m in mults
    )
    zeta = {
        m: _span([r["correction"] for r in _select(rows, sampler="csmala", multiple=m)], "{:.3f}")
        for m in mults
    }
    return (
        "Linear model, exact targets. The gap closes as the per-example batch term cℓ falls: over the "
        f"{count} exact surrogates with cℓ ≤ 0.2, radius ratio − 1 ≈ {k:.2f} (1 − ρ) cℓ (largest deviation "
        f"{dev:.3f}), for sMALA, csMALA and csMALA with ζ = 1 alike; the exact surrogates' 90% intervals "
        "cover f under the Gibbs posterior with probability "
        f"{_span([r['exact_coverage'] for r in _stochastic(rows)], '{:.3f}')} (0.900 would be exact). "
        f"Exact radius ratios at ρ = 0.1 by temperature: {exact}. At a given temperature the compensated "
        "csMALA with centred ζ is closer to MALA than sMALA while ζ is not small (ζ = "
        + ", ".join(f"{z} at {m}x" for m, z in zeta.items())
        + "); as ζ → 0 the two kernels coincide. ζ = 1 ((2.12), Lemma 3) gives the closest surrogate, but "
        "its chains accept "
        f"{_span([r['acceptance'] for r in _select(rows, sampler='csmala ζ=1')])} of their proposals: the "
        "per-example offset log ρ makes the batch potential's noise, of order (nρ(1 − ρ))^½ (−log ρ), far "
        "larger than one. " + _mixing_text(rows, n, mults) + _warning_text(rows)
    )


def _warning_text(rows):
    fits = _stochastic(rows)
    warned = sum(r["surrogate_warning"] for r in fits)
    odd = [r for r in fits if r["surrogate_warning"] != (r["surrogate_scale"] > 0.1)]
    return f"The surrogate SamplerWarning fired in {warned} of {len(fits)} stochastic fits" + (
        ", exactly those with cℓ > 0.1. " if not odd else f"; {len(odd)} fits disagree with cℓ > 0.1. "
    )


def _mlp_text(block, n):
    rows = block["rows"]
    noise = [_batch_noise(r, n) for r in _stochastic(rows)]
    mults = sorted({r["multiple"] for r in rows})
    mixing = "; ".join(
        f"{m}x: {_span([r['acceptance'] for r in _stochastic(_select(rows, multiple=m))])}" for m in mults
    )
    moving = [r for r in _stochastic(rows) if r["acceptance"] >= 0.2]
    text = (
        "ReLU network. Acceptance of the stochastic chains by temperature: "
        f"{mixing} (MALA {_span([r['acceptance'] for r in _select(rows, sampler='mala')])}). "
    )
    if moving:
        text += (
            f"Where they accept at least 20% ({len(moving)} fits), the radius ratio to MALA is "
            f"{_span([r['radius_ratio'] for r in moving])} and the coverage ratio "
            f"{_span([r['coverage_ratio'] for r in moving])}, with cℓ "
            f"{_span([r['surrogate_scale'] for r in moving], '{:.3g}')}. "
        )
    text += (
        f"The batch noise (2nρ(1 − ρ))^½ cℓ is {_span(noise, '{:.3g}')} in these fits"
        + (", above one everywhere. " if min(noise) > 1 else ". ")
        + "MALA's own chains also move slowly here (its two chains' intervals cover each other's draws with "
        f"probability {_span([r['coverage'] for r in _select(rows, sampler='mala')], '{:.3f}')}), so the "
        "network results are a statement about what the estimator returns in this budget, not about the "
        "surrogates themselves; the linear model carries the exact comparison. "
    )
    return text + _warning_text(rows)


def discussion(result):
    """Settings, runtime and the findings, computed from the rows of this run."""
    chains = "; ".join(
        f"{p}: {c['n_chains']} chains per fit, pre-training {c['pretrain_iter']} Adam steps, burn-in "
        f"{c['burn_in']}, {c['n_samples']} draws per chain, thinning {c['thin']}"
        for p, c in result["chains"].items()
    )
    text = (
        f"Settings: n = {result['n']} for both problems; {chains}; estimator defaults otherwise; credible "
        f"level {LEVEL}. Runtime "
        + ", ".join(f"{p} {t:.0f} s" for p, t in result["runtime_s"].items())
        + " on one shared CPU thread. Step rule 'adapted' is the estimator's default; \"MALA's h\" fixes "
        "the step (and s = (2h)^½) at the value MALA adapted to at the same temperature. 2σ² on the "
        "standardized scale: "
        + ", ".join(f"{p} {result[p]['bayes_temperature']:.3g}" for p in PROBLEMS if p in result)
        + ". "
    )
    if "linear" in result:
        text += _linear_text(result["linear"], result["n"])
    if "mlp" in result:
        text += _mlp_text(result["mlp"], result["n"])
    return text


def report(results):
    """One table per problem, the legend and the discussion."""
    result = results[NAME]
    titles = {
        "linear": "Linear model (exact Gibbs posterior and exact surrogates available)",
        "mlp": "ReLU network 1-16-16-1 on the gap regression (reference: MALA's draws)",
    }
    legend = (
        "'tau ratio': credible radius (level 0.9, empirical L2 on the training inputs) over MALA's at the "
        "same temperature; 'exact tau ratio': the same for the exact targets (grid integration); "
        "'cover 90%': mean probability, under the exact Gibbs posterior (linear) or MALA's draws (mlp), "
        "that f(x) lies in the sampler's 90% credible interval, averaged over the test points (for MALA "
        "in the mlp table: one chain's intervals against the other chain's draws); 'exact cover': the "
        "same for the exact surrogate's intervals; 'cover ratio': cover over MALA's; 'cℓ': the fitted "
        "`surrogate_scale_`, the mean over draws and examples of c ℓ_i with c the kernel's per-example "
        "multiplier (λ/n for MALA, λ/(nρ) for sMALA, λ'/n for csMALA); 'acc': acceptance "
        "rate; 'warned': SamplerWarning raised by fit."
    )
    tables = [(titles[p], *table(result[p], exact=p == "linear")) for p in PROBLEMS if p in result]
    # inline code: the texts mark it `x`, reStructuredText ``x``
    notes = [re.sub(r"`([^`]+)`", r"``\1``", text) for text in (legend, discussion(result))]
    return [Page(NAME, "Surrogate gap: sMALA and csMALA against MALA", tables=tables, notes=notes)]


def add_arguments(parser):
    parser.add_argument(
        "--problems",
        nargs="+",
        choices=PROBLEMS,
        default=list(PROBLEMS),
        help="run only these; the others are kept from an earlier run with the same settings",
    )


_SHORT = {"n_chains": 2, "burn_in": 50, "n_samples": 20, "thin": 1, "pretrain_iter": 50}
#: training points, the chains of each problem and the grid of temperature multiples and batch fractions
SIZES = {
    "full": {
        "n": 2000,
        "chains": {
            "linear": {"n_chains": 2, "burn_in": 2000, "n_samples": 200, "thin": 10, "pretrain_iter": 500},
            "mlp": {"n_chains": 2, "burn_in": 1500, "n_samples": 150, "thin": 10, "pretrain_iter": 1000},
        },
        "grid": {"multiples": MULTIPLES, "rhos": RHOS},
    },
    "quick": {
        "n": 300,
        "chains": {"linear": _SHORT, "mlp": _SHORT},
        "grid": {"multiples": (1, 100), "rhos": (0.1,)},
    },
}


def run(args):
    """Both problems (quick: n = 300, short chains, rho = 0.1 and T = 1x, 100x only)."""
    n, chains, grid = args.size.n, args.size.chains, args.size.grid
    settings = {"n": n, "chains": chains, "level": LEVEL}
    result = dict(settings, runtime_s={})
    old = P.earlier_result(args, NAME, settings) if set(args.problems) != set(PROBLEMS) else None
    if old is not None:  # same settings: keep the other problem
        for problem in (p for p in PROBLEMS if p in old):
            result[problem] = old[problem]
            result["runtime_s"][problem] = old["runtime_s"][problem]
    for k, problem in enumerate(PROBLEMS):
        if problem not in args.problems:
            continue
        t0 = time.perf_counter()
        if problem == "linear":
            X, y = linear_data(n, args.seed)
            x_test = np.linspace(0.0, 1.0, 21)[:, None]
        else:
            X, y = make_gap_regression(n, noise=GAP_NOISE, random_state=args.seed)
            x_test = np.linspace(-1.0, 1.0, 41)[:, None]
        result[problem] = study(problem, X, y, x_test, chains[problem], args.seed + 1000 * k, **grid)
        result[problem]["x_test"] = x_test[:, 0].tolist()
        result["runtime_s"][problem] = time.perf_counter() - t0
    return {NAME: result}


BENCHMARK = Benchmark(
    name=NAME,
    kind="reproduction",
    title="Distance of the surrogates from the Gibbs posterior",
    outputs=(Output(NAME, "Distance of the surrogates from the Gibbs posterior"),),
    run=run,
    report=report,
    add_arguments=add_arguments,
    sizes=SIZES,
)
