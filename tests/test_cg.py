"""fastsvm._core._cg, the one preconditioned CG: against numpy.linalg.solve, its statuses, and a
pure-NumPy twin of its recurrences held equal to the bit (the twin adds the sums in the same
order: each block of `block` entries in order, then the blocks in order)."""
import numpy as np
import pytest

from fastsvm._core._cg import DenseOperator, conjugate_gradient
from fastsvm._core._status import Status
from fastsvm.problems.vector import dot as einsum_dot


def spd(n, seed=0, cond=100.0):
    """A random symmetric positive definite matrix with eigenvalues spread over [1, cond]."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    H = (Q * np.geomspace(1.0, cond, n)) @ Q.T
    return (H + H.T) / 2


def in_order(values):
    total = 0.0
    for v in values:
        total += float(v)
    return total


def in_blocks(values, block):
    total = 0.0
    for lo in range(0, len(values), block):
        total += in_order(values[lo:lo + block])
    return total


def rows_in_order(H):
    """H's product as DenseOperator forms it: each row's dot in order."""
    return lambda v: np.array([in_order(row * v) for row in H])


def numpy_cg(apply, b, rtol, max_iter, diag=None, *, dot=None, block=4096):
    """(x, iterations, status) by the recurrences of _cg: x = 0, r = b, z = M^-1 r, d = z; while
    r.r > rtol^2 b.b and fewer than max_iter iterations: alpha = r.z / d.Hd (BREAKDOWN unless
    d.Hd > 0), x += alpha d, r -= alpha Hd, z = M^-1 r, beta = r.z(new) / r.z, d = z + beta d.
    dot: the caller's dot for every sum (else the start's and d.Hd in order, the rest in blocks)."""
    x = np.zeros_like(b)
    r = b.copy()
    z = r / diag if diag is not None else r
    d = z.copy()
    start_dot = dot or (lambda u, v: in_order(u * v))
    step_dot = dot or (lambda u, v: in_blocks(u * v, block))
    rr, rz = start_dot(r, r), start_dot(r, z)
    bound = rtol * rtol * rr
    iterations = 0
    while rr > bound:
        if iterations >= max_iter:
            return x, iterations, Status.MAX_ITER
        hd = apply(d)
        dhd = start_dot(d, hd)
        if not dhd > 0.0:
            return x, iterations, Status.BREAKDOWN
        alpha = rz / dhd
        x += alpha * d
        r -= alpha * hd
        if diag is not None:
            z = r / diag
        else:
            z = r
        iterations += 1
        rr, rz_new = step_dot(r, r), step_dot(r, z)
        beta = rz_new / rz
        rz = rz_new
        d = z + beta * d
    return x, iterations, Status.CONVERGED


def operators(H):
    return {"cython": DenseOperator(H), "python": lambda v: H @ v}


@pytest.mark.parametrize("kind,preconditioner", [("cython", None), ("cython", "diag"), ("cython", "own"),
                                                 ("python", None), ("python", "diag")])
def test_solves_spd_systems_as_numpy(kind, preconditioner):
    n = 60
    H = spd(n, seed=1, cond=1e3)
    H += np.diag(np.random.default_rng(2).uniform(0.0, 50.0, n))    # a diagonal worth preconditioning
    b = np.random.default_rng(3).standard_normal(n)
    diag = np.diag(H).copy() if preconditioner == "diag" else None
    if preconditioner == "own":
        op = DenseOperator(H, np.diag(1.0 / np.diag(H)))
    else:
        op = operators(H)[kind]
    x, iterations, status = conjugate_gradient(op, b, 1e-12, 10 * n, diag=diag)
    assert status == Status.CONVERGED and 0 < iterations <= 10 * n
    want = np.linalg.solve(H, b)
    np.testing.assert_allclose(x, want, rtol=0, atol=1e-9 * np.abs(want).max())
    assert np.linalg.norm(H @ x - b) <= 1e-11 * np.linalg.norm(b)


def test_preconditioner_cuts_iterations():
    """A badly scaled diagonal: Jacobi takes fewer iterations than none, the operator's own
    inverse of the diagonal as many as diag (the same recurrences)."""
    n = 80
    scale = np.geomspace(1.0, 1e4, n)
    H = spd(n, seed=4, cond=10.0) * np.sqrt(np.outer(scale, scale))
    b = np.random.default_rng(5).standard_normal(n)
    plain = conjugate_gradient(DenseOperator(H), b, 1e-10, 1000)
    jacobi = conjugate_gradient(DenseOperator(H), b, 1e-10, 1000, diag=np.diag(H).copy())
    own = conjugate_gradient(DenseOperator(H, np.diag(1.0 / np.diag(H))), b, 1e-10, 1000)
    assert plain[2] == jacobi[2] == own[2] == Status.CONVERGED
    assert jacobi[1] < plain[1] / 2
    assert abs(own[1] - jacobi[1]) <= 1


@pytest.mark.parametrize("kind", ["cython", "python"])
def test_iterations_at_most_the_distinct_eigenvalues(kind):
    """In exact arithmetic CG ends within as many iterations as H has distinct eigenvalues
    (and so within n); well-conditioned small systems show it."""
    rng = np.random.default_rng(6)
    Q, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    H = (Q * np.repeat([1.0, 2.0, 3.0, 5.0], [10, 8, 7, 5])) @ Q.T
    H = (H + H.T) / 2
    b = rng.standard_normal(30)
    x, iterations, status = conjugate_gradient(operators(H)[kind], b, 1e-10, 100)
    assert status == Status.CONVERGED and iterations <= 4
    for n in (1, 2, 5, 8):
        H = spd(n, seed=n, cond=10.0)
        x, iterations, status = conjugate_gradient(operators(H)[kind], np.ones(n), 1e-10, 100)
        assert status == Status.CONVERGED and iterations <= n
        np.testing.assert_allclose(H @ x, np.ones(n), atol=1e-9)


@pytest.mark.parametrize("kind", ["cython", "python"])
def test_breakdown_on_an_indefinite_operator(kind):
    H = spd(20, seed=7) - 50.0 * np.eye(20)         # eigenvalues in [-49, 50]
    b = np.random.default_rng(8).standard_normal(20)
    x, iterations, status = conjugate_gradient(operators(H)[kind], b, 1e-10, 100)
    assert status == Status.BREAKDOWN
    assert iterations == numpy_cg(lambda v: H @ v, b, 1e-10, 100)[1]
    H = -np.eye(5)                                  # at the first direction
    assert conjugate_gradient(operators(H)[kind], np.ones(5), 1e-10, 100)[1:] == (0, Status.BREAKDOWN)


@pytest.mark.parametrize("kind", ["cython", "python"])
def test_max_iter_and_zero_rhs(kind):
    H = spd(50, seed=9, cond=1e4)
    b = np.random.default_rng(10).standard_normal(50)
    assert conjugate_gradient(operators(H)[kind], b, 1e-14, 3)[1:] == (3, Status.MAX_ITER)
    assert conjugate_gradient(operators(H)[kind], b, 1e-14, 0)[1:] == (0, Status.MAX_ITER)
    x, iterations, status = conjugate_gradient(operators(H)[kind], np.zeros(50), 1e-6, 10)
    assert (iterations, status) == (0, Status.CONVERGED) and not x.any()
    x, iterations, status = conjugate_gradient(operators(np.zeros((0, 0)))[kind], np.zeros(0), 1e-6, 10)
    assert (x.shape, iterations, status) == ((0,), 0, Status.CONVERGED)


@pytest.mark.parametrize("kind", ["cython", "python"])
def test_stop_flag_interrupts(kind):
    H = spd(40, seed=11, cond=1e4)
    b = np.ones(40)
    stop = np.ones(1, dtype=np.int32)
    assert conjugate_gradient(operators(H)[kind], b, 1e-10, 1000, stop=stop)[1:] == (0, Status.INTERRUPTED)
    stop[0] = 0
    assert conjugate_gradient(operators(H)[kind], b, 1e-10, 1000, stop=stop)[2] == Status.CONVERGED


def test_stop_flag_set_during_a_solve():
    """The flag is read before every product: set by the third, CG stops after three iterations."""
    H = spd(40, seed=12, cond=1e4)
    stop = np.zeros(1, dtype=np.int32)
    calls = []

    def apply(v):
        calls.append(1)
        if len(calls) == 3:
            stop[0] = 1
        return H @ v

    assert conjugate_gradient(apply, np.ones(40), 1e-14, 100, stop=stop)[1:] == (3, Status.INTERRUPTED)


@pytest.mark.parametrize("diag", [False, True])
@pytest.mark.parametrize("block,threads", [(4096, 1), (7, 1), (7, 2), (1, 2)])
def test_cython_operator_equals_the_numpy_twin_bitwise(diag, block, threads):
    """DenseOperator's rows summed in order, the vector sums in blocks of `block`: the same bits
    as the twin's, for one or two threads."""
    n = 37
    H = spd(n, seed=13, cond=1e3) + np.diag(np.linspace(0.0, 30.0, n))
    b = np.random.default_rng(14).standard_normal(n)
    m = np.diag(H).copy() if diag else None
    x, iterations, status = conjugate_gradient(DenseOperator(H), b, 1e-11, 200, diag=m, block=block, threads=threads)
    x_twin, iterations_twin, status_twin = numpy_cg(rows_in_order(H), b, 1e-11, 200, diag=m, block=block)
    assert (iterations, status) == (iterations_twin, status_twin) and status == Status.CONVERGED
    assert np.array_equal(x, x_twin)


