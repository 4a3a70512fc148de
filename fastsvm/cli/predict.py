"""fastsvm-predict: svm-predict's options, output file and printed lines."""
import sys

import numpy as np

from ..datafile import load_svmlight_file
from ..errors import FastSVMError
from ..metrics import squared_correlation
from ..modelfile import load_model
from ..prediction import predict, predict_probability
from .common import UsageError, number, run, scan_options

PROG = "fastsvm-predict"
USAGE = f"""\
Usage: {PROG} [options] test_file model_file output_file
options:
-b probability_estimates : whether to predict probability estimates, 0 or 1 (default 0)
-q : quiet mode (no outputs)
-j n : number of threads (default: all cores)
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
    lines = []
    if probability and model.svm_type in ("epsilon_svr", "nu_svr"):
        info("Prob. model for test data: target value = predicted value + z,\n"
             "z: Laplace distribution e^(-|z|/sigma)/(2sigma),"
             f"sigma={model.prob_a[0]:g}")
    if probability and model.svm_type not in ("epsilon_svr", "nu_svr"):
        labels, prob = predict_probability(model, X, n_jobs=n_jobs)
        if model.is_classification:
            lines.append("labels " + " ".join(str(int(label)) for label in model.labels))
        else:
            lines.append("label normal outlier")  # one-class: P(normal), P(outlier)
        lines.extend(f"{label:g} " + " ".join(f"{p:g}" for p in row) for label, row in zip(labels, prob))
        predicted = labels
    else:
        predicted = predict(model, X, n_jobs=n_jobs)
        lines.extend(f"{label:g}" for label in predicted)
    _write_text(output_file, lines)
    total = len(y)
    if model.svm_type in ("epsilon_svr", "nu_svr"):
        info(f"Mean squared error = {np.mean((predicted - y) ** 2) if total else float('nan'):g} (regression)")
        info(f"Squared correlation coefficient = {squared_correlation(predicted, y):g} (regression)")
    else:
        correct = int(np.count_nonzero(predicted == y))
        accuracy = 100.0 * correct / total if total else float("nan")
        info(f"Accuracy = {accuracy:g}% ({correct}/{total}) (classification)")


def _write_text(path, lines):
    with open(path, "w") as out:
        out.write("".join(line + "\n" for line in lines))


def entry():
    sys.exit(run(main, PROG, USAGE))
