"""Warm starts along a path of bounds: the previous problem's dual point carried into the box of
the next one."""
import numpy as np


def usable(previous, n_samples):
    """Whether `previous` (Subproblem.warm) is a solution of n_samples samples whose dual point and
    bounds scaled_dual can read."""
    upper = previous.upper
    return (previous.dual is not None and upper is not None and np.shape(upper) == (n_samples,)
            and np.shape(previous.dual)[0] in (n_samples, 2 * n_samples))


def scaled_dual(upper, previous):
    """The dual point of `previous` (a Solution of the same subproblem at other per-sample bounds,
    Solution.upper) scaled by the ratio of the bounds, u_new / u_old per sample: a variable at a
    bound stays at it, and a^T x = 0 holds again for a uniform ratio. The caller projects it onto
    the new K."""
    upper_old = np.asarray(previous.upper, dtype=np.float64)
    ratio = np.divide(upper, upper_old, out=np.zeros_like(upper_old), where=upper_old > 0)
    x = np.asarray(previous.dual, dtype=np.float64)
    copies = x.shape[0] // upper_old.shape[0]      # 1 (C-SVC) or 2 (epsilon-SVR)
    return np.ascontiguousarray((x.reshape(copies, -1) * ratio).reshape(-1))


def path_start(qp, upper, previous):
    """(x, passes): a start for qp (problem.DualQP of a subproblem with per-sample bounds `upper`)
    from `previous` (scaled_dual), merged as qp merged the samples."""
    x = scaled_dual(upper, previous)
    if qp.merged is not None:
        x = np.concatenate([qp.merged.merged_point(part) for part in x.reshape(x.shape[0] // upper.shape[0], -1)])
    return np.ascontiguousarray(x, dtype=np.float64), 0.0
