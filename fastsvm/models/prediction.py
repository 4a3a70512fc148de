"""Prediction with a Model, as LIBSVM 3.37's svm_predict_values / svm_predict /
svm_predict_probability compute it, for all rows of a sparse matrix at once.

X is anything ``fastsvm.csr.to_rows`` takes (a dense array is read as it is, its kernel values
by BLAS, where the model's support vectors fit a dense table); column j is LIBSVM feature index j + 1, except for
the precomputed kernel, whose rows are ``[serial, k(x, x_1), k(x, x_2), ...]`` read zero-based
(column c = index c), so the kernel value against a support vector with serial number s is
X[:, s]. Columns beyond the model's width (or missing ones) count as zeros.

A linear-kernel model predicts through its weight vectors w_p = sum_i coef_{p,i} sv_i
(``Model.decision_weights``), a row then costing its own stored values per decision instead of
a pass over every support vector. The values differ from LIBSVM's support-vector sums in the
last digits (~1e-15 relative), so ``exact`` decides where that path applies (decision_values'
docstring says how); a regression model, whose values fastsvm-predict writes with %.17g as
svm-predict does, keeps LIBSVM's sums by default up to EXACT_REGRESSION_LIMIT stored values.
"""
import numpy as np

from .._core._linear_predict import LinearDecisionFunction
from .._core._predict import DecisionFunction
from .columns import NARROW_WIDTH, columns_to_keep, compressed, first_columns
from ..csr import RowSelection, is_dense, to_csr, to_rows
from ..errors import FastSVMError
from ..memory import check_request
from ..parallel import effective_n_jobs, one_blas_thread
from .probability import classification_probabilities, has_probability_model, one_class_probability


# Stored support-vector values above which a linear regression model predicts through w by
# default: the multiply-adds an exact sum costs a row (e.g. 2,000 SVs x 50 features), where a
# large batch of rows becomes slow to predict (tools/bench_predict_linear.py times both paths).
EXACT_REGRESSION_LIMIT = 100_000
# kernel values of one block of rows in predict_many (32 MB)
SHARED_BLOCK_VALUES = 1 << 22
# W may hold this many more values than the support vectors before the weight path is refused
# (many classes: each w_p sums two classes' support vectors).
EXTRA_WEIGHT_VALUES = 1 << 20


def decision_values(model, X, n_jobs=None, exact=None):
    """Decision values of a model on the rows of X, as LIBSVM's svm_predict_values computes them.

    Parameters
    ----------
    model : Model
        The trained model (fit_model, load_model, or an estimator's ``model_``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows, anything ``fastsvm.csr.to_rows`` takes; column j is LIBSVM feature index
        j + 1, and columns beyond the model's width (or missing ones) count as zeros. For the
        precomputed kernel, rows ``[serial, k(x, x_1), k(x, x_2), ...]`` read zero-based, so
        the kernel value against the support vector of serial number s is X[:, s].
    n_jobs : int, default=None
        Threads. None means all cores.
    exact : bool or None, default=None
        For a linear-kernel model, which predicts through its weight vectors w_p when that is
        cheaper, with values that differ from LIBSVM's support-vector sums in the last digits:
        True gives LIBSVM's sums (its bits) for every model, False the weight vectors whenever
        cheaper. None: classification and one-class models, whose labels only use the sign of
        the values, always take the weight vectors when cheaper; a regression model only when
        its support vectors hold more than ``EXACT_REGRESSION_LIMIT`` values.

    Returns
    -------
    values : ndarray of shape (n_samples, n_dec)
        One column per classifier (0, 1), (0, 2), ..., (1, 2), ... in label order for
        classification, one column for regression and one-class.

    Examples
    --------
    >>> import numpy as np
    >>> import fastsvm
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0], [6.0, 0.0], [6.0, 1.0]])
    >>> model = fastsvm.fit_model(X, [1, 1, 2, 2, 3, 3], fastsvm.Params(kernel_type="linear"))
    >>> fastsvm.decision_values(model, X).shape
    (6, 3)
    >>> bool(np.all(fastsvm.decision_values(model, X[:2])[:, :2] > 0))
    True
    """
    X = to_rows(X)
    n_threads = effective_n_jobs(n_jobs)
    if is_dense(X) and model.kernel_type != "precomputed":
        if predicts_through_weights(model, exact):
            weights = model.decision_weights()
            width = min(X.shape[1], weights.shape[1])
            return np.asarray(X[:, :width] @ weights[:, :width].T) - model.rho
        function = _decision_function(model, model.support_vectors)
        if function.reads_dense:
            out = np.empty((X.shape[0], function.n_dec))
            with one_blas_thread():   # dgemm runs on our threads, one call each
                function.compute_dense(X, out, n_threads)
            return out
    X = to_csr(X)
    if predicts_through_weights(model, exact):
        # the weight path reads X's rows as they are: its w is sparse when the width is huge
        function = _linear_decision_function(model)
    else:
        support_vectors, X = _over_occurring_columns(model, X)
        function = _decision_function(model, support_vectors)
        width = max(X.shape[1], support_vectors.shape[1])
        check_request(8 * min(n_threads, X.shape[0]) * (width + support_vectors.shape[0]),
                      "prediction's buffers (one row of the model's width per thread)",
                      "use fewer threads (-j)")
    out = np.empty((X.shape[0], function.n_dec))
    function.compute(X, out, n_threads)
    return out


