"""Dual coordinate descent (solver "dcd") against LIBLINEAR, closed forms, and its NumPy twin.

The optimum is checked three ways: the duality gap of the returned (alpha, w), recomputed here from
coef alone; the primal objective of liblinear-official's w on the same problem (computed here with
the same formula); and predictions on the test split.
"""
import functools
import lzma
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from conftest import shared_file
from fastsvm._core._dcd import DualCD
from fastsvm._core._status import Status
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError
from fastsvm.params import Params
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.base import next_milestone
from fastsvm.solvers.dcd import SOLVER, dual_bounds, solve


def liblinear():
    """liblinear-official's Python interface; the test that needs it skips without it."""
    return pytest.importorskip("liblinear.liblinearutil")


TIGHT = 1e-5
LOSSES = ("hinge", "squared_hinge")
LIBLINEAR_TYPE = {"hinge": 3, "squared_hinge": 1}
# liblinear-official stops its dual solvers after 300 epochs (-s 1 then falls back to the primal
# Newton solver, -s 3 just stops): hinge problems use a C small enough for it to get there.
C_FOR = {"hinge": 0.01, "squared_hinge": 1.0}


# ---------------------------------------------------------------- helpers

@functools.cache
def load(name):
    path = shared_file(name)
    with (lzma.open(path) if name.endswith(".xz") else open(path, "rb")) as f:
        X, y = load_svmlight_file(f, zero_based=False)
    return to_csr(X), y


def load_pair(name, test_name):
    X, y = load(name)
    if test_name is None:
        return X, y, X, y
    Xt, yt = load(test_name)
    n = max(X.shape[1], Xt.shape[1])

    def pad(A):
        return to_csr(sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], n)))
    return pad(X), y, pad(Xt), yt


def as_pm(labels):
    """+1 for the label of the first row (LIBLINEAR's first class), -1 for the other."""
    return np.where(labels == labels[0], 1.0, -1.0)


def subproblem(X, y, upper, loss="hinge", bias=-1.0, *, tol=TIGHT, max_iter=100_000, seed=0,
               shrinking=True, **kw):
    params = Params(solver="dcd", loss=loss, bias=bias, tol=tol, max_iter=max_iter, shrinking=shrinking)
    return Subproblem("c_svc", X, np.asarray(y, dtype=float), np.asarray(upper, dtype=float),
                      Kernel("linear"), params, seed=seed, **kw)


def primal(X, y, upper, w, w_bias, *, B, loss):
    """1/2 |(w, w_bias)|^2 + sum_i C_i loss_i: LIBLINEAR's problem, written out independently."""
    slack = np.maximum(0.0, 1.0 - y * (X @ w + w_bias * B))
    return 0.5 * (np.sum(w * w) + w_bias**2) + np.sum(upper * (slack if loss == "hinge" else slack**2))


def duality_gap(X, y, upper, sol, B, *, loss):
    """(P(w) - D(alpha)) / P(w) with alpha taken from coef only; also checks alpha's box and that the
    returned w is sum_i alpha_i y_i x_i."""
    alpha = sol.coef * y
    assert np.all(alpha >= 0)
    if loss == "hinge":
        assert np.all(alpha <= upper * (1 + 1e-12))
    w_full = np.append(X.T @ sol.coef, B * sol.coef.sum())
    w_bias = -sol.rho / B if B > 0 else 0.0
    np.testing.assert_allclose(np.append(sol.w, w_bias), w_full, rtol=1e-9, atol=1e-9 * np.abs(w_full).max())
    diag = np.zeros_like(upper) if loss == "hinge" else 0.5 / upper
    dual = 0.5 * np.sum(w_full * w_full) + 0.5 * np.sum(diag * alpha * alpha) - alpha.sum()
    p = primal(X, y, upper, sol.w, w_bias, B=B, loss=loss)
    assert p == pytest.approx(sol.objective, rel=1e-12)
    return (p + dual) / p


