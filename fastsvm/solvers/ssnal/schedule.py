"""SSsNAL's schedules: the proximal parameter sigma from one outer iteration to the next, the
first sigma, and how exactly the inner problems and the CG Newton directions are solved."""
import math

REJECTED_NOTE = "  (Newton steps did not converge: step undone, sigma lowered)"  # ends a progress line


def first_sigma(mean_upper, config, scale=1.0):
    """sigma_0: config.sigma0 when given, else scale x config.sigma0_scale x the mean upper bound
    (C for C-SVC): sigma maps Z v + c, of order 1 (margins), to steps of x, of order C; with
    sigma_0 = 1 a large C spent its first outer iterations on small proximal steps. A start near
    the solution (a path's warm start) takes a smaller scale: its first proximal steps are short."""
    if config.sigma0 is not None:
        return config.sigma0
    return min(max(scale * config.sigma0_scale * mean_upper, config.sigma_min), config.sigma_max)


def inner_tolerance(outer, tol, inner_scale):
    """eps_k = max(tol / 10, 2^-k) (docs/algorithms.md §2), scaled by inner_scale (next_inner_scale):
    the inner solve of outer iteration k stops at |grad psi| <= eps_k / sqrt(sigma_k)."""
    return inner_scale * max(0.1 * tol, 0.5 ** outer)


def next_inner_scale(r_primal, eta, config):
    """eta well above the AL's primal residual: x hardly moves, the inexact inner solves limit eta
    (the error Z grad psi enters grad f); the next ones are solved tighter (down to
    config.inner_scale_min)."""
    return min(1.0, max(config.inner_scale_min, r_primal / eta)) if eta > 0 else 1.0


def cg_tolerance(progress, loosest):
    """Relative residual for a CG Newton direction: `loosest` (Config.cg_rtol), tightening with
    the inner solve's progress = |grad| / |grad at its start| (inexact Newton, Eisenstat-Walker style;
    the exponent is chosen with tools/bench_ssnal.py on text-like data, where CG carries the cost:
    exact directions cost more CG iterations than the Newton steps they save)."""
    return min(loosest, progress ** 0.25)


def next_sigma(sigma, steps, converged, config, lagging=True):
    """The penalty of the next outer iteration: raised while the AL's primal residual lags
    (`lagging`: a larger sigma speeds the outer convergence), by config.sigma_factor when the
    inner solve was easy, by less when it needed many Newton steps; kept when the primal side is
    ahead; lowered when the inner solve stalled (a large sigma makes psi_k closer to the nonsmooth
    primal); within bounds."""
    factor = config.sigma_factor
    if not converged:
        change = 0.5
    elif not lagging:
        change = 1.0
    elif steps <= 5:
        change = 2.0 * factor
    elif steps <= 12:
        change = factor
    elif steps <= 25:
        change = math.sqrt(factor)
    else:
        change = 1.0
    return min(max(sigma * change, config.sigma_min), config.sigma_max)
