"""Running the measured work: peak resident memory (Linux /proc), timed medians, and fresh
subprocesses that answer with one JSON line."""
import json
import os
import statistics
import subprocess
import time

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


def reset_peak(*, release_free=True):
    """Start the peak counter from the current RSS; returns that RSS.

    With release_free, free heap pages are first given back to the system: pages an earlier run
    (a warm-up) freed but left resident would otherwise serve the measured run without counting,
    for one side more than the other (fastsvm trims after several subproblems, LIBSVM never)."""
    if release_free:
        release_free_memory()
    with open("/proc/self/clear_refs", "w") as f:   # "5" resets VmHWM (Linux >= 4.0)
        f.write("5")
    return rss_and_peak()[0]


def median(values):
    """The median of the values that are not None, or None when there are none."""
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def timed(run, repeat):
    """(median seconds, result of the last run, extra peak MB of the last run) of repeat calls of run()."""
    seconds = []
    for _ in range(repeat):
        base = reset_peak()
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
        peak = (rss_and_peak()[1] - base) / 2**20
    return statistics.median(seconds), result, peak


def one_thread_env(threads=1):
    """This process's environment with OMP_NUM_THREADS set (read when a library loads OpenMP)."""
    return {**os.environ, "OMP_NUM_THREADS": str(threads)}


def last_json_line(stdout):
    """The JSON record a child prints last."""
    return json.loads(stdout.strip().splitlines()[-1])


def run_json(cmd, *, env=None, cwd=None, timeout=None, check=True):
    """Run cmd in a fresh process and return the JSON record it prints last.

    Raises subprocess.TimeoutExpired after timeout seconds and, with check,
    subprocess.CalledProcessError when it fails."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout,
                         env=env if env is not None else one_thread_env(), cwd=cwd)
    return last_json_line(out.stdout)