def _over_occurring_columns(model, X):
    """(support vectors, X), both renumbered to the columns that occur in either when their
    width is far beyond those (the kernel's dense row then costs what the data holds; the order
    of the columns, and so every value's bits, is kept); a precomputed kernel's X cut to the
    columns its serial numbers name."""
    support_vectors = model.support_vectors
    if model.kernel_type == "precomputed":
        return support_vectors, first_columns(X, int(np.max(model.sv_indices, initial=0)) + 1)
    if max(X.shape[1], support_vectors.shape[1]) <= NARROW_WIDTH:
        return support_vectors, X
    if isinstance(support_vectors, RowSelection):
        support_vectors = support_vectors.tocsr()
    columns = columns_to_keep(support_vectors, X)
    if columns is None:
        return model.support_vectors, X
    return compressed(support_vectors, columns), compressed(X, columns)


def predict(model, X, n_jobs=None, exact=None):
    """Predictions of a model on the rows of X, as LIBSVM's svm_predict makes them.

    Parameters
    ----------
    model : Model
        The trained model (fit_model, load_model, or an estimator's ``model_``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows, anything ``fastsvm.csr.to_rows`` takes; column j is LIBSVM feature index
        j + 1, and columns beyond the model's width (or missing ones) count as zeros. For the
        precomputed kernel, rows ``[serial, k(x, x_1), k(x, x_2), ...]`` read zero-based, so
        the kernel value against the support vector of serial number s is X[:, s].
    n_jobs : int, default=None
        Threads. None means all cores.
    exact : bool or None, default=None
        For a linear-kernel model, whether to sum over the support vectors as LIBSVM does
        (True) or to use the weight vectors when cheaper (False); see decision_values.

    Returns
    -------
    y_pred : ndarray of shape (n_samples,)
        Float64: the labels for classification (by one-vs-one votes, ties to the first label),
        +1 or -1 for one-class, the values for regression.

    See Also
    --------
    decision_values : The values the labels come from.
    predict_probability : Labels with probability estimates.

    Examples
    --------
    >>> import numpy as np
    >>> import fastsvm
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    >>> model = fastsvm.fit_model(X, [1, 1, 2, 2], fastsvm.Params(kernel_type="linear"))
    >>> fastsvm.predict(model, [[0.0, 0.5], [3.0, 3.5]])
    array([1., 2.])
    """
    return _predict_from(model, decision_values(model, X, n_jobs, exact))


