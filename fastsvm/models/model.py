"""The trained model, in LIBSVM's terms: what a LIBSVM model file holds, nothing more.

A linear model trained in the primal (or read from a LIBLINEAR file) is held the LIBSVM way:
its weight vectors are stored as "support vectors" with +-1 coefficients, so one predictor and
one file format serve every solver.
"""
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from ..csr import RowSelection, to_csr
from ..errors import FastSVMError

SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
KERNEL_TYPES = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
CLASSIFICATION = ("c_svc", "nu_svc")


@dataclass
class Model:
    """A trained SVM, in LIBSVM's terms: what a LIBSVM model file holds.

    fit_model and load_model make one, save_model writes it, predict, decision_values and
    predict_probability use it; an estimator's ``model_`` is one. The fields are checked on
    construction (FastSVMError for inconsistent shapes or values that are not finite).

    Parameters
    ----------
    svm_type : {'c_svc', 'nu_svc', 'one_class', 'epsilon_svr', 'nu_svr'}
        LIBSVM's svm_type.
    kernel_type : {'linear', 'polynomial', 'rbf', 'sigmoid', 'precomputed'}
        LIBSVM's kernel_type.
    support_vectors : scipy.sparse.csr_matrix of shape (l, n_features)
        The l support vectors; column j holds LIBSVM feature index j + 1. A trained model holds
        a fastsvm.csr.RowSelection of its training rows instead (``.tocsr()`` copies them), as
        LIBSVM's model points into its problem. For the precomputed kernel it has no columns
        and ``sv_indices`` holds the 1-based serial numbers of the training instances instead.
    sv_coef : ndarray of shape (nr_class - 1, l)
        The support vectors' coefficients, in LIBSVM's one-vs-one layout.
    rho : ndarray of shape (nr_class * (nr_class - 1) / 2,)
        The decision value of pair k is sum coef K - rho[k].
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : float, default=0.0
        Kernel coefficient of the polynomial, rbf and sigmoid kernels.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels.
    labels : ndarray of shape (nr_class,), default=None
        The class labels in LIBSVM's order, classification only (None otherwise).
    n_sv : ndarray of shape (nr_class,), default=None
        Number of support vectors of each class, classification only (None otherwise).
    sv_indices : ndarray of shape (l,), default=None
        The support vectors' 1-based serial numbers (precomputed kernel).
    prob_a : ndarray of shape (nr_class * (nr_class - 1) / 2,), default=None
        Platt's parameter A of each pair; for SVR alone, one value: the Laplace scale.
    prob_b : ndarray of shape (nr_class * (nr_class - 1) / 2,), default=None
        Platt's parameter B of each pair.
    prob_density_marks : ndarray of shape (10,), default=None
        The marks of the one-class probabilities.
    info : dict, default={}
        The solver's statistics (e.g. ``info["n_iter"]``, ``info["status"]``); not saved,
        and not compared.

    Attributes
    ----------
    nr_class : int
        LIBSVM's nr_class: the number of labels for classification, 2 otherwise.
    is_classification : bool
        Whether svm_type is c_svc or nu_svc.
    n_features : int
        The number of columns of the support vectors.

    Examples
    --------
    A linear model of one support vector w = (1, 0) with rho = 0.5, as LIBLINEAR's models are
    held:

    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> import fastsvm
    >>> model = fastsvm.Model(svm_type="c_svc", kernel_type="linear",
    ...                       support_vectors=sp.csr_matrix([[1.0, 0.0]]), sv_coef=[[1.0]], rho=[0.5],
    ...                       labels=[1, -1], n_sv=[1, 0])
    >>> model.nr_class
    2
    >>> fastsvm.decision_values(model, np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([[ 1.5],
           [-0.5]])
    >>> fastsvm.predict(model, np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([ 1., -1.])
    """

    svm_type: str
    kernel_type: str
    support_vectors: sp.csr_matrix | RowSelection
    sv_coef: np.ndarray
    rho: np.ndarray
    degree: int = 3
    gamma: float = 0.0
    coef0: float = 0.0
    labels: np.ndarray | None = None
    n_sv: np.ndarray | None = None
    sv_indices: np.ndarray | None = None
    prob_a: np.ndarray | None = None
    prob_b: np.ndarray | None = None
    prob_density_marks: np.ndarray | None = None
    info: dict = field(default_factory=dict, compare=False)  # solver statistics, not saved
    # decision_weights(), with the sv_coef and support_vectors it was formed from
    _weights: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.svm_type not in SVM_TYPES:
            raise FastSVMError(f"unknown svm_type {self.svm_type!r}")
        if self.kernel_type not in KERNEL_TYPES:
            raise FastSVMError(f"unknown kernel_type {self.kernel_type!r}")
        nr_class = self.nr_class
        l = self.support_vectors.shape[0]
        self.sv_coef = np.asarray(self.sv_coef, dtype=np.float64)
        if self.sv_coef.size != (nr_class - 1) * l:
            raise FastSVMError(f"sv_coef has shape {self.sv_coef.shape}, expected {(nr_class - 1, l)}")
        self.sv_coef = self.sv_coef.reshape(nr_class - 1, l)
        self.rho = np.asarray(self.rho, dtype=np.float64).reshape(-1)
        if self.rho.shape != (nr_class * (nr_class - 1) // 2,):
            raise FastSVMError(f"rho has {self.rho.size} values, expected {nr_class * (nr_class - 1) // 2}")
        if self.n_sv is not None:
            self.n_sv = np.asarray(self.n_sv, dtype=np.int64)
            if self.n_sv.shape != (nr_class,) or self.n_sv.sum() != l or np.any(self.n_sv < 0):
                raise FastSVMError("nr_sv does not match the number of classes and support vectors")
        if self.labels is not None:
            self.labels = np.asarray(self.labels, dtype=np.int64)
        if self.kernel_type == "precomputed":
            if self.sv_indices is None or len(self.sv_indices) != l:
                raise FastSVMError("a precomputed-kernel model needs the serial number of every support vector")
        for name in ("prob_a", "prob_b", "prob_density_marks", "sv_indices"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, np.asarray(value, dtype=np.int64 if name == "sv_indices" else np.float64))
        for name in ("sv_coef", "rho", "prob_a", "prob_b", "prob_density_marks"):
            value = getattr(self, name)
            if value is not None and not np.all(np.isfinite(value)):
                raise FastSVMError(f"model {name} contains NaN or infinity")
        if not isinstance(self.support_vectors, RowSelection):   # its rows: checked by to_csr
            if not np.all(np.isfinite(self.support_vectors.data)):
                raise FastSVMError("model support vectors contain NaN or infinity")
        for name in ("gamma", "coef0"):
            if not np.isfinite(getattr(self, name)):
                raise FastSVMError(f"model {name} is not finite")

    def detached(self):
        """This model with support vectors of its own: a trained model reads them from the
        training data (a RowSelection), which must then stay unchanged while the model is used."""
        if isinstance(self.support_vectors, RowSelection):
            return replace(self, support_vectors=self.support_vectors.tocsr())
        return self

    def decision_weights(self):
        """A linear-kernel model's weight vectors: CSR (n_dec x n_features) with sorted indices,
        row p holding w_p = sum_i coef_{p,i} sv_i for decision p (pairs (0, 1), (0, 2), ...,
        (1, 2), ... for classification, one row otherwise), so that decision p of x is
        x . w_p - rho[p]. Formed once and kept while sv_coef and support_vectors stay the same
        objects (changing them in place is not noticed)."""
        if self.kernel_type != "linear":
            raise FastSVMError("only a linear-kernel model has weight vectors")
        cached = self._weights
        if cached is not None and cached[0] is self.sv_coef and cached[1] is self.support_vectors:
            return cached[2]
        sv = self.support_vectors
        sv = sv.tocsr() if isinstance(sv, RowSelection) else to_csr(sv)
        columns, used = sv, None
        if sv.shape[1] > 2 * sv.nnz + 65536:
            # a huge largest index: the columns that occur, numbered compactly, so that the
            # product needs memory by what the support vectors hold, not by their width
            used = np.unique(sv.indices)
            columns = sp.csr_matrix((sv.data, np.searchsorted(used, sv.indices), sv.indptr),
                                    shape=(sv.shape[0], used.size))
        product = sp.csr_matrix(self._pair_coefficients() @ columns)
        product.sort_indices()
        if used is not None:
            product = sp.csr_matrix((product.data, used[product.indices], product.indptr),
                                    shape=(product.shape[0], sv.shape[1]))
        weights = to_csr(product)
        self._weights = (self.sv_coef, self.support_vectors, weights)
        return weights

    def _pair_coefficients(self):
        """(n_dec x l) sparse: row p holds decision p's coefficient of each support vector
        (one-vs-one pair (a, b): class a's SVs take sv_coef[b - 1], class b's take sv_coef[a],
        stored in that order)."""
        if not self.is_classification:
            return sp.csr_matrix(self.sv_coef[:1])
        start = np.concatenate([[0], np.cumsum(self.n_sv)])
        first, second = np.triu_indices(self.nr_class, 1)
        pair = np.arange(first.size)
        rows, cols, values = [], [], []
        for owner, coef_row in ((first, second - 1), (second, first)):
            counts = self.n_sv[owner]
            sv = _concatenated_ranges(start[owner], counts)
            rows.append(np.repeat(pair, counts))
            cols.append(sv)
            values.append(self.sv_coef[np.repeat(coef_row, counts), sv])
        return sp.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(pair.size, self.support_vectors.shape[0]))

    @property
    def nr_class(self):
        """LIBSVM's nr_class: the number of labels for classification, 2 otherwise."""
        return len(self.labels) if self.labels is not None else 2

    @property
    def is_classification(self):
        return self.svm_type in CLASSIFICATION

    @property
    def n_features(self):
        return self.support_vectors.shape[1]


def _concatenated_ranges(starts, counts):
    """np.concatenate([np.arange(s, s + c) for s, c in zip(starts, counts)]) without the loop."""
    counts = np.asarray(counts, dtype=np.int64)
    offsets = np.cumsum(counts) - counts
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, counts) + np.arange(counts.sum())
