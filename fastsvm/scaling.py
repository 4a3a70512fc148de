"""svm-scale's feature scaling: per-feature [min, max] -> [lower, upper], optional target scaling,
and its scaling-parameter file (the -s / -r file)."""
import os
import tempfile
from dataclasses import dataclass

import numpy as np

from .errors import FileFormatError


@dataclass
class Scaling:
    """feature_min/feature_max are indexed by LIBSVM feature index (entry 0 unused); a feature
    whose min equals its max is dropped from the output, as svm-scale does."""

    lower: float
    upper: float
    feature_min: np.ndarray
    feature_max: np.ndarray
    y_range: tuple | None = None  # (y_lower, y_upper, y_min, y_max)

    @property
    def max_index(self):
        return len(self.feature_min) - 1


def fit_scaling(X, y, lower=-1.0, upper=1.0, y_limits=None):
    """Feature ranges over all rows, a missing entry counting as 0 (svm-scale's pass 2)."""
    X = X.tocsc()
    n, p = X.shape
    fmin = np.zeros(p + 1)
    fmax = np.zeros(p + 1)
    for j in range(p):
        values = X.data[X.indptr[j]:X.indptr[j + 1]]
        if values.size == 0:
            continue
        lo, hi = values.min(), values.max()
        if values.size < n:  # some row lacks the feature: it is 0 there
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        fmin[j + 1], fmax[j + 1] = lo, hi
    y_range = None
    if y_limits is not None:
        y = np.asarray(y, dtype=np.float64)
        y_range = (float(y_limits[0]), float(y_limits[1]), float(y.min()), float(y.max()))
    return Scaling(lower, upper, fmin, fmax, y_range)


def scale_values(values, vmin, vmax, lower, upper):
    """svm-scale's map, exact at both ends."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = lower + (upper - lower) * (values - vmin) / (vmax - vmin)
    out = np.where(values == vmin, lower, out)
    return np.where(values == vmax, upper, out)


def scaled_lines(X, y, scaling):
    """The text svm-scale writes, row by row: '%.17g ' target, then 'i:%g ' for every nonzero
    scaled value of the features 1..max_index that vary."""
    n, p = X.shape
    width = scaling.max_index
    keep = np.flatnonzero(scaling.feature_min[1:] != scaling.feature_max[1:])  # 0-based columns
    fmin, fmax = scaling.feature_min[keep + 1], scaling.feature_max[keep + 1]
    targets = np.asarray(y, dtype=np.float64)
    if scaling.y_range is not None:
        y_lower, y_upper, y_min, y_max = scaling.y_range
        targets = scale_values(targets, y_min, y_max, y_lower, y_upper)
    X = X.tocsr()
    if X.shape[1] < width:
        X.resize((n, width))
    block = max(1, 2_000_000 // max(1, keep.size))
    for start in range(0, n, block):
        dense = X[start:start + block][:, keep].toarray()
        scaled = scale_values(dense, fmin, fmax, scaling.lower, scaling.upper)
        for r in range(dense.shape[0]):
            nz = np.flatnonzero(scaled[r])
            items = "".join(f"{i}:{v:g} " for i, v in zip(keep[nz] + 1, scaled[r, nz]))
            yield f"{targets[start + r]:.17g} {items}"


def save_scaling(scaling, path):
    """svm-scale -s: 'y' block when the target is scaled, then 'x', limits and one line per varying
    feature; written atomically."""
    lines = []
    if scaling.y_range is not None:
        y_lower, y_upper, y_min, y_max = scaling.y_range
        lines += ["y", f"{y_lower:.17g} {y_upper:.17g}", f"{y_min:.17g} {y_max:.17g}"]
    lines += ["x", f"{scaling.lower:.17g} {scaling.upper:.17g}"]
    for i in range(1, scaling.max_index + 1):
        if scaling.feature_min[i] != scaling.feature_max[i]:
            lines.append(f"{i} {scaling.feature_min[i]:.17g} {scaling.feature_max[i]:.17g}")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".fastsvm-scale-")
    try:
        with os.fdopen(fd, "w") as out:
            out.write("".join(line + "\n" for line in lines))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


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
    max_index = max(entries, default=0)
    fmin, fmax = np.zeros(max_index + 1), np.zeros(max_index + 1)
    for index, (lo, hi) in entries.items():
        fmin[index], fmax[index] = lo, hi
    return Scaling(lower, upper, fmin, fmax, y_range)


def restored_for(saved, fitted):
    """Scaling from a parameter file, widened to the data's features. A feature the file does not
    list is dropped (svm-scale warns when it varies in the data); returns (scaling, dropped)."""
    width = max(saved.max_index, fitted.max_index)
    fmin, fmax = np.zeros(width + 1), np.zeros(width + 1)
    fmin[:saved.max_index + 1], fmax[:saved.max_index + 1] = saved.feature_min, saved.feature_max
    listed = np.zeros(width + 1, dtype=bool)
    listed[:saved.max_index + 1] = saved.feature_min != saved.feature_max
    data_min, data_max = np.zeros(width + 1), np.zeros(width + 1)
    data_min[:fitted.max_index + 1], data_max[:fitted.max_index + 1] = fitted.feature_min, fitted.feature_max
    dropped = [i for i in range(1, width + 1) if not listed[i] and data_min[i] != data_max[i]]
    return Scaling(saved.lower, saved.upper, fmin, fmax, saved.y_range), dropped
