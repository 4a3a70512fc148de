"""fastsvm.training.schedule: tasks side by side within one budget, checked with stand-in tasks that record
what they were given (the same schedule through SMO's caches: test_smo_pairs)."""
import threading

import numpy as np
import pytest

from fastsvm.training.schedule import MOST_OF_ITS_MATRIX, run_within_budget

MB = 2**20


def recording_tasks(held):
    """Tasks that return their own position and held[k] bytes, recording (k, budget, threads,
    on the main thread) as they start."""
    calls = []
    lock = threading.Lock()

    def task(k, budget, n_threads):
        with lock:
            calls.append((k, budget, n_threads, threading.current_thread() is threading.main_thread()))
        return f"result {k}", held[k]

    return [lambda budget, n_threads, k=k: task(k, budget, n_threads) for k in range(len(held))], calls


@pytest.mark.parametrize("fraction", [0.25, 0.75])
def test_the_largest_runs_first_alone_and_the_others_share_what_it_held(fraction):
    most = [100 * MB, 400 * MB, 400 * MB, 50 * MB]          # the first of the largest: task 1
    held = [MB, fraction * 400 * MB, MB, MB]
    tasks, calls = recording_tasks(held)
    results = run_within_budget(tasks, 2, 1000.0, np.zeros(1, dtype=np.int32), most)
    assert results == [f"result {k}" for k in range(4)]
    assert calls[0][:3] == (1, 1000.0, 2)                   # alone: the whole budget, every thread
    shared = fraction * 400                                  # what it held, in MiB
    side_by_side = fraction <= MOST_OF_ITS_MATRIX
    running = 2 if side_by_side else 1
    assert sorted(call[:3] for call in calls[1:]) == [(k, shared / running, 2 // running) for k in (0, 2, 3)]


def test_the_budget_bounds_what_the_others_share():
    tasks, calls = recording_tasks([None, None, None])       # held: unknown
    run_within_budget(tasks, 2, 100.0, np.zeros(1, dtype=np.int32), [300 * MB, 200 * MB, 100 * MB])
    assert calls[0][:3] == (0, 100.0, 2)
    assert sorted(call[:3] for call in calls[1:]) == [(1, 50.0, 1), (2, 50.0, 1)]
    tasks, calls = recording_tasks([None, None])
    run_within_budget(tasks, 2, 100.0, np.zeros(1, dtype=np.int32), [30 * MB, 20 * MB])
    assert calls[1][:3] == (1, 30.0, 2)                      # the whole of the largest: less than -m


def test_without_sizes_or_threads_every_task_gets_its_share():
    tasks, calls = recording_tasks([MB] * 3)
    run_within_budget(tasks, 1, 90.0, np.zeros(1, dtype=np.int32), [MB, 3 * MB, 2 * MB])
    assert [call[:3] for call in calls] == [(0, 90.0, 1), (1, 90.0, 1), (2, 90.0, 1)]   # in order
    tasks, calls = recording_tasks([MB] * 3)
    run_within_budget(tasks, 3, 90.0, np.zeros(1, dtype=np.int32))
    assert sorted(call[:3] for call in calls) == [(0, 30.0, 1), (1, 30.0, 1), (2, 30.0, 1)]


@pytest.mark.parametrize("checks_signals", [False, True])
def test_a_lone_task_runs_on_this_thread_only_when_it_checks_signals(checks_signals):
    tasks, calls = recording_tasks([MB])
    run_within_budget(tasks, 2, 10.0, np.zeros(1, dtype=np.int32), checks_signals=checks_signals)
    assert calls == [(0, 10.0, 2, checks_signals)]
    tasks, calls = recording_tasks([MB, MB])
    run_within_budget(tasks, 1, 10.0, np.zeros(1, dtype=np.int32), checks_signals=checks_signals)
    assert not any(on_main for *_, on_main in calls)        # several: in workers, Ctrl-C sets stop

