"""fastsvm on Dask (fastsvm.distributed) across a real LocalCluster: a scheduler and 2 worker
processes on the loopback interface, started once for the module.

- the grid (grid_search(client=), fastsvm-grid --scheduler) gives the local run's table and lines;
- data-parallel SVM-ALM (fit_linear) over row blocks reaches the optima of test_alm.py (LIBSVM's dual
  for p = 1, L-BFGS for p = 2) and runs the single-machine solve's iteration (same
  iterations, same objective to rounding); its traffic per iteration is O(p), not O(nnz);
- data-parallel NESVM (fit_linear(solver="nesvm")) over row blocks reaches the single-machine
  optimum, certified; on one block it is the single-machine run bit for bit, on three the sums'
  order moves only rounding; its traffic per iteration is O(p) too;
- the stop flag and a worker's error end it with KeyboardInterrupt / one FastSVMError line; an
  option a solver does not run on blocks is one ParameterError line.
"""
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import shared_file
from linear_oracle import load

distributed = pytest.importorskip("dask.distributed")

from fastsvm.cli.grid import main as grid_main  # noqa: E402
from fastsvm.files.datafile import load_svmlight_file  # noqa: E402
from fastsvm.distributed import connect, fit_linear, run_fold_tasks  # noqa: E402
from fastsvm.errors import FastSVMError, ParameterError  # noqa: E402
from fastsvm.tuning.grid import grid_search  # noqa: E402
from fastsvm.params import Params  # noqa: E402
from fastsvm.models.prediction import predict  # noqa: E402
from fastsvm.solvers import nesvm  # noqa: E402
from fastsvm.solvers.alm import solve  # noqa: E402
from fastsvm.solvers.base import Kernel, Subproblem  # noqa: E402
from fastsvm.training.trainer import fit_model  # noqa: E402

# p -> the optimum on heart_scale, C = 1, free bias: test_alm.py's OPTIMA (LIBSVM -s 0 -t 0 for p = 1,
# L-BFGS-B on the primal for p = 2), which its test_reference_optima_come_from_their_oracles recomputes
OPTIMA = {1.0: 92.4733746202, 2.0: 114.914455016621}
NESVM_LOSS = {1.0: "hinge", 2.0: "squared_hinge"}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def heart():
    return load("heart_scale")


def split(X, y, n_blocks):
    bounds = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    return [X[a:b] for a, b in zip(bounds, bounds[1:])], [y[a:b] for a, b in zip(bounds, bounds[1:])]


def local_alm(X, y, **options):
    """The single-machine solve (solver alm through fit_model)."""
    tol = options.pop("tol")
    return fit_model(X, y, Params(solver="alm", kernel_type="linear", C=1.0, tol=tol, options=options))


# ---------------------------------------------------------------------------- the grid

def test_grid_on_the_cluster_gives_the_local_table(client):
    X, y = load_svmlight_file(shared_file("heart_scale"))
    Cs, gammas = [2.0 ** k for k in range(-5, 16, 4)], [2.0 ** k for k in range(3, -16, -4)]
    params = Params(libsvm_folds=True)
    here = grid_search(X, y, Cs, gammas, params=params, refit=False)
    calls = []
    there = grid_search(X, y, Cs, gammas, params=params, refit=False, client=client,
                        progress=lambda *a: calls.append(a))
    assert np.array_equal(here.rates, there.rates)
    assert (here.best_value, here.best_gamma, here.best_rate) == (there.best_value, there.best_gamma,
                                                                  there.best_rate)
    assert calls == [(k, 25) for k in range(1, 26)]      # 5 gammas x 5 folds, each along the Cs
    # a seeded split and a nu grid (SRBO's path) too
    params = Params(seed=4, svm_type="nu_svc")
    nus = [0.2, 0.4, 0.6]
    here = grid_search(X, y, nus=nus, gammas=[0.5, 0.03125], params=params, refit=False)
    there = grid_search(X, y, nus=nus, gammas=[0.5, 0.03125], params=params, refit=False, client=client)
    assert np.array_equal(here.rates, there.rates)


def test_fastsvm_grid_scheduler_prints_the_local_lines(client, tmp_path, capsys):
    data = str(shared_file("heart_scale"))
    args = ["-log2c", "-1,7,4", "-log2g", "-1,-9,-4", "-png", "null"]
    grid_main([*args, "-out", str(tmp_path / "here.out"), data])
    here = capsys.readouterr().out
    grid_main(["--scheduler", client.scheduler.address, *args, "-out", str(tmp_path / "there.out"), data])
    there = capsys.readouterr().out
    assert here == there and len(here.splitlines()) == 10
    assert (tmp_path / "here.out").read_text() == (tmp_path / "there.out").read_text()


