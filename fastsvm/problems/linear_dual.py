"""The dual point of a linear primal solver made feasible for its certificate: the SVM dual's
y^T alpha = 0 (the free bias) restored by moving alpha inside its box, with v = A^T alpha kept
up to date at the cost of the rows moved (fastsvm._core._margins.LabeledRows)."""
import numpy as np


def balance_labels(rows, alpha, v, excess, upper=None):
    """alpha and v = A^T alpha (its first rows.n_cols entries) moved in place to y^T alpha = 0,
    given excess = y^T alpha: the excess taken from the class that has it, from its rows strictly
    inside the box 0 < alpha < upper first (upper None: no upper bound) -- few near an optimum, so
    v's update is cheap -- else from all its rows with alpha > 0, in proportion to alpha. In two
    halves (balance_sums, balance_rows) so that rows split in blocks are balanced as one."""
    sign = np.sign(excess)
    inside, side = balance_sums(rows, alpha, sign, upper)
    use_inside = inside >= abs(excess)
    ratio = abs(excess) / (inside if use_inside else side)
    v -= balance_rows(rows, alpha, sign, upper, use_inside, ratio=ratio)[:v.size]


def balance_team(team, v, excess):
    """balance_labels over a team's blocks (fastsvm.problems.blocks): alpha, spread over them, moved
    there to y^T alpha = 0 by their methods balance_sums and balance (the two halves below on their
    rows); v minus A^T of the move returned (v itself is not changed)."""
    sign = np.sign(excess)
    inside, side = team.sum("balance_sums", sign)
    use_inside = bool(inside >= abs(excess))
    ratio = abs(excess) / (inside if use_inside else side)
    return v - team.sum("balance", sign, use_inside, ratio)[:v.size]


def balance_sums(rows, alpha, sign, upper=None):
    """(sum of alpha over the rows of class ``sign`` strictly inside the box, over all its rows
    with alpha > 0), as numpy floats."""
    side = rows.labels == sign
    inside = side & (alpha > 0) & ((alpha < upper) if upper is not None else True)
    return alpha[inside].sum(), alpha[side & (alpha > 0)].sum()


def balance_rows(rows, alpha, sign, upper, use_inside, *, ratio):
    """alpha moved in place by ratio * alpha on the rows balance_sums chose (inside the box, or all
    with alpha > 0): A^T of the move, n_weights entries."""
    side = rows.labels == sign
    take = side & (alpha > 0)
    if use_inside and upper is not None:
        take &= alpha < upper
    moved = np.flatnonzero(take)
    delta = alpha[moved] * ratio
    alpha[moved] -= delta
    return rows.rows_rmatvec(moved.astype(np.int64), delta, np.empty(rows.n_weights))
