"""fastsvm-grid: LIBSVM's grid.py (svm-grid) in one process, the cells of a gamma solved together.

grid.py's options, output lines and .out file, so scripts written around it work unchanged: the
cells are reported in grid.py's order (the grid refined coarse to fine, alternately along C and
gamma) with its running best, then the final line ``best_c best_g best_rate``. The folds are
svm-train's (unless -R seeds them), the same for every cell. fastsvm.grid_search does the work:
per gamma, one cross validation whose folds are trained as warm paths over C, in -j threads.
"""
import math
import os
import re
import sys
from dataclasses import dataclass, field

from .common import UsageError, number, run
from .interrupt import run_interruptible

PROG = "fastsvm-grid"

USAGE = """\
Usage: fastsvm-grid [grid_options] [svm_options] dataset

grid_options :
-log2c {begin,end,step | "null"} : set the range of c (default -5,15,2)
    begin,end,step -- c_range = 2^{begin,...,begin+k*step,...,end}
    "null"         -- do not grid with c
-log2g {begin,end,step | "null"} : set the range of g (default 3,-15,-2)
    begin,end,step -- g_range = 2^{begin,...,begin+k*step,...,end}
    "null"         -- do not grid with g
-v n : n-fold cross validation (default 5)
-out {pathname | "null"} : (default dataset.out)
    pathname -- set output file path and name
    "null"   -- do not output file
-png {pathname | "null"} : contour plot of the rates (default dataset.png; needs matplotlib:
    pip install "fastsvm[plot]")
-resume [pathname] : resume the grid task using an existing output file (default pathname is dataset.out)
-svmtrain pathname, -gnuplot {pathname | "null"} : accepted for grid.py's scripts; -gnuplot null
    draws no plot, the rest is ignored (the training runs in this process)

svm_options : fastsvm-train's options (see fastsvm-train --help), for example
-s 0..4 or -s NAME : SVM type or solver; -t kernel_type; -m cachesize; -e epsilon; -q
-j n : threads: the folds are trained side by side (default: all cores); same results for any n
--scheduler ADDRESS : train the folds on the workers of this Dask scheduler (e.g. tcp://host:8786;
    needs pip install "fastsvm[dask]"); the same results as in this process
-R seed : draw the folds from this seed (default: svm-train's folds)
-n first:step:last : for nu-SVC and one-class (-s 1, -s 2), a grid of nu in place of C (lines
    then read "nu g rate")
"""

DEFAULT_C = (-5, 15, 2)       # grid.py's default ranges, as ints: its lines then print "-5", not "-5.0"
DEFAULT_G = (3, -15, -2)


@dataclass
class GridOptions:
    dataset: str
    log2c: tuple | None = DEFAULT_C
    log2g: tuple | None = DEFAULT_G
    folds: int = 5
    out: str | None = None
    png: str | None = None
    resume: str | None = None
    scheduler: str | None = None
    train_options: list = field(default_factory=list)


def parse_args(argv):
    """Command line -> GridOptions; the training options are left for fastsvm-train's parser."""
    if not argv:
        raise UsageError("no dataset given")
    dataset, args = argv[-1], argv[:-1]
    if dataset.startswith("-") and len(dataset) > 1:
        raise UsageError("no dataset given (it comes last)")
    title = os.path.basename(dataset)
    options = GridOptions(dataset, out=f"{title}.out", png=f"{title}.png")
    i = 0

    def value():
        if i + 1 >= len(args):
            raise UsageError(f"option {args[i]} needs a value")
        return args[i + 1]

    while i < len(args):
        arg = args[i]
        if arg in ("-log2c", "-log2g"):
            setattr(options, arg[1:], None if value() == "null" else log2_range(arg, value()))
            i += 1
        elif arg == "-v":
            options.folds = number("v", value(), int)
            if options.folds < 2:
                raise UsageError("n-fold cross validation: n must >= 2")
            i += 1
        elif arg in ("-c", "-g"):
            raise UsageError("Use -log2c and -log2g.")
        elif arg in ("-out", "-png"):
            setattr(options, arg[1:], None if value() == "null" else value())
            i += 1
        elif arg == "-gnuplot":
            options.png = None if value() == "null" else options.png
            i += 1
        elif arg == "--scheduler":
            options.scheduler = value()
            i += 1
        elif arg == "-svmtrain":
            value()
            i += 1
        elif arg == "-resume":
            if i + 1 < len(args) and not args[i + 1].startswith("-"):
                options.resume = args[i + 1]
                i += 1
            else:
                options.resume = f"{title}.out"
        else:
            options.train_options.append(arg)
        i += 1
    if options.log2c is None and options.log2g is None:
        raise UsageError("-log2c and -log2g should not be null simultaneously")
    return options