def test_unreachable_scheduler_is_one_clear_error():
    with pytest.raises(FastSVMError, match="cannot reach the Dask scheduler"):
        connect("tcp://127.0.0.1:9", timeout=1)


def test_importing_fastsvm_and_its_grid_does_not_import_dask(tmp_path):
    # the package as installed (cwd elsewhere: a checkout's sources have no compiled modules in CI)
    code = "import sys, fastsvm, fastsvm.tuning.grid, fastsvm.cli.grid; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------- data-parallel ALM

@pytest.mark.parametrize("p", [1.0, 2.0])
def test_alm_on_blocks_reaches_the_optimum(client, heart, p):
    X, y = heart
    blocks, labels = split(X, y, 5)
    fit = fit_linear(client, blocks, labels, C=1.0, tol=1e-8, options={"p": p})
    assert fit.status == "converged" and fit.n_blocks == 5 and fit.n_workers == 2 and fit.n_rows == 270
    assert abs(fit.objective - OPTIMA[p]) <= 1e-6 * OPTIMA[p]
    # the objective recomputed here from w and b alone
    sign = np.where(y == fit.classes_[1], 1.0, -1.0)
    w, b = fit.coef_[0], fit.intercept_[0]
    value = 0.5 * w @ w + np.sum(np.maximum(0.0, 1.0 - sign * (X @ w + b)) ** p)
    assert abs(value - OPTIMA[p]) <= 1e-6 * OPTIMA[p]
    # the single-machine model's predictions
    model = local_alm(X, y, p=p, tol=1e-8)
    assert np.array_equal(fit.predict(X), predict(model, X))


def a1a_files(tmp_path, n_blocks):
    """a1a split by rows into LIBSVM files; (paths, X, y) as load() reads the whole file."""
    X, y = load("a1a")
    files = []
    for k, (block, labels) in enumerate(zip(*split(X, y, n_blocks))):
        path = tmp_path / f"a1a.{k}"
        with open(path, "w") as f:
            for i in range(block.shape[0]):
                row = block[i]
                f.write(f"{labels[i]:g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(row.indices, row.data))
                        + "\n")
        files.append(str(path))
    return files, X, y


def test_alm_on_blocks_runs_the_single_machine_iteration(client, tmp_path):
    """a1a split in 4 LIBSVM files read on the workers: after 10 (inexact) iterations the run is
    where the local solve is, to rounding (the same arithmetic; only the order of the sums differs). Not
    further: on a1a the inexact iteration amplifies rounding from iteration to iteration (in
    process too), the two runs meeting again at the optimum (test_alm_reaches_a1a_optimum)."""
    files, X, y = a1a_files(tmp_path, 4)
    for options in ({"p": 1.0}, {"p": 1.5}):
        fit = fit_linear(client, files, C=1.0, tol=1e-12, max_iter=10, options=options)
        sign = np.where(y == fit.classes_[1], 1.0, -1.0)
        params = Params(solver="alm", kernel_type="linear", C=1.0, tol=1e-12, max_iter=10, options=options)
        local = solve(Subproblem("c_svc", X, sign, np.ones(len(y)), Kernel("linear"), params))
        assert fit.n_iter == local.n_iter == 10 and fit.mu == pytest.approx(local.details["mu"], rel=1e-12)
        assert abs(fit.objective - local.objective) <= 1e-12 * local.objective
        assert np.allclose(fit.coef_[0][:X.shape[1]], local.w, rtol=1e-11, atol=1e-12)
        assert fit.intercept_[0] == pytest.approx(-local.rho, rel=1e-11)
    # the exact step's CG stops on a residual test (rtol 1e-3) that rounding can move by one CG
    # step: the runs agree to the CG's accuracy
    options = {"p": 1.5, "step": "exact"}
    fit = fit_linear(client, files, C=1.0, tol=1e-12, max_iter=10, options=options)
    params = Params(solver="alm", kernel_type="linear", C=1.0, tol=1e-12, max_iter=10, options=options)
    local = solve(Subproblem("c_svc", X, sign, np.ones(len(y)), Kernel("linear"), params))
    assert abs(fit.objective - local.objective) <= 1e-4 * local.objective


