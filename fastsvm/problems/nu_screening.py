"""SRBO safe screening for a path of increasing nu (Yang et al. 2024; docs/algorithms.md §6, corrected),
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

from .._core._screening import smallest_first, srbo_screen


def greedy_fill(G, alpha, mass, upper):
    """delta >= 0 with sum mass that fills alpha's room (upper - alpha) on the smallest G first
    (ties by position; _core._screening.smallest_first)."""
    delta = np.empty_like(alpha)
    smallest_first(G, upper - alpha, mass, delta)
    return delta


def order_rank(l, nu):
    """ceil(l - nu l), the rounding of nu l guarded (0.57 * 100 is 56.99999...)."""
    target = l - nu * l
    nearest = round(target)
    return int(nearest if abs(target - nearest) <= 1e-9 * max(l, 1) else math.ceil(target))


def screen(G0, Qdelta, delta, alpha0, sqnorm, *, nu1):
    """(zero, one, radius2): the samples SRBO proves to be 0 and 1 at nu1, from a0's gradient G0 =
    Q a0, Q delta and |z_i|^2 = Q_ii; radius2 = r_safe. One nogil pass (_core._screening)."""
    zero, one = np.empty(alpha0.size, dtype=bool), np.empty(alpha0.size, dtype=bool)
    r, _, _ = srbo_screen(G0, Qdelta, delta, alpha0, sqnorm, k=order_rank(alpha0.size, nu1), zero=zero.view(np.uint8),
                          one=one.view(np.uint8))
    return zero, one, r


def moved_to_sum(alpha, G, target, upper, free=None):
    """alpha in [0, upper] with sum target: mass added on the smallest G, or taken from the largest;
    only where ``free`` (a mask; None: everywhere)."""
    alpha = alpha.copy()
    excess = float(alpha.sum()) - target
    if excess != 0:
        have = upper - alpha if excess < 0 else alpha
        if free is not None:
            have = np.where(free, have, 0.0)
        moved = np.empty_like(alpha)
        smallest_first(G if excess < 0 else -G, have, abs(excess), moved)
        alpha += moved if excess < 0 else -moved
    return alpha
