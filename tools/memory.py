"""Resident memory of this process for the benchmarks (Linux /proc): the current RSS and its
high-water mark, which can be reset to the current RSS before the measured work."""
from fastsvm.heap import release_free_memory


def rss_and_peak():
    """(current RSS, peak RSS since the last reset) in bytes, from /proc/self/status."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def reset_peak():
    """Start the peak counter from the current RSS; returns that RSS.

    Free heap pages are first given back to the system: pages an earlier run (a warm-up) freed
    but left resident would otherwise serve the measured run without counting, for one side
    more than the other (fastsvm trims after several subproblems, LIBSVM never)."""
    release_free_memory()
    with open("/proc/self/clear_refs", "w") as f:   # "5" resets VmHWM (Linux >= 4.0)
        f.write("5")
    return rss_and_peak()[0]
