"""Independent tasks (one-vs-one pairs, CV folds) in threads, with Ctrl-C turned into a stop flag.

The solvers' nogil loops poll ``stop[0]``; the main thread only waits, so SIGINT reaches it, sets
the flag, and every worker returns within its polling interval.
"""
import functools
import os
import sys
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from threadpoolctl import ThreadpoolController


def effective_n_jobs(n_jobs):
    """None, 0 or negative: all cores available to this process (like scikit-learn's -1)."""
    try:
        n_cpu = len(os.sched_getaffinity(0))
    except AttributeError:
        n_cpu = os.cpu_count() or 1
    if n_jobs is None or n_jobs <= 0:
        return n_cpu
    return int(n_jobs)


def run_tasks(tasks, n_jobs, stop, on_done=None):
    """Run callables in up to n_jobs threads; return their results in task order.

    When a task raises, the tasks not yet started are dropped, the running ones finish, and the
    first exception in task order is re-raised (``stop`` is left alone: a caller may handle the
    error and go on). On Ctrl-C, ``stop[0]`` is set, the workers are awaited and
    KeyboardInterrupt is raised. ``on_done(k, result)``, when given, is called on the calling
    thread for each task in task order, as soon as it and every task before it are done (a
    caller reports progress with it); when it raises, the work stops as on Ctrl-C.
    """
    n_workers = max(1, min(effective_n_jobs(n_jobs), len(tasks)))
    pool = ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="fastsvm")
    futures = [pool.submit(task) for task in tasks]
    reported = 0
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
            if any(f.exception() is not None for f in done):
                break
            while on_done is not None and reported < len(futures) and futures[reported].done():
                on_done(reported, futures[reported].result())
                reported += 1
    except BaseException:
        stop[0] = 1
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True, cancel_futures=True)
    for f in futures:
        if not f.cancelled() and f.exception() is not None:
            raise f.exception()
    return [f.result() for f in futures]


@functools.lru_cache(maxsize=2)
def _blas_controller(scipy_linalg_loaded):
    # the inventory of loaded BLAS/OpenMP libraries (a scan of the process's shared objects,
    # kept, not repeated): numpy's OpenBLAS is loaded with fastsvm, scipy's with scipy.linalg, which may
    # come later (the inventory is taken again then)
    return ThreadpoolController()


def one_blas_thread():
    """A context in which BLAS/LAPACK calls run on the calling thread only.

    The solvers thread their own loops (-j / n_jobs); a threaded OpenBLAS call leaves its worker
    threads spinning for a while afterwards, and on a machine with as many cores as our threads
    they take cores from those loops."""
    return _blas_controller("scipy.linalg" in sys.modules).limit(limits=1, user_api="blas")
