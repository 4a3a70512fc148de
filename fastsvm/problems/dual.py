"""The dual (P) of docs/algorithms.md §0 for C-SVC and epsilon-SVR, solver-neutral:

    min f(x) = 1/2 x^T Q x + c^T x  over  K = {a^T x = d, l <= x <= u},
    Q_rs = a_r a_s k(x_src(r), x_src(s)),

variable r on sample src(r) with sign a_r (C-SVC: one variable per sample, a = y; epsilon-SVR: two,
a = (1, -1)). Q is the solver's business (a kernel, or Z Z^T with Z = diag(a) X[src]); what is
built here is c, a, the bounds and src, and what every dual solver computes from them: the
objective, the gradient, the stopping measure eta and the primal objective at a bias."""
import math
from dataclasses import dataclass

import numpy as np

from .._core._knapsack import KnapsackSet
from ..errors import FastSVMError, ParameterError
from .vector import dot, norm

CHUNK_WORK = 1 << 23  # stored values a coordinate sweep visits per call: a call is short, so Ctrl-C is seen promptly


@dataclass
class SvmDual:
    """(P): c, K = {a^T x = d, l <= x <= u} (a KnapsackSet) and source[r], the sample of variable r."""

    c: np.ndarray
    K: KnapsackSet
    source: np.ndarray    # int32
    n: int                # samples

    @property
    def m(self):
        return self.c.shape[0]

    def restricted(self, rows, d):
        """(P) over the variables `rows` (increasing) with the others fixed: a^T x over the rows
        must equal d (the constraint's d less the others' part)."""
        K = self.K
        K_rows = KnapsackSet(K.a[rows], d, K.lower[rows], K.upper[rows], n_threads=K.n_threads)
        return SvmDual(c=self.c[rows], K=K_rows, source=self.source[rows], n=self.n)

    def objective(self, x, quad):
        """f(x) given quad = 1/2 x^T Q x (the solver knows it its own way)."""
        return quad + dot(self.c, x)

    def row_coef(self, x):
        """beta with Q x = a o (K beta)[source]: beta_i = sum over the variables r on sample i of a_r x_r."""
        return np.bincount(self.source, weights=self.K.a * x, minlength=self.n)

    def gradient_from_rows(self, h):
        """grad f = Q x + c from h = K beta(x) (one value per sample)."""
        return self.K.a * h[self.source] + self.c

    def eta(self, x, grad, hint=math.nan):
        """(eta, b) at x: kkt_residual on this problem's K."""
        return kkt_residual(x, grad, self.K, hint)

    def primal_objective(self, quad, grad, b):
        """quad + sum_r u_r max(0, -(grad_r + b a_r)): the C-SVC / epsilon-SVR primal (hinge /
        epsilon-insensitive loss) at the expansion x with bias b, quad = 1/2 x^T Q x = 1/2 |w|^2,
        grad = Q x + c, the lower bounds being 0."""
        slack = np.maximum(0.0, -(grad + b * self.K.a))
        return quad + dot(self.K.upper, slack)


class OverDual:
    """A solver's own view of an SvmDual held as its `dual` attribute: c, K and source read
    through, the rest the solver's."""

    @property
    def c(self):
        return self.dual.c

    @property
    def K(self):
        return self.dual.K

    @property
    def source(self):
        return self.dual.source


def kkt_residual(x, grad, K, hint=math.nan):
    """eta(x) = |x - Pi_K(x - grad)| / (1 + |x| + |grad|) (Niu et al. 2019 eq. 4.1) for grad = grad f(x),
    and the multiplier lam of that projection, which is the bias b at a solution.

    K is a KnapsackSet; hint, a guess of b, speeds up the projection. eta = 0 exactly at the
    solutions of (P)."""
    x = np.asarray(x, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    projected, lam, _ = K.project(x - grad, hint)
    eta = norm(x - projected) / (1.0 + norm(x) + norm(grad))
    return eta, lam


def check_formulation(formulation, y, epsilon=0.0, solver="ssnal"):
    """A ParameterError / FastSVMError unless (P) can be built: C-SVC with labels +1/-1, or
    epsilon-SVR with epsilon >= 0."""
    if formulation == "c_svc":
        if not np.all(np.abs(y) == 1.0):
            raise FastSVMError(f"{solver} c_svc: labels must be +1 or -1")
    elif formulation == "epsilon_svr":
        if not epsilon >= 0:
            raise ParameterError("p < 0")
    else:
        raise ParameterError(f"{solver} solves c_svc and epsilon_svr, not {formulation}")


def svm_dual(formulation, y, upper, epsilon=0.0, scale=None, *, n_threads=1, solver="ssnal"):
    """(P) of a C-SVC (labels +1/-1) or epsilon-SVR (targets y, tube epsilon) subproblem with
    per-sample bounds `upper`. `scale` (sqrt(copies) of merged samples, problems.presolve) scales
    each sample's c, a and bound; None: ones. `solver` names the caller in errors."""
    n = y.shape[0]
    check_formulation(formulation, y, epsilon, solver)
    if scale is None:
        scale = np.ones(n)
    rows = np.arange(n, dtype=np.int32)
    if formulation == "c_svc":
        source, sign, c, bound = rows, y * scale, -scale, upper * scale
    else:
        source = np.concatenate([rows, rows])
        sign = np.concatenate([scale, -scale])
        c = np.concatenate([(epsilon - y) * scale, (epsilon + y) * scale])
        bound = np.concatenate([upper * scale, upper * scale])
    K = KnapsackSet(sign, 0.0, np.zeros_like(bound), bound, n_threads=n_threads)
    return SvmDual(c=np.ascontiguousarray(c), K=K, source=source, n=n)


def coordinate_dual_objective(alpha, w_full, diag):
    """1/2 alpha^T (Q + D) alpha - e^T alpha of LIBLINEAR's C-SVC dual (bias as a feature), with
    Q alpha read off w = sum_i alpha_i y_i x_i: what dual coordinate descent maximises the negative of."""
    return 0.5 * dot(w_full, w_full) + 0.5 * dot(diag * alpha, alpha) - float(alpha.sum())
