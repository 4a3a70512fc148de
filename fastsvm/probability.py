"""Probability estimates as LIBSVM 3.37 forms them.

Prediction side (here now): Platt's sigmoid per one-vs-one classifier, clipped to
[1e-7, 1 - 1e-7]; pairwise coupling (method 2 of Wu, Lin and Weng, JMLR 2004) for more than two
classes; one-class probabilities from the ten density marks of Que and Lin; the Laplace scale of
SVR models. Every function works on all rows at once but keeps LIBSVM's per-row arithmetic order,
so the numbers agree with svm_predict_probability to rounding.

Fitting side (Platt's sigmoid training on internal cross-validation decision values, the
density marks, the Laplace scale) belongs below the prediction side, in its own section.
"""
import numpy as np

from .errors import FastSVMError

MIN_PROB = 1e-7  # pairwise probabilities are clipped to [MIN_PROB, 1 - MIN_PROB]
N_DENSITY_MARKS = 10


# ----------------------------------------------------------------------------------------------
# Prediction side
# ----------------------------------------------------------------------------------------------

def sigmoid_predict(dec, a, b):
    """P(y = +1 | f) = 1 / (1 + exp(f a + b)), evaluated on the side that does not cancel."""
    f = np.asarray(dec, dtype=np.float64) * a + b
    out = np.empty_like(f)
    pos = f >= 0
    e = np.exp(-f[pos])
    out[pos] = e / (1.0 + e)
    out[~pos] = 1.0 / (1.0 + np.exp(f[~pos]))
    return out


def pairwise_probabilities(dec, prob_a, prob_b, nr_class):
    """r[:, i, j] = P(y = i | y in {i, j}, x) from the one-vs-one decision values (n x pairs)."""
    n = dec.shape[0]
    r = np.zeros((n, nr_class, nr_class))
    p = 0
    for i in range(nr_class):
        for j in range(i + 1, nr_class):
            rij = _clip(sigmoid_predict(dec[:, p], prob_a[p], prob_b[p]), MIN_PROB, 1 - MIN_PROB)
            r[:, i, j] = rij
            r[:, j, i] = 1 - rij
            p += 1
    return r


def _clip(x, low, high):
    """min(max(x, low), high) with C's comparisons: a NaN becomes low, as in LIBSVM."""
    x = np.where(x > low, x, low)
    return np.where(x < high, x, high)


def couple(r):
    """Class probabilities (n x k) from pairwise probabilities r (n x k x k): LIBSVM's
    multiclass_probability, iterated row by row until each row's own stopping test holds.

    The loops run over classes with whole-row vectors, summing in LIBSVM's order, so each row sees
    exactly the sequence of operations LIBSVM performs for it."""
    n, k, _ = r.shape
    # Q[t][t] = sum_{j != t} r_jt^2 ; Q[t][j] = -r_jt r_tj
    Q = np.empty((n, k, k))
    for t in range(k):
        qtt = np.zeros(n)
        for j in range(k):
            if j != t:
                qtt = qtt + r[:, j, t] * r[:, j, t]
                Q[:, t, j] = -r[:, j, t] * r[:, t, j]
        Q[:, t, t] = qtt
    out = np.empty((n, k))
    active = np.arange(n)
    p = np.full((n, k), 1.0 / k)
    eps = 0.005 / k
    for _ in range(max(100, k)):
        qp = np.zeros((len(active), k))
        for t in range(k):
            for j in range(k):
                qp[:, t] = qp[:, t] + Q[:, t, j] * p[:, j]
        pqp = np.zeros(len(active))
        for t in range(k):
            pqp = pqp + p[:, t] * qp[:, t]
        done = np.max(np.abs(qp - pqp[:, None]), axis=1) < eps
        out[active[done]] = p[done]
        keep = ~done
        active, p, qp, pqp, Q = active[keep], p[keep], qp[keep], pqp[keep], Q[keep]
        if len(active) == 0:
            return out
        for t in range(k):
            diff = (-qp[:, t] + pqp) / Q[:, t, t]
            p[:, t] = p[:, t] + diff
            one = 1 + diff
            pqp = (pqp + diff * (diff * Q[:, t, t] + 2 * qp[:, t])) / one / one
            qp = (qp + diff[:, None] * Q[:, t, :]) / one[:, None]
            p = p / one[:, None]
    out[active] = p  # LIBSVM stops here too ("Exceeds max_iter in multiclass_prob")
    return out


def classification_probabilities(dec, prob_a, prob_b, nr_class):
    """Class probabilities (n x nr_class) in label order for one-vs-one decision values."""
    r = pairwise_probabilities(dec, prob_a, prob_b, nr_class)
    if nr_class == 2:
        return np.stack([r[:, 0, 1], r[:, 1, 0]], axis=1)
    return couple(r)


def one_class_probability(dec, marks):
    """P(normal | x) from the decision value: 0.001 below the first mark, 0.999 above the last,
    else i / 10 for the first mark i (1..9) that dec is below (0 if none: dec equals the last
    mark, exactly as LIBSVM)."""
    dec = np.asarray(dec, dtype=np.float64)
    n_marks = len(marks)
    prob = np.zeros(dec.shape)
    unset = np.ones(dec.shape, dtype=bool)
    for i in range(1, n_marks):
        hit = unset & (dec < marks[i])
        prob[hit] = i / n_marks
        unset &= ~hit
    prob[dec > marks[n_marks - 1]] = 0.999
    prob[dec < marks[0]] = 0.001
    return prob


def svr_laplace_scale(model):
    """sigma of the Laplace noise model e^(-|z|/sigma) / (2 sigma) of an SVR trained with
    probability estimates: target = prediction + z (LIBSVM's svm_get_svr_probability)."""
    if model.svm_type not in ("epsilon_svr", "nu_svr") or model.prob_a is None:
        raise FastSVMError("the model has no SVR probability information (train with -b 1)")
    return float(model.prob_a[0])


def has_probability_model(model):
    """LIBSVM's svm_check_probability_model."""
    if model.is_classification:
        return model.prob_a is not None and model.prob_b is not None
    if model.svm_type == "one_class":
        return model.prob_density_marks is not None
    return model.prob_a is not None


# ----------------------------------------------------------------------------------------------
# Fitting side (Platt's sigmoid on cross-validation decision values, density marks, Laplace
# scale): added with probability training.
# ----------------------------------------------------------------------------------------------
