"""fastsvm._core._losses (the linear primal solvers' per-sample losses) against NumPy twins and
check_grad, and the same bits for any thread count."""
import numpy as np
import pytest
from scipy.optimize import check_grad

from scipy.optimize import minimize_scalar

from fastsvm._core._losses import (alpha_sums, huber_norm, multiplier_step, power_hinge_conjugate_sum,
                                   power_hinge_loss, power_hinge_prox, smoothed_hinge_loss, squared_error_loss)
from fastsvm._core._margins import LabeledRows
from fastsvm.errors import FastSVMError
from test_margins import random_rows


def twin_smoothed_hinge(z, rho, weight, mu):
    m = 1.0 - z
    scale = mu * rho
    u = np.where(scale > 0, np.clip(m / np.where(scale > 0, scale, 1.0), 0.0, 1.0), 1.0)
    h = u * m - 0.5 * scale * u * u
    return u, float(weight @ h), float(weight @ np.maximum(m, 0.0))


@pytest.mark.parametrize("mu", [1.0, 0.05, 1e-4])
def test_smoothed_hinge_against_numpy_and_within_mu_rho_over_2_of_the_hinge(mu):
    rng = np.random.default_rng(1)
    n = 5000
    z = rng.normal(1.0, 1.0, n)
    rho = rng.uniform(0.1, 3.0, n)
    rho[::97] = 0.0                          # all-zero rows without a bias: u = 1, loss 1
    z[::97] = 0.0
    weight = rng.uniform(0.0, 2.0, n)
    alpha = np.empty(n)
    smooth, hinge = smoothed_hinge_loss(z, rho, weight, mu, alpha)
    u_np, smooth_np, hinge_np = twin_smoothed_hinge(z, rho, weight, mu)
    np.testing.assert_allclose(alpha, weight * u_np, rtol=0, atol=1e-15)
    assert smooth == pytest.approx(smooth_np, rel=1e-12)
    assert hinge == pytest.approx(hinge_np, rel=1e-12)
    assert np.all(alpha[::97] == weight[::97])
    # Nesterov's bound (Thm 1 with the row scale): 0 <= hinge - h <= mu rho / 2 per row
    assert 0.0 <= hinge - smooth <= 0.5 * mu * float(weight @ rho) + 1e-9


def test_smoothed_objective_gradient_passes_check_grad():
    """F_mu(w) = |w|^2 / 2 + sum C_i h_mu(a_i.w) assembled from the kernels: its gradient
    -A^T alpha + w (bias unpenalized) is the derivative of its value."""
    X, y, C = random_rows(n=120, p=9, density=0.5, seed=3)
    rows = LabeledRows(X, y, C, bias=1.0)
    rho = rows.row_scales()
    mu = 0.3

    def fun(w):
        z = rows.margins(w, np.empty(rows.n_rows))
        return 0.5 * w[:-1] @ w[:-1] + smoothed_hinge_loss(z, rho, C, mu, np.empty(rows.n_rows))[0]

    def grad(w):
        z = rows.margins(w, np.empty(rows.n_rows))
        alpha = np.empty(rows.n_rows)
        smoothed_hinge_loss(z, rho, C, mu, alpha)
        g = -rows.rmatvec(alpha, np.empty(rows.n_weights))
        g[:-1] += w[:-1]
        return g

    for seed in range(3):
        w = np.random.default_rng(seed).normal(0, 0.3, rows.n_weights)
        assert check_grad(fun, grad, w) <= 1e-5 * max(1.0, np.linalg.norm(grad(w)))


def test_squared_error_and_squared_hinge_against_numpy():
    rng = np.random.default_rng(2)
    z, weight = rng.normal(size=20000), rng.uniform(0, 3, 20000)
    alpha = np.empty_like(z)
    value = squared_error_loss(z, weight, alpha)
    np.testing.assert_allclose(alpha, 2.0 * weight * (1.0 - z), rtol=1e-15, atol=0)
    assert value == pytest.approx(float(weight @ (1.0 - z) ** 2), rel=1e-12)
    value = squared_error_loss(z, weight, alpha, hinged=True)        # the squared hinge
    r = np.maximum(0.0, 1.0 - z)
    np.testing.assert_allclose(alpha, 2.0 * weight * r, rtol=1e-15, atol=0)
    assert value == pytest.approx(float(weight @ r**2), rel=1e-12)