def predict_many(models, X, n_jobs=None):
    """[predict(model, X) for model in models], for models trained on the same rows (a C path's:
    their support vectors RowSelections of one matrix, one kernel): the kernel values of X's rows
    against the union of their support vectors are formed once, a block of rows at a time, and
    each model sums its own from them. Those values are formed as predict forms them and summed
    in its order, so the labels are predict's, bit for bit; models that do not share their rows
    and kernel, or predict otherwise (linear weights, regression's term-by-term RBF), are
    predicted one by one (and so are dense rows: each model's kernel values by BLAS)."""
    X = to_rows(X)
    union = None if is_dense(X) else _shared_support_rows(models)
    if union is None or X.shape[0] == 0:
        return [predict(model, X, n_jobs) for model in models]
    base, rows = union
    first = models[0]
    n_threads = effective_n_jobs(n_jobs)
    functions = [(_decision_function(model, model.support_vectors),
                  np.searchsorted(rows, model.support_vectors.rows).astype(np.int32)) for model in models]
    values = [np.empty((X.shape[0], function.n_dec)) for function, _ in functions]
    Z = base[rows]
    union = DecisionFunction(Z, np.zeros((1, rows.size)), [0.0], [0, rows.size, rows.size], np.zeros(0),
                             kind=first.kernel_type, gamma=first.gamma, degree=first.degree, coef0=first.coef0,
                             one_vs_one=True, kernel_values=True)
    step = max(1, SHARED_BLOCK_VALUES // max(rows.size, 1))
    for lo in range(0, X.shape[0], step):
        K = np.empty((min(step, X.shape[0] - lo), rows.size))
        union.compute(X[lo:lo + step], K, n_threads)
        for (function, columns), out in zip(functions, values):
            function.compute_from_kernel(K, columns, out[lo:lo + step], n_threads)
    return [_predict_from(model, dec) for model, dec in zip(models, values)]


def _shared_support_rows(models):
    """(base, sorted union of the selected rows) when every model is a one-vs-one classifier
    predicting through its support vectors, all RowSelections of one base with one kernel; None
    else."""
    if not models:
        return None
    first = models[0]
    kernel = (first.kernel_type, first.gamma, first.degree, first.coef0)
    for model in models:
        sv = model.support_vectors
        if not (isinstance(sv, RowSelection) and _same_matrix(sv.base, first.support_vectors.base)
                and model.is_classification
                and model.n_sv is not None and model.labels is not None and model.kernel_type != "precomputed"
                and (model.kernel_type, model.gamma, model.degree, model.coef0) == kernel
                and not predicts_through_weights(model)):
            return None
    rows = np.unique(np.concatenate([model.support_vectors.rows for model in models]))
    return first.support_vectors.base, rows


def _same_matrix(a, b):
    """Whether two CSR matrices read the same memory (the wrappers and views to_csr makes of one)."""
    if is_dense(a) or is_dense(b):
        return False

    def where(m):
        return [(array.__array_interface__["data"][0], array.shape) for array in (m.data, m.indices, m.indptr)]
    return a.shape == b.shape and where(a) == where(b)


def predict_probability(model, X, n_jobs=None, exact=None):
    """Predictions with probability estimates, as LIBSVM's svm_predict_probability makes them.

    The model must have been trained with ``Params(probability=True)`` (fastsvm-train -b 1).

    Parameters
    ----------
    model : Model
        The trained model (fit_model, load_model, or an estimator's ``model_``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows, anything ``fastsvm.csr.to_rows`` takes; column j is LIBSVM feature index
        j + 1, and columns beyond the model's width (or missing ones) count as zeros. For the
        precomputed kernel, rows ``[serial, k(x, x_1), k(x, x_2), ...]`` read zero-based, so
        the kernel value against the support vector of serial number s is X[:, s].
    n_jobs : int, default=None
        Threads. None means all cores.
    exact : bool or None, default=None
        For a linear-kernel model, whether to sum over the support vectors as LIBSVM does
        (True) or to use the weight vectors when cheaper (False); see decision_values.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Classification: the label of the largest probability (the first on ties). One-class:
        +1 or -1. Regression: the predicted values.
    probabilities : ndarray of shape (n_samples, nr_class), (n_samples, 2) or (n_samples, 0)
        Classification: the probability of each class, in label order. One-class: columns
        P(normal) and P(outlier). Regression: empty, as LIBSVM leaves the estimates; the
        Laplace scale of the noise model is ``fastsvm.models.probability.svr_laplace_scale(model)``.

    Raises
    ------
    FastSVMError
        When the model has no probability information.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> import fastsvm
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> model = fastsvm.fit_model(X, y, fastsvm.Params(probability=True))
    >>> labels, probabilities = fastsvm.predict_probability(model, X[:3])
    >>> labels.shape, probabilities.shape
    ((3,), (3, 2))
    >>> bool(np.allclose(probabilities.sum(axis=1), 1.0))
    True
    """
    if not has_probability_model(model):
        raise FastSVMError("the model has no probability information (train it with -b 1)")
    dec = decision_values(model, X, n_jobs, exact)
    if model.is_classification:
        prob = classification_probabilities(dec, model.prob_a, model.prob_b, model.nr_class)
        labels = model.labels.astype(np.float64)[np.argmax(prob, axis=1)]
        return labels, prob
    if model.svm_type == "one_class":
        normal = one_class_probability(dec[:, 0], model.prob_density_marks)
        return _predict_from(model, dec), np.stack([normal, 1 - normal], axis=1)
    return _predict_from(model, dec), np.empty((dec.shape[0], 0))


def _predict_from(model, dec):
    if model.svm_type == "one_class":
        return np.where(dec[:, 0] > 0, 1.0, -1.0)
    if not model.is_classification:
        return dec[:, 0].copy()
    return model.labels.astype(np.float64)[one_vs_one_winners(dec, model.nr_class)]


def one_vs_one_winners(dec, nr_class):
    """Index of the class with the most one-vs-one votes in each row of dec (columns: pairs
    (0, 1), (0, 2), ..., (1, 2), ...): pair (i, j) votes for i when its value is > 0, else (zero
    or NaN) for j; ties go to the smallest class index, as in LIBSVM's svm_predict_values."""
    n = dec.shape[0]
    if nr_class < 2:
        return np.zeros(n, dtype=np.int64)
    if nr_class == 2:   # one pair: its vote decides
        return np.where(dec[:, 0] > 0, 0, 1)
    first, second = np.triu_indices(nr_class, 1)
    winners = np.empty(n, dtype=np.int64)
    # rows at a time, so the vote indices take about 32 MB besides dec
    step = max(1, (1 << 22) // first.size)
    for lo in range(0, n, step):
        block = dec[lo:lo + step]
        rows = block.shape[0]
        voted = np.where(block > 0, first, second) + nr_class * np.arange(rows)[:, None]
        votes = np.bincount(voted.ravel(), minlength=rows * nr_class).reshape(rows, nr_class)
        winners[lo:lo + rows] = np.argmax(votes, axis=1)   # the first of equal maxima
    return winners


def predicts_through_weights(model, exact=None):
    """Whether this model predicts through its weight vectors (see the module's note). Decided
    by the model alone, so a row gets the same values in any batch: per row, the weight path
    costs n_dec times a row's stored values (taken as the support vectors' average), the
    support-vector path all their stored values plus n_sv per decision of a class pair; W holds
    at most min((nr_class - 1) * sv values, n_dec * width) values."""
    if model.kernel_type != "linear" or exact:
        return False
    n_dec = _number_of_decisions(model)
    if n_dec == 0 or (model.is_classification and model.n_sv is None):
        return False   # nothing to compute, or a model the support-vector path refuses
    sv_values = float(_stored_values(model.support_vectors))
    if exact is None and not model.is_classification and model.svm_type != "one_class" \
            and sv_values <= EXACT_REGRESSION_LIMIT:
        return False
    n_sv = model.support_vectors.shape[0]
    pair_terms = max(model.nr_class - 1, 1)
    weight_row = n_dec * (sv_values / max(n_sv, 1) + 1.0)
    sv_row = sv_values + n_sv * pair_terms
    weight_values = min(pair_terms * sv_values, float(n_dec) * model.n_features)
    return weight_row <= sv_row and weight_values <= sv_values + EXTRA_WEIGHT_VALUES


def _stored_values(sv):
    """Stored values of a CSR matrix or RowSelection, without to_csr's O(nnz) checks."""
    if isinstance(sv, RowSelection) and is_dense(sv.base):
        return sv.tocsr().nnz
    if isinstance(sv, RowSelection):
        start, stop = sv.spans()
        return np.sum(stop - start)
    return sv.nnz


def _number_of_decisions(model):
    k = model.nr_class
    return k * (k - 1) // 2 if model.is_classification else 1


def _linear_decision_function(model):
    """The weight vectors, held dense when that is at most about twice their sparse size (a
    model whose largest feature index is huge keeps them sparse)."""
    weights = model.decision_weights()
    dense = weights.shape[0] * weights.shape[1] <= 2 * weights.nnz + 65536
    return LinearDecisionFunction(weights, model.rho, dense)


def _decision_function(model, support_vectors):
    """The model's arrays (with its support vectors as given) in the layout the Cython kernel walks."""
    if model.is_classification:
        if model.labels is None or model.n_sv is None:
            raise FastSVMError("a classification model needs its labels and per-class SV counts")
        start = np.concatenate([[0], np.cumsum(model.n_sv)])
    else:
        start = np.zeros(0)
    if model.kernel_type == "precomputed":
        serial = model.sv_indices
    else:
        serial = np.zeros(0)
    return DecisionFunction(support_vectors, model.sv_coef, model.rho, start, serial, kind=model.kernel_type,
                            gamma=model.gamma, degree=model.degree, coef0=model.coef0,
                            one_vs_one=model.is_classification)
