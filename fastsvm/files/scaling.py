"""svm-scale's feature scaling: per-feature [min, max] -> [lower, upper], optional target scaling,
and its scaling-parameter file (the -s / -r file)."""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .atomic import atomic_output
from ..errors import FileFormatError


@dataclass
class Scaling:
    """Ranges of the features that occur: ``index`` holds their LIBSVM feature indices (int64,
    ascending), feature_min/feature_max one value per index. Only those are held, so a feature
    index of 2*10**9 costs one entry; a feature whose min equals its max is dropped from the
    output, as svm-scale does."""

    lower: float
    upper: float
    index: np.ndarray
    feature_min: np.ndarray
    feature_max: np.ndarray
    y_range: tuple | None = None  # (y_lower, y_upper, y_min, y_max)

    def varying(self):
        """(index, min, max) of the features whose min differs from their max."""
        keep = self.feature_min != self.feature_max
        return self.index[keep], self.feature_min[keep], self.feature_max[keep]


def fit_scaling(X, y, lower=-1.0, upper=1.0, y_limits=None):
    """Feature ranges over all rows, a missing entry counting as 0 (svm-scale's pass 2), taken
    over the stored values grouped by column."""
    X = X.tocsr()
    order = np.argsort(X.indices, kind="stable")
    columns, values = X.indices[order], X.data[order]
    index, first, counts = np.unique(columns, return_index=True, return_counts=True)
    fmin, fmax = np.zeros(index.size), np.zeros(index.size)
    if index.size:
        fmin, fmax = np.minimum.reduceat(values, first), np.maximum.reduceat(values, first)
        partial = counts < X.shape[0]  # some row lacks the feature: it is 0 there
        fmin[partial] = np.minimum(fmin[partial], 0.0)
        fmax[partial] = np.maximum(fmax[partial], 0.0)
    y_range = None
    if y_limits is not None:
        y = np.asarray(y, dtype=np.float64)
        y_range = (float(y_limits[0]), float(y_limits[1]), float(y.min()), float(y.max()))
    return Scaling(lower, upper, index.astype(np.int64) + 1, fmin, fmax, y_range)


def scale_values(values, vmin, vmax, lower, upper):
    """svm-scale's map, exact at both ends."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = lower + (upper - lower) * (values - vmin) / (vmax - vmin)
    out = np.where(values == vmin, lower, out)
    return np.where(values == vmax, upper, out)


def scaled_lines(X, y, scaling):
    """The text svm-scale writes, row by row: '%.17g ' target, then 'i:%g ' for every nonzero
    scaled value of the features that vary (in index order), worked a block of rows at a time
    over those features only."""
    n = X.shape[0]
    keep, fmin, fmax = scaling.varying()
    targets = np.asarray(y, dtype=np.float64)
    if scaling.y_range is not None:
        y_lower, y_upper, y_min, y_max = scaling.y_range
        targets = scale_values(targets, y_min, y_max, y_lower, y_upper)
    X = X.tocsr()
    # X's entries renumbered to their feature's position in keep; the other features' dropped
    position = np.searchsorted(keep, X.indices.astype(np.int64) + 1)
    hit = position < keep.size
    hit[hit] = keep[position[hit]] == X.indices[hit] + 1
    indptr = np.concatenate([[0], np.cumsum(hit)])[X.indptr]
    X = sp.csr_matrix((X.data[hit], position[hit], indptr), shape=(n, keep.size))
    block = max(1, 2_000_000 // max(1, keep.size))
    for start in range(0, n, block):
        dense = X[start:start + block].toarray()
        scaled = scale_values(dense, fmin, fmax, scaling.lower, scaling.upper)
        for r in range(dense.shape[0]):
            nz = np.flatnonzero(scaled[r])
            items = "".join(f"{i}:{v:g} " for i, v in zip(keep[nz], scaled[r, nz]))
            yield f"{targets[start + r]:.17g} {items}"


def save_scaling(scaling, path):
    """svm-scale -s: 'y' block when the target is scaled, then 'x', limits and one line per varying
    feature; written atomically."""
    lines = []
    if scaling.y_range is not None:
        y_lower, y_upper, y_min, y_max = scaling.y_range
        lines += ["y", f"{y_lower:.17g} {y_upper:.17g}", f"{y_min:.17g} {y_max:.17g}"]
    lines += ["x", f"{scaling.lower:.17g} {scaling.upper:.17g}"]
    lines += [f"{i} {lo:.17g} {hi:.17g}" for i, lo, hi in zip(*scaling.varying())]
    with atomic_output(path) as out:
        out.write("".join(line + "\n" for line in lines))


def load_scaling(path):
    """Read an svm-scale parameter file strictly (file:line on any malformed line)."""
    with open(path) as f:
        lines = f.read().splitlines()
    pos, y_range = 0, None

    def floats(k, count):
        parts = lines[k].split() if k < len(lines) else []
        try:
            values = [float(t) for t in parts]
        except ValueError:
            values = []
        if len(values) != count or not np.all(np.isfinite(values)):
            raise FileFormatError(path, k + 1, f"expected {count} numbers")
        return values

    if lines and lines[0].strip() == "y":
        y_range = tuple(floats(1, 2) + floats(2, 2))
        pos = 3
    if pos >= len(lines) or lines[pos].strip() != "x":
        raise FileFormatError(path, pos + 1, "expected 'x' (or 'y') section header")
    lower, upper = floats(pos + 1, 2)
    entries = {}
    for k in range(pos + 2, len(lines)):
        if not lines[k].strip():
            continue
        parts = lines[k].split()
        try:
            index = int(parts[0])
        except (ValueError, IndexError):
            raise FileFormatError(path, k + 1, "expected 'index min max'") from None
        if index < 1:
            raise FileFormatError(path, k + 1, f"feature index {index} < 1")
        entries[index] = floats(k, 3)[1:]
    index = np.array(sorted(entries), dtype=np.int64)
    ranges = np.array([entries[i] for i in index], dtype=np.float64).reshape(-1, 2)
    return Scaling(lower, upper, index, ranges[:, 0].copy(), ranges[:, 1].copy(), y_range)


def restored_for(saved, fitted):
    """Scaling from a parameter file for the data ``fitted`` describes. A feature the file does
    not list is dropped (svm-scale warns when it varies in the data); returns (scaling, dropped)."""
    dropped = np.setdiff1d(fitted.varying()[0], saved.varying()[0])
    return saved, [int(i) for i in dropped]
