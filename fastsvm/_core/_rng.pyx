"""The one seeded generator (_rng.pxd) for sweeps driven from Python: successive visiting orders,
each a Fisher-Yates shuffle of the last, as the DCD kernel draws its own."""
from libc.stdint cimport uint64_t
import numpy as np

from ._rng cimport rng_state, shuffle


cdef class VisitingOrder:
    """VisitingOrder(seed, n): next() gives the next order of 0..n-1 (int32). The array is the
    generator's own, shuffled again by the next call: read it before then."""

    cdef uint64_t state
    cdef int[::1] order

    def __cinit__(self, seed, int n):
        if n < 0:
            raise ValueError("n must be >= 0")
        self.state = rng_state(seed)
        self.order = np.arange(n, dtype=np.int32)

    def next(self):
        cdef int n = <int>self.order.shape[0]
        if n > 1:
            with nogil:
                shuffle(&self.order[0], n, &self.state)
        return np.asarray(self.order)