def test_huber_against_numpy_and_check_grad():
    rng = np.random.default_rng(4)
    w = rng.normal(0, 1, 50)
    mu = 0.4
    grad = np.empty_like(w)
    value = huber_norm(w, mu, grad)
    a = np.abs(w)
    assert value == pytest.approx(float(np.sum(np.where(a <= mu, w * w / (2 * mu), a - mu / 2))), rel=1e-14)
    np.testing.assert_allclose(grad, np.clip(w / mu, -1, 1), rtol=0, atol=1e-15)
    assert check_grad(lambda v: huber_norm(v, mu, np.empty_like(v)),
                      lambda v: (lambda g: (huber_norm(v, mu, g), g)[1])(np.empty_like(v)), w) <= 1e-6


def test_alpha_sums_against_numpy():
    rng = np.random.default_rng(6)
    n = 30000
    alpha, y, rho = rng.uniform(0, 2, n), np.where(rng.random(n) < 0.4, -1.0, 1.0), rng.uniform(0.5, 2, n)
    weight = rng.uniform(0.5, 2, n)
    weight[::5] = 0.0                 # C_i = 0: no quadratic term
    kept = weight > 0
    safe = np.where(kept, weight, 1.0)
    expected = (alpha.sum(), y @ alpha, np.sum(np.where(kept, rho * alpha**2 / safe, 0)),
                np.sum(np.where(kept, alpha**2 / safe, 0)))
    np.testing.assert_allclose(alpha_sums(alpha, y, weight, rho), expected, rtol=1e-12)
    assert alpha_sums(alpha, y, weight)[2] == 0.0
    np.testing.assert_array_equal(alpha_sums(alpha, y, weight, rho, 1), alpha_sums(alpha, y, weight, rho, 2))


def test_loss_sums_have_the_same_bits_for_any_thread_count():
    rng = np.random.default_rng(5)
    n = 100_003                                    # 13 chunks, the last one short
    z, rho, weight = rng.normal(1, 1, n), rng.uniform(0.1, 2, n), rng.uniform(0, 2, n)
    one = smoothed_hinge_loss(z, rho, weight, 0.01, np.empty(n), n_threads=1)
    for threads in (2, 3):
        assert smoothed_hinge_loss(z, rho, weight, 0.01, np.empty(n), n_threads=threads) == one
    r = np.empty(n)
    assert squared_error_loss(z, weight, r, 1) == squared_error_loss(z, weight, r, 2)


def test_losses_refuse_bad_arguments():
    z = np.zeros(3)
    with pytest.raises(FastSVMError, match="mu"):
        smoothed_hinge_loss(z, np.ones(3), np.ones(3), 0.0, np.empty(3))
    with pytest.raises(FastSVMError, match="entries"):
        smoothed_hinge_loss(z, np.ones(2), np.ones(3), 1.0, np.empty(3))
    with pytest.raises(FastSVMError, match="entries"):
        squared_error_loss(z, np.ones(3), np.empty(4))
    with pytest.raises(FastSVMError, match="mu"):
        huber_norm(z, -1.0, np.empty(3))


# ---------------------------------------------------------------- the Lp hinge (SVM-ALM)

def brute_force_prox(r, gamma, p):
    """argmin_s gamma max(0, s)^p + (s - r)^2 / 2 by a bounded scalar search (the minimizer lies
    between min(r, 0) and max(r, 0))."""
    def f(s):
        return gamma * max(0.0, s) ** p + 0.5 * (s - r) ** 2
    lo, hi = min(r, 0.0) - 1e-9, max(r, 0.0) + 1e-9
    return minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x, f


