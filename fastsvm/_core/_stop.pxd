# The poll of a long loop without the GIL: the caller's stop flag (set from another thread on
# Ctrl-C) or, in the main thread, a pending signal.
from cpython.exc cimport PyErr_CheckSignals


cdef inline bint stop_requested(const int[::1] stop) noexcept nogil:
    """True when the caller's stop flag is set or (main thread) Ctrl-C is pending."""
    if stop[0] != 0:
        return True
    with gil:
        try:
            PyErr_CheckSignals()
        except KeyboardInterrupt:
            return True
    return False
