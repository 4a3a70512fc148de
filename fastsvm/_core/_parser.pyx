"""LIBSVM/svmlight text -> CSR arrays, without the GIL.

The caller feeds chunks of whole lines. Each chunk is split at line boundaries into one sub-range
per thread; thread 0 appends straight to the result buffers, the others to their own buffers,
which are then appended in order, so the result does not depend on the thread count. Buffers come
from PyMem_RawMalloc/Realloc (seen by tracemalloc; glibc moves large blocks with mremap instead of
copying) and are handed to numpy without a copy, owned by a small object that frees them.

Grammar of a line (LIBSVM's, with svmlight's optional qid):
    [label [qid:N] [index:value]...] [# comment]
tokens separated by blanks (space, tab, CR, VT, FF). Numbers are parsed exactly like strtod
(bit-identical to Python's float()); NaN and infinity are refused.
"""
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport strtod
from libc.string cimport memchr, memcpy
cimport numpy as cnp

cnp.import_array()

cdef extern from "math.h" nogil:
    bint isinf(double x)

# Error codes reported by LineError (datafile.py turns them into messages).
cdef enum:
    OK = 0
    BAD_LABEL = 1          # label token is not a number
    NONFINITE_LABEL = 2
    MISSING_LABEL = 3      # line starts with index:value
    NOT_A_PAIR = 4         # feature token without ':'
    BAD_INDEX = 5
    NEGATIVE_INDEX = 6
    ZERO_INDEX = 7         # index 0 while indices are one-based
    INDEX_TOO_LARGE = 8    # beyond int32
    BAD_VALUE = 9
    NONFINITE_VALUE = 10
    OVERFLOW = 11          # a finite decimal beyond the double range (label or value)
    DUPLICATE_INDEX = 12
    BEYOND_N_FEATURES = 13
    BAD_QID = 14
    TOO_MANY_VALUES = 15   # more than 2**31 - 1 stored values: int32 indptr cannot hold them
    NO_MEMORY = 16

ERROR_CODES = {
    "bad_label": BAD_LABEL, "nonfinite_label": NONFINITE_LABEL, "missing_label": MISSING_LABEL,
    "not_a_pair": NOT_A_PAIR, "bad_index": BAD_INDEX, "negative_index": NEGATIVE_INDEX,
    "zero_index": ZERO_INDEX, "index_too_large": INDEX_TOO_LARGE, "bad_value": BAD_VALUE,
    "nonfinite_value": NONFINITE_VALUE, "overflow": OVERFLOW, "duplicate_index": DUPLICATE_INDEX,
    "beyond_n_features": BEYOND_N_FEATURES, "bad_qid": BAD_QID, "too_many_values": TOO_MANY_VALUES,
}
cdef enum:
    INDEX_MAX = 2147483646   # largest raw index: index + 1 columns must still fit in int32
MAX_INDEX = INDEX_MAX
cdef int64_t INT32_MAX = 2147483647
cdef uint64_t TWO_POW_53 = 9007199254740992ULL
cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                         1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


class LineError(Exception):
    """A line that does not parse: 1-based line number, error code, byte offset of the offending
    token in the buffer passed to Parser.parse, and a detail (the index, for index errors)."""

    def __init__(self, line, code, offset, detail):
        super().__init__(line, code, offset, detail)
        self.line, self.code, self.offset, self.detail = line, code, offset, detail


cdef struct Rows:
    # growable CSR pieces; indptr has n_rows + 1 entries, indptr[0] == 0
    double* data
    int* indices
    Py_ssize_t nnz
    Py_ssize_t nnz_cap
    int* indptr
    double* labels
    int64_t* qid          # NULL unless query ids are kept
    Py_ssize_t n_rows
    Py_ssize_t rows_cap


cdef struct Options:
    bint allow_zero       # index 0 is valid (zero_based True or "auto")
    int index_limit       # largest raw index accepted
    int limit_watch       # record the first line holding this raw index (-1: none)
    bint keep_qid


