"""Training parameters: LIBSVM's svm_parameter plus the choice of solver and its few extras."""
from dataclasses import dataclass, field

from .errors import ParameterError
from .models.model import KERNEL_TYPES, SVM_TYPES

LOSSES = ("hinge", "squared_hinge", "squared_error")


@dataclass
class Params:
    """Training parameters: what ``svm-train``'s options set, with LIBSVM's defaults.

    fit_model, fit_path, fit_nu_path and grid_search take one; each field is an option of
    ``fastsvm-train``, named in parentheses. The solvers are in ``fastsvm.solvers.SOLVERS``;
    docs/guide.md ("Which solver") says which to choose.

    Parameters
    ----------
    svm_type : {'c_svc', 'nu_svc', 'one_class', 'epsilon_svr', 'nu_svr'}, default='c_svc'
        The problem (-s 0 to 4).
    solver : str, default='auto'
        The solver, a name in ``fastsvm.solvers.SOLVERS`` (-s NAME). 'auto' runs block_smo on
        subproblems of 6000 dual variables and more, smo below.
    kernel_type : {'linear', 'polynomial', 'rbf', 'sigmoid', 'precomputed'} or None, default=None
        The kernel (-t). None: the solver's default, ``fastsvm.solvers.SOLVERS[solver].default_kernel``
        (rbf for auto, smo and block_smo).
    degree : int, default=3
        Degree of the polynomial kernel (-d).
    gamma : float or None, default=None
        Kernel coefficient of the polynomial, rbf and sigmoid kernels (-g). None: 1 /
        n_features.
    coef0 : float, default=0.0
        Independent term of the polynomial and sigmoid kernels (-r).
    C : float, default=1.0
        The parameter C of C-SVC, epsilon-SVR and nu-SVR (-c).
    nu : float, default=0.5
        The parameter nu of nu-SVC, one-class SVM and nu-SVR (-n).
    epsilon : float, default=0.1
        The epsilon of epsilon-SVR's loss (-p).
    cache_size : float, default=100.0
        Kernel cache size in MB (-m).
    tol : float or None, default=None
        Tolerance of the termination criterion (-e). None: the solver's default (LIBSVM's
        1e-3 for SMO, LIBLINEAR's 0.1 for DCD).
    shrinking : bool, default=True
        Whether to use the shrinking heuristics (-h).
    probability : bool, default=False
        Whether to train a model for probability estimates (-b).
    class_weight : dict, default={}
        ``{label: weight}``: the parameter C of class label is weight * C (-wi).
    loss : {'hinge', 'squared_hinge', 'squared_error'} or None, default=None
        The loss of the linear C-SVC solvers (-L): the hinge (L1), the squared hinge (L2), or
        the squared error (nesvm's LS-SVM). None: the solver's own (hinge for dcd).
    bias : float, default=-1.0
        LIBLINEAR's -B: if >= 0, a feature of this value is appended to every row (< 0: no
        bias feature).
    max_iter : int or None, default=None
        Iteration limit of the solver (-M). None: the solver's own.
    seed : int, default=0
        Seed of every random choice (-R).
    libsvm_folds : bool, default=False
        Draw the cross-validation folds and -b 1's internal folds from LIBSVM's stream (the C
        library's rand() from its default seed, in svm-train's order) instead of from
        ``seed``, which still seeds everything else (fastsvm-train without -R).
    n_jobs : int or None, default=None
        Number of threads (-j). None: all cores.
    verbose : bool, default=False
        Print the solver's progress and LIBSVM's summary lines (fastsvm-train without -q).
    options : dict, default={}
        The solver's options, ``{name: value}`` (-o name=value); ``fastsvm-train`` without
        arguments lists every solver's options.
    config : object, default=None
        Python only: an instance of the solver's Config (its every setting), with ``options``
        applied on top.

    Examples
    --------
    >>> import fastsvm
    >>> params = fastsvm.Params(svm_type="nu_svc", nu=0.2, kernel_type="rbf", gamma=0.5)
    >>> params.check().nu
    0.2
    >>> fastsvm.Params(solver="block_smo", options={"working_set": 256}).solver
    'block_smo'
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
