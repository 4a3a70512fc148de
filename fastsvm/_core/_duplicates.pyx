"""Equal rows of a CSR matrix, found by hashing: the groups a solver may merge.

Rows are equal when they store the same columns with the same values and carry the same keys
(label, bound, ...). A row's hash sums a multiply-xorshift hash of each stored (column, value)
pair and mixes in its keys; an open-addressing table of the rows met so far then holds the
first row of each group, and a row whose hash meets one already there is compared in full, so
unequal rows are never merged. A value stored as an explicit zero, or a -0.0 against a 0.0, only
keeps two rows apart: a merge missed, never a wrong one. O(nnz) expected.
"""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
import numpy as np

from ..errors import FastSVMError


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 30
    h *= <uint64_t>0xbf58476d1ce4e5b9
    h ^= h >> 27
    h *= <uint64_t>0x94d049bb133111eb
    h ^= h >> 31
    return h


cdef inline uint64_t _bits(double v) noexcept nogil:
    cdef uint64_t u
    memcpy(&u, &v, sizeof(double))
    return u


cdef inline uint64_t _pair(int column, double value) noexcept nogil:
    # the xorshift after the multiply makes the sum over a row's pairs nonlinear (binary data:
    # the same value in every column)
    cdef uint64_t t = (_bits(value) + <uint64_t>column) * <uint64_t>0xbf58476d1ce4e5b9
    return t ^ (t >> 31)


cdef inline bint _equal(const double* data, const int* indices, const int* indptr, const double* keys,
                        int n_keys, int i, int j) noexcept nogil:
    cdef int k, lo_i = indptr[i], lo_j = indptr[j], n = indptr[i + 1] - indptr[i]
    if indptr[j + 1] - lo_j != n:
        return False
    for k in range(n_keys):
        if keys[i * n_keys + k] != keys[j * n_keys + k]:
            return False
    for k in range(n):
        if indices[lo_i + k] != indices[lo_j + k] or data[lo_i + k] != data[lo_j + k]:
            return False
    return True


cdef extern from *:
    void __builtin_prefetch(const void* p) nogil


cdef int PREFETCH_AHEAD = 16   # rows: the table is larger than the caches on large sets


def equal_row_groups(X, const double[:, ::1] keys, double[::1] sq_norms=None):
    """(group, first): group[i] numbers the class of rows equal to row i (same stored columns
    and values, same keys[i, :]) by first appearance, and first[g] is the first row of group g
    (increasing). X: canonical CSR (sorted indices); keys: one row per row of X. Given
    `sq_norms` (one per row), |x_i|^2 goes there from the same pass over the values."""
    cdef const double[::1] data = X.data
    cdef const int[::1] indices = X.indices
    cdef const int[::1] indptr = X.indptr
    cdef int m = X.shape[0], n_keys = keys.shape[1]
    if keys.shape[0] != m:
        raise FastSVMError("equal_row_groups: one row of keys per row of X")
    if sq_norms is not None and sq_norms.shape[0] != m:
        raise FastSVMError("equal_row_groups: one squared norm per row of X")
    cdef double* sq_ptr = &sq_norms[0] if sq_norms is not None and m > 0 else NULL
    cdef double sq
    group_arr = np.empty(m, dtype=np.int32)
    cdef int[::1] group = group_arr
    first_arr = np.empty(m, dtype=np.int32)
    cdef int[::1] first_row = first_arr
    cdef uint64_t[::1] hashes = np.empty(max(m, 1), dtype=np.uint64)
    cdef Py_ssize_t size = 16
    while size < 2 * m:
        size *= 2
    cdef int[::1] table = np.empty(size, dtype=np.int32)    # the first row of a group; -1: empty
    cdef Py_ssize_t mask = size - 1, s
    cdef int i, k, first, n_groups = 0
    cdef uint64_t h
    cdef const double* keys_ptr = &keys[0, 0] if m > 0 and n_keys > 0 else NULL
    cdef const double* data_ptr = &data[0] if data.shape[0] > 0 else NULL
    cdef const int* indices_ptr = &indices[0] if indices.shape[0] > 0 else NULL
    with nogil:
        for s in range(size):
            table[s] = -1
        for i in range(m):
            # a sum over the stored (column, value) pairs, each hashed alone (no chain of
            # dependent multiplies along the row), the keys and the row mixed in after
            h = <uint64_t>(indptr[i + 1] - indptr[i])
            sq = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                h += _pair(indices[k], data[k])
                sq += data[k] * data[k]
            if sq_ptr != NULL:
                sq_ptr[i] = sq
            for k in range(n_keys):
                h = _mix(h) + _bits(keys[i, k])
            hashes[i] = _mix(h)
        for i in range(m):
            if i + PREFETCH_AHEAD < m:
                __builtin_prefetch(&table[hashes[i + PREFETCH_AHEAD] & <uint64_t>mask])
            h = hashes[i]
            s = <Py_ssize_t>(h & <uint64_t>mask)
            while True:
                first = table[s]
                if first < 0:           # a new group
                    table[s] = i
                    group[i] = n_groups
                    first_row[n_groups] = i
                    n_groups += 1
                    break
                if hashes[first] == h and _equal(data_ptr, indices_ptr, &indptr[0], keys_ptr, n_keys, i, first):
                    group[i] = group[first]
                    break
                s = (s + 1) & mask
    return group_arr, first_arr[:n_groups].copy()