cdef struct Tally:
    # what one thread saw in its sub-range; lines are counted from the sub-range start (0-based)
    int64_t lines
    int min_index
    int max_index
    int64_t watch_line    # first line holding Options.limit_watch, -1 if none
    bint has_qid
    int error
    int64_t error_line
    Py_ssize_t error_offset
    int64_t error_detail
    bint sorted_rows      # a row's indices came unsorted and were sorted


# ---------------------------------------------------------------- buffers

cdef bint grow(void** ptr, Py_ssize_t* cap, Py_ssize_t need, size_t item) noexcept nogil:
    """Make room for `need` items, plus 1/16 slack: large blocks grow by mremap without
    copying, so growing often is cheap, and the capacity never overshoots the result by much."""
    cdef Py_ssize_t new_cap
    cdef void* p
    if need <= cap[0]:
        return True
    new_cap = need + need // 16 + 1024
    p = PyMem_RawRealloc(ptr[0], <size_t>new_cap * item)
    if p == NULL:
        return False
    ptr[0] = p
    cap[0] = new_cap
    return True


cdef int reserve_values(Rows* r, Py_ssize_t need) noexcept nogil:
    cdef Py_ssize_t cap
    if need <= r.nnz_cap:
        return OK
    if need > INT32_MAX:
        return TOO_MANY_VALUES
    cap = r.nnz_cap
    if not grow(<void**>&r.data, &cap, need, sizeof(double)):
        return NO_MEMORY
    cap = r.nnz_cap
    if not grow(<void**>&r.indices, &cap, need, sizeof(int)):
        return NO_MEMORY
    r.nnz_cap = cap
    return OK


cdef int reserve_rows(Rows* r, Py_ssize_t need, bint keep_qid) noexcept nogil:
    cdef Py_ssize_t cap
    if need <= r.rows_cap:
        return OK
    cap = r.rows_cap
    if not grow(<void**>&r.indptr, &cap, need + 1, sizeof(int)):
        return NO_MEMORY
    cap = r.rows_cap
    if not grow(<void**>&r.labels, &cap, need + 1, sizeof(double)):
        return NO_MEMORY
    if keep_qid:
        cap = r.rows_cap
        if not grow(<void**>&r.qid, &cap, need + 1, sizeof(int64_t)):
            return NO_MEMORY
    r.rows_cap = cap - 1
    return OK


cdef void free_rows(Rows* r) noexcept nogil:
    PyMem_RawFree(r.data)
    PyMem_RawFree(r.indices)
    PyMem_RawFree(r.indptr)
    PyMem_RawFree(r.labels)
    PyMem_RawFree(r.qid)
    r.data = NULL
    r.indices = NULL
    r.indptr = NULL
    r.labels = NULL
    r.qid = NULL
    r.nnz = r.nnz_cap = r.n_rows = r.rows_cap = 0


cdef int init_rows(Rows* r, bint keep_qid) noexcept nogil:
    """Empty, with indptr[0] = 0 and at least one slot in every array (so none is ever NULL)."""
    free_rows(r)
    if reserve_values(r, 1) != OK or reserve_rows(r, 1, keep_qid) != OK:
        return NO_MEMORY
    r.indptr[0] = 0
    return OK


cdef int append_rows(Rows* dst, const Rows* src, bint keep_qid) noexcept nogil:
    cdef Py_ssize_t i, base = dst.nnz
    cdef int status = reserve_values(dst, dst.nnz + src.nnz)
    if status == OK:
        status = reserve_rows(dst, dst.n_rows + src.n_rows, keep_qid)
    if status != OK:
        return status
    memcpy(dst.data + dst.nnz, src.data, src.nnz * sizeof(double))
    memcpy(dst.indices + dst.nnz, src.indices, src.nnz * sizeof(int))
    memcpy(dst.labels + dst.n_rows, src.labels, src.n_rows * sizeof(double))
    if keep_qid:
        memcpy(dst.qid + dst.n_rows, src.qid, src.n_rows * sizeof(int64_t))
    for i in range(1, src.n_rows + 1):
        dst.indptr[dst.n_rows + i] = <int>(base + src.indptr[i])
    dst.nnz += src.nnz
    dst.n_rows += src.n_rows
    return OK