def log2_range(option, text):
    """begin,end,step -> the exponents begin, begin + step, ... up to end (grid.py's range)."""
    parts = text.split(",")
    if len(parts) != 3:
        raise UsageError(f"invalid value for {option}: {text!r} (expected begin,end,step or null)")
    begin, end, step = (number(option[1:], part) for part in parts)
    if not all(math.isfinite(v) for v in (begin, end, step)) or step == 0 or (end - begin) * step < 0:
        raise UsageError(f"invalid value for {option}: {text!r} (step must be non-zero and lead from begin "
                         "to end)")
    if (end - begin) / step > 1000:
        raise UsageError(f"invalid value for {option}: {text!r} (more than 1000 values)")
    return begin, end, step


def exponents(begin, end, step):
    """The exponents of a range, each the previous plus step (grid.py's values, bit for bit)."""
    values = []
    while (begin <= end) if step > 0 else (begin >= end):
        values.append(begin)
        begin = begin + step
    return values


def coarse_to_fine(values):
    """The middle value first, then the two halves' orders interleaved (left first): a few cells
    already span the whole range."""
    if len(values) <= 1:
        return list(values)
    mid = len(values) // 2
    left, right = coarse_to_fine(values[:mid]), coarse_to_fine(values[mid + 1:])
    order = [values[mid]]
    for k in range(max(len(left), len(right))):
        order += left[k:k + 1] + right[k:k + 1]
    return order


def job_order(cs, gs):
    """grid.py's order of the cells: the grid refined by a row of C or a column of gamma at a
    time, whichever axis is behind in resolution. The gammas first appear in the order of gs."""
    cells, i, j = [], 0, 0
    while i < len(cs) or j < len(gs):
        if i / len(cs) < j / len(gs):
            cells += [(cs[i], g) for g in gs[:j]]
            i += 1
        else:
            cells += [(c, gs[j]) for c in cs[:i]]
            j += 1
    return cells


def read_resume(path):
    """{(log2c or nu, log2g): rate} of the cells in an .out file (grid.py's -resume)."""
    done = {}
    with open(path) as f:
        for line in f:
            rate = re.findall(r"rate=([0-9.eE+-]+)", line)
            if not rate:
                continue
            c = re.findall(r"(?:log2c|nu)=([0-9.eE+-]+)", line)
            g = re.findall(r"log2g=([0-9.eE+-]+)", line)
            done[(float(c[0]) if c else None, float(g[0]) if g else None)] = float(rate[0])
    return done


