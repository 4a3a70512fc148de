"""Prediction with a Model, as LIBSVM 3.37's svm_predict_values / svm_predict /
svm_predict_probability compute it, for all rows of a sparse matrix at once.

X is anything ``fastsvm.csr.to_csr`` takes; column j is LIBSVM feature index j + 1, except for
the precomputed kernel, whose rows are ``[serial, k(x, x_1), k(x, x_2), ...]`` read zero-based
(column c = index c), so the kernel value against a support vector with serial number s is
X[:, s]. Columns beyond the model's width (or missing ones) count as zeros.
"""
import numpy as np

from ._core._predict import DecisionFunction
from .columns import NARROW_WIDTH, columns_to_keep, compressed, first_columns
from .csr import RowSelection, to_csr
from .errors import FastSVMError
from .memory import check_request
from .parallel import effective_n_jobs
from .probability import classification_probabilities, has_probability_model, one_class_probability


def decision_values(model, X, n_jobs=None):
    """(n, n_dec) decision values: one column per classifier (0, 1), (0, 2), ..., (1, 2), ... in
    label order for classification, one column for regression and one-class."""
    support_vectors, X = _over_occurring_columns(model, to_csr(X))
    function = _decision_function(model, support_vectors)
    n_threads = effective_n_jobs(n_jobs)
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


def predict(model, X, n_jobs=None):
    """Predicted labels (classification, one-class +1/-1) or values (regression), float64."""
    return _predict_from(model, decision_values(model, X, n_jobs))


def predict_probability(model, X, n_jobs=None):
    """(labels, probabilities) as svm_predict_probability returns them.

    Classification: probabilities (n, nr_class) in label order and the label of the largest
    (first on ties). One-class: columns P(normal), P(outlier) and labels +1/-1. Regression: the
    predicted values and an (n, 0) array, as LIBSVM leaves the estimates empty; the Laplace scale
    of the noise model is ``fastsvm.probability.svr_laplace_scale(model)``.
    """
    if not has_probability_model(model):
        raise FastSVMError("the model has no probability information (train it with -b 1)")
    dec = decision_values(model, X, n_jobs)
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
    nr_class = model.nr_class
    votes = np.zeros((dec.shape[0], nr_class), dtype=np.int64)
    p = 0
    for i in range(nr_class):
        for j in range(i + 1, nr_class):
            wins = dec[:, p] > 0  # a zero (or NaN) decision value is a vote for j, as in LIBSVM
            votes[:, i] += wins
            votes[:, j] += ~wins
            p += 1
    return model.labels.astype(np.float64)[np.argmax(votes, axis=1)]


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
    return DecisionFunction(
        support_vectors, model.sv_coef, model.rho, start, serial,
        model.kernel_type, model.gamma, model.degree, model.coef0, model.is_classification,
    )
