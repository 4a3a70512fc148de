"""Independent tasks in threads within one memory budget: the trainer's subproblems side by side.

A task is a callable ``task(budget, n_threads) -> (result, held)``: ``budget`` is the memory it
may hold (MiB, as -m), ``n_threads`` the threads it may use itself, and ``held`` the bytes it
held at most (None when unknown). The scheduler knows nothing else of what the tasks do.
"""
import numpy as np

from ..heap import release_free_memory
from ..parallel import effective_n_jobs, run_tasks

# the largest task's peak, as a fraction of the most it could hold (a pair's whole kernel matrix),
# above which the other tasks run one at a time (with every thread) rather than side by side
MOST_OF_ITS_MATRIX = 0.5


def run_within_budget(tasks, n_jobs, budget, stop, most_bytes=None, *, checks_signals=False):
    """The tasks' results, in task order, run in up to ``n_jobs`` threads (as
    fastsvm.parallel.effective_n_jobs reads it) with ``budget`` MiB between them.

    LIBSVM spends its -m budget on the one problem it solves at a time; so does a single task
    here. With ``most_bytes`` (per task, the bytes it would hold at most: a kernel cache holding
    its whole matrix) and several threads, the largest task runs first, alone, with every thread
    and the whole budget; the others then run side by side and share what it held (or, when it
    did not say, the most it could hold), or the budget when that is less: each adds its own
    working state to what it holds. When the largest held more than MOST_OF_ITS_MATRIX of its
    most, the others would each hold as much: they run one at a time with every thread instead.

    ``checks_signals``: the tasks notice Ctrl-C themselves, so a task running alone runs on the
    calling thread (a worker's own stack and heap would be a large share of a small task); elsewhere
    Ctrl-C sets ``stop[0]`` (fastsvm.parallel.run_tasks). After several tasks the heap's free
    pages are given back to the system."""
    n_jobs = effective_n_jobs(n_jobs)

    def run(order, budget, side_by_side):
        running = max(1, min(n_jobs if side_by_side else 1, len(order)))
        inner = max(1, n_jobs // running)
        if len(order) == 1 and checks_signals:
            return [tasks[order[0]](budget, inner)]
        return run_tasks([(lambda k=k: tasks[k](budget / running, inner)) for k in order], running, stop)

    results = [None] * len(tasks)
    order = list(range(len(tasks)))
    side_by_side = True
    if most_bytes and n_jobs > 1 and len(tasks) > 1:
        first = int(np.argmax(most_bytes))
        order.remove(first)
        results[first], = run([first], budget, False)
        held = results[first][1]
        whole = max(most_bytes)
        budget = min(budget, (whole if held is None else held) / 2**20)
        side_by_side = held is None or held <= MOST_OF_ITS_MATRIX * whole
    for k, result in zip(order, run(order, budget, side_by_side)):
        results[k] = result
    if len(tasks) > 1:
        # the freed pages, kept for reuse while the tasks ran, would stay resident amid the
        # tasks' results; after one task they are left for the next to reuse (as LIBSVM's
        # caches are): given back, every page would fault in again, a large share of a small fit
        release_free_memory()
    return [result for result, _ in results]
