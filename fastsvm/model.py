"""The trained model, in LIBSVM's terms: what a LIBSVM model file holds, nothing more.

A linear model trained in the primal (or read from a LIBLINEAR file) is held the LIBSVM way:
its weight vectors are stored as "support vectors" with +-1 coefficients, so one predictor and
one file format serve every solver.
"""
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from .csr import RowSelection
from .errors import FastSVMError

SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
KERNEL_TYPES = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
CLASSIFICATION = ("c_svc", "nu_svc")


@dataclass
class Model:
    """A LIBSVM model.

    support_vectors : CSR (l x p); column j holds LIBSVM feature index j + 1. A trained model
        holds a fastsvm.csr.RowSelection of its training rows instead (``.tocsr()`` copies
        them), as LIBSVM's model points into its problem. For the precomputed kernel it has no
        columns and ``sv_indices`` holds the 1-based serial numbers of the training instances
        instead.
    sv_coef : (nr_class - 1, l) in LIBSVM's one-vs-one layout.
    rho : (nr_class (nr_class - 1) / 2,); decision value of pair k is sum coef K - rho[k].
    labels, n_sv : per class, classification only (None otherwise).
    prob_a, prob_b : Platt parameters per pair (prob_a alone holds the Laplace scale for SVR).
    prob_density_marks : 10 marks for one-class probabilities.
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
