"""fastsvm-train: svm-train's options and behaviour, plus -s NAME to pick a solver."""
import math
import os
import sys

from ..errors import FastSVMError, ParameterError
from .common import UsageError, number, run, scan_options
from .interrupt import run_interruptible

PROG = "fastsvm-train"
SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
KERNELS = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")

USAGE = """\
Usage: fastsvm-train [options] training_set_file [model_file]
options:
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)
-s solver : solve with a named solver (default smo); give -s twice to choose the type too
	(without a type: C-SVC, or the first type the solver solves)
{solvers}
-t kernel_type : set type of kernel function (default 2, or the solver's own default)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)
-d degree : set degree in kernel function (default 3)
-g gamma : set gamma in kernel function (default 1/num_features)
-r coef0 : set coef0 in kernel function (default 0)
-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)
-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)
-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)
-m cachesize : set cache memory size in MB (default 100)
-e epsilon : set tolerance of termination criterion (default 0.001, or the solver's own)
-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)
-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)
-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)
-v n : n-fold cross validation mode
-q : quiet mode (no outputs)
fastsvm options:
-B bias : linear solvers: if bias >= 0, append a feature of this value (LIBLINEAR's -B; default -1);
	nesvm and alm never penalize their bias (LIBSVM's problem) and drop it at -B 0
-L loss : linear C-SVC solvers: hinge (L1-loss), squared_hinge (L2-loss) or squared_error (nesvm's
	LS-SVM) (default: the solver's own)
-M max_iter : iteration limit of the solver (default: the solver's own)
-n first:step:last : a grid of nu (nu-SVC, one-class; -s dcdm solves it as a path): one model file
	per nu (model_file.nu), or with -v each nu's accuracy and the best nu's model in model_file
-j n : number of threads (default: all cores)
-R seed : seed of every random choice (default 0); given, it also draws the -v and -b 1 folds
	(otherwise drawn as svm-train draws them)
-o name=value : an option of the named solver (repeatable); the solvers' options:
{solver_options}
--help : print this usage
"""


def usage():
    """The usage text; listing the solvers imports each of them, so it is built only when shown."""
    from ..solvers import SOLVERS

    solvers = [f"\t{name} -- {spec.description}" for name, spec in sorted(SOLVERS.items())]
    options = []
    for name, spec in sorted(SOLVERS.items()):
        options.append(f"\t{name}:" + ("" if spec.options else " none"))
        options.extend(f"\t\t{option.usage()}" for option in spec.options)
    return USAGE.format(solvers="\n".join(solvers), solver_options="\n".join(options))


_VALUE_OPTIONS = ("s", "t", "d", "g", "r", "c", "n", "p", "m", "e", "h", "b", "v",
                  "B", "L", "M", "j", "R", "o")


def parse_args(argv):
    """Command line -> (Params, training file, model file, number of CV folds or None)."""
    # imported here, not at module level: the console script loads this module before entry()
    # installs its Ctrl-C handling (fastsvm.cli.interrupt)
    from ..params import Params
    from ..solvers import SOLVERS, get_solver
    from ..solvers.base import solver_options

    options, positional = scan_options(argv, _VALUE_OPTIONS, flags=("q",), prefix_options=("w",))
    params = Params(libsvm_folds=True)  # svm-train's folds unless -R seeds them
    verbose, folds, solver_named, type_named, nus = True, None, False, False, None
    for name, value in options:
        if name == "s":
            if value in SOLVERS:
                params.solver, solver_named = value, True
            elif value.lstrip("-").isdigit():
                params.svm_type, type_named = SVM_TYPES[number("s", value, int, choices=range(5))], True
            else:
                raise UsageError(f"invalid value for -s: {value!r} (expected 0-4 or a solver: "
                                 f"{', '.join(sorted(SOLVERS))})")
        elif name == "t":
            params.kernel_type = KERNELS[number("t", value, int, choices=range(5))]
        elif name == "d":
            params.degree = number("d", value, int, minimum=0)
        elif name == "g":
            # svm-train reads -g 0 as "not given": 1/num_features
            params.gamma = number("g", value, minimum=0.0) or None
        elif name == "r":
            params.coef0 = number("r", value)
        elif name == "c":
            params.C = number("c", value)
        elif name == "n" and ":" in value:
            nus = nu_grid(value)
            params.nu = nus[-1]
        elif name == "n":
            params.nu = number("n", value)
        elif name == "p":
            params.epsilon = number("p", value, minimum=0.0)
        elif name == "m":
            params.cache_size = number("m", value)
        elif name == "e":
            params.tol = number("e", value)
        elif name == "h":
            params.shrinking = bool(number("h", value, int, choices=(0, 1)))
        elif name == "b":
            params.probability = bool(number("b", value, int, choices=(0, 1)))
        elif name == "v":
            folds = number("v", value, int)
            if folds < 2:
                raise UsageError("n-fold cross validation: n must >= 2")
        elif name == "B":
            params.bias = number("B", value)
        elif name == "L":
            params.loss = {"1": "hinge", "2": "squared_hinge"}.get(value, value)
        elif name == "M":
            params.max_iter = number("M", value, int, minimum=1)
        elif name == "j":
            params.n_jobs = number("j", value, int, minimum=1)
        elif name == "R":
            params.seed, params.libsvm_folds = number("R", value, int, minimum=0), False
        elif name == "o":
            key, sep, text = value.partition("=")
            if not sep or not key:
                raise UsageError(f"invalid value for -o: {value!r} (expected name=value)")
            params.options[key] = text
        elif name.startswith("w"):
            label = number(name, name[1:], int)
            params.class_weight[label] = number(name, value)
        elif name == "q":
            verbose = False
    if not positional:
        raise UsageError("no training file given")
    if len(positional) > 2:
        raise UsageError(f"unexpected argument: {positional[2]}")
    train_file = positional[0]
    model_file = positional[1] if len(positional) == 2 else os.path.basename(train_file) + ".model"
    params.verbose = verbose
    if not solver_named:
        params.solver = "smo"
    try:
        params.check()
        spec = get_solver(params.solver)
        if not type_named and params.svm_type not in spec.formulations:
            params.svm_type = spec.formulations[0]     # the solver's own type (dcdm: its nu-SVM)
        solver_options(spec, params.options, params.kernel_type or spec.default_kernel)
    except ParameterError as e:
        raise UsageError(str(e)) from None
    if nus is not None and params.svm_type not in ("nu_svc", "one_class"):
        raise UsageError("a nu grid (-n first:step:last) is for nu-SVC and one-class (-s 1, -s 2)")
    return params, train_file, model_file, folds, nus


