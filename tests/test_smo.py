"""SMO against LIBSVM (libsvm-official) on the same subproblems, and its pieces against NumPy twins.

Every formulation x kernel is solved by fastsvm's SMO and by LIBSVM at -e 1e-6; the dual
objectives (computed the same way from both coefficient vectors), rho, the support-vector sets
and decision values must agree. The working-set selection, the two-variable step and the kernel
cache are checked step by step against plain NumPy.
"""
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import libsvm_one_thread, read_shared
from fastsvm._core._cache import KernelCache
from fastsvm._core._kernel import kernel_matrix
from fastsvm._core._smo import SMO
from fastsvm._core._status import Status
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.params import Params
from fastsvm.solvers import get_solver, smo
from fastsvm.solvers.base import Kernel, Subproblem
from fastsvm.training.trainer import fit_model, summary_lines

svmutil = pytest.importorskip("libsvm.svmutil")

SVM_TYPE = {"c_svc": 0, "nu_svc": 1, "one_class": 2, "epsilon_svr": 3, "nu_svr": 4}
KERNEL_TYPE = {"linear": 0, "polynomial": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}
KERNELS = tuple(KERNEL_TYPE)
CLASSIFICATION = ("c_svc", "nu_svc", "one_class")
REGRESSION = ("epsilon_svr", "nu_svr")


# ---------------------------------------------------------------- data and oracles

@pytest.fixture(scope="module")
def abalone():
    return read_shared("abalone_scale", 600)


def _kernel_of(kind, n_features):
    return Kernel(kind, gamma=1.0 / n_features, degree=3, coef0=0.0)


def _precomputed(X, kernel):
    """Kernel matrix and the precomputed-kernel input: column 0 = serial number, column j = K[:, j-1]."""
    K = kernel_matrix(X, X, kernel.kind, kernel.gamma, kernel.degree, coef0=kernel.coef0)
    n = K.shape[0]
    Xp = to_csr(np.hstack([np.arange(1, n + 1, dtype=np.float64)[:, None], K]))
    return K, Xp


def _libsvm_rows(X):
    return [dict(zip((X.indices[X.indptr[i]:X.indptr[i + 1]] + 1).tolist(),
                     X.data[X.indptr[i]:X.indptr[i + 1]].tolist())) for i in range(X.shape[0])]


def _libsvm_precomputed_rows(K):
    return [{0: i + 1, **{j + 1: float(v) for j, v in enumerate(row)}} for i, row in enumerate(K)]


def libsvm_solve(formulation, X, y, kernel, K=None, *, C=1.0, nu=0.5, p=0.1, extra=""):
    """LIBSVM's coefficients (one per training row, 0 off the SVs) and rho, oriented so that
    the decision value is coef . k(x) - rho for the +1 class (LIBSVM puts its first label first)."""
    opts = (f"-s {SVM_TYPE[formulation]} -t {KERNEL_TYPE[kernel.kind]} -d {kernel.degree} "
            f"-g {kernel.gamma!r} -r {kernel.coef0!r} -c {C!r} -n {nu!r} -p {p!r} -e 1e-6 -q {extra}")
    rows = _libsvm_precomputed_rows(K) if kernel.kind == "precomputed" else _libsvm_rows(X)
    with libsvm_one_thread():
        model = svmutil.svm_train(y.tolist(), rows, opts)
    coef = np.zeros(X.shape[0])
    idx = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
    coef[idx] = [c[0] for c in model.get_sv_coef()]
    rho = model.rho[0]
    if formulation in ("c_svc", "nu_svc") and model.get_labels()[0] != 1:
        coef, rho = -coef, -rho
    return coef, rho


def fastsvm_solve(formulation, X, y, kernel, upper=None, *, C=1.0, nu=0.5, p=0.1, spec=None, **params):
    if upper is None:
        box = C if formulation in ("c_svc", "epsilon_svr", "nu_svr") else 1.0
        upper = np.full(X.shape[0], box)
    target = np.ones(X.shape[0]) if formulation == "one_class" else y
    # LIBSVM groups a binary problem's rows by class, +1 first (fastsvm.training.trainer does the same);
    # on data with exact ties (duplicate rows) the order decides SMO's path
    order = np.arange(X.shape[0])
    if formulation in ("c_svc", "nu_svc"):
        order = np.concatenate([np.flatnonzero(y > 0), np.flatnonzero(y <= 0)])
    prm = Params(svm_type=formulation, C=C, nu=nu, epsilon=p, tol=params.pop("tol", 1e-6), **params)
    sub = Subproblem(formulation, X[order], target[order], upper[order], kernel, prm)
    sol = (spec or smo.SOLVER).solve(sub)
    sol.subproblem = sub  # for summary_lines
    coef = np.empty_like(sol.coef)
    coef[order] = sol.coef
    sol.coef = coef
    return sol


