"""fastsvm-predict: svm-predict's options, output file and printed lines."""
import math
import sys

from ..errors import FastSVMError
from .common import UsageError, number, run, scan_options
from .interrupt import run_interruptible

PROG = "fastsvm-predict"
USAGE = f"""\
Usage: {PROG} [options] test_file model_file output_file
options:
-b probability_estimates : whether to predict probability estimates, 0 or 1 (default 0)
-q : quiet mode (no outputs)
-j n : number of threads (default: all cores)
--help : print this usage
"""


def parse_args(argv):
    options, positional = scan_options(argv, ("b", "j"), flags=("q",))
    probability, quiet, n_jobs = False, False, None
    for name, value in options:
        if name == "b":
            probability = bool(number("b", value, int, choices=(0, 1)))
        elif name == "j":
            n_jobs = number("j", value, int, minimum=1)
        elif name == "q":
            quiet = True
    if len(positional) != 3:
        raise UsageError(f"expected test_file model_file output_file, got {len(positional)} argument(s)")
    return probability, quiet, n_jobs, positional


def main(argv):
    # imported here, not at module level: the console script loads this module before entry()
    # installs its Ctrl-C handling (fastsvm.cli.interrupt)
    from ..files.datafile import load_svmlight_file
    from ..files.modelfile import load_model
    from ..models.prediction import predict, predict_probability
    from ..models.probability import svr_laplace_scale

    probability, quiet, n_jobs, (test_file, model_file, output_file) = parse_args(argv)
    info = (lambda line: None) if quiet else print
    model = load_model(model_file)
    has_probability = model.prob_a is not None or model.prob_density_marks is not None
    if probability and not has_probability:
        raise FastSVMError(f"{model_file}: model does not support probability estimates")
    if not probability and has_probability:
        info("Model supports probability estimates, but disabled in prediction.")
    X, y = load_svmlight_file(test_file, zero_based=(model.kernel_type == "precomputed"),
                              n_jobs=n_jobs)
    regression = model.svm_type in ("epsilon_svr", "nu_svr")
    if probability and regression:
        info("Prob. model for test data: target value = predicted value + z,\n"
             "z: Laplace distribution e^(-|z|/sigma)/(2sigma),"
             f"sigma={c_format('%g', svr_laplace_scale(model))}")
    # svm-predict's formats: a plain prediction with %.17g (a label or value read back exactly);
    # a -b 1 row's label and probabilities with %g, under a header of %d labels
    if probability and not regression:
        predicted, prob = predict_probability(model, X, n_jobs=n_jobs)
        if model.is_classification:
            header = "labels" + "".join(f" {int(label)}" for label in model.labels)
        else:
            header = "label normal outlier"  # one-class (LIBSVM >= 3.30): P(normal), P(outlier)
        lines = [header]
        lines.extend(c_format("%g", label) + "".join(" " + c_format("%g", p) for p in row)
                     for label, row in zip(predicted, prob))
    else:
        predicted = predict(model, X, n_jobs=n_jobs)
        lines = [c_format("%.17g", value) for value in predicted]
    _write_text(output_file, lines)
    for line in (regression_lines if regression else classification_lines)(predicted, y):
        info(line)


def classification_lines(predicted, y):
    """svm-predict's accuracy line."""
    import numpy as np

    correct, total = int(np.count_nonzero(predicted == y)), len(y)
    accuracy = _divide(float(correct), float(total)) * 100
    return [f"Accuracy = {c_format('%g', accuracy)}% ({correct}/{total}) (classification)"]


def regression_lines(predicted, y):
    """svm-predict's mean squared error and squared correlation lines, from its running sums
    (left to right, so the last digits printed are LIBSVM's)."""
    import numpy as np

    predicted = np.asarray(predicted, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    total = float(len(y))

    def running_sum(values):
        return float(np.cumsum(values)[-1]) if values.size else 0.0

    error = running_sum((predicted - y) * (predicted - y))
    sum_p, sum_t = running_sum(predicted), running_sum(y)
    sum_pp, sum_tt, sum_pt = running_sum(predicted * predicted), running_sum(y * y), running_sum(predicted * y)
    covariance = total * sum_pt - sum_p * sum_t
    correlation = _divide(covariance * covariance,
                          (total * sum_pp - sum_p * sum_p) * (total * sum_tt - sum_t * sum_t))
    return [f"Mean squared error = {c_format('%g', _divide(error, total))} (regression)",
            f"Squared correlation coefficient = {c_format('%g', correlation)} (regression)"]


def _divide(numerator, denominator):
    """IEEE division, as C divides: x/0 is +-inf and 0/0 NaN, not a ZeroDivisionError."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(numerator) / np.float64(denominator))


def c_format(spec, value):
    """``spec % value`` as C's printf writes it: glibc prints a NaN with its sign ('-nan', what
    0/0 gives on x86), Python never does."""
    value = float(value)
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return spec % value


def _write_text(path, lines):
    with open(path, "w") as out:
        out.write("".join(line + "\n" for line in lines))


def entry():
    """The ``fastsvm-predict`` program: svm-predict's options, output and accuracy line.

    ``fastsvm-predict [options] test_file model_file output_file`` predicts the rows of a
    LIBSVM data file with a LIBSVM or LIBLINEAR model file, writes one prediction a line (with
    ``-b 1``, the probability estimates) and prints the accuracy, or the mean squared error for
    regression. It reads its arguments from ``sys.argv`` and exits with its status (0 on
    success, 1 on an error, 130 on Ctrl-C); ``fastsvm-predict --help`` prints the usage.
    fastsvm.predict is the same prediction from Python.

    Examples
    --------
    >>> import os, subprocess, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> program = ["fastsvm-predict"]   # the installed program
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    >>> y = np.array([1, 1, -1, -1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     data, model, out = (os.path.join(tmp, name) for name in ("test.txt", "model", "out.txt"))
    ...     fastsvm.dump_svmlight_file(X, y, data, zero_based=False)
    ...     fastsvm.save_model(fastsvm.fit_model(X, y, fastsvm.Params(kernel_type="linear")), model)
    ...     done = subprocess.run(program + [data, model, out], capture_output=True, text=True)
    ...     print(done.stdout.strip())
    ...     with open(out) as f:
    ...         print(f.read().split())
    Accuracy = 100% (4/4) (classification)
    ['1', '1', '-1', '-1']
    """
    sys.exit(run_interruptible(PROG, lambda: run(main, PROG, USAGE)))