def nu_grid(text):
    """-n first:step:last, both ends included: the increasing grid of nu a path solves."""
    parts = text.split(":")
    if len(parts) != 3:
        raise UsageError(f"invalid value for -n: {text!r} (expected nu or first:step:last)")
    first, step, last = (number("n", part) for part in parts)
    if not (0 < first <= last <= 1 and step > 0):
        raise UsageError(f"invalid value for -n: {text!r} (expected 0 < first <= last <= 1 and step > 0)")
    count = math.floor((last - first) / step + 1e-9) + 1
    if count > 100_000:
        raise UsageError(f"invalid value for -n: {text!r} ({count} values; at most 100000)")
    return [round(first + k * step, 12) for k in range(count)]


def main(argv):
    # imported here, after the command line is read: a usage error costs no solver imports
    from ..files.datafile import load_svmlight_file, row_line
    from ..files.modelfile import save_model
    from ..solvers import get_solver
    from ..training.trainer import check_class_labels, fit_model

    params, train_file, model_file, folds, nus = parse_args(argv)
    kernel = params.kernel_type or get_solver(params.solver).default_kernel
    # LIBSVM feature indices start at 1; a precomputed kernel's column 0 is the serial number
    X, y = load_svmlight_file(train_file, zero_based=(kernel == "precomputed"), n_jobs=params.n_jobs)
    if X.shape[0] == 0:
        raise FastSVMError(f"{train_file}: no training data")
    if params.svm_type in ("c_svc", "nu_svc"):   # checked here to name the file and line
        y = check_class_labels(y, where=lambda row: f"{train_file}:{row_line(train_file, row)}")
    if nus is not None:
        return nu_path(X, y, params, folds, nus, model_file=model_file)
    if folds is not None:
        from ..tuning.crossval import cross_validation, report

        target = cross_validation(X, y, params, folds)
        for line in report(y, target, params.svm_type):
            print(line)
        return
    model = fit_model(X, y, params)
    save_model(model, model_file)


def nu_path(X, y, params, folds, nus, *, model_file):
    """A nu grid: one model file per nu (model_file.nu), or with -v the cross-validation accuracy
    of each and the best nu's model in model_file."""
    from dataclasses import replace

    import numpy as np

    from ..tuning.crossval import cross_validation, report
    from ..files.modelfile import save_model
    from ..training.trainer import fit_model, fit_nu_path

    if folds is None:
        for nu, model in zip(nus, fit_nu_path(X, y, nus, params)):
            save_model(model, f"{model_file}.{nu:g}")
        return
    targets = cross_validation(X, y, params, folds, nus=nus)
    rates = [np.mean(target == y) for target in targets]
    for nu, target in zip(nus, targets):
        for line in report(y, target, params.svm_type):
            print(f"nu = {nu:g}: {line}")
    best = nus[int(np.argmax(rates))]
    print(f"Best nu = {best:g}, Cross Validation Accuracy = {100.0 * max(rates):g}%")
    save_model(fit_model(X, y, replace(params, nu=best)), model_file)


def entry():
    """The ``fastsvm-train`` program: svm-train's options and behaviour, plus ``-s NAME`` to pick a solver.

    ``fastsvm-train [options] training_set_file [model_file]`` trains a model on a LIBSVM data
    file and writes it in LIBSVM's format, or with ``-v n`` prints the n-fold
    cross-validation accuracy. It reads its arguments from ``sys.argv`` and exits with its
    status (0 on success, 1 on an error, 130 on Ctrl-C); ``fastsvm-train --help`` (or without
    arguments) prints the usage: every option, the solvers and each solver's ``-o`` options.
    fastsvm.fit_model is the same training from Python.

    Examples
    --------
    >>> import os, subprocess, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> program = ["fastsvm-train"]   # the installed program
    >>> print(subprocess.run(program + ["--help"], capture_output=True, text=True).stdout.splitlines()[0])
    Usage: fastsvm-train [options] training_set_file [model_file]
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     data, model = os.path.join(tmp, "train.txt"), os.path.join(tmp, "train.model")
    ...     fastsvm.dump_svmlight_file(X, y, data, zero_based=False)
    ...     done = subprocess.run(program + ["-q", "-t", "0", data, model])
    ...     print(done.returncode, fastsvm.load_model(model).kernel_type)
    0 linear
    """
    sys.exit(run_interruptible(PROG, lambda: run(main, PROG, usage)))