class Report:
    """grid.py's output: one line per cell with the running best, in grid.py's order of the cells
    (``order``), resumed cells first; the .out file; the final line. Regression rates are mean
    squared errors: the lowest is best."""

    def __init__(self, axis, out, lowest, order, resumed):
        self.axis, self.out, self.lowest = axis, out, lowest
        self.order, self.resumed = order, resumed
        self.rates = dict(resumed)   # {(c, g): rate} known so far
        self.printed = 0             # the cells of order printed (or resumed)
        self.best = None             # (c, g, rate) as exponents (nu itself on the nu axis)
        for (c, g), rate in resumed.items():
            self.cell(c, g, rate, "resumed")

    def row(self, g, cs, rates):
        """A gamma's rates: kept, then every cell of the order printed up to the first not known."""
        for c, rate in zip(cs, rates):
            if (c, g) not in self.resumed:
                self.rates[(c, g)] = shown_rate(rate)
        while self.printed < len(self.order) and self.order[self.printed] in self.rates:
            cell = self.order[self.printed]
            if cell not in self.resumed:
                self.cell(*cell, self.rates[cell])
            self.printed += 1

    def cell(self, c, g, rate, worker="local"):
        best = self.best
        if best is None or (rate < best[2] if self.lowest else rate > best[2]) or \
                (rate == best[2] and g == best[1] and c is not None and c < best[0]):
            self.best = best = (c, g, rate)
        shown = " ".join(str(x) for x in (c, g) if x is not None)
        line = f"[{worker}] {shown} {rate} (best "
        if c is not None:
            line += f"{'c' if self.axis == 'C' else 'nu'}={self.value(best[0])}, "
        if g is not None:
            line += f"g={2.0 ** best[1]}, "
        print(line + f"rate={best[2]})", flush=True)
        if self.out is not None and worker != "resumed":
            names = ("log2c" if self.axis == "C" else "nu", "log2g")
            self.out.write("".join(f"{n}={x} " for n, x in zip(names, (c, g)) if x is not None) + f"rate={rate}\n")
            self.out.flush()

    def value(self, c):
        return 2.0 ** c if self.axis == "C" else c

    def final(self):
        c, g, rate = self.best
        values = ([self.value(c)] if c is not None else []) + ([2.0 ** g] if g is not None else [])
        print(" ".join(map(str, values)), rate, flush=True)


class Progress:
    """A bar on stderr when it is a terminal: trainings done (a fold along its path of C) of all."""

    def __init__(self):
        self.shown = sys.stderr.isatty()
        self.last = None

    def draw(self, done, total):
        self.last = (done, total)
        if self.shown and total > 0:
            filled = 30 * done // total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} folds trained")
            sys.stderr.flush()

    def redraw(self):
        if self.last is not None:
            self.draw(*self.last)

    def clear(self):
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def shown_rate(rate):
    """A rate as grid.py has it: svm-train's %g figure read back as a float."""
    return float(f"{rate:g}")


def main(argv):
    options = parse_args(argv)
    # imported after the command line is read: a usage error costs no solver imports
    from . import train as train_cli

    params, _, _, _, nus = train_cli.parse_args([*options.train_options, options.dataset])
    params.verbose = False
    axis = "nu" if nus is not None else "C"
    if axis == "C":
        cs = coarse_to_fine(exponents(*options.log2c)) if options.log2c is not None else [None]
    else:
        cs = list(nus)
    gs = coarse_to_fine(exponents(*options.log2g)) if options.log2g is not None else [None]
    if not cs or not gs:
        raise UsageError("the grid is empty")
    done = read_resume(options.resume) if options.resume is not None else {}

    from ..files.datafile import load_svmlight_file, row_line
    from ..errors import FastSVMError
    from ..tuning.grid import REGRESSION, grid_search
    from ..solvers import get_solver
    from ..training.trainer import check_class_labels

    kernel = params.kernel_type or get_solver(params.solver).default_kernel
    X, y = load_svmlight_file(options.dataset, zero_based=(kernel == "precomputed"), n_jobs=params.n_jobs)
    if X.shape[0] == 0:
        raise FastSVMError(f"{options.dataset}: no training data")
    if params.svm_type in ("c_svc", "nu_svc"):
        y = check_class_labels(y, where=lambda row: f"{options.dataset}:{row_line(options.dataset, row)}")

    todo = [g for g in gs if any((c, g) not in done for c in cs)]
    plot = _plotter(options.png) if options.png is not None and None not in cs and None not in gs else None
    client = None
    if options.scheduler is not None and todo:
        from ..distributed import connect
        client = connect(options.scheduler)
    out = None
    if options.out is not None:
        out = open(options.out, "a" if options.resume is not None else "w")
    try:
        report = Report(axis, out, params.svm_type in REGRESSION, job_order(cs, gs), done)
        progress = Progress()

        def on_gamma(k, rates):
            progress.clear()
            report.row(todo[k], cs, rates)
            progress.redraw()

        values = None if cs == [None] else [2.0 ** c if axis == "C" else c for c in cs]
        if todo:   # else every cell was resumed
            grid_search(X, y, **{"nus" if axis == "nu" else "Cs": values},
                        gammas=[2.0 ** g for g in todo] if gs != [None] else None,
                        folds=options.folds, params=params, refit=False, on_gamma=on_gamma,
                        progress=progress.draw, client=client)
        progress.clear()
        report.final()
    finally:
        if out is not None:
            out.close()
        if client is not None:
            client.close()
    if plot is not None:
        plot(options, axis, cs, gs, report.rates, best=report.best)