def assert_same_predictions(ours, theirs):
    """Same sign of the decision value, except on near-ties: both optima are only 1e-7 (relative
    objective) apart, and test sets hold points on the hyperplane (e.g. all-zero rows without bias),
    where the sign is a coin toss. Those may differ on at most 0.05% of the points."""
    differ = np.sign(ours) != np.sign(theirs)
    assert differ.sum() <= max(1, 5e-4 * len(ours)), f"{differ.sum()} predictions differ"
    assert np.all(np.abs(theirs[differ]) < 1e-4), np.abs(theirs[differ]).max()


def liblinear_fit(X, y, C, loss, B, *, eps, weights=""):
    """liblinear-official's (w, w_bias) with +1 = the class of the first row."""
    liblinearutil = liblinear()
    prob = liblinearutil.problem(y, X)
    opts = f"-s {LIBLINEAR_TYPE[loss]} -c {C} -e {eps} -B {B} {weights} -q"
    model = liblinearutil.train(prob, liblinearutil.parameter(opts))
    w, b = model.get_decfun()
    sign = 1.0 if model.get_labels()[0] == y[0] else -1.0
    return sign * np.asarray(w), (sign * b / B if B > 0 else 0.0)


# ---------------------------------------------------------------- LIBLINEAR's optimum

DATASETS = [("heart_scale", None), ("a9a", "a9a.t"), ("w8a", "w8a.t"), ("ijcnn1.xz", "ijcnn1.t.xz")]


@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "B1"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("name,test_name", DATASETS, ids=[d[0] for d in DATASETS])
def test_optimum_equals_liblinear(name, test_name, loss, bias):
    X, labels, Xt, _ = load_pair(name, test_name)
    y = as_pm(labels)
    C = C_FOR[loss]
    upper = np.full(len(y), C)
    B = max(bias, 0.0)
    sol = solve(subproblem(X, y, upper, loss, bias))
    assert sol.status == "converged" and sol.stop_measure <= TIGHT
    assert duality_gap(X, y, upper, sol, B, loss=loss) <= 1e-6

    w_ll, wb_ll = liblinear_fit(X, labels, C, loss, bias, eps=TIGHT)
    p_ll = primal(X, y, upper, w_ll, wb_ll, B=B, loss=loss)
    assert abs(sol.objective - p_ll) <= 1e-6 * p_ll
    assert_same_predictions(Xt @ sol.w - sol.rho, Xt @ w_ll + wb_ll * B)


@pytest.mark.parametrize("loss", LOSSES)
def test_class_weights_equal_liblinear(loss):
    """-w<label> multiplies C for that class; the caller folds it into upper."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    C = C_FOR[loss]
    weight = {1.0: 3.0, -1.0: 0.5}
    upper = C * np.array([weight[label] for label in labels])
    sol = solve(subproblem(X, y, upper, loss, 1.0))
    w_ll, wb_ll = liblinear_fit(X, labels, C, loss, 1.0, eps=TIGHT, weights="-w1 3 -w-1 0.5")
    p_ll = primal(X, y, upper, w_ll, wb_ll, B=1.0, loss=loss)
    assert abs(sol.objective - p_ll) <= 1e-6 * p_ll
    assert duality_gap(X, y, upper, sol, 1.0, loss=loss) <= 1e-6
    assert_same_predictions(X @ sol.w - sol.rho, X @ w_ll + wb_ll)


def test_default_tolerance_is_liblinear_default():
    """tol None -> eps 0.1: LIBLINEAR's stopping rule at its default, so a similar objective."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    upper = np.ones(len(y))
    sol = solve(subproblem(X, y, upper, "hinge", tol=None, max_iter=None))
    assert sol.status == "converged" and sol.stop_measure <= 0.1
    assert sol.details["tol"] == 0.1 and sol.details["max_iter"] == 1000
    w_ll, _ = liblinear_fit(X, labels, 1.0, "hinge", -1, eps=0.1)
    p_ll = primal(X, y, upper, w_ll, 0.0, B=0.0, loss="hinge")
    assert abs(sol.objective - p_ll) <= 0.02 * p_ll


# ---------------------------------------------------------------- closed forms