# ---------------------------------------------------------------- tokens

cdef inline bint is_blank(char c) noexcept nogil:
    return c == c' ' or c == c'\t' or c == c'\r' or c == c'\v' or c == c'\f'


cdef inline bint ends_token(const char* p, const char* end) noexcept nogil:
    return p == end or is_blank(p[0]) or p[0] == c'#'


cdef inline bint is_digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef const char* token_end(const char* p, const char* end) noexcept nogil:
    while not ends_token(p, end):
        p += 1
    return p


cdef bint has_colon(const char* p, const char* end) noexcept nogil:
    return memchr(p, c':', token_end(p, end) - p) != NULL


cdef bint is_nonfinite_word(const char* p, const char* end) noexcept nogil:
    """inf, infinity or nan (any case, optional sign), which strtod and float() accept."""
    cdef const char* e = token_end(p, end)
    cdef Py_ssize_t n, i
    cdef int w
    cdef char c
    cdef const char* words[3]
    words[0] = b"inf"
    words[1] = b"infinity"
    words[2] = b"nan"
    if p < e and (p[0] == c'+' or p[0] == c'-'):
        p += 1
    n = e - p
    for w in range(3):
        for i in range(n + 1):
            if i == n:
                if words[w][i] == 0:
                    return True
                break
            c = p[i] | 0x20   # lower case
            if words[w][i] != c:
                break
    return False


cdef int parse_real(const char** pp, const char* end, double* out) noexcept nogil:
    """Parse a decimal number at pp[0] that must end the token; advance pp[0] past it.

    Plain decimals whose digits fit in 2**53 and whose exponent is within 10**+-22 are exact
    with one IEEE multiplication or division (Clinger's fast path); the rest go to strtod on a
    NUL-terminated copy. Either way the result is the correctly rounded double, as float()."""
    cdef const char* p = pp[0]
    cdef const char* start = p
    cdef bint negative = False, any_digit = False, long_mantissa = False, exp_negative = False
    cdef uint64_t m = 0
    cdef int n_sig = 0, exp10 = 0, e = 0, d
    cdef char small[64]
    cdef char* copy
    cdef char* stop
    cdef Py_ssize_t n
    cdef double v
    if p < end and (p[0] == c'-' or p[0] == c'+'):
        negative = p[0] == c'-'
        p += 1
    while p < end and is_digit(p[0]):
        any_digit = True
        d = p[0] - c'0'
        if n_sig < 19:
            m = m * 10 + d
            n_sig += m != 0
        else:
            long_mantissa = True
        p += 1
    if p < end and p[0] == c'.':
        p += 1
        while p < end and is_digit(p[0]):
            any_digit = True
            d = p[0] - c'0'
            if n_sig < 19:
                m = m * 10 + d
                n_sig += m != 0
                exp10 -= 1
            else:
                long_mantissa = True
            p += 1
    if not any_digit:
        return NONFINITE_VALUE if is_nonfinite_word(start, end) else BAD_VALUE
    if p < end and (p[0] == c'e' or p[0] == c'E'):
        p += 1
        if p < end and (p[0] == c'-' or p[0] == c'+'):
            exp_negative = p[0] == c'-'
            p += 1
        if not (p < end and is_digit(p[0])):
            return BAD_VALUE
        while p < end and is_digit(p[0]):
            if e < 100000:
                e = e * 10 + (p[0] - c'0')
            p += 1
        exp10 += -e if exp_negative else e
    if not ends_token(p, end):
        return BAD_VALUE
    pp[0] = p
    if not long_mantissa and m <= TWO_POW_53 and -22 <= exp10 <= 22:
        v = <double>m
        v = v * POW10[exp10] if exp10 >= 0 else v / POW10[-exp10]
        out[0] = -v if negative else v
        return OK
    n = p - start
    copy = &small[0]
    if n >= 64:
        copy = <char*>PyMem_RawMalloc(n + 1)
    if copy == NULL:
        return NO_MEMORY
    memcpy(copy, start, n)
    copy[n] = 0
    v = strtod(copy, &stop)
    if copy != &small[0]:
        PyMem_RawFree(copy)
    if stop != copy + n:   # only if the C locale's decimal point is not '.'
        return BAD_VALUE
    if isinf(v):
        return OVERFLOW
    out[0] = v
    return OK


