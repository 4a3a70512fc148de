"""The dual point of a linear primal solver made feasible for its certificate: the SVM dual's
y^T alpha = 0 (the free bias) restored by moving alpha inside its box, with v = A^T alpha kept
up to date at the cost of the rows moved (fastsvm._core._margins.LabeledRows)."""
import numpy as np


def balance_labels(rows, alpha, v, excess, upper=None):
    """alpha and v = A^T alpha (its first rows.n_cols entries) moved in place to y^T alpha = 0,
    given excess = y^T alpha: the excess taken from the class that has it, from its rows strictly
    inside the box 0 < alpha < upper first (upper None: no upper bound) -- few near an optimum, so
    v's update is cheap -- else from all its rows with alpha > 0, in proportion to alpha."""
    y = rows.labels
    side = y == np.sign(excess)
    inside = side & (alpha > 0) & ((alpha < upper) if upper is not None else True)
    take = inside if alpha[inside].sum() >= abs(excess) else side & (alpha > 0)
    moved = np.flatnonzero(take)
    delta = alpha[moved] * (abs(excess) / alpha[moved].sum())
    alpha[moved] -= delta
    v -= rows.rows_rmatvec(moved.astype(np.int64), delta, np.empty(rows.n_weights))[:v.size]
