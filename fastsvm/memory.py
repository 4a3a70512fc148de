"""The memory guard: a large request checked against what this process may use before it is made,
so that an impossible one is one line naming what was too large and the option that changes
it, not a MemoryError (or the kernel's OOM killer) after part of the work."""
import os
import resource

from ._core._cache import bytes_to_hold_all
from .errors import FastSVMError

MB = 1 << 20


def usable_bytes():
    """This machine's physical memory, or the process's address-space limit when lower."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    return physical if limit == resource.RLIM_INFINITY else min(physical, limit)


def check_request(n_bytes, what, hint):
    """Raise FastSVMError when ``what`` (n_bytes) exceeds usable_bytes(); ``hint`` names the
    option that changes it."""
    usable = usable_bytes()
    if n_bytes > usable:
        raise FastSVMError(f"{what} would need {n_bytes / MB:.0f} MB, more than the "
                           f"{usable / MB:.0f} MB this process may use; {hint}")


def check_kernel_cache(cache_size, n):
    """A kernel cache of -m cache_size MB over n positions: what it may grow to, its budget or
    all n columns, whichever is smaller."""
    check_request(min(cache_size * MB, bytes_to_hold_all(n)), f"the kernel cache (-m {cache_size:g})",
                  "lower -m")