@pytest.mark.parametrize("C", [0.1, 0.3, 2.0])
def test_toy_two_points(C):
    """x = +1 (y = +1), x = -1 (y = -1), no bias: hinge gives w = min(1, 2C), squared hinge
    minimizes 1/2 w^2 + 2C (1 - w)^2, so w = 4C / (1 + 4C)."""
    X = to_csr(np.array([[1.0], [-1.0]]))
    y = np.array([1.0, -1.0])
    hinge = solve(subproblem(X, y, [C, C], "hinge", tol=1e-12))
    assert hinge.w[0] == pytest.approx(min(1.0, 2 * C), abs=1e-10)
    assert hinge.rho == 0.0
    assert hinge.objective == pytest.approx(0.5 * min(1, 2 * C) ** 2 + 2 * C * max(0, 1 - 2 * C), abs=1e-10)
    squared = solve(subproblem(X, y, [C, C], "squared_hinge", tol=1e-12))
    assert squared.w[0] == pytest.approx(4 * C / (1 + 4 * C), abs=1e-10)


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_toy_one_point_with_bias(C):
    """x = (2), y = +1, B = 1: Q = 4 + 1 = 5, so alpha = min(1/5, C) (hinge) or 1/(5 + 1/(2C))
    (squared hinge); w = 2 alpha, bias weight alpha, rho = -alpha."""
    X = to_csr(np.array([[2.0]]))
    for loss, alpha in (("hinge", min(0.2, C)), ("squared_hinge", 1 / (5 + 0.5 / C))):
        sol = solve(subproblem(X, [1.0], [C], loss, bias=1.0, tol=1e-12))
        assert sol.coef[0] == pytest.approx(alpha, abs=1e-12)
        assert sol.w[0] == pytest.approx(2 * alpha, abs=1e-12)
        assert sol.rho == pytest.approx(-alpha, abs=1e-12)
        assert sol.status == "converged"


def test_zero_cost_samples_are_left_out():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    upper = np.ones(len(y))
    upper[::3] = 0.0
    sol = solve(subproblem(X, y, upper, "hinge", tol=1e-6))
    assert sol.status == "converged" and np.all(sol.coef[::3] == 0)
    keep = upper > 0
    ref = solve(subproblem(X[keep], y[keep], upper[keep], "hinge", tol=1e-6))
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)


# ---------------------------------------------------------------- the NumPy twin

MASK = (1 << 64) - 1


def twin_splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


class TwinRNG:
    def __init__(self, seed):
        self.state = twin_splitmix64(seed & MASK) or 1

    def below(self, bound):
        x = self.state
        x ^= x >> 12
        x ^= (x << 25) & MASK
        x ^= x >> 27
        self.state = x
        return (((x * 0x2545F4914F6CDD1D) & MASK) >> 32) * bound >> 32


def sum_in_order(values):
    total = 0.0
    for v in values:
        total += v
    return total


