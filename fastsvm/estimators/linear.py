"""LinearSVC: scikit-learn's LinearSVC parameters, solved by fastsvm's dual coordinate descent."""
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ..params import Params
from ..train import fit_model
from ._common import class_weights_by_code, seed_from


class LinearSVC(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Linear support vector classification (LIBLINEAR's L2-regularized L1/L2-loss SVM, dual).

    Same parameters and attributes as ``sklearn.svm.LinearSVC`` (L2 penalty, one-vs-rest; the
    intercept is LIBLINEAR's regularized bias feature of value ``intercept_scaling``). ``solver``
    names the fastsvm solver (``"dcd"``). The trained LIBSVM-format model is ``model_``
    (``fastsvm.save_model(clf.model_, path)`` writes it).
    """

    _parameter_constraints: dict = {
        "penalty": [StrOptions({"l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"dcd"})],
    }

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1, class_weight=None,
                 verbose=0, random_state=None, max_iter=1000, solver="dcd"):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        if self.dual is False:
            raise ValueError("fastsvm's LinearSVC solves the dual; dual=False is not supported")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             order="C")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, but "
                             f"the data contains only one class: {self.classes_[0]!r}")
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        params = Params(svm_type="c_svc", solver=self.solver, kernel_type="linear", C=float(self.C),
                        tol=float(self.tol), loss=self.loss, max_iter=int(self.max_iter),
                        bias=float(self.intercept_scaling) if self.fit_intercept else -1.0,
                        class_weight=class_weights_by_code(self.class_weight, self.classes_, codes),
                        seed=seed_from(self.random_state), verbose=bool(self.verbose))
        # binary: label 1 (the second class) must be the model's first label, LIBSVM's +1 side
        labels = np.where(codes == 1, 1, -1) if len(self.classes_) == 2 else codes
        if len(self.classes_) == 2 and params.class_weight:
            params.class_weight = {(1 if code == 1 else -1): w for code, w in params.class_weight.items()}
        self.model_ = fit_model(X, labels, params, sample_weight=sample_weight)
        self._set_linear_attributes()
        self.n_iter_ = max(self.model_.info["n_iter"])
        return self

    def _set_linear_attributes(self):
        """coef_/intercept_ from the model's weight vectors (decision = w.x - rho per class)."""
        model = self.model_
        W = model.support_vectors.toarray()
        n_features = self.n_features_in_
        W = np.pad(W, ((0, 0), (0, max(0, n_features - W.shape[1]))))[:, :n_features]
        rho = np.asarray(model.info["rho"], dtype=np.float64)  # one per one-vs-rest problem
        if len(self.classes_) == 2:
            sign = 1.0 if model.labels[0] == 1 else -1.0
            self.coef_ = sign * W[:1]
            self.intercept_ = -sign * rho[:1]
        else:
            order = np.argsort(model.labels)  # model label c is the code of class c
            self.coef_ = W[order]
            self.intercept_ = -rho[order]
        self.coef_ = np.ascontiguousarray(self.coef_)
        # scikit-learn's LinearSVC holds a plain 0.0 when there is no intercept
        self.intercept_ = np.asarray(self.intercept_, dtype=np.float64) if self.fit_intercept else 0.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

