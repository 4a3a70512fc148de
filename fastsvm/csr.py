"""The one sparse layout every kernel reads: scipy CSR, float64 values, int32 sorted indices."""
import numpy as np
import scipy.sparse as sp

from .errors import FastSVMError

_INT32_MAX = np.iinfo(np.int32).max


def to_csr(X, copy=False):
    """Return X as a canonical CSR matrix (float64 data, int32 indices/indptr, sorted, no
    duplicates, finite). Dense arrays are converted; CSR input that is already canonical is
    returned without copying unless ``copy``."""
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
    if not np.all(np.isfinite(X.data)):
        raise FastSVMError("input contains NaN or infinity")
    for name in ("data", "indices", "indptr"):
        arr = getattr(X, name)
        if not arr.flags.c_contiguous:
            setattr(X, name, np.ascontiguousarray(arr))
    return X
