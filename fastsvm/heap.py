"""Giving the heap's free pages back to the system.

A solve frees its kernel cache and working arrays as small blocks scattered through the heap;
glibc keeps such pages resident until they are reused, so a one-vs-one run that holds every
pair's result would keep the resident size of its largest pair's cache for good. malloc_trim
returns them (Linux/glibc; elsewhere nothing is done).
"""
import ctypes
import sys


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim     # the C library the process already uses
    except (OSError, AttributeError):            # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release_free_memory():
    """Return the free pages of the C heap to the system, where the C library can."""
    if _TRIM is not None:
        _TRIM(0)
