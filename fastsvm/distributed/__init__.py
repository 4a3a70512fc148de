"""fastsvm on Dask (dask.distributed, the optional extra ``pip install "fastsvm[dask]"``): imported
only when a client or a scheduler address is given, so importing fastsvm never imports dask.

Two ways out of one machine (docs/usage.md; docs/guide.md, "Which solver"):

- run_fold_tasks: a grid's independent (gamma, fold) trainings as tasks on the workers, the data
  scattered to every worker once; each task rebuilds its fold with fastsvm.tuning.crossval.fold_tasks
  (the same folds, the same solver settings), so the table is the local run's.
- fit_linear: one linear SVM on rows held on the workers as CSR blocks, by SVM-ALM
  (fastsvm.solvers.alm) or NESVM (fastsvm.solvers.nesvm: the C-SVM and the squared hinge). A
  worker's blocks live in one BlockHost (a Dask actor) with their per-sample state (ALM's margins,
  multipliers and split; NESVM's margins of the iterates and its certificate); the solver's own
  loop (alm.iterate, nesvm.homotopy) runs over a WorkerTeam: a map over the blocks of the
  solver's Block methods -- the single-machine solve's arithmetic -- each worker summing its
  blocks' p-vectors, the workers' sums reduced pairwise at the driver. Only w, those sums and a
  few scalars cross the network.
"""
import pickle
import time
from dataclasses import dataclass, field

import numpy as np

from ..tuning.crossval import fold_tasks
from ..csr import to_csr
from ..errors import FastSVMError, ParameterError
from ..params import Params
from ..solvers import alm, nesvm
from ..solvers.base import linear_run_settings

POLL = 0.2    # seconds between two looks at the stop flag while waiting on the workers


