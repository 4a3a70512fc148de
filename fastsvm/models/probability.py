"""Probability estimates as LIBSVM 3.37 forms them.

Prediction side (the first section): Platt's sigmoid per one-vs-one classifier, clipped to
[1e-7, 1 - 1e-7]; pairwise coupling (method 2 of Wu, Lin and Weng, JMLR 2004) for more than two
classes; one-class probabilities from the ten density marks of Que and Lin; the Laplace scale of
SVR models. Every function works on all rows at once but keeps LIBSVM's per-row arithmetic order,
so the numbers agree with svm_predict_probability to rounding.

Fitting side (Platt's sigmoid training on internal cross-validation decision values, the
density marks, the Laplace scale): the second section.
"""
import numpy as np

from ..errors import FastSVMError

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
# scale). fastsvm.training.trainer supplies the training of each fold and the row order the folds are cut
# from: LIBSVM's rand() stream or a seeded generator (fold_orders).
# ----------------------------------------------------------------------------------------------

N_PROBABILITY_FOLDS = 5  # LIBSVM's internal cross-validation for probability models
PLATT_MAX_ITER = 100
PLATT_MIN_STEP = 1e-10  # smallest line-search step
PLATT_RIDGE = 1e-12  # added to the Hessian's diagonal: strictly positive definite
PLATT_TOL = 1e-5  # on both gradient components


def probability_generator(seed, index):
    """The random stream of one probability fit: from the training seed and the subproblem's
    position (one-vs-one pair index, 0 otherwise), so threads cannot change it."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def fold_orders(sizes, seed, stream=None):
    """The shuffled row order of each subproblem's probability cross-validation (sizes: its
    rows), drawn before any thread runs: from LIBSVM's rand() ``stream`` in subproblem order as
    svm_train consumes it (one draw per row), else from ``seed`` and the subproblem's position."""
    if stream is not None:
        return [stream.permutation(n) for n in sizes]
    return [probability_generator(seed, k).permutation(n) for k, n in enumerate(sizes)]


def probability_draws(svm_type, n_classes, n_rows):
    """How many rand() values LIBSVM's probability fit of one training consumes: one per row of
    every one-vs-one pair (each row is in n_classes - 1 pairs), one per row for an SVR's
    folds, none for one-class (its density marks need no folds)."""
    if svm_type in ("c_svc", "nu_svc"):
        return max(n_classes - 1, 0) * n_rows
    return n_rows if svm_type in ("epsilon_svr", "nu_svr") else 0


def sigmoid_train(dec, labels, log=None):
    """Platt's sigmoid fitted as Lin, Lin and Weng (2007) improve it: (A, B) minimising the
    log-loss of P(y = +1 | f) = 1 / (1 + exp(A f + B)) against Platt's regularised targets
    (n+ + 1) / (n+ + 2) for positives and 1 / (n- + 2) for negatives, by Newton's method with a
    backtracking line search from A = 0, B = log((n- + 1) / (n+ + 1)).

    ``labels`` > 0 marks the positive class. LIBSVM's two notes (line search failed, iteration
    limit reached) go to ``log``.
    """
    dec = np.asarray(dec, dtype=np.float64)
    positive = np.asarray(labels) > 0
    n_pos = float(np.count_nonzero(positive))
    n_neg = float(positive.size) - n_pos
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    a, b = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    loss = _sigmoid_loss(dec, target, a, b)
    for _ in range(PLATT_MAX_ITER):
        p, q = _sigmoid_sides(dec * a + b)
        d2 = p * q
        h11 = PLATT_RIDGE + dec @ (dec * d2)
        h22 = PLATT_RIDGE + d2.sum()
        h21 = dec @ d2
        d1 = target - p
        g1, g2 = dec @ d1, d1.sum()
        if abs(g1) < PLATT_TOL and abs(g2) < PLATT_TOL:
            break
        det = h11 * h22 - h21 * h21
        da = -(h22 * g1 - h21 * g2) / det
        db = -(-h21 * g1 + h11 * g2) / det
        slope = g1 * da + g2 * db
        step = 1.0
        while step >= PLATT_MIN_STEP:
            new_loss = _sigmoid_loss(dec, target, a + step * da, b + step * db)
            if new_loss < loss + 1e-4 * step * slope:  # sufficient decrease (Armijo)
                a, b, loss = a + step * da, b + step * db, new_loss
                break
            step /= 2.0
        if step < PLATT_MIN_STEP:
            _note(log, "Line search fails in two-class probability estimates")
            break
    else:
        _note(log, "Reaching maximal iterations in two-class probability estimates")
    return a, b