class TwinDCD:
    """One epoch of LIBLINEAR's DCD with shrinking, written plainly from the algorithm."""

    def __init__(self, X, y, U, D, B, *, seed):
        self.X, self.y, self.U, self.D, self.B = X, y, U, D, B
        sqnorm = [sum_in_order(X.data[X.indptr[i]:X.indptr[i + 1]] ** 2) for i in range(X.shape[0])]
        self.qd = np.array(sqnorm) + B * B + D
        n = X.shape[0]
        self.alpha = np.zeros(n)
        self.w = np.zeros(X.shape[1] + 1)
        self.index = np.arange(n)
        self.active = n
        self.pg_old = (np.inf, -np.inf)
        self.rng = TwinRNG(seed)

    def epoch(self):
        X, w, B, idx = self.X, self.w, self.B, self.index
        for i in range(self.active - 1):
            j = i + self.rng.below(self.active - i)
            idx[i], idx[j] = idx[j], idx[i]
        pg_max, pg_min = -np.inf, np.inf
        s = 0
        while s < self.active:
            i = idx[s]
            lo, hi = X.indptr[i], X.indptr[i + 1]
            dot = 0.0
            for k in range(lo, hi):
                dot += X.data[k] * w[X.indices[k]]
            G = self.y[i] * (dot + B * w[-1]) - 1.0 + self.alpha[i] * self.D[i]
            pg = 0.0
            at_zero, at_upper = self.alpha[i] == 0.0, self.alpha[i] == self.U[i]
            if (at_zero and G > self.pg_old[0]) or (not at_zero and at_upper and G < self.pg_old[1]):
                self.active -= 1
                idx[s], idx[self.active] = idx[self.active], idx[s]
                continue
            if at_zero:
                pg = min(G, 0.0)
            elif at_upper:
                pg = max(G, 0.0)
            else:
                pg = G
            pg_max, pg_min = max(pg_max, pg), min(pg_min, pg)
            if abs(pg) > 1e-12:
                old = self.alpha[i]
                self.alpha[i] = min(max(old - G / self.qd[i], 0.0), self.U[i])
                d = (self.alpha[i] - old) * self.y[i]
                for k in range(lo, hi):
                    w[X.indices[k]] += d * X.data[k]
                w[-1] += d * B
            s += 1
        violation = 0.0 if pg_max < pg_min else max(pg_max - pg_min, abs(pg_max), abs(pg_min))
        if violation > TIGHT:
            self.pg_old = (pg_max if pg_max > 0 else np.inf, pg_min if pg_min < 0 else -np.inf)
        return violation