def connect(address, timeout=10):
    """A dask.distributed Client of the scheduler at ``address`` (fastsvm-grid --scheduler),
    waiting up to ``timeout`` seconds for it."""
    client_class = _dask_client_class()
    try:
        return client_class(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as error:
        raise FastSVMError(f"cannot reach the Dask scheduler at {address}: {error}") from None


def _dask_client_class():
    try:
        from dask.distributed import Client
    except ImportError:
        raise FastSVMError('Dask is not installed: pip install "fastsvm[dask]"') from None
    return Client


def _worker_failed(error, what):
    """One clear FastSVMError for an exception raised on a worker (fastsvm's own pass as they are)."""
    if isinstance(error, FastSVMError):
        return error
    return FastSVMError(f"{what}: a Dask worker failed: {type(error).__name__}: {error}")


# ---- many independent trainings: the grid's fold tasks ----

def remote_fold(X, y, sample_weight, params, folds, *, path, f, threads):
    """On a worker: fold f of fastsvm.tuning.crossval.fold_tasks(X, y, params, folds, **path) trained,
    its (test rows, predictions) returned."""
    tasks, _ = fold_tasks(X, y, params, folds, sample_weight, threads=threads, **path)
    return tasks[f]()


def run_fold_tasks(client, X, y, sample_weight, specs, *, stop, on_done=None):
    """The fold tasks ``specs`` -- (params, folds, path, f, threads) each, remote_fold's arguments
    after the data -- on the client's workers, X and y scattered to every worker once; their
    results in order. on_done(k, result) as task k and every one before it are done. Ctrl-C or
    ``stop`` set: the tasks are cancelled and KeyboardInterrupt raised; a task's error: one
    FastSVMError."""
    X_remote = client.scatter(X, broadcast=True)
    y_remote = client.scatter(y, broadcast=True)
    w_remote = None if sample_weight is None else client.scatter(np.asarray(sample_weight), broadcast=True)
    futures = [client.submit(remote_fold, X_remote, y_remote, w_remote, params, folds, path=path, f=f, threads=threads,
                             pure=False) for params, folds, path, f, threads in specs]
    results = []
    try:
        for k, future in enumerate(futures):
            results.append(_wait(future, stop, "grid"))
            if on_done is not None:
                on_done(k, results[-1])
    except BaseException:
        stop[0] = 1
        client.cancel(futures)
        raise
    return results


def _wait(future, stop, what):
    """future's result, looking at the stop flag every POLL seconds."""
    from dask.distributed import TimeoutError as DaskTimeout
    while True:
        if stop[0]:
            raise KeyboardInterrupt
        try:
            return future.result(timeout=POLL)
        except (DaskTimeout, TimeoutError):
            continue
        except Exception as error:
            raise _worker_failed(error, what) from None


# ---- one linear model on data held by the workers ----

class BlockHost:
    """A worker's blocks (run as a Dask actor): their rows and per-sample state stay here."""

    def __init__(self):
        self.sources, self.blocks = [], []

    def load(self, sources):
        """sources: (X, y) pairs, or (path of a LIBSVM file, None). Each block's (columns, its labels)."""
        from ..files.datafile import load_svmlight_file
        info = []
        for X, y in sources:
            if isinstance(X, str):
                X, y = load_svmlight_file(X, zero_based=False, n_jobs=1)
            X, y = to_csr(X), np.asarray(y, dtype=np.float64).reshape(-1)
            if X.shape[0] != y.shape[0]:
                raise ParameterError(f"a block of {X.shape[0]} rows has {y.shape[0]} labels")
            self.sources.append((X, y))
            info.append((X.shape[1], np.unique(y)))
        return info

    def build(self, n_cols, positive, C, block_class, block_args):
        """The blocks, block_class(X, labels, C per row, **block_args) (a solver's Block), on n_cols
        columns, labels +1 for ``positive`` and -1 else: their rows."""
        for X, y in self.sources:
            X = X.copy()
            X.resize((X.shape[0], n_cols))
            self.blocks.append(block_class(X, np.where(y == positive, 1.0, -1.0), np.full(X.shape[0], float(C)),
                                           **block_args))
        self.sources = []
        return sum(block.rows.n_rows for block in self.blocks)

    def call(self, calls):
        """calls: (block method, its arguments) pairs, each run on every block in order: the sum
        over the blocks of what the last returns (None: nothing)."""
        total = None
        with np.errstate(over="ignore", invalid="ignore"):
            for name, args in calls:
                total = None
                for block in self.blocks:
                    part = getattr(block, name)(*args)
                    if part is not None:
                        total = np.array(part, dtype=np.float64) if total is None else total + part
        return total


class WorkerTeam:
    """A team (fastsvm.problems.blocks) over the BlockHosts: each call goes to every host at once,
    their sums reduced pairwise in host order (the same bits every run). A call without a result
    (each) waits to travel with the next sum: one round trip fewer. Counts the bytes of what it
    sends and receives (the pickled arguments and results) from the blocks' start (each solver's
    Block has a start method, called once as its iterations begin)."""

    def __init__(self, hosts, n_rows, n_weights, bias, mean_weight, *, stop, name):
        self.hosts, self.stop, self.name = hosts, stop, name
        self.n_rows, self.n_weights, self.bias, self.mean_weight = n_rows, n_weights, bias, mean_weight
        self.sent, self.received, self.calls = 0, 0, 0
        self.at_start = None
        self.pending = []

    def _call(self, name, args):
        calls, self.pending = [*self.pending, (name, args)], []
        self.sent += len(pickle.dumps(calls, protocol=5)) * len(self.hosts)
        futures = [host.call(calls) for host in self.hosts]
        results = [_wait(future, self.stop, self.name) for future in futures]
        self.received += sum(len(pickle.dumps(r, protocol=5)) for r in results)
        self.calls += 1
        return results

    def sum(self, name, *args):
        parts = self._call(name, args)
        while len(parts) > 1:
            parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
        return parts[0]

    def each(self, name, *args):
        if name == "start":     # the iterations begin: their traffic is counted from here
            self.at_start = (self.sent, self.received, time.perf_counter())
        self.pending.append((name, args))

    def flush(self):
        if self.pending:
            name, args = self.pending.pop()
            self._call(name, args)


@dataclass
class LinearFit:
    """fit_linear's model and run: coef_ (1, p) and intercept_ (1,) as scikit-learn's LinearSVC
    (decision > 0: classes_[1]), the optimum reached and the run's cost."""

    coef_: np.ndarray
    intercept_: np.ndarray
    classes_: np.ndarray
    objective: float
    gap: float
    n_iter: int
    status: str
    mu: float
    n_rows: int
    n_blocks: int
    n_workers: int
    seconds_per_iteration: float
    bytes_per_iteration: float       # sent and received by the driver, all workers together
    setup_bytes: int                 # the blocks' rows sent to the workers (0 for files read there)
    history: list = field(default_factory=list)

    @property
    def bytes_per_worker_iteration(self):
        return self.bytes_per_iteration / max(self.n_workers, 1)

    def decision_function(self, X):
        X = to_csr(X)
        return X @ self.coef_[0][:X.shape[1]] + self.intercept_[0]

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, self.classes_[1], self.classes_[0])


