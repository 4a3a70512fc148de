"""Training parameters: LIBSVM's svm_parameter plus the choice of solver and its few extras."""
from dataclasses import dataclass, field

from .errors import ParameterError
from .models.model import KERNEL_TYPES, SVM_TYPES

LOSSES = ("hinge", "squared_hinge", "squared_error")


@dataclass
class Params:
    """What ``svm-train`` options set, with LIBSVM's defaults.

    ``kernel_type``, ``gamma`` and ``tol`` may stay None: the solver's default kernel, 1/n_features
    and the solver's default tolerance are then used (LIBSVM's 1e-3 for SMO, LIBLINEAR's 0.1 for
    DCD). ``bias`` is LIBLINEAR's -B (< 0: no bias feature); ``loss`` picks the hinge (L1) or
    squared hinge (L2) loss for the linear C-SVC solvers, or the squared error (nesvm's LS-SVM)
    (None: the solver's own, hinge for dcd).
    ``libsvm_folds`` draws the cross-validation folds and -b 1's internal folds from LIBSVM's
    stream (the C library's rand() from its default seed, in svm-train's order) instead of from
    ``seed``, which still seeds everything else.
    """

    svm_type: str = "c_svc"
    solver: str = "auto"
    kernel_type: str | None = None
    degree: int = 3
    gamma: float | None = None
    coef0: float = 0.0
    C: float = 1.0
    nu: float = 0.5
    epsilon: float = 0.1
    cache_size: float = 100.0
    tol: float | None = None
    shrinking: bool = True
    probability: bool = False
    class_weight: dict = field(default_factory=dict)
    loss: str | None = None
    bias: float = -1.0
    max_iter: int | None = None
    seed: int = 0
    libsvm_folds: bool = False
    n_jobs: int | None = None
    verbose: bool = False
    options: dict = field(default_factory=dict)  # -o name=value: a solver's options, e.g. random-feature count
    config: object = None  # Python only: an instance of the solver's Config (its every knob), -o applied on top

    def check(self):
        """Raise ParameterError for values LIBSVM's svm_check_parameter would reject."""
        if self.svm_type not in SVM_TYPES:
            raise ParameterError(f"unknown svm type {self.svm_type!r}")
        if self.kernel_type is not None and self.kernel_type not in KERNEL_TYPES:
            raise ParameterError(f"unknown kernel type {self.kernel_type!r}")
        if self.gamma is not None and self.gamma < 0:
            raise ParameterError("gamma < 0")
        if self.kernel_type == "polynomial" and self.degree < 0:
            raise ParameterError("degree of polynomial kernel < 0")
        if self.cache_size <= 0:
            raise ParameterError("cache_size <= 0")
        if self.tol is not None and not self.tol > 0:
            raise ParameterError("eps <= 0")
        if self.svm_type in ("c_svc", "epsilon_svr", "nu_svr") and not self.C > 0:
            raise ParameterError("C <= 0")
        if self.svm_type == "nu_svr" and self.C == float("inf"):
            # its dual fixes sum(alpha) = C nu l / 2: no hard-margin limit
            raise ParameterError("nu-SVR needs a finite C")
        if self.svm_type in ("nu_svc", "one_class", "nu_svr") and not 0 < self.nu <= 1:
            raise ParameterError("nu <= 0 or nu > 1")
        if self.svm_type == "epsilon_svr" and self.epsilon < 0:
            raise ParameterError("p < 0")
        if self.loss is not None and self.loss not in LOSSES:
            raise ParameterError(f"unknown loss {self.loss!r} (use hinge, squared_hinge or squared_error)")
        if self.max_iter is not None and self.max_iter <= 0:
            raise ParameterError("max_iter <= 0")
        for label, weight in self.class_weight.items():
            if not weight >= 0:
                raise ParameterError(f"weight for class {label} < 0")
        return self
