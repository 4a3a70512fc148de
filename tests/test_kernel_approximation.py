"""Random Fourier features and Nystroem: the Cython transforms against NumPy twins, the kernel
approximation error, thread-count determinism, the ``nystroem`` solver (its model read and
predicted by LIBSVM itself, its accuracy beside SMO's) and the scikit-learn transformers."""
import numpy as np
import pytest
import scipy.sparse as sp

import fastsvm
from conftest import shared_file
from fastsvm import Params, decision_values, fit_model, load_svmlight_file, predict, save_model
from fastsvm._core._features import fourier_features, landmark_kernel
from fastsvm._core._kernel import kernel_matrix
from fastsvm.csr import to_csr
from fastsvm.errors import FastSVMError, ParameterError
from fastsvm.kernels.approximation import EIG_RTOL, nystroem_map, random_fourier_map, sample_landmarks
from fastsvm.solvers import get_solver
from fastsvm.solvers.base import Kernel, Subproblem

KINDS = ("linear", "polynomial", "rbf", "sigmoid")


def sparse_data(n, p, density=0.3, seed=0):
    return to_csr(2 * sp.random(n, p, density=density, random_state=seed, format="csr"))


# ---------------------------------------------------------------- NumPy twins

def np_fourier(X, W, b, pairs):
    """phi(x) = sqrt(2/D) cos(W^T x + b), or sqrt(2/D) [cos(W^T x), sin(W^T x)], dense."""
    Z = np.asarray(sp.csr_matrix(X).toarray()) @ W
    if pairs:
        return np.sqrt(1.0 / W.shape[1]) * np.hstack([np.cos(Z), np.sin(Z)])
    return np.sqrt(2.0 / W.shape[1]) * np.cos(Z + b)


def np_kernel(A, B, kind, gamma=0.5, degree=3, *, coef0=1.0):
    A = sp.csr_matrix(A).toarray()
    B = sp.csr_matrix(B).toarray()
    width = max(A.shape[1], B.shape[1])
    A = np.pad(A, ((0, 0), (0, width - A.shape[1])))
    B = np.pad(B, ((0, 0), (0, width - B.shape[1])))
    dot = A @ B.T
    if kind == "rbf":
        sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * dot
        return np.exp(-gamma * np.maximum(sq, 0))
    if kind == "polynomial":
        return (gamma * dot + coef0) ** degree
    if kind == "sigmoid":
        return np.tanh(gamma * dot + coef0)
    return dot


def test_fourier_features_equal_numpy_twin():
    X = sparse_data(300, 20)
    for pairs in (False, True):
        fmap = random_fourier_map(20, 64, gamma=0.7, seed=3, pairs=pairs)
        got = fmap.transform(X)
        assert got.shape == (300, 64)
        np.testing.assert_allclose(got, np_fourier(X, fmap.weights, fmap.offset, pairs), rtol=0, atol=1e-13)
    # dense input, and columns the map never saw that hold no values
    fmap = random_fourier_map(20, 32, gamma=0.7, seed=3)
    wide = sp.hstack([X, sp.csr_matrix((300, 5))]).tocsr()
    np.testing.assert_array_equal(fmap.transform(wide), fmap.transform(X.toarray()))


@pytest.mark.parametrize("pairs", [False, True])
def test_fourier_features_sin_cos_over_a_wide_range(pairs):
    """The vectorized cos / sin of the map (Cody-Waite reduction by pi/2, Taylor polynomials):
    within 2e-16 of NumPy's on random arguments up to SINCOS_MAX (1e6) in size, on multiples of
    pi/2 (where the reduction cancels most) and at zero; rows with larger arguments go through
    libm."""
    rng = np.random.default_rng(7)
    z = np.concatenate([rng.uniform(-10, 10, 20000), rng.uniform(-1e6, 1e6, 20000),
                        np.arange(-3000, 3000) * (np.pi / 2), [0.0, -0.0, 1e-300, 3e6, -2.5e7]])
    X = sp.csr_matrix((z, np.zeros(z.size, np.int32), np.arange(z.size + 1, dtype=np.int32)), shape=(z.size, 1))
    out = np.empty((z.size, 2 if pairs else 1))
    fourier_features(X, np.ones((1, 1)), np.zeros(1), 0.5, pairs, out=out, n_threads=2)
    assert np.abs(out[:, 0] - 0.5 * np.cos(z)).max() <= 2e-16
    if pairs:
        assert np.abs(out[:, 1] - 0.5 * np.sin(z)).max() <= 2e-16

