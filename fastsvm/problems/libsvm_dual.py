"""LIBSVM's dual problems as its solvers see them, for every solver of LIBSVM's formulations (smo,
block_smo): the dual of each formulation (linear term p, signs, bounds, LIBSVM's initial point),
LIBSVM's rho from a solution's gradient, and LIBSVM's post-processing into coefficients, rho,
objective and the statistics svm-train prints.

    min_a 1/2 a^T Q a + p^T a  s.t.  signs^T a = const, 0 <= a <= C,  Q_ij = s_i s_j K_ij

The regression duals have 2n variables (a, a*) over the n rows.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import DegenerateProblemError

FORMULATIONS = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
NU_FORMULATIONS = ("nu_svc", "one_class", "nu_svr")
_INT_MAX = 2**31 - 1
# a warm start's sums of alpha per sign within this relative distance of what the equality
# constraints ask are left alone (the rounding of scaling by new / old bounds): a rescale
# would move bounded variables off their bounds by an ulp
SUM_RTOL = 1e-12


def libsvm_max_iter(n_variables):
    """LIBSVM's iteration cap: max(10^7, 100 l), l the number of dual variables."""
    return max(10_000_000, _INT_MAX if n_variables > _INT_MAX // 100 else 100 * n_variables)


def greedy_fill(C, total):
    """alpha_i = min(C_i, what is left of total), in order: LIBSVM's initial point for nu-SVC
    (per class), one-class and nu-SVR."""
    alpha = np.zeros_like(C)
    left = total
    for i in range(C.shape[0]):
        if left <= 0:
            break
        alpha[i] = min(C[i], left)
        left -= alpha[i]
    return alpha


def dual_problem(formulation, y, upper, nu, epsilon):
    """LIBSVM's dual of one formulation: (p, signs, alpha0, C, nu_variant, regression).

    nu_variant: the two equality constraints of LIBSVM's Solver_NU (nu-SVC, nu-SVR)."""
    n = y.shape[0]
    uniform = n > 0 and bool(np.all(upper == upper[0]))
    if formulation in ("c_svc", "nu_svc"):
        signs = np.where(y > 0, 1, -1).astype(np.int8)
        if formulation == "c_svc":
            return -np.ones(n), signs, np.zeros(n), upper, False, False
        pos, neg = upper[signs > 0], upper[signs < 0]
        # LIBSVM's bound is 1: nu l / 2 per class
        half = nu * n * upper[0] / 2 if uniform else nu * upper.sum() / 2
        # an infeasible nu is refused for the whole problem (fastsvm.training.trainer, as svm_check_parameter);
        # a subproblem (a probability fold) is solved from what the greedy start reaches, as LIBSVM
        alpha = np.zeros(n)
        alpha[signs > 0] = greedy_fill(pos, half)
        alpha[signs < 0] = greedy_fill(neg, half)
        return np.zeros(n), signs, alpha, upper, True, False
    if formulation == "one_class":
        total = nu * n * upper[0] if uniform else nu * upper.sum()
        return np.zeros(n), np.ones(n, dtype=np.int8), greedy_fill(upper, total), upper, False, False
    signs = np.concatenate([np.ones(n, dtype=np.int8), -np.ones(n, dtype=np.int8)])
    C = np.concatenate([upper, upper])
    if formulation == "epsilon_svr":
        p = np.concatenate([epsilon - y, epsilon + y])
        return p, signs, np.zeros(2 * n), C, False, True
    # nu_svr: LIBSVM starts a = a* with sum C nu l / 2 each
    half = upper[0] * nu * n / 2 if uniform else nu * upper.sum() / 2
    a = greedy_fill(upper, half)
    return np.concatenate([-y, y]), signs, np.concatenate([a, a]), C, True, True


def _mean_or_middle(values, free, ub_set, lb_set):
    """LIBSVM's rho of one constraint: the mean of ``values`` over the free variables, else the
    middle of [max over lb_set, min over ub_set]."""
    if np.any(free):
        return float(values[free].sum() / np.count_nonzero(free))
    return float((np.min(values[ub_set], initial=np.inf) + np.max(values[lb_set], initial=-np.inf)) / 2)


def libsvm_rho(alpha, G, signs, C, nu_variant):
    """(rho, r) of LIBSVM's calculate_rho from a solution alpha and its gradient G; r, the nu
    formulations' margin scale, is None for the others."""
    upper = alpha >= C
    lower = (alpha <= 0) & ~upper
    free = ~(upper | lower)
    positive = signs > 0
    if not nu_variant:
        ub_set = (upper & ~positive) | (lower & positive)
        lb_set = (upper & positive) | (lower & ~positive)
        return _mean_or_middle(signs * G, free, ub_set, lb_set), None
    r1, r2 = (_mean_or_middle(G[side], free[side], lower[side], upper[side]) for side in (positive, ~positive))
    return (r1 - r2) / 2, (r1 + r2) / 2


def scattered(alpha, keep, n_all, regression):
    """A dual over the rows with C_i > 0 (``keep``, None: all) as one over all n_all rows."""
    if keep is None:
        return alpha
    full = np.zeros(2 * n_all if regression else n_all)
    full[np.concatenate([keep, keep + n_all]) if regression else keep] = alpha
    return full


@dataclass(frozen=True)
class KeptRows:
    """The rows a reduced dual keeps (those with C_i > 0; None: all) of the n_all rows of the
    subproblem: what scatters its alpha back and maps a warm point onto it."""
    rows: np.ndarray | None
    n_all: int


def libsvm_statistics(formulation, alpha, rho, r, obj, *, signs, upper, kept):
    """LIBSVM's post-processing of a solved dual: the Solution fields coef (over all kept.n_all rows),
    rho, objective, margin_scale, nu and n_bounded_sv, with nu-SVC rescaled as LIBSVM does."""
    n = upper.shape[0]
    uniform = bool(np.all(upper == upper[0]))
    bound, nu, margin_scale = upper, None, None
    if formulation == "c_svc":
        coef = alpha * signs
        if uniform:  # LIBSVM prints nu only when Cp == Cn
            nu = alpha.sum() / (upper[0] * n)
    elif formulation == "nu_svc":
        if not (np.isfinite(r) and r > 0):
            raise DegenerateProblemError("nu-SVC: degenerate problem (the margin scale r is not positive)")
        coef = alpha * (signs / r)  # LIBSVM rescales to the C-SVC with C = 1/r
        rho, obj = rho / r, obj / (r * r)
        bound = upper / r
        margin_scale = r
    elif formulation == "one_class":
        coef = alpha
    else:
        coef = alpha[:n] - alpha[n:]
        if formulation == "epsilon_svr":
            nu = np.abs(coef).sum() / (upper[0] * n if uniform else upper.sum())
        else:
            margin_scale = r
    nz = coef != 0
    return dict(coef=scattered(coef, kept.rows, kept.n_all, False), rho=float(rho), objective=float(obj),
                margin_scale=margin_scale, nu=None if nu is None else float(nu),
                n_bounded_sv=int(np.count_nonzero(nz & (np.abs(coef) >= bound))))


def max_violation(alpha, G, signs, C, nu_variant):
    """LIBSVM's stopping measure at (alpha, G): the maximal violating pair's gap m(alpha) - M(alpha),
    max over I_up of -s_i G_i minus min over I_low (per sign for the nu formulations); -inf when
    nothing can move."""
    key = -signs * G
    positive = signs > 0
    up = np.where(positive, alpha < C, alpha > 0)
    low = np.where(positive, alpha > 0, alpha < C)

    def gap(mask):
        return np.max(key[up & mask], initial=-np.inf) - np.min(key[low & mask], initial=np.inf)

    if nu_variant:
        return float(max(gap(positive), gap(~positive)))
    return float(gap(np.ones_like(positive)))


def warm_alpha(warm, C, signs, alpha0, fixed_sums, *, regression, kept):
    """A feasible start for SMO's dual (bounds C, signs, cold start alpha0) from ``warm``, a
    Solution of the same rows at other bounds, or None (SMO then starts cold): a missing or
    wrong-size point, or one the new box cannot be made feasible from.

    ``regression``: the 2n variables (a, a*) over the n rows; ``kept``: the KeptRows, those with
    C_i > 0 of the n_all the warm point covers. A variable at its bound stays at its
    new bound. The nu formulations and one-class (``fixed_sums``) are homogeneous in the
    bounds (box and sums scale together), so the free variables scale by C_i / C_i_old too;
    for C-SVC and epsilon-SVR they scale by (C_i / C_i_old)^theta, theta the share of the
    support vectors at their bound: the optimum scales with C when all are bounded and stays
    put when none is (a hard margin reached). Each sign's sum is then brought to what the
    equality constraints ask: the cold start's sums (``fixed_sums``), else the smaller of the
    two (y^T alpha = 0)."""
    if warm is None or warm.dual is None or warm.upper is None:
        return None
    keep, n_all = kept.rows, kept.n_all
    old_alpha = np.asarray(warm.dual, dtype=np.float64).ravel()
    old_upper = np.asarray(warm.upper, dtype=np.float64).ravel()
    if old_upper.shape != (n_all,) or old_alpha.shape != ((2 if regression else 1) * n_all,):
        return None
    if keep is not None:
        old_upper = old_upper[keep]
        old_alpha = old_alpha[np.concatenate([keep, keep + n_all]) if regression else keep]
    if regression:
        old_upper = np.concatenate([old_upper, old_upper])
    if not (np.all(np.isfinite(old_alpha)) and np.all(old_upper >= 0)):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = C / old_upper
    scaled = np.isfinite(ratio) & (old_upper > 0)
    ratio = np.where(scaled, ratio, 1.0)
    bounded = scaled & (old_alpha >= old_upper)
    theta = 1.0 if fixed_sums else np.count_nonzero(bounded) / max(np.count_nonzero(old_alpha > 0), 1)
    alpha = np.clip(np.where(bounded, C, old_alpha * ratio ** theta), 0.0, C)
    groups = [group for group in (signs > 0, signs < 0) if group.any()]
    sums = [alpha[group].sum() for group in groups]
    targets = [alpha0[group].sum() for group in groups] if fixed_sums else [min(sums)] * len(groups)
    for group, total, target in zip(groups, sums, targets):
        moved = _moved_to_sum(alpha[group], C[group], total, target)
        if moved is None:
            return None
        alpha[group] = moved
    return alpha


def _moved_to_sum(alpha, C, total, target):
    """alpha (sum ``total``, within [0, C]) with its sum moved to ``target`` inside the box:
    lowered by scaling its free entries down (all of them when those hold too little), or
    raised by moving each toward its bound in proportion to its room; None when the box
    cannot hold ``target``."""
    if abs(total - target) <= SUM_RTOL * max(abs(total), abs(target)):
        return alpha
    if total > target:
        free = alpha < C
        free_total = alpha[free].sum()
        if free_total < total - target:
            return alpha * (target / total)
        return np.where(free, alpha * ((free_total - (total - target)) / free_total), alpha)
    room = C - alpha
    room_total = room.sum()
    if not (np.isfinite(room_total) and room_total >= target - total):
        return None
    return np.minimum(alpha + room * ((target - total) / room_total), C)