@pytest.mark.parametrize("p", [1.0, 1.2, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("label", [1.0, -1.0])
def test_power_hinge_prox_against_brute_force(p, label):
    """The e-update in e-space: t = y - x.w - b - lambda / mu, r = y t, e = y s."""
    rng = np.random.default_rng(int(10 * p))
    t = rng.normal(0.0, 2.0, 300)
    gamma = rng.uniform(0.01, 5.0, 300)
    r = label * t
    s = np.empty(300)
    power_hinge_prox(r, gamma, p, s)
    for i in range(300):
        ref, f = brute_force_prox(r[i], gamma[i], p)
        assert f(s[i]) <= f(ref) + 1e-12 * (1.0 + abs(f(ref)))
        assert s[i] == pytest.approx(ref, abs=1e-6)
    if p not in (1.0, 2.0):     # the root, to the last bits
        inside = s > 0
        residual = p * gamma[inside] * s[inside] ** (p - 1) + s[inside] - r[inside]
        assert np.abs(residual).max() <= 1e-13 * np.abs(r[inside]).max()


def test_power_hinge_prox_at_the_documented_check():
    """docs/algorithms.md §4's check: p = 1.5, gamma = 1, t = -2, y = -1 -> e = -0.7238284110, the
    closed form s = ((sqrt(2.25 + 8) - 1.5) / 2)^2 of s + 1.5 sqrt(s) = 2."""
    s = np.empty(1)
    power_hinge_prox(np.array([2.0]), np.array([1.0]), 1.5, s)
    assert -s[0] == pytest.approx(-0.7238284110, abs=1e-10)


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0])
def test_power_hinge_loss_and_conjugate_against_numpy(p):
    rng = np.random.default_rng(3)
    n = 20000
    z = rng.normal(1.0, 1.0, n)
    weight = rng.uniform(0.0, 2.0, n)
    weight[::50] = 0.0
    assert power_hinge_loss(z, weight, p) == pytest.approx(float(weight @ np.maximum(0.0, 1.0 - z) ** p),
                                                           rel=1e-12)
    alpha = rng.uniform(0.0, 1.0, n) * weight
    a = np.divide(alpha, weight, out=np.zeros(n), where=weight > 0)
    conj = 0.0 if p == 1.0 else float(weight @ ((p - 1.0) * (a / p) ** (p / (p - 1.0))))
    assert power_hinge_conjugate_sum(alpha, weight, p) == pytest.approx(conj, rel=1e-12, abs=1e-300)
    # Fenchel-Young: C l(s) + C l*(a) >= a s, tight at a = C p s^(p-1) (p > 1)
    if p > 1.0:
        s = np.maximum(0.0, 1.0 - z)
        tight = weight * p * s ** (p - 1.0)
        lhs = power_hinge_loss(z, weight, p) + power_hinge_conjugate_sum(tight, weight, p)
        assert lhs == pytest.approx(float(tight @ s), rel=1e-10)
    for threads in (2, 3):
        assert power_hinge_loss(z, weight, p, threads) == power_hinge_loss(z, weight, p, 1)
        assert power_hinge_conjugate_sum(alpha, weight, p, threads) == power_hinge_conjugate_sum(alpha, weight, p)


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0])
def test_multiplier_step_against_numpy(p):
    """SVM-ALM's fused per-sample pass: z -= step q, nu += mu (z - 1 + s), then at mu_next the prox
    s and the residual res = z - 1 + s + nu / mu_next; the same bits for any thread count."""
    rng = np.random.default_rng(5)
    n = 30000
    z0, q, nu0, s0 = (rng.normal(size=n) for _ in range(4))
    weight = rng.uniform(0.5, 2.0, n)
    mu, mu_next, step = 0.3, 0.45, 0.7
    z_np = z0 - step * q
    nu_np = nu0 + mu * (z_np - 1.0 + s0)
    s_np = np.empty(n)
    power_hinge_prox(1.0 - z_np - nu_np / mu_next, weight / mu_next, p, s_np)
    res_np = z_np - 1.0 + s_np + nu_np / mu_next
    results = []
    for threads in (1, 2):
        z, nu, s, res = z0.copy(), nu0.copy(), s0.copy(), np.empty(n)
        multiplier_step(z, q, step, nu, s, res=res, weight=weight, mu=mu, mu_next=mu_next, p=p, update=True,
                        n_threads=threads)
        np.testing.assert_allclose(z, z_np, rtol=1e-15, atol=0)
        np.testing.assert_allclose(nu, nu_np, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(s, s_np, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(res, res_np, rtol=1e-12, atol=1e-14)
        results.append((z, nu, s, res))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    z, nu, s, res = z0.copy(), nu0.copy(), s0.copy(), np.empty(n)
    # the first pass: no update
    multiplier_step(z, q, step, nu, s, res=res, weight=weight, mu=mu, mu_next=mu, p=p, update=False)
    np.testing.assert_array_equal(z, z0)
    np.testing.assert_array_equal(nu, nu0)


def test_power_hinge_refuses_a_power_below_one():
    with pytest.raises(FastSVMError, match="p must be >= 1"):
        power_hinge_loss(np.zeros(3), np.ones(3), 0.5)