cdef int parse_index(const char** pp, const char* end, int64_t* out) noexcept nogil:
    """[+]digits or -digits, stopping at the ':' (which the caller checks). Values beyond int32
    saturate (reported as too large); '-0' is 0."""
    cdef const char* p = pp[0]
    cdef bint negative = False
    cdef int64_t v = 0
    if p < end and (p[0] == c'-' or p[0] == c'+'):
        negative = p[0] == c'-'
        p += 1
    if not (p < end and is_digit(p[0])):
        return BAD_INDEX
    while p < end and is_digit(p[0]):
        if v <= INT32_MAX:
            v = v * 10 + (p[0] - c'0')
        p += 1
    pp[0] = p
    out[0] = -v if negative else v
    return OK


# ---------------------------------------------------------------- rows

cdef void sort_row(int* idx, double* val, Py_ssize_t n) noexcept nogil:
    """Sort a row by index: insertion sort for short rows, heapsort (no allocation) otherwise."""
    cdef Py_ssize_t i, j, root, child, end
    cdef int ti
    cdef double tv
    if n <= 32:
        for i in range(1, n):
            ti = idx[i]
            tv = val[i]
            j = i
            while j > 0 and idx[j - 1] > ti:
                idx[j] = idx[j - 1]
                val[j] = val[j - 1]
                j -= 1
            idx[j] = ti
            val[j] = tv
        return
    end = n
    i = n // 2
    while True:
        if i > 0:
            i -= 1
            root = i          # heapify phase
        else:
            end -= 1          # extraction phase: move the max to the end
            if end == 0:
                return
            ti = idx[end]
            idx[end] = idx[0]
            idx[0] = ti
            tv = val[end]
            val[end] = val[0]
            val[0] = tv
            root = 0
        while True:           # sift down
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and idx[child + 1] > idx[child]:
                child += 1
            if idx[root] >= idx[child]:
                break
            ti = idx[root]
            idx[root] = idx[child]
            idx[child] = ti
            tv = val[root]
            val[root] = val[child]
            val[child] = tv
            root = child


cdef int parse_qid(const char** pp, const char* end, int64_t* out) noexcept nogil:
    """qid:[+-]digits (int64), which must end the token."""
    cdef const char* p = pp[0] + 4
    cdef bint negative = False
    cdef uint64_t v = 0
    if p < end and (p[0] == c'-' or p[0] == c'+'):
        negative = p[0] == c'-'
        p += 1
    if not (p < end and is_digit(p[0])):
        return BAD_QID
    while p < end and is_digit(p[0]):
        v = v * 10 + <uint64_t>(p[0] - c'0')
        if v > <uint64_t>9223372036854775807ULL:
            return BAD_QID
        p += 1
    if not ends_token(p, end):
        return BAD_QID
    pp[0] = p
    out[0] = -<int64_t>v if negative else <int64_t>v
    return OK


cdef inline bint is_qid(const char* p, const char* end) noexcept nogil:
    return end - p >= 4 and p[0] == c'q' and p[1] == c'i' and p[2] == c'd' and p[3] == c':'