def _sigmoid_sides(f):
    """(1 / (1 + e^f), 1 / (1 + e^-f)) without overflow: P(+1) and P(-1) at f = A dec + B."""
    e = np.exp(-np.abs(f))
    small, large = e / (1.0 + e), 1.0 / (1.0 + e)
    nonneg = f >= 0
    return np.where(nonneg, small, large), np.where(nonneg, large, small)


def _sigmoid_loss(dec, target, a, b):
    """sum_i t_i f_i + log(1 + e^-f_i), f = A dec + B: the cross-entropy against the targets,
    written on the side where the exponential cannot overflow."""
    f = dec * a + b
    return float(np.sum(target * f - np.minimum(f, 0.0) + np.log1p(np.exp(-np.abs(f)))))


def _note(log, line):
    if log is not None:
        log(line)


def cross_validated_values(perm, fit_fold, n_folds=N_PROBABILITY_FOLDS):
    """Decision values of the rows, each from a model that did not see it: the shuffled row
    order ``perm`` is cut into n_folds consecutive pieces (LIBSVM's unstratified folds);
    ``fit_fold(train, test)`` trains on the row indices ``train`` (in perm's order, as LIBSVM
    hands them to training) and returns the decision values of ``test``."""
    n = len(perm)
    out = np.empty(n)
    for f in range(n_folds):
        begin, end = f * n // n_folds, (f + 1) * n // n_folds
        test = perm[begin:end]
        if test.size:
            out[test] = fit_fold(np.concatenate((perm[:begin], perm[end:])), test)
    return out


def binary_cv_decision_values(y, fit_fold, perm):
    """5-fold cross-validated decision values of a +1/-1 problem, as svm_binary_svc_probability
    forms them: a fold whose training part holds one class only gets the constant +1 or -1 (0
    when that part is empty) instead of a model."""
    positive = np.asarray(y) > 0

    def fold(train, test):
        has_pos, has_neg = bool(positive[train].any()), bool((~positive[train]).any())
        if has_pos and has_neg:
            return fit_fold(train, test)
        return np.full(test.size, 1.0 if has_pos else (-1.0 if has_neg else 0.0))

    return cross_validated_values(perm, fold)


def platt_parameters(y, fit_fold, perm, log=None):
    """LIBSVM's svm_binary_svc_probability: Platt's (A, B) on cross-validated decision values
    (folds cut from the row order ``perm``)."""
    return sigmoid_train(binary_cv_decision_values(y, fit_fold, perm), np.asarray(y) > 0, log)


def laplace_scale(residuals):
    """sigma of a Laplace fit to target - prediction (LIBSVM's svm_svr_probability): the mean
    absolute residual, recomputed without the residuals beyond 5 standard deviations of the
    first fit (std = sqrt(2) mean |r| for a Laplace distribution)."""
    r = np.abs(np.asarray(residuals, dtype=np.float64))
    std = np.sqrt(2.0) * r.mean()
    return float(r[r <= 5.0 * std].mean())


def svr_probability(y, fit_fold, perm, log=None):
    """The Laplace scale of an SVR model from 5-fold cross-validated predictions (folds cut from
    the row order ``perm``)."""
    y = np.asarray(y, dtype=np.float64)
    sigma = laplace_scale(y - cross_validated_values(perm, fit_fold))
    _note(log, "Prob. model for test data: target value = predicted value + z,")
    _note(log, f"z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= {sigma:g}")
    return sigma


def density_marks(dec):
    """Que and Lin's ten density marks for one-class probabilities from the training decision
    values: five bins of equal count below zero and five above, each mark halfway between
    neighbouring bin edges. None when fewer than five values fall on either side."""
    dec = np.sort(np.asarray(dec, dtype=np.float64))
    n_neg = int(np.searchsorted(dec, 0.0, side="left"))  # values < 0
    n_pos = dec.size - n_neg
    half = N_DENSITY_MARKS // 2
    if n_neg < half or n_pos < half:
        return None
    edges = np.empty(N_DENSITY_MARKS + 1)
    for i in range(half):
        edges[i] = dec[i * n_neg // half]
    edges[half] = 0.0
    for i in range(half + 1, N_DENSITY_MARKS + 1):
        edges[i] = dec[n_neg - 1 + (i - half) * n_pos // half]
    return (edges[:-1] + edges[1:]) / 2
