"""Working over the columns that occur: a matrix whose largest feature index lies far beyond the
columns it holds (one value at index 2**31 - 2) is renumbered to its occurring columns, in
order, so that dense buffers of its width cost what the data holds, not what its largest
index names. The renumbering keeps the order of the columns, so every dot product and every
sum over a row's entries runs in the same order, with the same bits, as on the original."""
import numpy as np
import scipy.sparse as sp

# widths up to this are kept as they are: their dense buffers are small whatever the data
NARROW_WIDTH = 4096


def worth_compressing(width, n_occurring):
    """Whether a width is much larger than its occurring columns (a dense-ish matrix keeps its
    indices: renumbering it would save little and cost a copy of its indices)."""
    return width > NARROW_WIDTH and width > 2 * n_occurring + NARROW_WIDTH


def columns_to_keep(*matrices):
    """The sorted columns (int32) stored in any of the CSR matrices when their common width is
    far beyond them (work on those, renumbered in order), else None (keep the indices)."""
    width = max(M.shape[1] for M in matrices)
    if width <= NARROW_WIDTH:
        return None
    columns = np.unique(np.concatenate([np.unique(M.indices) for M in matrices])).astype(np.int32)
    return columns if worth_compressing(width, columns.size) else None


def compressed(X, columns):
    """X (canonical CSR) with column c renumbered to its position in ``columns`` (sorted, holding
    every column X uses); its values and row pointers are shared, not copied."""
    positions = np.searchsorted(columns, X.indices).astype(np.int32)
    return sp.csr_matrix((X.data, positions, X.indptr), shape=(X.shape[0], columns.shape[0]),
                         copy=False)


def scattered(W, columns, width):
    """Rows of W (dense 1-D/2-D or CSR) over the renumbered columns, back at their original
    columns ``columns`` of ``width``: a sparse CSR matrix, its zeros not stored."""
    W = sp.csr_matrix(W if sp.issparse(W) else np.atleast_2d(W), copy=True)
    W.eliminate_zeros()  # on the copy: W may share its arrays with training data
    return sp.csr_matrix((W.data, columns[W.indices], W.indptr), shape=(W.shape[0], width))


def first_columns(X, width):
    """X (canonical CSR) cut to its columns 0..width-1, without a buffer of X's own width."""
    if X.shape[1] <= width:
        return X
    keep = X.indices < width
    indptr = np.concatenate([[0], np.cumsum(keep, dtype=np.int32)])[X.indptr]
    return sp.csr_matrix((X.data[keep], X.indices[keep], indptr), shape=(X.shape[0], width))