cdef int parse_line(const char* p, const char* end, Rows* r, const Options* opt, Tally* t,
                    const char** where) noexcept nogil:
    """One line [p, end) without its newline: append a row (nothing for a blank or comment
    line). On error, where[0] points at the offending token (the line start for row-level
    errors) and t.error_detail holds the index for index errors."""
    cdef const char* line_start
    cdef double label, value
    cdef int64_t index, qid = 0
    cdef Py_ssize_t row_start = r.nnz, k
    cdef int status, prev = -1
    cdef bint unsorted = False, seen_qid = False
    while p < end and is_blank(p[0]):
        p += 1
    if p == end or p[0] == c'#':
        return OK
    line_start = p
    where[0] = p
    status = parse_real(&p, end, &label)
    if status == BAD_VALUE:
        return MISSING_LABEL if has_colon(line_start, end) else BAD_LABEL
    if status != OK:
        return NONFINITE_LABEL if status == NONFINITE_VALUE else status
    while True:
        while p < end and is_blank(p[0]):
            p += 1
        if p == end or p[0] == c'#':
            break
        where[0] = p
        if not seen_qid and r.nnz == row_start and is_qid(p, end):   # one qid, before features
            status = parse_qid(&p, end, &qid)
            if status != OK:
                return status
            seen_qid = t.has_qid = True
            continue
        status = parse_index(&p, end, &index)
        if status != OK or p == end or p[0] != c':':
            return BAD_INDEX if has_colon(where[0], end) else NOT_A_PAIR
        t.error_detail = index
        if index < 0:
            return NEGATIVE_INDEX
        if index == 0 and not opt.allow_zero:
            return ZERO_INDEX
        if index > INDEX_MAX:
            return INDEX_TOO_LARGE
        if index > opt.index_limit:
            return BEYOND_N_FEATURES
        p += 1
        status = parse_real(&p, end, &value)
        if status != OK:
            return status
        if index == prev:
            return DUPLICATE_INDEX
        unsorted |= index < prev
        prev = <int>index
        if index == opt.limit_watch and t.watch_line < 0:
            t.watch_line = t.lines
        if r.nnz == r.nnz_cap:
            status = reserve_values(r, r.nnz + 1)
            if status != OK:
                return status
        r.indices[r.nnz] = <int>index
        r.data[r.nnz] = value
        r.nnz += 1
    if unsorted:
        t.sorted_rows = True
        sort_row(r.indices + row_start, r.data + row_start, r.nnz - row_start)
        for k in range(row_start + 1, r.nnz):
            if r.indices[k] == r.indices[k - 1]:
                t.error_detail = r.indices[k]
                where[0] = line_start
                return DUPLICATE_INDEX
    if r.nnz > row_start:
        t.min_index = min(t.min_index, r.indices[row_start])
        t.max_index = max(t.max_index, r.indices[r.nnz - 1])
    if r.n_rows == r.rows_cap:
        status = reserve_rows(r, r.n_rows + 1, opt.keep_qid)
        if status != OK:
            return status
    r.labels[r.n_rows] = label
    if opt.keep_qid:
        r.qid[r.n_rows] = qid
    r.n_rows += 1
    r.indptr[r.n_rows] = <int>r.nnz
    return OK


cdef void parse_range(const char* buf, Py_ssize_t begin, Py_ssize_t end, Rows* r,
                      const Options* opt, Tally* t) noexcept nogil:
    """Every line of buf[begin:end) (which ends after a newline, or at the end of the input)."""
    cdef const char* p = buf + begin
    cdef const char* stop = buf + end
    cdef const char* nl
    cdef const char* where = p
    cdef int status
    while p < stop:
        nl = <const char*>memchr(p, c'\n', stop - p)
        if nl == NULL:
            nl = stop
        status = parse_line(p, nl, r, opt, t, &where)
        if status != OK:
            t.error = status
            t.error_line = t.lines
            t.error_offset = where - buf
            return
        t.lines += 1
        p = nl + 1