def dual_objective(formulation, K, coef, y, p=0.1):
    """LIBSVM's reported objective, from a coefficient vector (nu-SVC: of the rescaled problem)."""
    quad = 0.5 * coef @ K @ coef
    if formulation == "c_svc":
        return quad - np.abs(coef).sum()
    if formulation in ("nu_svc", "one_class"):
        return quad
    if formulation == "epsilon_svr":
        return quad + p * np.abs(coef).sum() - y @ coef
    return quad - y @ coef


def _data(formulation, kind, heart, regression):
    """Subproblem data, kernel and kernel matrix (precomputed: of the RBF kernel)."""
    X, y = heart if formulation in CLASSIFICATION else regression
    if kind == "precomputed":
        K, Xp = _precomputed(X, _kernel_of("rbf", X.shape[1]))
        return Xp, y, Kernel("precomputed"), K
    kernel = _kernel_of(kind, X.shape[1])
    return X, y, kernel, kernel_matrix(X, X, kind, kernel.gamma, kernel.degree, coef0=kernel.coef0)


def assert_matches_libsvm(formulation, X, y, kernel, K, *, upper=None, extra="", spec=None, **kw):
    sol = fastsvm_solve(formulation, X, y, kernel, upper=upper, spec=spec, **kw)
    libsvm_kw = {name: value for name, value in kw.items() if name in ("C", "nu", "p")}
    coef_l, rho_l = libsvm_solve(formulation, X, y, kernel, K, extra=extra, **libsvm_kw)
    assert sol.status == "converged"
    f_ours = dual_objective(formulation, K, sol.coef, y, p=kw.get("p", 0.1))
    f_lib = dual_objective(formulation, K, coef_l, y, p=kw.get("p", 0.1))
    assert abs(f_ours - f_lib) <= 1e-6 * max(1.0, abs(f_lib))
    # our reported objective is LIBSVM's "obj", computed from float32 kernel columns (nu-SVC's
    # rescaling by 1/r^2 magnifies their rounding)
    assert abs(sol.objective - f_ours) <= 1e-4 * max(1.0, abs(f_ours))
    assert abs(sol.rho - rho_l) <= 1e-5 * max(1.0, abs(rho_l))
    n_sv, n_sv_lib = np.count_nonzero(sol.coef), np.count_nonzero(coef_l)
    assert abs(n_sv - n_sv_lib) <= max(1, 0.01 * n_sv_lib)
    assert np.count_nonzero(sol.coef) == n_sv
    dec, dec_l = K @ sol.coef - sol.rho, K @ coef_l - rho_l
    close = np.abs(dec - dec_l) <= 1e-4 * (1.0 + np.abs(dec_l))
    assert close.mean() >= 0.999
    if formulation not in REGRESSION:
        agree = np.sign(dec) == np.sign(dec_l)
        if spec is not None:
            # another solver's steps: a row on the margin (decision 0 at the optimum) may fall on either side
            agree |= np.abs(dec_l) <= 1e-5 * (1.0 + abs(rho_l))
        assert agree.mean() >= 0.999
    return sol


# ---------------------------------------------------------------- parity with LIBSVM

@pytest.mark.parametrize("kind", KERNELS)
@pytest.mark.parametrize("formulation", list(SVM_TYPE))
def test_matches_libsvm(formulation, kind, heart, housing):
    X, y, kernel, K = _data(formulation, kind, heart, housing)
    assert_matches_libsvm(formulation, X, y, kernel, K)


@pytest.mark.parametrize("formulation", REGRESSION)
@pytest.mark.parametrize("kind", ("rbf", "polynomial"))
def test_matches_libsvm_abalone(formulation, kind, heart, abalone):
    X, y, kernel, K = _data(formulation, kind, heart, abalone)
    assert_matches_libsvm(formulation, X, y, kernel, K, C=4.0)


def test_non_default_parameters(heart, housing):
    X, y = heart
    kernel = Kernel("polynomial", gamma=0.3, degree=2, coef0=1.5)
    K = kernel_matrix(X, X, "polynomial", 0.3, 2, coef0=1.5)
    assert_matches_libsvm("c_svc", X, y, kernel, K, C=10.0)
    assert_matches_libsvm("nu_svc", X, y, kernel, K, nu=0.2)
    assert_matches_libsvm("one_class", X, y, kernel, K, nu=0.05)
    X, y = housing
    kernel = Kernel("sigmoid", gamma=0.01, coef0=-0.5)
    K = kernel_matrix(X, X, "sigmoid", 0.01, 3, coef0=-0.5)
    assert_matches_libsvm("epsilon_svr", X, y, kernel, K, C=3.0, p=0.5)
    assert_matches_libsvm("nu_svr", X, y, kernel, K, C=0.5, nu=0.8)


