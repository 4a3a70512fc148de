# How a nogil kernel's call ended, and how its long loops poll for a stop: one set of codes and
# one polling helper for every kernel (fastsvm._core._status exposes Status to Python).
from cpython.exc cimport PyErr_CheckSignals


cpdef enum Status:
    CONVERGED = 0     # the stopping measure is below the tolerance
    CHUNK_DONE = 1    # this call's work budget is used up: call again
    MAX_ITER = 2      # the iteration cap is reached (the result is usable)
    INTERRUPTED = 3   # the stop flag was set, or Ctrl-C
    NONFINITE = 4     # a step became NaN or infinite (data or C far too large)
    NO_MEMORY = 5     # a buffer could not be allocated
    BREAKDOWN = 6     # an iterative solve lost its descent (e.g. CG on an indefinite operator)


cdef extern from *:
    """
    #include <time.h>
    /* The stop flag is written by another thread: read through a volatile pointer, the load is
       never hoisted out of a loop. */
    static inline int fastsvm_read_flag(const int *flag) { return *(const volatile int *)flag; }
    /* monotonic milliseconds from the coarse clock: a few nanoseconds (vDSO, no system call) */
    static inline long long fastsvm_coarse_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    """
    int read_flag "fastsvm_read_flag"(const int* flag) noexcept nogil
    long long coarse_ms "fastsvm_coarse_ms"() noexcept nogil


cdef inline bint stop_flag_set(const int[::1] stop) noexcept nogil:
    """True when the caller's stop flag (an int32[1] another thread sets on Ctrl-C) is set."""
    return read_flag(&stop[0]) != 0


cdef inline bint stop_requested(const int[::1] stop) noexcept nogil:
    """True when the caller's stop flag is set or (main thread) Ctrl-C is pending."""
    if read_flag(&stop[0]) != 0:
        return True
    with gil:
        try:
            PyErr_CheckSignals()
        except KeyboardInterrupt:
            return True
    return False


cdef inline bint poll_stop(const int[::1] stop, bint check_signals, long long* checked_ms) noexcept nogil:
    """The stop flag, and (check_signals: the main thread) Ctrl-C at most every 20 ms of polls, by
    time, not by count: an iteration's cost varies a thousandfold (a threaded scan on a busy machine
    waits for a descheduled thread)."""
    cdef long long now_ms
    if read_flag(&stop[0]) != 0:
        return True
    if check_signals:
        now_ms = coarse_ms()
        if now_ms - checked_ms[0] >= 20:
            checked_ms[0] = now_ms
            return stop_requested(stop)   # reported as INTERRUPTED; Python raises
    return False