def _plotter(path):
    """draw(...) of the contour plot, or None (one line on stderr) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print(f"{PROG}: no plot written to {path}: matplotlib is not installed "
              '(pip install "fastsvm[plot]")', file=sys.stderr)
        return None
    matplotlib.use("Agg")   # a file, never a window
    return draw_contour


def draw_contour(options, axis, cs, gs, rates, *, best):
    """grid.py's picture: contour lines of the rate over (log2 C, log2 gamma), the best cell named."""
    import matplotlib.pyplot as plt
    import numpy as np

    xs, ys = sorted(set(cs)), sorted(set(gs))
    z = np.array([[rates.get((c, g), np.nan) for c in xs] for g in ys])
    top = np.nanmax(z)
    levels = np.arange(round(top) - 3, top + 0.5, 0.5)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    try:
        if len(xs) > 1 and len(ys) > 1 and len(levels) > 1:
            lines = ax.contour(xs, ys, z, levels=levels)
            ax.clabel(lines, fontsize=7)
        ax.plot([best[0]], [best[1]], "k+", markersize=12)
        ax.set_xlabel("log2(C)" if axis == "C" else "nu")
        ax.set_ylabel("log2(gamma)")
        ax.set_title(f"{os.path.basename(options.dataset)}\nbest {'log2(C)' if axis == 'C' else 'nu'} = "
                     f"{best[0]}  log2(gamma) = {best[1]}  rate = {best[2]}", fontsize=9)
        fig.savefig(options.png)
    finally:
        plt.close(fig)


def entry():
    """The ``fastsvm-grid`` program: LIBSVM's grid.py, its options and output, trained in this process.

    ``fastsvm-grid [grid_options] [svm_options] dataset`` cross-validates every (C, gamma) of a
    grid of powers of 2 (or, with ``-n``, every (nu, gamma)) on a LIBSVM data file, prints each
    cell's rate as it is done and, last, the best cell, and writes the table to dataset.out
    (``-out``) and a contour plot (``-png``). It reads its arguments from ``sys.argv`` and
    exits with its status (0 on success, 1 on an error, 130 on Ctrl-C); ``fastsvm-grid
    --help`` prints the usage. fastsvm.grid_search is the same search from Python.

    Examples
    --------
    >>> import os, subprocess, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> program = ["fastsvm-grid"]   # the installed program
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [3.0, 3.0], [3.0, 4.0], [4.0, 3.0]])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     data = os.path.join(tmp, "data.txt")
    ...     fastsvm.dump_svmlight_file(X, np.array([1, 1, 1, -1, -1, -1]), data, zero_based=False)
    ...     arguments = ["-log2c", "0,1,1", "-log2g", "0,0,1", "-v", "2", "-out", "null", "-png", "null", data]
    ...     done = subprocess.run(program + arguments, capture_output=True, text=True)
    ...     print(done.returncode, len(done.stdout.splitlines()))
    0 3
    """
    sys.exit(run_interruptible(PROG, lambda: run(main, PROG, USAGE)))