def test_libsvm_summary_lines_and_iterations(heart, housing, capfd):
    """The lines LIBSVM prints after a solve, #iter included: SMO takes LIBSVM's exact path."""
    cases = [("c_svc", heart, "rbf"), ("nu_svc", heart, "polynomial"), ("one_class", heart, "linear"),
             ("epsilon_svr", housing, "rbf"), ("nu_svr", housing, "sigmoid")]
    for formulation, (X, y), kind in cases:
        kernel = _kernel_of(kind, X.shape[1])
        target = np.ones(len(y)) if formulation == "one_class" else y
        capfd.readouterr()
        with libsvm_one_thread():
            svmutil.svm_train(target.tolist(), _libsvm_rows(X),
                              f"-s {SVM_TYPE[formulation]} -t {KERNEL_TYPE[kind]} -g {kernel.gamma!r} -e 1e-4")
        out = capfd.readouterr().out
        lines = [line.lstrip(".*") for line in out.splitlines()
                 if line.strip(".*") and not line.startswith(("Total", "WARNING"))]
        sol = fastsvm_solve(formulation, X, y, kernel, tol=1e-4)
        assert summary_lines(sol.subproblem, sol) == lines, formulation


def test_class_weights_match_libsvm(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    K = kernel_matrix(X, X, "rbf", kernel.gamma)
    upper = np.where(y > 0, 2.0, 0.5)
    sol = assert_matches_libsvm("c_svc", X, y, kernel, K, upper=upper, extra="-w1 2 -w-1 0.5")
    assert sol.nu is None  # LIBSVM prints nu only when Cp == Cn
    assert np.all(np.abs(sol.coef) <= upper + 1e-12)


# ---------------------------------------------------------------- equivalences

@pytest.mark.parametrize("formulation", list(SVM_TYPE))
def test_integer_sample_weights_equal_repeated_rows(formulation, heart, housing):
    X, y = heart if formulation in CLASSIFICATION else housing
    X, y = X[:150], y[:150]
    kernel = _kernel_of("rbf", X.shape[1])
    w = np.random.default_rng(3).integers(1, 4, size=X.shape[0]).astype(np.float64)
    box = 1.0 if formulation in ("nu_svc", "one_class") else 2.0
    weighted = fastsvm_solve(formulation, X, y, kernel, upper=box * w, C=2.0)
    rep = np.repeat(np.arange(X.shape[0]), w.astype(int))
    repeated = fastsvm_solve(formulation, X[rep], y[rep], kernel, upper=np.full(rep.size, box), C=2.0)
    assert abs(weighted.objective - repeated.objective) <= 1e-6 * max(1.0, abs(repeated.objective))
    assert abs(weighted.rho - repeated.rho) <= 1e-4 * max(1.0, abs(repeated.rho))
    # same decision function: the repeated copies' coefficients add up
    K = kernel_matrix(X, X, "rbf", kernel.gamma)
    summed = np.bincount(rep, weights=repeated.coef, minlength=X.shape[0])
    np.testing.assert_allclose(K @ weighted.coef - weighted.rho, K @ summed - repeated.rho,
                               atol=1e-4 * max(1.0, np.abs(K @ summed).max()))


def test_precomputed_equals_linear(heart):
    X, y = heart
    linear = fastsvm_solve("c_svc", X, y, Kernel("linear"))
    _, Xp = _precomputed(X, Kernel("linear"))
    pre = fastsvm_solve("c_svc", Xp, y, Kernel("precomputed"))
    np.testing.assert_array_equal(pre.coef, linear.coef)
    assert pre.rho == linear.rho and pre.n_iter == linear.n_iter


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc", "epsilon_svr"])
def test_shrinking_on_off_same_optimum(formulation, heart, housing):
    X, y = heart if formulation in CLASSIFICATION else housing
    kernel = _kernel_of("rbf", X.shape[1])
    on = fastsvm_solve(formulation, X, y, kernel, shrinking=True)
    off = fastsvm_solve(formulation, X, y, kernel, shrinking=False)
    assert abs(on.objective - off.objective) <= 1e-6 * max(1.0, abs(off.objective))
    assert abs(on.rho - off.rho) <= 1e-5 * max(1.0, abs(off.rho))
    assert np.abs(on.coef - off.coef).max() <= 1e-3 * max(1.0, np.abs(off.coef).max())


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svr"])
def test_tiny_cache_same_result_as_large(formulation, heart, housing):
    """Evictions change what is recomputed, never a value: the run is identical."""
    X, y = heart if formulation in CLASSIFICATION else housing
    kernel = _kernel_of("rbf", X.shape[1])
    large = fastsvm_solve(formulation, X, y, kernel, cache_size=100.0)
    tiny = fastsvm_solve(formulation, X, y, kernel, cache_size=1e-6)  # two columns
    np.testing.assert_array_equal(tiny.coef, large.coef)
    assert tiny.rho == large.rho and tiny.n_iter == large.n_iter


def test_threads_and_chunking_do_not_change_the_result():
    X, y = read_shared("abalone_scale", 1500)  # columns long enough to be computed by two threads
    kernel = _kernel_of("rbf", X.shape[1])
    reference = fastsvm_solve("epsilon_svr", X, y, kernel)
    sub = Subproblem("epsilon_svr", X, y, np.ones(len(y)), kernel,
                     Params(svm_type="epsilon_svr", tol=1e-6), n_threads=2)
    threaded = smo.solve(sub)
    # every chunk is as short as allowed
    sub.params = Params(svm_type="epsilon_svr", tol=1e-6, config=smo.Config(first_chunk=1, chunk_seconds=1e-9))
    lines = []
    sub.log = lines.append
    chunked = smo.solve(sub)
    for sol in (threaded, chunked):
        np.testing.assert_array_equal(sol.coef, reference.coef)
        assert sol.rho == reference.rho and sol.n_iter == reference.n_iter
    assert len(chunked.history) > 2 and len(lines) == len(chunked.history)
    assert "max violation" in lines[0] and "active" in lines[0]


@pytest.mark.parametrize("formulation", ["c_svc", "epsilon_svr", "nu_svc"])
def test_scans_split_among_threads_give_the_serial_result(formulation):
    """Selection and gradient update over parts of the active set, combined in order, pick the
    same pairs as one scan: the same iterations and coefficients for 1, 2 and 3 parts."""
    X, y = read_shared("abalone_scale", 600)
    if formulation != "epsilon_svr":
        y = np.where(y > 9, 1.0, -1.0)
    kernel = _kernel_of("rbf", X.shape[1])
    results = []
    for threads in (1, 2, 3):
        sub = Subproblem(formulation, X, y, np.ones(len(y)), kernel,
                         Params(svm_type=formulation, tol=1e-6, nu=0.5, config=smo.Config(parallel_scan_min=1)),
                         n_threads=threads)
        results.append(smo.solve(sub))
    for sol in results[1:]:
        np.testing.assert_array_equal(sol.coef, results[0].coef)
        assert sol.rho == results[0].rho and sol.n_iter == results[0].n_iter


# ---------------------------------------------------------------- stopping, limits, errors

def test_max_iter_status(heart):
    X, y = heart
    sol = fastsvm_solve("c_svc", X, y, _kernel_of("rbf", X.shape[1]), max_iter=10)
    assert sol.status == "max_iter" and sol.n_iter == 10
    assert np.all(np.isfinite(sol.coef)) and np.isfinite(sol.rho)
    assert sol.stop_measure > 1e-6


def test_libsvm_iteration_cap():
    assert smo.libsvm_max_iter(10) == 10_000_000
    assert smo.libsvm_max_iter(200_000) == 20_000_000
    assert smo.libsvm_max_iter(2**30) == 2**31 - 1


def test_stop_flag_raises_keyboard_interrupt(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    sub = Subproblem("c_svc", X, y, np.ones(len(y)), kernel, Params(tol=1e-6))
    sub.stop[0] = 1
    with pytest.raises(KeyboardInterrupt):
        smo.solve(sub)
    sub.stop[0] = 0
    sub.log = lambda line: sub.stop.__setitem__(0, 1)  # set after the first chunk
    with pytest.raises(KeyboardInterrupt):
        smo.solve(sub)


def test_stop_flag_seen_within_a_second_mid_chunk():
    """A worker thread in the middle of a long chunk returns soon after the flag is set."""
    rng = np.random.default_rng(0)
    X = to_csr(rng.normal(size=(3000, 20)))
    y = np.where(rng.random(3000) < 0.5, 1.0, -1.0)  # pure noise: many SVs, slow to converge
    sub = Subproblem("c_svc", X, y, np.full(3000, 100.0), Kernel("rbf", gamma=0.5),
                     # one chunk: only the nogil loop can stop it
                     Params(C=100.0, tol=1e-12, cache_size=1e-6, max_iter=50_000_000,
                            config=smo.Config(first_chunk=10**9)))
    outcome = {}

    def work():
        try:
            smo.solve(sub)
            outcome["result"] = "finished"
        except KeyboardInterrupt:
            outcome["result"] = "interrupted"
        outcome["at"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.5)
    flagged = time.perf_counter()
    sub.stop[0] = 1
    worker.join(10)
    assert outcome["result"] == "interrupted"
    assert outcome["at"] - flagged < 1.0


def test_bad_input(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    with pytest.raises(ParameterError):
        fastsvm_solve("l2r_lr", X, y, kernel)
    with pytest.raises(ParameterError, match="specified nu is infeasible"):  # whole problem only
        fit_model(X, y, Params(svm_type="nu_svc", solver="smo", nu=0.99))
    with pytest.raises(FastSVMError, match="rows"):
        smo.solve(Subproblem("c_svc", X, y[:-1], np.ones(len(y) - 1), kernel, Params()))
    with pytest.raises(FastSVMError, match="bounds"):
        fastsvm_solve("c_svc", X, y, kernel, upper=np.full(len(y), np.nan))
    bad = to_csr(np.hstack([np.zeros((3, 1)), np.eye(3)]))  # serial numbers missing
    with pytest.raises(FastSVMError, match="serial"):
        fastsvm_solve("c_svc", bad, np.array([1.0, -1.0, 1.0]), Kernel("precomputed"))
    with pytest.raises(FastSVMError, match="one class"):
        fastsvm_solve("c_svc", X, np.ones(len(y)), kernel)
    with pytest.raises(FastSVMError, match="positive bound"):
        fastsvm_solve("c_svc", X, y, kernel, upper=np.zeros(len(y)))
    huge = to_csr(np.array([[1e200], [2e200]]))
    with pytest.raises(FastSVMError):
        fastsvm_solve("c_svc", huge, np.array([1.0, -1.0]), Kernel("linear"))


def test_zero_bound_rows_are_left_out(heart):
    X, y = heart
    kernel = _kernel_of("rbf", X.shape[1])
    upper = np.ones(len(y))
    upper[::7] = 0.0
    keep = upper > 0
    full = fastsvm_solve("c_svc", X, y, kernel, upper=upper)
    sub = fastsvm_solve("c_svc", X[keep], y[keep], kernel)
    assert np.all(full.coef[~keep] == 0)
    np.testing.assert_array_equal(full.coef[keep], sub.coef)


def test_registered():
    spec = get_solver("smo")
    assert spec is smo.SOLVER and spec.multiclass == "ovo" and spec.default_kernel == "rbf"
    assert spec.default_tol == 1e-3 and set(spec.kernels) == set(KERNELS)


# ---------------------------------------------------------------- NumPy twins: one SMO step

TAU = 1e-12


def twin_select(G, alpha, C, y, Q, *, eps, nu):
    """Second-order working set selection (Fan, Chen & Lin 2005), written with NumPy."""
    upper, lower = alpha >= C, alpha <= 0
    I_up = np.flatnonzero(((y > 0) & ~upper) | ((y < 0) & ~lower))
    I_low = np.flatnonzero(((y > 0) & ~lower) | ((y < 0) & ~upper))
    score = -y * G

    def last_argmax(idx):
        if idx.size == 0:
            return -1, -np.inf
        best = score[idx].max()
        return int(idx[score[idx] == best][-1]), best

    if nu:  # one maximal violator per sign (two equality constraints)
        pick = {s: last_argmax(I_up[y[I_up] == s]) for s in (1, -1)}
    else:
        pick = dict.fromkeys((1, -1), last_argmax(I_up))
    low_score = y[I_low] * G[I_low]
    gap = max(pick[s][1] + low_score[y[I_low] == s].max(initial=-np.inf) for s in (1, -1))
    best_j, best_obj = -1, np.inf
    for j in I_low:
        i, g = pick[1 if y[j] > 0 else -1]
        diff = g + y[j] * G[j]
        if diff > 0:
            quad = Q[i, i] + Q[j, j] - 2.0 * y[i] * y[j] * Q[i, j]
            obj = -diff * diff / (quad if quad > 0 else TAU)
            if obj <= best_obj:
                best_j, best_obj = j, obj
    if gap < eps or best_j == -1:
        return None
    return pick[1 if y[best_j] > 0 else -1][0], best_j


def twin_step(G, alpha, C, y, Q, *, i, j):
    """Exact minimization over the segment of (alpha_i, alpha_j) that keeps y^T alpha fixed."""
    s = -y[i] * y[j]  # alpha_i moves by s * t when alpha_j moves by t
    d = np.zeros_like(alpha)
    d[i], d[j] = s, 1.0
    quad = d @ Q @ d
    t = -(d @ G) / (quad if quad > 0 else TAU)
    lo = max(-alpha[j], (-alpha[i]) / s if s > 0 else (alpha[i] - C[i]) / 1.0)
    hi = min(C[j] - alpha[j], (C[i] - alpha[i]) / s if s > 0 else alpha[i])
    t = min(max(t, lo), hi)
    return alpha + t * d


def twin_problem(formulation, X, y, upper, conjugate=False):
    """An initialized SMO (rbf, eps 1e-6, no shrinking) and its dual in NumPy for the twins:
    (state, Q with the kernel values rounded to float32 as the cache holds them, p, signs as
    floats, signs, the start alpha, C, whether nu)."""
    n = X.shape[0]
    kernel = _kernel_of("rbf", X.shape[1])
    p, signs, alpha, C, nu, regression = smo.dual_problem(formulation, y, upper, 0.4, 0.1)
    K = kernel_matrix(X, X, "rbf", kernel.gamma)
    if regression:
        K = np.block([[K, K], [K, K]])
    s = signs.astype(np.float64)
    Q = (s[:, None] * s[None, :] * K).astype(np.float32).astype(np.float64)
    np.fill_diagonal(Q, np.diag(K))  # the diagonal is kept in double precision
    cache = KernelCache(X, "rbf", kernel.gamma, 3, 0.0, cache_bytes=1 << 20, n_threads=1,
                        sign=None if regression else signs)
    state = SMO(cache, p, signs, alpha, C, eps=1e-6, shrinking=False, nu=nu, svr_rows=n if regression else 0,
                max_iter=10**6, stop=np.zeros(1, np.int32), check_signals=False, conjugate=conjugate)
    assert state.init() == Status.CONVERGED
    return state, Q, p, s, signs, alpha, C, nu


@pytest.mark.parametrize("formulation, repeated", [("c_svc", False), ("nu_svc", False), ("nu_svr", False),
                                                   ("epsilon_svr", False), ("c_svc", True), ("epsilon_svr", True)])
def test_selection_and_step_match_numpy_twin(formulation, repeated, heart, housing):
    X, y = heart if formulation in CLASSIFICATION else housing
    X, y = X[:80], y[:80]
    upper = np.random.default_rng(1).uniform(0.5, 2.0, 80)
    if repeated:  # 13 rows repeated: exact ties in every scan, across the vectorized scans' lanes
        X, y, upper = (sp.vstack([X[:13]] * 6).tocsr(), np.tile(y[:13], 6), np.tile(upper[:13], 6))
    state, Q, p, s, signs, alpha, C, nu = twin_problem(formulation, X, y, upper)
    np.testing.assert_allclose(state.gradient(), Q @ alpha + p, rtol=1e-12, atol=1e-12)
    for _ in range(60):
        a, G = state.alpha_now(), state.gradient()
        pair = state.select_pair()
        assert pair == twin_select(G, a, C, s, Q, eps=1e-6, nu=nu)
        if pair is None:
            break
        expected = twin_step(G, a, C, s, Q, i=pair[0], j=pair[1])
        state.step(*pair)
        np.testing.assert_allclose(state.alpha_now(), expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(state.gradient(), G + Q @ (expected - a), rtol=0, atol=1e-9)
        assert abs(signs @ state.alpha_now() - signs @ alpha) < 1e-10
        assert np.all(state.alpha_now() >= 0) and np.all(state.alpha_now() <= C)


def twin_conjugate_step(G, alpha, C, y, Q, *, i, j, direction, support_max=32):
    """Conjugate SMO's step (SMO's conjugate mode), written with NumPy: along v = beta d + u, u
    the pair's direction and beta making v Q-conjugate to d, the last unclipped direction (None:
    none); to the minimum along v or the first bound it meets. The pair's own step when v does
    not descend or meets a bound at once, or when v would span over support_max variables.
    Returns (alpha, the next direction or None, whether the step was conjugate)."""
    u = np.zeros_like(alpha)
    u[i], u[j] = y[i], -y[j]
    if direction is not None and np.count_nonzero((direction != 0) | (u != 0)) <= support_max:
        beta = -(u @ Q @ direction) / (direction @ Q @ direction)
        v = beta * direction + u
        gv, vQv = v @ G, v @ Q @ v
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(v > 0, (C - alpha) / v, np.where(v < 0, alpha / -v, np.inf))
        first = int(np.argmin(room))
        if gv < 0 and vQv > 0 and room[first] > 0:
            step = min(-gv / vQv, room[first])
            moved = np.clip(alpha + step * v, 0, C)
            if step == room[first]:
                moved[first] = C[first] if v[first] > 0 else 0.0
                return moved, None, True
            return moved, v, True
    moved = twin_step(G, alpha, C, y, Q, i=i, j=j)
    free = 0 < moved[i] < C[i] and 0 < moved[j] < C[j]
    return moved, (u if free else None), False


@pytest.mark.parametrize("formulation", ["c_svc", "nu_svc", "epsilon_svr"])
def test_conjugate_steps_match_numpy_twin(formulation, heart, housing):
    X, y = heart if formulation in CLASSIFICATION else housing
    X, y = X[:80], y[:80]
    upper = np.random.default_rng(1).uniform(50.0, 200.0, 80)   # large C: long runs of free steps
    state, Q, p, s, signs, alpha, C, nu = twin_problem(formulation, X, y, upper, conjugate=True)
    direction, conjugate_steps = None, 0
    objective = 0.5 * alpha @ Q @ alpha + p @ alpha
    for _ in range(300):
        a, G = state.alpha_now(), state.gradient()
        pair = state.select_pair()
        if pair is None:
            break
        expected, direction, conjugate = twin_conjugate_step(G, a, C, s, Q, i=pair[0], j=pair[1], direction=direction)
        conjugate_steps += conjugate
        state.step(*pair)
        np.testing.assert_allclose(state.alpha_now(), expected, rtol=0, atol=1e-9)
        np.testing.assert_allclose(state.gradient(), Q @ state.alpha_now() + p, rtol=0, atol=1e-7)
        assert abs(signs @ state.alpha_now() - signs @ alpha) < 1e-9
        assert np.all(state.alpha_now() >= 0) and np.all(state.alpha_now() <= C)
        now = 0.5 * state.alpha_now() @ Q @ state.alpha_now() + p @ state.alpha_now()
        assert now < objective + 1e-9 * abs(objective)
        objective = now
    assert conjugate_steps >= 50, conjugate_steps


# ---------------------------------------------------------------- NumPy twin: the kernel cache

@pytest.mark.parametrize("kind", KERNELS)
def test_cache_columns_equal_numpy(kind, heart):
    X, y = heart
    X = X[:60]
    signs = np.where(y[:60] > 0, 1, -1).astype(np.int8)
    kernel = _kernel_of(kind, X.shape[1])
    if kind == "precomputed":
        K, X = _precomputed(X, _kernel_of("polynomial", X.shape[1]))
    else:
        K = kernel_matrix(X, X, kind, kernel.gamma, kernel.degree, coef0=kernel.coef0)
    Q = (signs[:, None] * signs[None, :] * K).astype(np.float32)
    cache = KernelCache(X, kind, kernel.gamma, kernel.degree, kernel.coef0, cache_bytes=1 << 20, n_threads=1,
                        sign=signs)
    np.testing.assert_allclose(cache.get_diagonal(), np.diag(K), rtol=1e-14)
    np.testing.assert_array_equal(cache.get_column(5, 10), Q[:10, 5])
    np.testing.assert_array_equal(cache.get_column(5), Q[:, 5])  # extended in place
    # permuted positions: column i is Q[perm, perm[i]]
    perm = np.arange(60)
    for i, j in [(0, 59), (5, 20), (3, 5), (7, 7)]:
        cache.swap_positions(i, j)
        perm[[i, j]] = perm[[j, i]]
    np.testing.assert_array_equal(cache.rows_at_positions(), perm)
    for i in (0, 5, 20, 33):
        np.testing.assert_array_equal(cache.get_column(i), Q[perm][:, perm[i]])
    idx = [3, 17, 40]
    np.testing.assert_array_equal(cache.get_block(idx), Q[perm][:, perm][np.ix_(idx, idx)])


@pytest.mark.parametrize("kind", ["linear", "polynomial", "rbf", "sigmoid"])
def test_cache_columns_of_sparse_and_dense_held_rows_equal_numpy(kind, heart):
    # heart's rows are mostly nonzero, 143 of 270 stored whole: held dense row-major; its first
    # 6 features: narrow, feature-major; with an empty 14th column no row is stored whole:
    # feature-major, as the copies take no more memory; with 60 empty columns: sparse
    X, _ = heart
    whole = np.diff(X.indptr) == X.shape[1]
    assert 0 < whole.sum() < X.shape[0]
    n = X.shape[0]
    variants = [(X, "row-major"), (X[:, :6], "feature-major"),
                (sp.hstack([X, sp.csr_matrix((n, 1))], format="csr"), "feature-major"),
                (sp.hstack([X, sp.csr_matrix((n, 60))], format="csr"), "sparse")]
    for data, layout in variants:
        data = sp.csr_matrix(data)
        kernel = _kernel_of(kind, X.shape[1])
        K = kernel_matrix(data, data, kind, kernel.gamma, kernel.degree, coef0=kernel.coef0).astype(np.float32)
        cache = KernelCache(data, kind, kernel.gamma, kernel.degree, kernel.coef0, cache_bytes=1 << 22)
        assert (cache.dense_rows, cache.feature_major) == (layout != "sparse", layout == "feature-major")
        for i in (0, 7, 269):
            np.testing.assert_array_equal(cache.get_column(i), K[:, i])
        perm = np.arange(n)
        for i, j in [(3, 200), (0, 269), (5, 3)]:
            cache.swap_positions(i, j)
            perm[[i, j]] = perm[[j, i]]
        for i in (3, 0, 5, 7):
            np.testing.assert_array_equal(cache.get_column(i), K[perm][:, perm[i]])


@pytest.mark.parametrize("kind", KERNELS)
def test_cache_over_selected_rows_equals_cache_over_their_copy(kind, heart):
    # a one-vs-one pair's rows are read in place: positions start at the given rows of X
    X, y = heart
    X = X[:80]
    kernel = _kernel_of(kind, X.shape[1])
    if kind == "precomputed":
        _, X = _precomputed(X, _kernel_of("polynomial", X.shape[1]))
    rows = np.random.default_rng(3).permutation(80)[:50]
    signs = np.where(y[rows] > 0, 1, -1).astype(np.int8)
    args = (kind, kernel.gamma, kernel.degree, kernel.coef0)
    sized = {"cache_bytes": 1 << 20, "n_threads": 1}
    in_place = KernelCache(X, *args, **sized, sign=signs, rows=rows)
    copied = KernelCache(X[rows], *args, **sized, sign=signs)
    assert in_place.n == 50
    np.testing.assert_array_equal(in_place.rows_at_positions(), rows)
    np.testing.assert_array_equal(in_place.get_diagonal(), copied.get_diagonal())
    for i, j in [(0, 49), (5, 20), (7, 7)]:
        in_place.swap_positions(i, j)
        copied.swap_positions(i, j)
    np.testing.assert_array_equal(in_place.get_diagonal(), copied.get_diagonal())
    for i in (0, 5, 20, 33):
        np.testing.assert_array_equal(in_place.get_column(i), copied.get_column(i))
    with pytest.raises(IndexError):
        KernelCache(X, *args, **sized, sign=None, rows=[0, 80])


def test_cache_eviction_under_tiny_budget(heart):
    X, y = heart
    n = X.shape[0]
    kernel = _kernel_of("rbf", X.shape[1])
    Q = kernel_matrix(X, X, "rbf", kernel.gamma).astype(np.float32)
    tiny = KernelCache(X, "rbf", kernel.gamma, cache_bytes=1, n_threads=2)
    order = np.random.default_rng(0).integers(0, n, 200)
    for i in order:
        np.testing.assert_array_equal(tiny.get_column(int(i)), Q[:, i])
        assert sum(length for _, length in tiny.cached()) <= 2 * n  # LIBSVM's floor: two columns
    assert [pos for pos, _ in tiny.cached()][-1] == order[-1]  # most recent last
    assert tiny.n_computed > 2 * n  # columns really were recomputed
    roomy = KernelCache(X, "rbf", kernel.gamma, cache_bytes=1 << 24)
    for i in order:
        roomy.get_column(int(i))
    assert roomy.n_computed == len(set(order.tolist())) * n  # each column computed once
    # the most held at once, counted as the budget is: the floor of two columns, all of them
    header = n * 20
    assert tiny.peak_bytes == header + 2 * n * 4
    assert roomy.peak_bytes == header + len(set(order.tolist())) * n * 4
    # LRU: with room for three columns the oldest goes first
    three = KernelCache(X, "rbf", kernel.gamma, cache_bytes=(3 * n + n * 5) * 4)
    for i in (1, 2, 3):
        three.get_column(i)
    three.get_column(1)
    three.get_column(4)
    assert [pos for pos, _ in three.cached()] == [3, 1, 4]


def test_cache_budget_lent_and_taken_back(heart):
    """set_budget: a smaller budget drops the least recently used columns until the rest fit
    (a solver lends the bytes to a block); a larger one keeps what is held and caches more."""
    X, y = heart
    n = X.shape[0]
    kernel = _kernel_of("rbf", X.shape[1])
    Q = kernel_matrix(X, X, "rbf", kernel.gamma).astype(np.float32)
    header = n * 20
    cache = KernelCache(X, "rbf", kernel.gamma, cache_bytes=header + 10 * n * 4)
    for i in range(10):
        cache.get_column(i)
    assert cache.held_bytes == header + 10 * n * 4
    cache.set_budget(header + 4 * n * 4 + 3)
    assert cache.held_bytes == header + 4 * n * 4
    assert [pos for pos, _ in cache.cached()] == [6, 7, 8, 9]       # the most recent kept
    computed = cache.n_computed
    np.testing.assert_array_equal(cache.get_column(9), Q[:, 9])
    assert cache.n_computed == computed                             # still held, not recomputed
    cache.set_budget(1)                                             # the floor: two columns
    assert [pos for pos, _ in cache.cached()] == [8, 9]
    cache.set_budget(header + 10 * n * 4)
    for i in range(10):
        np.testing.assert_array_equal(cache.get_column(i), Q[:, i])
    assert cache.held_bytes == header + 10 * n * 4 and cache.n_computed == computed + 8 * n


def test_cache_threaded_columns_equal_serial():
    X, _ = read_shared("abalone_scale", 2500)
    serial = KernelCache(X, "rbf", 0.7, n_threads=1)
    threaded = KernelCache(X, "rbf", 0.7, n_threads=2)
    assert threaded.parallel_min <= 2500    # the threads compute the full columns
    for i in (0, 1234, 2499):
        np.testing.assert_array_equal(threaded.get_column(i), serial.get_column(i))
        np.testing.assert_array_equal(threaded.get_column(i, 1500), serial.get_column(i)[:1500])


# ---------------------------------------------------------------- larger parity (slow)

@pytest.mark.slow
@pytest.mark.parametrize("formulation", list(SVM_TYPE))
def test_matches_libsvm_larger(formulation):
    if formulation in CLASSIFICATION:
        X, y = read_shared("a9a", 3000)
        y = np.where(y > 0, 1.0, -1.0)
    else:
        X, y = read_shared("abalone_scale")
    kernel = _kernel_of("rbf", X.shape[1])
    K = kernel_matrix(X, X, "rbf", kernel.gamma)
    assert_matches_libsvm(formulation, X, y, kernel, K, nu=0.3)  # a9a is 24% positive