@pytest.mark.slow
def test_alm_reaches_a1a_optimum(client, tmp_path):
    """test_alm.py's a1a optimum for p = 2 (L-BFGS's), 8 files over 2 workers."""
    files, _, _ = a1a_files(tmp_path, 8)
    fit = fit_linear(client, files, C=1.0, tol=1e-7, options={"p": 2.0})
    assert fit.status == "converged"
    assert abs(fit.objective - 637.741857156215) <= 1e-6 * 637.741857156215


def test_traffic_per_iteration_is_o_of_p_not_nnz(client, heart):
    """Bytes per iteration and worker: a few p-vectors, far below the blocks' own size, and the same
    with the rows repeated 8 times."""
    X, y = heart
    p = X.shape[1] + 1
    small = fit_linear(client, *split(X, y, 4), C=1.0, tol=1e-12, max_iter=40)
    big_X, big_y = sp.vstack([X] * 8).tocsr(), np.tile(y, 8)
    big = fit_linear(client, *split(big_X, big_y, 4), C=1.0, tol=1e-12, max_iter=40)
    for fit in (small, big):
        assert 0 < fit.bytes_per_worker_iteration <= 12 * 8 * p + 4096
        assert fit.bytes_per_worker_iteration < 0.1 * fit.setup_bytes / fit.n_workers
        assert fit.seconds_per_iteration > 0
    assert abs(big.bytes_per_iteration - small.bytes_per_iteration) <= 0.05 * small.bytes_per_iteration
    assert big.setup_bytes > 6 * small.setup_bytes     # the rows grew 8 times, the traffic did not


# ---------------------------------------------------------------------------- data-parallel NESVM

def local_nesvm(X, sign, loss, tol, **options):
    """The single-machine solve (solver nesvm on labels +-1)."""
    params = Params(solver="nesvm", kernel_type="linear", C=1.0, tol=tol, loss=loss, options=options)
    return nesvm.solve(Subproblem("c_svc", X, sign, np.ones(len(sign)), Kernel("linear"), params))


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_nesvm_on_blocks_reaches_the_single_machine_optimum(client, heart, p):
    """heart_scale in 3 blocks over 2 workers: the single-machine solve's optimum, certified, in as
    many iterations and passes. The blocks' sums come in another order, so the runs differ by
    rounding (the objectives within 1e-6 relative); at tighter -e than these they can part by a
    few iterations, each run still certified by its own gap."""
    X, y = heart
    tol = 1e-3 if p == 1.0 else 1e-6
    fit = fit_linear(client, *split(X, y, 3), C=1.0, solver="nesvm", tol=tol, loss=NESVM_LOSS[p])
    assert fit.status == "converged" and fit.n_blocks == 3 and fit.n_workers == 2 and fit.n_rows == 270
    sign = np.where(y == fit.classes_[1], 1.0, -1.0)
    local = local_nesvm(X, sign, NESVM_LOSS[p], tol)
    assert abs(fit.objective - local.objective) <= 1e-6 * local.objective
    assert fit.n_iter == local.n_iter and fit.mu == local.details["mu"]
    assert [h["passes"] for h in fit.history] == [h["passes"] for h in local.history]
    # certified: its own gap, and the objective recomputed here from w and b alone against the optimum
    assert 0 <= fit.gap <= tol
    w, b = fit.coef_[0], fit.intercept_[0]
    value = 0.5 * w @ w + np.sum(np.maximum(0.0, 1.0 - sign * (X @ w + b)) ** p)
    assert value == pytest.approx(fit.objective, rel=1e-12)
    assert OPTIMA[p] * (1 - 1e-9) <= value <= OPTIMA[p] * (1 + tol)
    np.testing.assert_allclose(w, local.w, rtol=0, atol=1e-9)


def test_nesvm_on_one_block_is_the_single_machine_run(client, heart):
    """One block: the same arithmetic in the same order, so the same bits -- w, objective, gap,
    iterations and every stage's passes."""
    X, y = heart
    for loss in ("hinge", "squared_hinge"):
        fit = fit_linear(client, [X], [y], C=1.0, solver="nesvm", tol=1e-4, loss=loss, options={"mu_shrink": 0.25})
        sign = np.where(y == fit.classes_[1], 1.0, -1.0)
        local = local_nesvm(X, sign, loss, 1e-4, mu_shrink=0.25)
        assert np.array_equal(fit.coef_[0], local.w) and fit.intercept_[0] == -local.rho
        assert (fit.objective, fit.gap, fit.n_iter) == (local.objective, local.stop_measure, local.n_iter)
        assert [(h["passes"], h["mu"]) for h in fit.history] == [(h["passes"], h["mu"]) for h in local.history]