def fit_linear(client, blocks, y_blocks=None, C=1.0, solver="alm", *, tol=None, max_iter=None, loss="hinge",
               bias=-1.0, options=None, n_threads=1, stop=None, log=None):
    """Train a linear SVM on rows held by a Dask cluster's workers, by SVM-ALM or NESVM.

    Each solver runs the single-machine solve's iteration and stopping rule (the relative
    duality gap):

        alm    min 1/2 |w|^2 + C sum_i max(0, 1 - y_i (x_i.w + b))^p, b free (p from loss or options)
        nesvm  the C-SVM (loss hinge: the smoothing homotopy) or the squared hinge, the l2 penalty,
               the backtracking scheme; the LP-SVM, LS-SVM and the paper scheme are single-machine

    Only w, the workers' sums and a few scalars cross the network. Two classes over all blocks.

    Parameters
    ----------
    client : dask.distributed.Client
        The client of the cluster whose workers hold the blocks.
    blocks : list of {array-like, sparse matrix} or list of str
        The row blocks, each a scipy sparse matrix or an array (with y_blocks, its labels), or
        the path of a LIBSVM file read on its worker (y_blocks None). Block k goes to worker k
        mod the number of workers; files are read with 1-based indices and share the widest
        block's columns.
    y_blocks : list of array-like, default=None
        The labels of each block; None when the blocks are files.
    C : float, default=1.0
        The parameter C, > 0.
    solver : {'alm', 'nesvm'}, default='alm'
        SVM-ALM (fastsvm.solvers.alm) or NESVM (fastsvm.solvers.nesvm).
    tol : float, default=None
        The tolerance on the relative duality gap, as fastsvm-train's -e. None: the solver's
        own.
    max_iter : int, default=None
        Iteration limit, as fastsvm-train's -M. None: the solver's own.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        The loss, as fastsvm-train's -L.
    bias : float, default=-1.0
        The bias feature, as fastsvm-train's -B.
    options : dict, default=None
        The solver's options, as fastsvm-train's -o, e.g. ``{"p": 1.5, "step": "exact"}`` for
        alm, ``{"mu_shrink": 0.25}`` for nesvm.
    n_threads : int, default=1
        Threads of each block's matrix-vector products on its worker.
    stop : ndarray of shape (1,), dtype=int32, default=None
        A flag: set, the solve raises KeyboardInterrupt (it also does on Ctrl-C).
    log : callable, default=None
        ``log(line)`` receives the solver's progress lines.

    Returns
    -------
    fit : LinearFit
        ``coef_`` (1, n_features) and ``intercept_`` (1,) as scikit-learn's LinearSVC
        (decision > 0: ``classes_[1]``), with ``decision_function`` and ``predict``; the
        optimum reached (``objective``, ``gap``, ``n_iter``, ``status``; ``mu`` is ALM's
        penalty, or NESVM's last smoothing, 1 for the squared hinge) and the run's traffic.

    Examples
    --------
    >>> import numpy as np
    >>> from dask.distributed import Client
    >>> from sklearn.datasets import make_classification
    >>> from fastsvm.distributed import fit_linear
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> with Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
    ...     fit = fit_linear(client, [X[:100], X[100:]], [y[:100], y[100:]], C=1.0)
    >>> fit.coef_.shape, fit.status
    ((1, 5), 'converged')
    >>> bool(np.mean(fit.predict(X) == y) > 0.9)
    True
    """
    if solver not in RUNS:
        raise ParameterError(f"fit_linear: solver {solver!r} is not distributed (alm and nesvm are)")
    if not blocks:
        raise ParameterError("fit_linear: no blocks")
    if y_blocks is not None and len(y_blocks) != len(blocks):
        raise ParameterError(f"fit_linear: {len(blocks)} blocks but {len(y_blocks)} label blocks")
    if y_blocks is None and not all(isinstance(b, str) for b in blocks):
        raise ParameterError("fit_linear: blocks without y_blocks must be paths of LIBSVM files")
    if not C > 0:
        raise ParameterError(f"fit_linear: C must be > 0, got {C}")
    params = Params(solver=solver, kernel_type="linear", C=float(C), tol=tol, max_iter=max_iter, loss=loss,
                    bias=bias, options=dict(options or {}))
    bias, block_class, block_args, run_on = RUNS[solver](params, n_threads)
    name = f"distributed {solver}"
    stop = np.zeros(1, dtype=np.int32) if stop is None else stop

    workers = sorted(client.scheduler_info()["workers"])
    if not workers:
        raise FastSVMError("fit_linear: the Dask cluster has no workers")
    placed = {}
    for k, block in enumerate(blocks):
        source = (block, None) if y_blocks is None else (to_csr(block), np.asarray(y_blocks[k]))
        placed.setdefault(workers[k % len(workers)], []).append(source)
    setup_bytes = sum(len(pickle.dumps(s, protocol=5)) for sources in placed.values() for s in sources
                      if not isinstance(s[0], str))
    hosts = team = None
    try:
        hosts = [_wait(client.submit(BlockHost, actor=True, workers=[w], allow_other_workers=False, pure=False),
                       stop, name) for w in placed]
        infos = [_wait(host.load(placed[w]), stop, name) for host, w in zip(hosts, placed)]
        n_cols = max(info[0] for block_infos in infos for info in block_infos)
        classes = np.unique(np.concatenate([info[1] for block_infos in infos for info in block_infos]))
        if classes.size != 2:
            raise FastSVMError(f"fit_linear: two classes needed, the blocks have {classes.size}")
        n_rows = sum(_wait(host.build(n_cols, classes[1], C, block_class, block_args), stop, name)
                     for host in hosts)
        team = WorkerTeam(hosts, n_rows, n_cols + 1, bias, float(C), stop=stop, name=name)
        with np.errstate(over="ignore", invalid="ignore"):
            run = run_on(team, stop, log, name)
        team.flush()
        sent0, received0, started = team.at_start
        seconds = time.perf_counter() - started
        traffic = team.sent - sent0 + team.received - received0
    finally:
        hosts = team = None     # the actors and their blocks go with their last reference (also on errors,
                                # whose traceback holds this frame)
    n_iter = max(run["n_iter"], 1)
    w = run["w"]
    return LinearFit(coef_=w[:-1].reshape(1, -1).copy(), intercept_=np.array([w[-1] * bias]), classes_=classes,
                     objective=run["objective"], gap=run["gap"], n_iter=run["n_iter"], status=run["status"].value,
                     mu=run["mu"], n_rows=n_rows, n_blocks=len(blocks), n_workers=len(placed),
                     seconds_per_iteration=seconds / n_iter, bytes_per_iteration=traffic / n_iter,
                     setup_bytes=setup_bytes, history=run["history"])