cdef Py_ssize_t next_line(const char* buf, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    """Start of the first line beginning at or after pos (end if none)."""
    cdef const char* nl
    if pos <= 0:
        return 0
    if pos >= end:
        return end
    nl = <const char*>memchr(buf + pos - 1, c'\n', end - pos + 1)
    return end if nl == NULL else nl + 1 - buf


# ---------------------------------------------------------------- Python face

cdef class _RawBuffer:
    """Owns one PyMem_RawMalloc block; set as the base of the numpy array viewing it."""
    cdef void* ptr

    def __dealloc__(self):
        PyMem_RawFree(self.ptr)


cdef object hand_over(void** ptr, Py_ssize_t n, size_t item, int typenum):
    """A numpy array of the first n items of ptr[0], taking ownership (ptr[0] becomes NULL).
    The block is first shrunk to size, which glibc does in place."""
    cdef void* p = PyMem_RawRealloc(ptr[0], <size_t>max(n, 1) * item)
    cdef cnp.npy_intp dims = n
    cdef _RawBuffer owner = _RawBuffer.__new__(_RawBuffer)
    if p == NULL:
        p = ptr[0]
    ptr[0] = NULL
    owner.ptr = p
    arr = cnp.PyArray_SimpleNewFromData(1, &dims, typenum, p)
    cnp.set_array_base(arr, owner)
    return arr


cdef class ParsedRows:
    """A parse's arrays: data float64, indices int32 and indptr int32 (CSR), labels float64, and qid
    int64 or None."""
    cdef readonly object data, indices, indptr, labels, qid


cdef class Parser:
    """Accumulates the rows of one file, fed chunk by chunk.

    allow_zero: index 0 is accepted (zero_based True or "auto"); index_limit: largest raw index
    accepted (INDEX_MAX when n_features is not given); limit_watch: a raw index whose first line
    is recorded (-1: none; "auto" with n_features needs it once the base is known); keep_qid:
    store query ids; n_threads: threads per chunk.
    """
    cdef Rows rows
    cdef Rows* scratch       # one per extra thread
    cdef Tally* tallies
    cdef Options opt
    cdef int n_threads
    cdef readonly int64_t lines
    cdef readonly int min_index, max_index
    cdef readonly int64_t watch_line
    cdef readonly bint has_qid
    cdef readonly bint sorted_rows    # some row's indices were given unsorted (and sorted here)

    def __cinit__(self, *, bint allow_zero=True, int index_limit=INDEX_MAX, int limit_watch=-1,
                  bint keep_qid=False, int n_threads=1):
        cdef int i
        self.opt.allow_zero = allow_zero
        self.opt.index_limit = min(index_limit, INDEX_MAX)
        self.opt.limit_watch = limit_watch
        self.opt.keep_qid = keep_qid
        self.n_threads = min(max(1, n_threads), 64)
        self.min_index = INDEX_MAX + 1
        self.max_index = -1
        self.watch_line = -1
        self.scratch = <Rows*>PyMem_RawMalloc(self.n_threads * sizeof(Rows))
        self.tallies = <Tally*>PyMem_RawMalloc(self.n_threads * sizeof(Tally))
        if self.scratch == NULL or self.tallies == NULL:
            raise MemoryError()
        for i in range(self.n_threads):
            self.scratch[i] = Rows(NULL, NULL, 0, 0, NULL, NULL, NULL, 0, 0)
        if init_rows(&self.rows, keep_qid) != OK:
            raise MemoryError()

    def __dealloc__(self):
        self.free()
        PyMem_RawFree(self.scratch)
        PyMem_RawFree(self.tallies)

    def free(self):
        """Release every row buffer now (after an error the parser may outlive it in a
        traceback); the parser is empty afterwards."""
        cdef int i
        free_rows(&self.rows)
        if self.scratch != NULL:
            for i in range(self.n_threads):
                free_rows(&self.scratch[i])

    @property
    def n_rows(self):
        return self.rows.n_rows

    @property
    def nnz(self):
        return self.rows.nnz

    @property
    def nbytes(self):
        """Bytes of the arrays parsed so far."""
        return self.rows.nnz * (sizeof(double) + sizeof(int)) + self.rows.n_rows * (
            sizeof(double) + sizeof(int) + (sizeof(int64_t) if self.opt.keep_qid else 0))

    def parse(self, const unsigned char[::1] buf, Py_ssize_t begin, Py_ssize_t end, int n_threads=0):
        """Parse the whole lines in buf[begin:end) (the last one may lack its newline only at
        the end of the input) with n_threads threads (0: the parser's n_threads, which is also
        the most it uses). Raises LineError (line numbers continue across calls) or
        MemoryError; returns the number of lines read."""
        if not (0 <= begin <= end <= buf.shape[0]):
            raise ValueError("range outside the buffer")
        if self.rows.indptr == NULL:
            raise ValueError("the parser was freed or has handed over its result")
        if begin == end:
            return 0
        cdef const char* text = <const char*>&buf[0]
        cdef int t, status = OK
        cdef Py_ssize_t[65] bounds
        cdef Rows* target
        cdef Tally* tally
        cdef int64_t before = self.lines
        n_threads = min(self.n_threads if n_threads <= 0 else n_threads, self.n_threads, 64)
        n_threads = <int>min(n_threads, end - begin)
        with nogil:
            bounds[0] = begin
            for t in range(1, n_threads):
                bounds[t] = next_line(text, max(bounds[t - 1], begin + (end - begin) * t // n_threads), end)
            bounds[n_threads] = end
            for t in range(n_threads):
                self.tallies[t] = Tally(0, INDEX_MAX + 1, -1, -1, False, OK, 0, 0, 0, False)
                if t > 0:
                    self.scratch[t].nnz = 0
                    self.scratch[t].n_rows = 0
                    if self.scratch[t].indptr == NULL and status == OK:
                        status = init_rows(&self.scratch[t], self.opt.keep_qid)
            if status == OK:
                for t in prange(n_threads, num_threads=n_threads, schedule="static"):
                    target = &self.rows if t == 0 else &self.scratch[t]
                    parse_range(text, bounds[t], bounds[t + 1], target, &self.opt, &self.tallies[t])
                # merge in order: the first thread with an error has the earliest bad line
                for t in range(n_threads):
                    tally = &self.tallies[t]
                    if tally.error != OK:
                        break
                    if t > 0:
                        status = append_rows(&self.rows, &self.scratch[t], self.opt.keep_qid)
                        if status != OK:
                            break
                    self.min_index = min(self.min_index, tally.min_index)
                    self.max_index = max(self.max_index, tally.max_index)
                    if self.watch_line < 0 and tally.watch_line >= 0:
                        self.watch_line = self.lines + tally.watch_line + 1
                    self.has_qid |= tally.has_qid
                    self.sorted_rows |= tally.sorted_rows
                    self.lines += tally.lines
        if status == NO_MEMORY:
            raise MemoryError()
        if status != OK:
            raise LineError(self.lines + 1, status, -1, 0)
        for t in range(n_threads):
            tally = &self.tallies[t]
            if tally.error == NO_MEMORY:
                raise MemoryError()
            if tally.error != OK:
                raise LineError(self.lines + tally.error_line + 1, tally.error, tally.error_offset,
                                tally.error_detail)
        return self.lines - before

    def result(self):
        """The ParsedRows, each array taking over its buffer without a copy; the parser is empty
        afterwards."""
        cdef Rows* r = &self.rows
        cdef bint keep_qid = self.opt.keep_qid
        n_rows, nnz = r.n_rows, r.nnz
        data = hand_over(<void**>&r.data, nnz, sizeof(double), cnp.NPY_FLOAT64)
        indices = hand_over(<void**>&r.indices, nnz, sizeof(int), cnp.NPY_INT32)
        indptr = hand_over(<void**>&r.indptr, n_rows + 1, sizeof(int), cnp.NPY_INT32)
        labels = hand_over(<void**>&r.labels, n_rows, sizeof(double), cnp.NPY_FLOAT64)
        qid = hand_over(<void**>&r.qid, n_rows, sizeof(int64_t), cnp.NPY_INT64) if keep_qid else None
        free_rows(r)
        cdef ParsedRows out = ParsedRows.__new__(ParsedRows)
        out.data, out.indices, out.indptr, out.labels, out.qid = data, indices, indptr, labels, qid
        return out
