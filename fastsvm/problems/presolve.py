"""Presolve of the SVM dual: equal samples merged into one scaled sample."""
from dataclasses import dataclass

import numpy as np

from .._core._duplicates import equal_row_groups
from ..csr import take_rows


@dataclass
class EqualSamples:
    """Equal samples (same features, label or target, bound) of a subproblem merged into one row
    each: k copies of a sample become one row of Z, a, c and bounds scaled by sqrt(k). In the
    variable u = sqrt(k) x_copy the merged dual is the original restricted to equal copies, with
    the same Euclidean metric, objective, projections and eta; a method that never leaves that
    subspace (SSsNAL: from x = 0 every copy has the same y and so the same Pi_K(y)) takes the same
    steps over fewer rows."""

    group: np.ndarray     # the merged sample of each original sample
    scale: np.ndarray     # sqrt(copies) of each merged sample

    def row_weight(self, m):
        """sqrt(copies) of each of the m rows of Z (two per sample for epsilon-SVR)."""
        return np.tile(self.scale, m // self.scale.shape[0])

    def expand(self, x):
        """The dual of the original problem: every copy takes x / sqrt(k) of its merged row."""
        per_copy = x.reshape(-1, self.scale.shape[0]) / self.scale
        return np.ascontiguousarray(per_copy[:, self.group].ravel())

    def merged_point(self, x):
        """A point of the original dual in the merged variables: u = sqrt(k) x_copy with x_copy
        the copies' mean (one variable per sample, C-SVC)."""
        return np.bincount(self.group, weights=x, minlength=self.scale.shape[0]) / self.scale


@dataclass
class Merged:
    """What merge_equal_samples gives: the kept samples, their |x_i|^2, the merge (None: no
    merge) and the presolve's work in passes over the original X."""

    X: object
    y: np.ndarray
    upper: np.ndarray
    sq_norms: np.ndarray
    merged: EqualSamples | None
    passes: float


def merge_equal_samples(X, y, upper, min_share, stop=None):
    """Equal samples of (X, y, upper) merged (EqualSamples) when that removes at least `min_share`
    of X's stored values; else the samples as they are (with their squared norms, found on the
    way: one pass). ``stop``: the caller's stop flag, polled while the kept rows are gathered."""
    n, nnz = X.shape[0], max(X.nnz, 1)
    sq_norms = np.empty(n)
    group, first = equal_row_groups(X, np.ascontiguousarray(np.column_stack([y, upper])), sq_norms)
    passes = 1.0
    kept = int(np.sum(np.diff(X.indptr)[first]))
    if first.shape[0] < n and kept <= (1.0 - min_share) * X.nnz:
        scale = np.sqrt(np.bincount(group, minlength=first.shape[0]).astype(np.float64))
        return Merged(take_rows(X, first, stop), y[first], upper[first], sq_norms[first],
                      EqualSamples(group=group, scale=scale), passes + kept / nnz)
    return Merged(X, y, upper, sq_norms, None, passes)