@pytest.mark.parametrize("prefetch", [False, True])
@pytest.mark.parametrize("loss,B", [("hinge", 0.0), ("squared_hinge", 1.0)])
def test_sweep_equals_numpy_twin(loss, B, prefetch):
    """Epoch by epoch the same iterates as the NumPy twin; rows prefetched ahead of the visiting
    order or not (the default for data of heart_scale's size)."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    U, D = dual_bounds(np.full(len(y), 0.5), loss)
    cd = DualCD(X, y, U, D, bias=B, seed=12345, prefetch=prefetch)
    twin = TwinDCD(X, y, U, D, B, seed=12345)
    for _ in range(40):
        assert cd.run(TIGHT, 10_000, chunk_epochs=1) == Status.CHUNK_DONE
        violation = twin.epoch()
        assert cd.violation == violation
        assert cd.active_size == twin.active
        np.testing.assert_array_equal(cd.index, twin.index)
        np.testing.assert_array_equal(cd.alpha, twin.alpha)
        np.testing.assert_array_equal(cd.w, twin.w)
    assert cd.active_size < len(y)   # shrinking was exercised


# ---------------------------------------------------------------- determinism, chunking, threads

def test_chunking_does_not_change_the_result():
    """Stopping after any number of epochs or units of work, even mid-epoch after every
    coordinate, and resuming gives bit-identical iterates."""
    X, labels = load("heart_scale")
    y = as_pm(labels)
    U, D = dual_bounds(np.ones(len(y)), "hinge")
    for tol, max_epochs in ((1e-2, 100_000), (1e-8, 300)):
        runs = []
        for chunk_epochs, budget in ((1, 1), (1, 7), (3, 1000), (10_000, 1 << 40)):
            cd = DualCD(X, y, U, D, bias=1.0, seed=3)
            while (status := cd.run(tol, max_epochs, chunk_epochs, budget)) == Status.CHUNK_DONE:
                pass
            runs.append((status, cd.epoch, cd.w.copy(), cd.alpha.copy()))
        assert runs[0][0] == (Status.CONVERGED if tol == 1e-2 else Status.MAX_ITER)
        for status, epoch, w, alpha in runs[1:]:
            assert (status, epoch) == runs[0][:2]
            np.testing.assert_array_equal(w, runs[0][2])
            np.testing.assert_array_equal(alpha, runs[0][3])


def test_seed_determinism_and_thread_count():
    X, labels = load("a9a")
    y = as_pm(labels)
    upper = np.ones(len(y))
    a = solve(subproblem(X, y, upper, "hinge", 1.0, tol=0.1, seed=7, n_threads=1))
    b = solve(subproblem(X, y, upper, "hinge", 1.0, tol=0.1, seed=7, n_threads=2))
    c = solve(subproblem(X, y, upper, "hinge", 1.0, tol=0.1, seed=8))
    np.testing.assert_array_equal(a.w, b.w)
    assert a.rho == b.rho and a.n_iter == b.n_iter
    assert not np.array_equal(a.w, c.w)
    assert c.objective == pytest.approx(a.objective, rel=1e-3)


def test_dense_equals_csr():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    upper = np.ones(len(y))
    from_csr = solve(subproblem(X, y, upper, "squared_hinge", 1.0, tol=1e-3))
    from_dense = solve(subproblem(to_csr(X.toarray()), y, upper, "squared_hinge", 1.0, tol=1e-3))
    from_csc = solve(subproblem(X.tocsc(), y, upper, "squared_hinge", 1.0, tol=1e-3))
    np.testing.assert_array_equal(from_csr.w, from_dense.w)
    np.testing.assert_array_equal(from_csr.w, from_csc.w)
    assert from_csr.rho == from_dense.rho == from_csc.rho


# ---------------------------------------------------------------- status, stop, progress, errors

def test_max_iter_status():
    X, labels = load("a9a")
    y = as_pm(labels)
    sol = solve(subproblem(X, y, np.ones(len(y)), "hinge", tol=1e-8, max_iter=3))
    assert sol.status == "max_iter" and sol.n_iter == 3
    assert sol.stop_measure > 1e-8


def test_stop_flag_set_before_the_call():
    X, labels = load("a9a")
    y = as_pm(labels)
    sub = subproblem(X, y, np.ones(len(y)), "hinge", tol=1e-12)
    sub.stop[0] = 1
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        solve(sub)
    assert time.perf_counter() - start < 1.0


def test_stop_flag_from_another_thread():
    """run_tasks sets stop[0] on Ctrl-C while a worker is inside the sweep."""
    X, labels = load("a9a")
    y = as_pm(labels)
    sub = subproblem(X, y, np.full(len(y), 100.0), "hinge", tol=1e-12, max_iter=10**9)
    outcome = {}

    def work():
        try:
            solve(sub)
            outcome["result"] = "returned"
        except KeyboardInterrupt:
            outcome["result"] = "interrupted"
        outcome["time"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.3)
    sub.stop[0] = 1
    stopped_at = time.perf_counter()
    worker.join(5.0)
    assert outcome.get("result") == "interrupted"
    assert outcome["time"] - stopped_at < 1.0


SIGINT_SCRIPT = """
import sys
import numpy as np
import scipy.sparse as sp
from fastsvm.params import Params
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.solvers.dcd import solve
rng = np.random.default_rng(0)
X = sp.random(20000, 500, density=0.05, format="csr", random_state=rng)
y = np.where(rng.random(20000) < 0.5, 1.0, -1.0)
params = Params(solver="dcd", tol=1e-12, max_iter=10**9, C=100.0)
sub = Subproblem("c_svc", X, y, np.full(20000, 100.0), Kernel("linear"), params)
print("ready", flush=True)
try:
    solve(sub)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
