"""SRBO safe screening for a path of increasing nu (seed 004; ALGORITHMS.md section 6, corrected),
for  min 1/2 a^T Q a  s.t.  e^T a = nu l,  0 <= a <= 1  (LIBSVM's scale of the nu-SVM and one-class
duals, every bound 1), Q = Z Z^T.

From a0, solved at nu0, to nu1 > nu0: delta puts the missing mass on the smallest gradients, so
a0 + delta is feasible at nu1; the optimum's w1 = Z^T a1 then lies in the ball |w1 - c| <= sqrt(r),
c = w0 + Z^T delta / 2, r = a0^T Q delta + delta^T Q delta / 4, enlarged by a0's Frank-Wolfe gap
(a solver's a0 is not exact). Each d_i = z_i.w1 lies in [L_i, U_i] = z_i.c -+ sqrt(r) |z_i|; an
optimal rho is the ceil(l - nu1 l)-th largest d, so it lies between the same order statistic of
the L's and of the U's. L_i above the U's statistic: a_i = 0 at nu1; U_i below the L's: a_i = 1.
"""
import math

import numpy as np

from .vector import dot


def greedy_fill(G, alpha, mass, upper):
    """delta >= 0 with sum mass that fills alpha's room (upper - alpha) on the smallest G first
    (ties by position). Only the smallest few are sorted when their room holds the mass."""
    delta = np.zeros_like(alpha)
    room = upper - alpha
    order = None
    if G.size > 64:
        few = min(G.size - 1, 4 * int(np.ceil(mass / max(float(np.max(upper, initial=0.0)), 1e-300))) + 64)
        candidates = np.argpartition(G, few)[:few + 1]
        candidates = candidates[np.lexsort((candidates, G[candidates]))]
        if room[candidates].sum() >= mass and few < G.size - 1:
            last = G[candidates[-1]]
            if np.count_nonzero(G <= last) == candidates.size:    # no tie with the rows left out
                order = candidates
    if order is None:
        order = np.argsort(G, kind="stable")
    have = room[order]
    delta[order] = np.minimum(have, np.maximum(mass - (np.cumsum(have) - have), 0.0))
    return delta


def frank_wolfe_gap(G, alpha):
    """G.alpha - min {G.s : e^T s = e^T alpha, 0 <= s <= 1}: how far alpha is from optimal (>= 0).
    The minimum puts mass 1 on the floor(m) smallest G and the rest on the next (m = e^T alpha)."""
    mass = float(alpha.sum())
    whole = min(int(np.floor(mass)), G.size)
    smallest = np.partition(G, min(whole, G.size - 1))
    best = float(smallest[:whole].sum()) + ((mass - whole) * float(smallest[whole]) if whole < G.size else 0.0)
    return max(dot(G, alpha) - best, 0.0)


def order_rank(l, nu):
    """ceil(l - nu l), the rounding of nu l guarded (0.57 * 100 is 56.99999...)."""
    target = l - nu * l
    nearest = round(target)
    return int(nearest if abs(target - nearest) <= 1e-9 * max(l, 1) else math.ceil(target))


def kth_largest(values, k):
    """The k-th largest of values (k >= 1); -inf when k = 0 (no constraint), +inf past the end."""
    if k <= 0:
        return np.inf
    if k > values.size:
        return -np.inf
    return float(np.partition(values, values.size - k)[values.size - k])


def screen(G0, Qdelta, delta, alpha0, sqnorm, nu1):
    """(zero, one, radius2): the samples SRBO proves to be 0 and 1 at nu1, from a0's gradient G0 =
    Q a0, Q delta and |z_i|^2 = Q_ii; radius2 = r_safe."""
    l = alpha0.size
    r = dot(G0, delta) + 0.25 * dot(delta, Qdelta) + frank_wolfe_gap(G0, alpha0)
    radius = math.sqrt(max(r, 0.0))
    centre = G0 + 0.5 * Qdelta
    spread = radius * np.sqrt(np.maximum(sqnorm, 0.0))
    lower, upper = centre - spread, centre + spread
    k = order_rank(l, nu1)
    rho_up, rho_low = kth_largest(upper, k), kth_largest(lower, k)
    return lower > rho_up, upper < rho_low, max(r, 0.0)


def moved_to_sum(alpha, G, target, upper):
    """alpha in [0, upper] with sum target: mass added on the smallest G, or taken from the largest."""
    alpha = alpha.copy()
    excess = float(alpha.sum()) - target
    if excess < 0:
        alpha += greedy_fill(G, alpha, -excess, upper)
    elif excess > 0:
        order = np.argsort(-G, kind="stable")
        have = alpha[order]
        alpha[order] = have - np.minimum(have, np.maximum(excess - (np.cumsum(have) - have), 0.0))
    return alpha