def _alm_run(params, n_threads):
    """(bias, the Block class, its arguments after the rows, the run over a team) of SVM-ALM."""
    config, tol, max_iter, bias = linear_run_settings(alm.SOLVER, params, bias_by_default=True)
    p = alm.loss_power(params, config)

    def run_on(team, stop, log, name):
        return alm.iterate(team, p, config, tol, max_iter, stop=stop, log=log, name=name)
    return bias, alm.Block, {"bias": bias, "p": p, "n_threads": n_threads}, run_on


DISTRIBUTED_NESVM = {("l2", "hinge"), ("l2", "squared_hinge")}


def _nesvm_run(params, n_threads):
    """(bias, the Block class, its arguments after the rows, the run over a team) of NESVM: the
    C-SVM and the squared hinge with the l2 penalty, the backtracking scheme."""
    config, tol, max_iter, bias = linear_run_settings(nesvm.SOLVER, params, bias_by_default=True)
    model = (config.penalty, params.loss or "hinge")
    if model not in DISTRIBUTED_NESVM:
        raise ParameterError(f"fit_linear: solver nesvm runs the C-SVM (loss hinge) and the squared hinge with "
                             f"penalty l2 on blocks, not penalty {model[0]} with loss {model[1]}")
    if config.scheme != "backtracking":
        raise ParameterError(f"fit_linear: solver nesvm runs the backtracking scheme on blocks, not {config.scheme}")
    penalty, loss = model

    def run_on(team, stop, log, name):
        return nesvm.homotopy(team, penalty, loss, config, tol, max_iter=max_iter, stop=stop, log=log, name=name)
    return bias, nesvm.Block, {"bias": bias, "loss": loss, "n_threads": n_threads}, run_on


RUNS = {"alm": _alm_run, "nesvm": _nesvm_run}