"""


def test_ctrl_c_in_the_main_thread(tmp_path):
    """A real SIGINT while the main thread is inside solve(): KeyboardInterrupt within a second."""
    import signal
    import subprocess
    import sys
    # run outside the checkout: `python -c` puts the working directory first on sys.path
    proc = subprocess.Popen([sys.executable, "-c", SIGINT_SCRIPT], stdout=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        out, _ = proc.communicate(timeout=10)
        assert time.perf_counter() - sent < 1.0
    finally:
        proc.kill()
    assert proc.returncode == 3 and "interrupted" in out


def test_progress_log_and_history():
    X, labels = load("heart_scale")
    y = as_pm(labels)
    lines = []
    sol = solve(subproblem(X, y, np.ones(len(y)), "hinge", tol=1e-3, log=lines.append))
    epochs = [h["epoch"] for h in sol.history]
    assert epochs[:4] == [1, 2, 5, 10] and epochs[-1] == sol.n_iter
    assert len(lines) == len(sol.history) + 1 and "converged" in lines[-1]
    duals = [h["dual_objective"] for h in sol.history]
    assert np.all(np.diff(duals) <= 1e-12)               # coordinate descent never increases the dual
    assert sol.dual_objective == pytest.approx(-sol.objective, rel=1e-3)
    assert [next_milestone(e) for e in (0, 1, 2, 7, 10, 999)] == [1, 2, 5, 10, 20, 1000]


def test_bad_input():
    X = to_csr(np.eye(3))
    with pytest.raises(FastSVMError, match="binary"):
        solve(subproblem(X, [1, 2, 1], np.ones(3)))
    with pytest.raises(FastSVMError, match="rows"):
        solve(subproblem(X, [1, -1], np.ones(3)))
    with pytest.raises(FastSVMError, match="C_i"):
        solve(subproblem(X, [1, -1, 1], [1.0, np.nan, 1.0]))
    with pytest.raises(FastSVMError, match="overflow"):
        solve(subproblem(to_csr(np.array([[1e200], [1.0]])), [1, -1], np.ones(2)))
    with pytest.raises(FastSVMError, match="loss"):
        solve(subproblem(X, [1, -1, 1], np.ones(3), loss="log"))


def test_degenerate_problems():
    """No rows left, an empty row, one class only: no hang, no NaN."""
    X = to_csr(np.array([[0.0, 0.0], [1.0, 2.0]]))
    none_left = solve(subproblem(X, [1, -1], [0.0, 0.0]))
    assert none_left.status == "converged" and np.all(none_left.w == 0)
    empty_row = solve(subproblem(X, [1, -1], [1.0, 1.0], tol=1e-10))
    assert empty_row.coef[0] == 1.0                        # L1 loss: an empty row sits at its bound
    one_class = solve(subproblem(X, [1, 1], [1.0, 1.0], "squared_hinge", bias=1.0, tol=1e-10))
    assert np.all(np.isfinite(one_class.w)) and one_class.status == "converged"


def test_registered():
    spec = get_solver("dcd")
    assert spec is SOLVER and spec.multiclass == "ovr" and spec.default_tol == 0.1
    assert spec.formulations == ("c_svc",) and spec.kernels == ("linear",)


def test_one_vs_rest_through_fit_model_equals_liblinear():
    """End to end through fastsvm.training.trainer (one-vs-rest, class weight on one class): each class's
    subproblem has liblinear's optimum (its C_p = C w_c, C_n = C), predictions agree."""
    fit_model = pytest.importorskip("fastsvm.training.trainer").fit_model
    X, labels = load("dna.scale")
    C, weight = 1.0, {2: 2.0}
    params = Params(solver="dcd", loss="squared_hinge", C=C, tol=TIGHT, max_iter=100_000, bias=1.0,
                    class_weight=weight)
    model = fit_model(X, labels, params)
    liblinearutil = liblinear()
    ll = liblinearutil.train(liblinearutil.problem(labels, X),
                             liblinearutil.parameter(f"-s 1 -c {C} -e {TIGHT} -B 1 -w2 2 -q"))
    ll_labels = ll.get_labels()
    ours, theirs = [], []
    for c, label in enumerate(model.labels):
        w, b = ll.get_decfun(ll_labels.index(label))
        y = np.where(labels == label, 1.0, -1.0)
        upper = np.where(y > 0, C * weight.get(int(label), 1.0), C)
        p_ll = primal(X, y, upper, np.asarray(w), b, B=1.0, loss="squared_hinge")
        assert abs(model.info["objective"][c] - p_ll) <= 1e-6 * p_ll
        ours.append(X @ model.info["primal_weights"][c] - model.info["rho"][c])
        theirs.append(X @ np.asarray(w) + b)
    assert np.mean(np.argmax(ours, axis=0) == np.argmax(theirs, axis=0)) >= 0.999