def test_fourier_map_is_drawn_as_documented():
    fmap = random_fourier_map(5, 8, gamma=2.0, seed=11)
    rng = np.random.RandomState(11)
    np.testing.assert_array_equal(fmap.weights, np.sqrt(4.0) * rng.normal(size=(5, 8)))
    np.testing.assert_array_equal(fmap.offset, rng.uniform(0, 2 * np.pi, size=8))
    pairs = random_fourier_map(5, 8, gamma=2.0, seed=11, pairs=True)
    assert pairs.weights.shape == (5, 4) and pairs.offset.size == 0 and pairs.n_components == 8


@pytest.mark.parametrize("kind", KINDS)
def test_landmark_kernel_equals_numpy_twin(kind):
    X = sparse_data(200, 12, seed=1)
    L = sparse_data(30, 9, seed=2)  # narrower: X's extra columns count against zeros
    out = np.empty((200, 30))
    landmark_kernel(X, L, kind, 0.5, 3, coef0=1.0, out=out, n_threads=2)
    np.testing.assert_allclose(out, np_kernel(X, L, kind), rtol=1e-12, atol=1e-12)
    out_t = np.empty((30, 200))
    landmark_kernel(L, X, kind, 0.5, 3, coef0=1.0, out=out_t, n_threads=1)
    np.testing.assert_allclose(out_t, out.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_nystroem_transform_equals_numpy_twin(kind):
    """phi(X) = K(X, L) K(L, L)^-1/2 with NumPy's kernel and eigendecomposition, on the same
    landmarks (the symmetric square root is unique, whatever the eigenvectors' signs)."""
    X = sparse_data(150, 10, seed=4)
    rows = sample_landmarks(150, 40, seed=5)
    fmap = nystroem_map(X, kind, 0.5, 3, 1.0, landmarks=rows, symmetric=True)
    K = np_kernel(X[rows], X[rows], kind)
    lam, U = np.linalg.eigh(0.5 * (K + K.T))
    keep = lam > 1e-12 * lam.max()
    inv_sqrt = (U[:, keep] / np.sqrt(lam[keep])) @ U[:, keep].T
    assert fmap.n_components == 40 and fmap.eigenvalues.size == keep.sum()
    Xt = sparse_data(60, 11, seed=6)
    twin = np_kernel(Xt, X[rows], kind) @ inv_sqrt
    np.testing.assert_allclose(fmap.transform(Xt), twin, rtol=0, atol=1e-9 * np.abs(twin).max())
    # the solver's form (m x r) spans the same features: equal inner products
    small = nystroem_map(X, kind, 0.5, 3, 1.0, landmarks=rows)
    F = small.transform(Xt)
    np.testing.assert_allclose(F @ F.T, twin @ twin.T, rtol=0, atol=1e-9 * np.abs(twin @ twin.T).max())


def test_landmarks_are_distinct_rows_from_the_seed():
    rows = sample_landmarks(100, 30, seed=9)
    assert np.unique(rows).size == 30 and rows.min() >= 0 and rows.max() < 100
    np.testing.assert_array_equal(rows, sample_landmarks(100, 30, seed=9))
    assert not np.array_equal(rows, sample_landmarks(100, 30, seed=10))
    with pytest.raises(ParameterError):
        sample_landmarks(10, 11)


# ---------------------------------------------------------------- approximation quality

def test_fourier_error_shrinks_like_inverse_sqrt_d():
    """E[phi(x).phi(z)] = k(x, z): the RMS error of phi(X) phi(X)^T against K, averaged over
    seeds, falls by about 4 when D grows 16 times; cos/sin pairs are exact on the diagonal and
    no worse on average."""
    X = sparse_data(80, 8, density=0.6, seed=7)
    gamma = 0.3
    K = kernel_matrix(X, X, "rbf", gamma)

    def rms(D, pairs):
        errs = []
        for seed in range(8):
            P = random_fourier_map(8, D, gamma, seed=seed, pairs=pairs).transform(X)
            errs.append(np.sqrt(np.mean((P @ P.T - K) ** 2)))
        return float(np.mean(errs))

    small, large = rms(100, False), rms(1600, False)
    assert 2.8 < small / large < 5.7, (small, large)
    assert large < 0.05
    pairs_small = rms(100, True)
    assert pairs_small < 1.1 * small
    P = random_fourier_map(8, 100, gamma, seed=0, pairs=True).transform(X)
    np.testing.assert_allclose(np.einsum("ij,ij->i", P, P), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ("linear", "polynomial", "rbf"))
def test_nystroem_with_all_rows_reproduces_the_kernel(kind):
    X, _ = load_svmlight_file(shared_file("heart_scale"))[:2]
    gamma = 1.0 / 13
    fmap = nystroem_map(X, kind, gamma, 3, 1.0, n_components=X.shape[0], seed=0)
    F = fmap.transform(X)
    np.testing.assert_allclose(F @ F.T, kernel_matrix(X, X, kind, gamma, 3, coef0=1.0), rtol=0, atol=1e-8)


def test_nystroem_error_falls_with_landmarks():
    X, _ = load_svmlight_file(shared_file("heart_scale"))[:2]
    K = kernel_matrix(X, X, "rbf", 0.2)
    errs = []
    for m in (10, 40, 160):
        F = nystroem_map(X, "rbf", 0.2, n_components=m, seed=1).transform(X)
        errs.append(np.linalg.norm(F @ F.T - K) / np.linalg.norm(K))
    assert errs[0] > 2 * errs[1] > 4 * errs[2] and errs[2] < 0.1, errs  # the error falls as landmarks are added


# ---------------------------------------------------------------- threads, stop, bad input

def test_transforms_are_the_same_bits_for_every_thread_count():
    X = sparse_data(2000, 30, density=0.5, seed=8)
    fmap = random_fourier_map(30, 400, 0.2, seed=1)
    nmap = nystroem_map(X, "rbf", 0.2, n_components=300, seed=1)
    for m in (fmap, nmap):
        one = m.transform(X, n_threads=1)
        np.testing.assert_array_equal(one, m.transform(X, n_threads=2))
        np.testing.assert_array_equal(one, m.transform(X, n_threads=3))


def test_stop_flag_interrupts_the_transforms():
    X = sparse_data(3000, 50, density=0.9, seed=2)
    stop = np.ones(1, dtype=np.int32)
    with pytest.raises(KeyboardInterrupt):
        random_fourier_map(50, 600, 0.1).transform(X, n_threads=2, stop=stop)
    L = to_csr(X[:500])
    with pytest.raises(KeyboardInterrupt):
        landmark_kernel(X, L, "rbf", 0.1, 3, coef0=0.0, out=np.empty((3000, 500)), n_threads=2, stop=stop)
    # a single block is finished: the flag is looked at between blocks
    out = np.empty((10, 500))
    landmark_kernel(X[:10], L, "rbf", 0.1, 3, coef0=0.0, out=out, n_threads=2, stop=stop)
    np.testing.assert_allclose(out, np_kernel(X[:10], L, "rbf", 0.1), atol=1e-12)


def test_bad_input_is_refused_clearly():
    fmap = random_fourier_map(4, 10, 1.0)
    with pytest.raises(FastSVMError, match="feature 6"):
        fmap.transform(sp.csr_matrix(([1.0], ([0], [5])), shape=(1, 6)))
    with pytest.raises(ParameterError):
        random_fourier_map(4, 9, 1.0, pairs=True)
    with pytest.raises(ParameterError):
        random_fourier_map(4, 0, 1.0)
    X = sparse_data(20, 4)
    with pytest.raises(ParameterError):
        nystroem_map(X, "precomputed", n_components=5)
    with pytest.raises(ParameterError):
        nystroem_map(X, "rbf", landmarks=[0, 20])
    with pytest.raises(FastSVMError):
        fmap.transform(np.array([[np.nan, 0, 0, 0]]))
    with pytest.raises(ValueError):
        fourier_features(to_csr(X), fmap.weights, fmap.offset, 1.0, False, out=np.empty((20, 9)))


# ---------------------------------------------------------------- the nystroem solver

def _heart():
    X, y = load_svmlight_file(shared_file("heart_scale"))[:2]
    return X, y


def test_solution_is_a_kernel_expansion_on_the_landmarks():
    """coef sits on the landmark rows only, and sum_j coef_j k(x_j, x) - rho is phi(x).w - rho
    of the explicit problem (the approximate model)."""
    X, y = _heart()
    kernel = Kernel("rbf", gamma=0.1)
    for formulation, target in (("c_svc", y), ("epsilon_svr", X[:, 0].toarray().ravel())):
        sub = Subproblem(formulation=formulation, X=X, y=target, upper=np.full(y.size, 2.0), kernel=kernel,
                         params=Params(svm_type=formulation, solver="nystroem", options={"landmarks": "40"}),
                         seed=5)
        sol = get_solver("nystroem").solve(sub)
        rows = sol.details["landmarks"]
        assert rows.size == 40 and set(np.flatnonzero(sol.coef)) <= set(rows)
        fmap = nystroem_map(X, "rbf", 0.1, landmarks=rows, rtol=EIG_RTOL)
        Xt = sparse_data(50, 13, seed=3)
        expansion = kernel_matrix(to_csr(Xt), X, "rbf", 0.1) @ sol.coef - sol.rho
        explicit = fmap.transform(Xt) @ sol.details["feature_weights"] - sol.rho
        np.testing.assert_allclose(expansion, explicit, rtol=1e-9, atol=1e-9)
        assert sol.status == "converged" and sol.stop_measure <= 1e-3


def test_all_rows_as_landmarks_reach_smo_optimum():
    """With m = n, phi(X) phi(X)^T = K: the explicit problem is the kernel dual itself."""
    X, y = _heart()
    common = dict(kernel_type="rbf", gamma=0.1, C=2.0, tol=1e-6)
    exact = fit_model(X, y, Params(solver="smo", **common))
    approx = fit_model(X, y, Params(solver="nystroem", options={"landmarks": 270}, **common))
    obj_exact, obj_approx = exact.info["objective"][0], approx.info["objective"][0]
    assert abs(obj_approx - obj_exact) <= 1e-4 * abs(obj_exact)
    np.testing.assert_allclose(decision_values(approx, X), decision_values(exact, X), atol=2e-3)


def _libsvm_prediction(model, X, tmp_path):
    svmutil = pytest.importorskip("libsvm.svmutil")
    path = tmp_path / "nystroem.model"
    save_model(model, path)
    loaded = svmutil.svm_load_model(str(path))
    labels, _, values = svmutil.svm_predict([], sp.csr_matrix(X), loaded, "-q")
    return np.asarray(labels), np.asarray(values)


@pytest.mark.parametrize("case", ("binary", "multiclass", "regression"))
def test_libsvm_predicts_what_the_approximate_model_predicts(case, tmp_path):
    if case == "binary":
        X, y = _heart()
        params, n_sv = Params(solver="nystroem", options={"landmarks": "60"}), 60
    elif case == "multiclass":  # 11 classes, 55 pairs with 30 landmarks each: SVs are their union
        X, y = load_svmlight_file(shared_file("vowel.scale"))[:2]
        params, n_sv = Params(solver="nystroem", C=10, gamma=1.0, options={"landmarks": "30"}), None
    else:
        X, y = load_svmlight_file(shared_file("housing_scale"))[:2]
        params = Params(svm_type="epsilon_svr", solver="nystroem", C=10, epsilon=0.5,
                        options={"landmarks": "80"})
        n_sv = 80
    model = fit_model(X, y, params)
    if n_sv is not None:
        assert model.support_vectors.shape[0] == n_sv
    rows = np.random.RandomState(0).permutation(y.size)[:150]  # LIBSVM predicts row by row: slow
    labels, values = _libsvm_prediction(model, X[rows], tmp_path)
    np.testing.assert_allclose(labels, predict(model, X[rows]), rtol=1e-12)  # SVR: values, to rounding
    np.testing.assert_allclose(values, decision_values(model, X[rows]), rtol=1e-12, atol=1e-12)


def test_approximate_accuracy_is_close_to_smo():
    """Held-out accuracy / MSE of the Nystroem model beside the exact SMO model's on the same
    split (heart_scale with 50 landmarks; 2000 a9a rows tested on 4000 of a9a.t, and a
    housing_scale split, with 200): within a small margin of SMO's."""
    X, y = _heart()
    scores = {}
    for solver, opts in (("smo", {}), ("nystroem", {"landmarks": "50"})):
        model = fit_model(X[:200], y[:200], Params(solver=solver, options=opts))
        scores[solver] = np.mean(predict(model, X[200:]) == y[200:])
    assert scores["smo"] > 0.78 and abs(scores["nystroem"] - scores["smo"]) <= 0.03, scores

    X, y = load_svmlight_file(shared_file("a9a"))[:2]
    Xt, yt = load_svmlight_file(shared_file("a9a.t"))[:2]
    for solver, opts in (("smo", {}), ("nystroem", {"landmarks": "200"})):
        model = fit_model(X[:2000], y[:2000], Params(solver=solver, gamma=1 / 123, options=opts))
        scores[solver] = np.mean(predict(model, Xt[:4000]) == yt[:4000])
    assert scores["smo"] > 0.82 and abs(scores["nystroem"] - scores["smo"]) <= 0.01, scores

    X, y = load_svmlight_file(shared_file("housing_scale"))[:2]
    perm = np.random.RandomState(0).permutation(y.size)
    train, test = perm[:400], perm[400:]
    for solver, opts in (("smo", {}), ("nystroem", {"landmarks": "200"})):
        model = fit_model(X[train], y[train], Params(svm_type="epsilon_svr", solver=solver, C=10,
                                                     epsilon=0.5, options=opts))
        scores[solver] = np.mean((predict(model, X[test]) - y[test]) ** 2)
    assert scores["nystroem"] <= 1.1 * scores["smo"], scores


def test_solver_is_deterministic_across_threads_and_seeded():
    X, y = load_svmlight_file(shared_file("vowel.scale"))[:2]
    params = dict(solver="nystroem", C=10, gamma=1.0, options={"landmarks": "30"})
    one = fit_model(X, y, Params(n_jobs=1, **params))
    two = fit_model(X, y, Params(n_jobs=2, **params))
    np.testing.assert_array_equal(one.sv_coef, two.sv_coef)
    np.testing.assert_array_equal(one.rho, two.rho)
    other = fit_model(X, y, Params(n_jobs=1, seed=1, **params))
    assert not np.array_equal(one.info["support_rows"], other.info["support_rows"])


def test_solver_options_progress_and_stop():
    X, y = _heart()
    lines = []
    model = fit_model(X, y, Params(solver="nystroem", options={"landmarks": "30", "line_search": "armijo"}),
                      log=lines.append)
    assert model.support_vectors.shape[0] == 30
    assert any(line.startswith("nystroem: 30 landmarks") for line in lines)
    assert any(line.startswith("ssnal: iter") for line in lines)
    with pytest.raises(ParameterError, match="unknown option"):
        fit_model(X, y, Params(solver="nystroem", options={"landmark": "30"}))
    with pytest.raises(ParameterError):
        fit_model(X, y, Params(solver="nystroem", options={"landmarks": "x"}))
    with pytest.raises(ParameterError):
        fit_model(X, y, Params(solver="nystroem", kernel_type="precomputed"))
    with pytest.raises(ParameterError):
        fit_model(X, y, Params(solver="nystroem", svm_type="nu_svc"))
    sub = Subproblem(formulation="c_svc", X=X, y=y, upper=np.ones(y.size), kernel=Kernel("rbf", 0.1),
                     params=Params(solver="nystroem"), stop=np.ones(1, dtype=np.int32))
    with pytest.raises(KeyboardInterrupt):
        get_solver("nystroem").solve(sub)


# ---------------------------------------------------------------- scikit-learn transformers

def test_transformers_compute_scikit_learns_maps():
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.kernel_approximation import RBFSampler

    X = sparse_data(120, 7, density=0.7, seed=5)
    ours = fastsvm.RandomFourierFeatures(gamma=0.4, n_components=50, random_state=3).fit(X)
    ref = RBFSampler(gamma=0.4, n_components=50, random_state=3).fit(X)
    np.testing.assert_allclose(ours.random_weights_, ref.random_weights_, rtol=0, atol=0)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=0, atol=1e-13)
    for kernel in ("rbf", "poly", "linear"):
        ours = fastsvm.Nystroem(kernel, n_components=7 if kernel == "linear" else 40, random_state=2).fit(X)
        ref = SkNystroem(kernel, n_components=7 if kernel == "linear" else 40, random_state=2).fit(X)
        np.testing.assert_array_equal(ours.component_indices_, ref.component_indices_)
        np.testing.assert_allclose(ours.transform(X.toarray()), ref.transform(X), rtol=0, atol=1e-8)
        assert ours.normalization_.shape == ref.normalization_.shape


def test_pipeline_with_linear_svc():
    from sklearn.pipeline import make_pipeline

    X, y = _heart()
    pipe = make_pipeline(fastsvm.RandomFourierFeatures(gamma=0.05, n_components=300, random_state=0),
                         fastsvm.LinearSVC(C=1.0))
    pipe.fit(X[:200], y[:200])
    assert pipe.score(X[200:], y[200:]) > 0.75
    pipe = make_pipeline(fastsvm.Nystroem(gamma=0.05, n_components=100, random_state=0), fastsvm.LinearSVC())
    assert pipe.fit(X[:200], y[:200]).score(X[200:], y[200:]) > 0.75


@pytest.mark.filterwarnings("ignore:n_components > n_samples")
@pytest.mark.parametrize("name", ("RandomFourierFeatures", "Nystroem"))
def test_check_estimator(name):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(getattr(fastsvm, name)(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "failed"]
    assert not failed