def test_nesvm_traffic_per_iteration_is_o_of_p_not_nnz(client, heart):
    """As ALM's: a few p-vectors per iteration and worker, the same with the rows repeated 8 times."""
    X, y = heart
    p = X.shape[1] + 1
    small = fit_linear(client, *split(X, y, 4), C=1.0, solver="nesvm", tol=1e-12, max_iter=40)
    big_X, big_y = sp.vstack([X] * 8).tocsr(), np.tile(y, 8)
    big = fit_linear(client, *split(big_X, big_y, 4), C=1.0, solver="nesvm", tol=1e-12, max_iter=40)
    for fit in (small, big):
        assert fit.n_iter == 40
        assert 0 < fit.bytes_per_worker_iteration <= 12 * 8 * p + 4096
        assert fit.bytes_per_worker_iteration < 0.1 * fit.setup_bytes / fit.n_workers
    # the trial steps per iteration (backtracking) may differ between the two problems, not the rows
    assert abs(big.bytes_per_iteration - small.bytes_per_iteration) <= 0.25 * small.bytes_per_iteration
    assert big.setup_bytes > 6 * small.setup_bytes


# ---------------------------------------------------------------------------- stop and errors

@pytest.mark.parametrize("solver", ["alm", "nesvm"])
def test_stop_flag_ends_the_solve_within_a_second(client, heart, solver):
    X, y = heart
    stop = np.zeros(1, dtype=np.int32)
    timer = threading.Timer(0.5, lambda: stop.__setitem__(0, 1))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fit_linear(client, *split(X, y, 3), C=1.0, solver=solver, tol=1e-15, max_iter=10 ** 9, stop=stop)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 1.5
    # the cluster is left usable
    assert fit_linear(client, *split(X, y, 3), C=1.0, solver=solver, tol=1e-2).status == "converged"


@pytest.mark.parametrize("options,loss,match", [({"penalty": "l1"}, "hinge", "not penalty l1 with loss hinge"),
                                                ({}, "squared_error", "not penalty l2 with loss squared_error"),
                                                ({"scheme": "paper"}, "hinge", "backtracking scheme on blocks"),
                                                ({"scheme": "fast"}, "hinge", "scheme"),
                                                ({"no_such_option": 1}, "hinge", "no_such_option")])
def test_nesvm_options_not_run_on_blocks_are_one_clear_error(client, heart, options, loss, match):
    X, y = heart
    with pytest.raises(ParameterError, match=match) as error:
        fit_linear(client, *split(X, y, 2), solver="nesvm", loss=loss, options=options)
    assert "\n" not in str(error.value)


def test_worker_errors_are_one_clear_line(client, heart, tmp_path):
    X, y = heart
    with pytest.raises(FastSVMError, match="a block of 90 rows has 89 labels"):
        fit_linear(client, [X[:90], X[90:]], [y[:89], y[90:]])
    with pytest.raises(FastSVMError, match="two classes needed"):
        fit_linear(client, [X[:90], X[90:]], [y[:90], np.where(y[90:] > 0, 2.0, 3.0)])
    missing = str(tmp_path / "no-such-file")
    with pytest.raises(FastSVMError) as error:
        fit_linear(client, [missing, missing])
    assert "\n" not in str(error.value) and "no-such-file" in str(error.value)
    with pytest.raises(ParameterError, match="not distributed"):
        fit_linear(client, [X], [y], solver="ssnal")


def test_grid_tasks_stop_and_errors(client, heart):
    X, y = heart
    stop = np.ones(1, dtype=np.int32)
    with pytest.raises(KeyboardInterrupt):
        run_fold_tasks(client, X, y, None, [(Params(), 5, {}, 0, 1)], stop=stop)
    stop[0] = 0
    with pytest.raises(FastSVMError, match="C") as error:
        run_fold_tasks(client, X, y, None, [(Params(C=-1.0), 5, {}, 0, 1)], stop=stop)
    assert "\n" not in str(error.value)
    assert stop[0] == 1          # the other tasks were told to stop and cancelled