@pytest.mark.parametrize("diag", [False, True])
@pytest.mark.parametrize("dot", [None, einsum_dot])
def test_python_operator_equals_the_numpy_twin_bitwise(diag, dot):
    """A Python operator, the sums by the caller's dot (SSsNAL's kernel front end passes
    problems.vector.dot) or the state's: the same bits as the twin's."""
    n = 45
    H = spd(n, seed=15, cond=1e3) + np.diag(np.linspace(0.0, 30.0, n))
    b = np.random.default_rng(16).standard_normal(n)
    m = np.diag(H).copy() if diag else None
    got = conjugate_gradient(lambda v: H @ v, b, 1e-11, 200, diag=m, dot=dot, block=8)
    want = numpy_cg(lambda v: H @ v, b, 1e-11, 200, diag=m, dot=dot, block=8)
    assert got[1:] == want[1:] and got[2] == Status.CONVERGED
    assert np.array_equal(got[0], want[0])


def test_own_preconditioner_equals_diag_bitwise():
    """An Operator's own preconditioner goes through the same recurrences as diag: a diagonal one
    given both ways (the inverse exact: powers of two) gives the same bits."""
    n = 30
    m = 2.0 ** np.random.default_rng(17).integers(0, 6, n)
    H = spd(n, seed=18, cond=50.0) + np.diag(m)
    b = np.random.default_rng(19).standard_normal(n)
    via_diag = conjugate_gradient(DenseOperator(H), b, 1e-11, 200, diag=m, block=4)
    via_own = conjugate_gradient(DenseOperator(H, np.diag(1.0 / m)), b, 1e-11, 200, block=4)
    assert via_diag[1:] == via_own[1:]
    assert np.array_equal(via_diag[0], via_own[0])


def test_bad_arguments():
    H = spd(4)
    with pytest.raises(ValueError):
        conjugate_gradient(DenseOperator(H), np.ones(5), 1e-6, 10)
    with pytest.raises(ValueError):
        conjugate_gradient(DenseOperator(H, np.eye(4)), np.ones(4), 1e-6, 10, diag=np.ones(4))
    with pytest.raises(ValueError):
        conjugate_gradient(lambda v: v, np.ones(4), 1e-6, 10, diag=np.ones(3))
    with pytest.raises(TypeError):
        conjugate_gradient(H, np.ones(4), 1e-6, 10)
    with pytest.raises(ValueError):
        DenseOperator(np.ones((3, 4)))
