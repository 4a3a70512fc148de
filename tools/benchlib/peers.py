"""The peer libraries' runs: liblinear-official and libsvm-official through their Python interfaces.

The peers load when a function is called: a child process that measures one peer loads no other."""
import os
import re
import sys
import tempfile
import time

import numpy as np

from benchlib.data import as_pm
from benchlib.running import timed


def liblinear_problem(X, labels, bias):
    """liblinear's problem of (X, labels) with its bias feature (-B)."""
    from liblinear.liblinearutil import problem
    prob = problem(labels, X)
    prob.set_bias(bias)
    return prob


def liblinear_train(prob, labels, *, solver_type, C, eps, bias):
    """One liblinear -s solver_type -c C -e eps -B bias training: (seconds, w, w_bias, epochs)
    with +1 = the class of the first row, w_bias the bias feature's weight over -B. liblinear
    prints its epoch count to C stdout (flushed per message); it is caught at the file-descriptor
    level."""
    from liblinear.liblinearutil import parameter, train
    param = parameter(f"-s {solver_type} -c {C} -e {eps} -B {bias}")
    with tempfile.TemporaryFile() as log:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(log.fileno(), 1)
        try:
            start = time.perf_counter()
            model = train(prob, param)
            seconds = time.perf_counter() - start
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        log.seek(0)
        found = re.findall(rb"#iter = (\d+)", log.read())
    w, b = model.get_decfun()
    sign = 1.0 if model.get_labels()[0] == labels[0] else -1.0
    epochs = int(found[0]) if found else -1
    return seconds, sign * np.asarray(w), (sign * b / bias if bias > 0 else 0.0), epochs


def liblinear_run(X, labels, C, repeat, *, solver=3, p=1.0, regularized_bias=True):
    """(run, own optimum) of LIBLINEAR -s solver -B 1 (with -R when the bias is not regularized)
    for the loss max(0, 1 - y f)^p: run(eps) -> (median seconds, its own objective, (w, b))."""
    from liblinear.liblinearutil import parameter, train

    from benchlib.measures import hinge_primal   # fastsvm's solvers load only where needed
    prob = liblinear_problem(X, labels, 1.0)
    pm = as_pm(labels)
    flags = f"-s {solver} -c {C} -B 1 -q" + ("" if regularized_bias else " -R")

    def fit(eps):
        model = train(prob, parameter(f"{flags} -e {eps}"))
        n = min(model.get_nr_feature(), X.shape[1])
        w = np.zeros(X.shape[1])
        w[:n] = [model.get_decfun_coef(j + 1) for j in range(n)]
        # its decision values are positive for its own first label (+1 of a -1/+1 set), not the first row's
        sign = 1.0 if model.get_labels()[0] == labels[0] else -1.0
        return sign * w, sign * model.get_decfun_bias()

    def own_objective(w, b):   # LIBLINEAR's problem: the bias weight penalized unless -R
        return hinge_primal(X, pm, C, w, b, p) + (0.5 * b * b if regularized_bias else 0.0)

    def run(eps):
        seconds, (w, b), _ = timed(lambda: fit(eps), repeat)
        return seconds, own_objective(w, b), (w, b)
    return run, own_objective(*fit(1e-6))


def libsvm_rbf_parameter(*, svm_type=0, C, gamma, e, m):
    """libsvm-official's svm_parameter of an RBF run: -s svm_type (0 C-SVC, 3 epsilon-SVR) -t 2
    -c C -g gamma -e e -m m (kernel cache MB), quiet."""
    from libsvm.svmutil import svm_parameter
    return svm_parameter(f"-s {svm_type} -t 2 -c {C!r} -g {gamma!r} -e {e!r} -m {m!r} -q")
