"""The C library's rand() as glibc computes it, to draw the folds LIBSVM draws.

LIBSVM shuffles its cross-validation rows (svm-train -v, and -b 1's internal 5 folds) with
rand() and never seeds it, so a fresh svm-train process draws srand(1)'s stream. glibc's rand()
is its TYPE_3 additive-feedback generator: 31 words from the seed by the LCG
w <- 16807 w mod (2^31 - 1), then r[i] = r[i - 31] + r[i - 3] mod 2^32, the first 310 sums
discarded, each output r >> 1. The state is a ring of the last 34 words.
"""
from libc.stdint cimport int32_t, int64_t, uint32_t
import numpy as np

cdef enum:
    LONG_LAG = 31
    SHORT_LAG = 3
    RING = 34  # the longest lag plus the short one: every word a sum needs is still held
    DISCARDED = 310  # glibc drops 10 x 31 outputs after seeding
    LCG_MULTIPLIER = 16807
    LCG_MODULUS = 2147483647  # 2^31 - 1
    # Schrage's method: LCG_MODULUS = LCG_MULTIPLIER * SCHRAGE_Q + SCHRAGE_R, no overflow in 32 bits
    SCHRAGE_Q = 127773
    SCHRAGE_R = 2836


cdef class CRand:
    """One rand() stream: ``CRand(seed)`` is the state after ``srand(seed)`` (seed 0 acts as 1,
    as in glibc; the default 1 is the stream of a process that never calls srand)."""

    cdef uint32_t ring[RING]
    cdef int next_slot  # where the next word goes; it replaces the word 34 places back

    def __init__(self, unsigned int seed=1):
        cdef int64_t word, hi, lo
        cdef int i
        if seed == 0:
            seed = 1
        word = <int32_t>seed  # glibc keeps the seed in a signed 32-bit word
        self.ring[0] = <uint32_t>word
        for i in range(1, LONG_LAG):
            # C division truncates toward zero, as glibc's does for a seed above 2^31
            hi = word // SCHRAGE_Q
            lo = word % SCHRAGE_Q
            word = LCG_MULTIPLIER * lo - SCHRAGE_R * hi
            if word < 0:
                word += LCG_MODULUS
            self.ring[i] = <uint32_t>word
        for i in range(LONG_LAG, RING):
            self.ring[i] = self.ring[i - LONG_LAG]
        self.next_slot = 0
        with nogil:
            self._skip(DISCARDED)

    cdef inline uint32_t _next(self) noexcept nogil:
        """One rand() value, 0 .. 2^31 - 1."""
        cdef int slot = self.next_slot
        # slot - 31 and slot - 3, modulo the ring
        cdef uint32_t word = (self.ring[(slot + RING - LONG_LAG) % RING]
                              + self.ring[(slot + RING - SHORT_LAG) % RING])
        self.ring[slot] = word
        self.next_slot = (slot + 1) % RING
        return word >> 1

    cdef void _skip(self, int64_t count) noexcept nogil:
        cdef int64_t _drawn
        for _drawn in range(count):
            self._next()

    cdef void _shuffle(self, int64_t[::1] rows) noexcept nogil:
        """LIBSVM's shuffle: for i = 0 .. n-1, swap rows[i] with rows[i + rand() % (n - i)]."""
        cdef int64_t n = rows.shape[0], i, j, held
        for i in range(n):
            j = i + self._next() % (n - i)
            held = rows[i]
            rows[i] = rows[j]
            rows[j] = held

    def draw(self, Py_ssize_t count):
        """The next ``count`` rand() values (int64)."""
        out = np.empty(count, dtype=np.int64)
        cdef int64_t[::1] values = out
        cdef Py_ssize_t k
        with nogil:
            for k in range(count):
                values[k] = self._next()
        return out

    def skip(self, Py_ssize_t count):
        """Consume ``count`` values, as a training that draws them would."""
        with nogil:
            self._skip(count)

    def permutation(self, rows):
        """A shuffled int64 copy of ``rows`` (an int n: of 0 .. n-1), drawn as LIBSVM shuffles
        (n values consumed); the interface of numpy's Generator.permutation."""
        out = (np.arange(rows, dtype=np.int64) if np.ndim(rows) == 0
               else np.array(rows, dtype=np.int64, copy=True))
        cdef int64_t[::1] view = out
        with nogil:
            self._shuffle(view)
        return out

    def copy(self):
        """An independent stream at the same position."""
        cdef CRand twin = CRand.__new__(CRand)
        twin.ring = self.ring
        twin.next_slot = self.next_slot
        return twin
