"""fastsvm-scale: svm-scale's options, output and parameter files."""
import sys

from .common import UsageError, number, run
from .interrupt import run_interruptible

PROG = "fastsvm-scale"
USAGE = f"""\
Usage: {PROG} [options] data_filename
options:
-l lower : x scaling lower limit (default -1)
-u upper : x scaling upper limit (default +1)
-y y_lower y_upper : y scaling limits (default: no y scaling)
-s save_filename : save scaling parameters to save_filename
-r restore_filename : restore scaling parameters from restore_filename
--help : print this usage
"""


def parse_args(argv):
    lower, upper, y_limits, save, restore = -1.0, 1.0, None, None, None
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        name, need = argv[i][1:], (3 if argv[i] == "-y" else 2)
        if name not in ("l", "u", "y", "s", "r"):
            raise UsageError(f"unknown option: {argv[i]}")
        if i + need > len(argv):
            raise UsageError(f"option {argv[i]} needs {need - 1} value(s)")
        if name == "l":
            lower = number("l", argv[i + 1])
        elif name == "u":
            upper = number("u", argv[i + 1])
        elif name == "y":
            y_limits = (number("y", argv[i + 1]), number("y", argv[i + 2]))
        elif name == "s":
            save = argv[i + 1]
        else:
            restore = argv[i + 1]
        i += need
    if not upper > lower or (y_limits is not None and not y_limits[1] > y_limits[0]):
        raise UsageError("inconsistent lower/upper specification")
    if save is not None and restore is not None:
        raise UsageError("cannot use -r and -s simultaneously")
    if len(argv) - i != 1:
        raise UsageError("expected exactly one data file")
    return lower, upper, y_limits, save, restore, argv[i]


def main(argv):
    # imported here, not at module level: the console script loads this module before entry()
    # installs its Ctrl-C handling (fastsvm.cli.interrupt)
    from ..files.datafile import load_svmlight_file
    from ..files.scaling import fit_scaling, load_scaling, restored_for, save_scaling, scaled_lines

    lower, upper, y_limits, save, restore, data_file = parse_args(argv)
    X, y = load_svmlight_file(data_file, zero_based=False)
    scaling = fit_scaling(X, y, lower, upper, y_limits)
    if restore is not None:
        scaling, dropped = restored_for(load_scaling(restore), scaling)
        for index in dropped:
            print(f"WARNING: feature index {index} appeared in file {data_file} was not seen in the "
                  f"scaling factor file {restore}. The feature is scaled to 0.", file=sys.stderr)
    if save is not None:
        save_scaling(scaling, save)
    new_nonzeros = 0
    out = sys.stdout
    for line in scaled_lines(X, y, scaling):
        new_nonzeros += line.count(":")
        out.write(line + "\n")
    out.flush()
    if new_nonzeros > X.nnz:
        print(f"WARNING: original #nonzeros {X.nnz}\n       > new      #nonzeros {new_nonzeros}\n"
              "If feature values are non-negative and sparse, use -l 0 rather than the default -l -1",
              file=sys.stderr)


def entry():
    """The ``fastsvm-scale`` program: svm-scale's options and output.

    ``fastsvm-scale [options] data_filename`` scales each feature of a LIBSVM data file to
    [lower, upper] (default [-1, 1]) and writes the scaled rows to stdout; ``-s`` saves the
    scaling parameters, ``-r`` restores them (to scale a test file as its training file). It
    reads its arguments from ``sys.argv`` and exits with its status (0 on success, 1 on an
    error, 130 on Ctrl-C); ``fastsvm-scale --help`` prints the usage.

    Examples
    --------
    >>> import os, subprocess, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> program = ["fastsvm-scale"]   # the installed program
    >>> X = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 30.0]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     data = os.path.join(tmp, "data.txt")
    ...     fastsvm.dump_svmlight_file(X, np.array([1, 2, 1]), data, zero_based=False)
    ...     done = subprocess.run(program + ["-l", "0", "-u", "1", data], capture_output=True, text=True)
    ...     print("\\n".join(line.rstrip() for line in done.stdout.splitlines()))
    1
    2 1:0.5 2:0.5
    1 1:1 2:1
    """
    sys.exit(run_interruptible(PROG, lambda: run(main, PROG, USAGE)))
