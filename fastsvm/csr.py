"""The two row layouts the kernels read: scipy CSR (float64 values, int32 sorted indices), which
every solver reads, and a dense C-ordered float64 array, which the blocked kernel solver and
prediction read as it is (its kernel blocks through BLAS, docs/blocked_solver.md)."""
import numpy as np
import scipy.sparse as sp

from .errors import FastSVMError

_INT32_MAX = np.iinfo(np.int32).max


def to_csr(X, copy=False):
    """Return X as a canonical CSR matrix (float64 data, int32 indices/indptr, sorted, no
    duplicates, finite). Dense arrays are converted; other canonical sparse input is wrapped
    without copying unless ``copy``, and a canonical csr_matrix is returned itself (a C path
    passes its rows here once per C)."""
    if copy or not _canonical(X):
        X = _canonicalized(X, copy)
    if not np.all(np.isfinite(X.data)):
        raise FastSVMError("input contains NaN or infinity")
    return X


def to_rows(X):
    """X in one of the two canonical layouts: sparse input as to_csr makes it, dense input as a
    C-ordered float64 array (a copy only when X is not one already), finite."""
    if sp.issparse(X):
        return to_csr(X)
    X = np.asarray(X)
    if X.ndim != 2:
        raise FastSVMError(f"expected a 2-D array, got {X.ndim}-D")
    if X.dtype != np.float64 or not X.flags.c_contiguous:
        X = np.ascontiguousarray(X, dtype=np.float64)
    if max(X.shape) > _INT32_MAX:
        raise FastSVMError("matrices with 2**31 or more rows or columns are not supported")
    if not np.all(np.isfinite(X)):
        raise FastSVMError("input contains NaN or infinity")
    return X


def is_dense(X):
    """Whether X (to_rows's output) is the dense layout."""
    return isinstance(X, np.ndarray)


def _canonicalized(X, copy):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=copy)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise FastSVMError(f"expected a 2-D array, got {X.ndim}-D")
        X = sp.csr_matrix(X)
    if X.nnz > _INT32_MAX or max(X.shape) > _INT32_MAX:
        raise FastSVMError("matrices with 2**31 or more rows, columns or stored values are not supported")
    if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
        X = sp.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape, copy=False
        )
    if not X.has_canonical_format:
        X.sum_duplicates()
    for name in ("data", "indices", "indptr"):
        arr = getattr(X, name)
        if not arr.flags.c_contiguous:
            setattr(X, name, np.ascontiguousarray(arr))
    return X


def _canonical(X):
    return (type(X) is sp.csr_matrix and X.dtype == np.float64 and X.indices.dtype == np.int32
            and X.indptr.dtype == np.int32 and X.nnz <= _INT32_MAX and max(X.shape) <= _INT32_MAX
            and all(getattr(X, name).flags.c_contiguous for name in ("data", "indices", "indptr"))
            and X.has_canonical_format)


class RowSelection:
    """Rows of a canonical matrix (CSR or dense, to_rows), named instead of copied.

    A trained model's support vectors are rows of its training data; LIBSVM's model points into
    its problem the same way, so that training never copies them. Prediction and the model file
    read CSR rows in place (the rows of a dense base are made CSR once, when first walked);
    ``tocsr()`` makes the copy for everything else (and pickling stores that copy, not the whole
    training data).
    """

    def __init__(self, base, rows):
        self.base = to_rows(base)
        self.rows = np.ascontiguousarray(rows, dtype=np.int32).reshape(-1)
        if self.rows.size and (self.rows.min() < 0 or self.rows.max() >= self.base.shape[0]):
            raise FastSVMError("selected rows out of range")
        self._csr = None

    @property
    def shape(self):
        return (self.rows.size, self.base.shape[1])

    def spans(self):
        """(start, stop) of each selected row in base.data and base.indices (a CSR base)."""
        return self.base.indptr[self.rows], self.base.indptr[self.rows + 1]

    def tocsr(self):
        if not is_dense(self.base):
            return self.base[self.rows]
        if self._csr is None:
            self._csr = to_csr(self.base[self.rows])
        return self._csr

    def toarray(self):
        return self.tocsr().toarray()

    def __getitem__(self, key):
        return self.tocsr()[key]

    def __reduce__(self):
        return (to_csr, (self.tocsr(),))


# values gathered between two looks at the stop flag (a short copy, so Ctrl-C is seen promptly)
GATHER_BLOCK_VALUES = 1 << 20


def take_rows(X, rows, stop=None):
    """X[rows] for a canonical X (a dense one: numpy's copy); a CSR X is gathered a block of rows
    at a time so that a set stop flag (stop[0], set on Ctrl-C) ends a large gather within
    milliseconds (KeyboardInterrupt)."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    if is_dense(X):
        return X[rows]
    lengths = np.diff(X.indptr)[rows]
    total = int(lengths.sum())
    if stop is None or total <= GATHER_BLOCK_VALUES:
        return X[rows]
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    data, indices = np.empty(total), np.empty(total, dtype=np.int32)
    starts = np.searchsorted(indptr, np.arange(0, total, GATHER_BLOCK_VALUES), side="right") - 1
    for lo, hi in zip(starts, np.append(starts[1:], rows.shape[0])):
        if stop[0]:
            raise KeyboardInterrupt
        block = X[rows[lo:hi]]
        data[indptr[lo]:indptr[hi]] = block.data
        indices[indptr[lo]:indptr[hi]] = block.indices
    out = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(rows.shape[0], X.shape[1]), copy=False)
    out.has_canonical_format = True   # the rows of a canonical matrix, in order
    return out


def row_spans(X):
    """(matrix whose data/indices hold the rows, start and stop of each row in them) for a CSR
    matrix or a RowSelection: how the model file and prediction walk support vectors in place."""
    if isinstance(X, RowSelection) and not is_dense(X.base):
        return (X.base, *X.spans())
    X = X.tocsr() if isinstance(X, RowSelection) else to_csr(X)
    return X, X.indptr[:-1], X.indptr[1:]


def dense_as_csr(A):
    """A dense C-contiguous matrix as CSR sharing its values (every entry stored): no scan for
    zeros, no copy of the n x r values (explicit features handed to a linear solver)."""
    n, r = A.shape
    if n * r >= _INT32_MAX:
        raise FastSVMError(f"{n} x {r} features exceed 2**31 stored values; use fewer landmarks")
    A = np.ascontiguousarray(A, dtype=np.float64)
    indices = np.tile(np.arange(r, dtype=np.int32), n)
    indptr = np.arange(0, n * r + 1, r, dtype=np.int32) if r else np.zeros(n + 1, dtype=np.int32)
    return sp.csr_matrix((A.reshape(-1), indices, indptr), shape=(n, r), copy=False)
