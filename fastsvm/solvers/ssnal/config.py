"""SSsNAL's knobs: the -o options (``option`` fields) and the internal tuning constants (plain
fields: tests and benchmarks set them through Params(config=Config(...)), -o does not)."""
from dataclasses import dataclass

from ..base import option

DEFAULT_TOL = 1e-3
DEFAULT_MAX_OUTER = 200
WARM_MAPS = ("rff", "nystroem")
NONLINEAR = ("rbf", "polynomial", "sigmoid")  # the kernels of the kernel front end
SIGMA_MIN, SIGMA_MAX = 1e-6, 1e10
DENSE_P_MAX = 2000


@dataclass(frozen=True)
class Config:
    """-o name=value, for the linear front end and the kernel one; then the internal knobs."""

    sigma0: float | None = option(None, "first proximal parameter sigma, by default the mean C", kind=float,
                                  low=0.0, low_open=True, kernels=("linear",))
    sigma_factor: float = option(3.0, "growth of sigma between outer iterations", low=1.0)
    line_search: str = option("exact", "Newton step length rule", choices=("armijo", "exact"),
                              kernels=("linear",))
    newton_system: str = option("auto", "how each Newton system is solved",
                                choices=("auto", "dense", "smw", "cg"), kernels=("linear",))
    max_newton: int = option(50, "Newton steps per outer iteration", low=1)
    # explicit features of the kernel warm start: random Fourier features (RBF) or Nystroem
    # landmarks. The warm start costs ~ n D^2 per Newton system; fewer features give a rougher x^0,
    # which the rounds on the exact kernel make up for at less cost (chosen with
    # tools/bench_ssnal_kernel.py)
    rff: int = option(128, "explicit features of the warm start", low=1, kernels=NONLINEAR)
    warm: str = option("rff", "warm start's features: random Fourier (rbf only) or Nystroem",
                       choices=WARM_MAPS, kernels=NONLINEAR)
    # eta of the explicit-feature problem: it is only an approximation
    warm_tol: float = option(1e-4, "KKT tolerance of the warm start", low=0.0,
                             low_open=True, kernels=NONLINEAR)
    theta: float = option(0.0, "margin band whose rows join the working set", low=0.0,
                          kernels=NONLINEAR)
    handover: int = option(1, "hand the current point to block_smo once the rounds cost a share of a blocked "
                           "solve (0: never)", low=0, below=2, kernels=NONLINEAR)

    # ---- the sigma schedule and the inner tolerance (schedule.py)
    primal_lag: float = 0.1        # sigma grows while the AL primal residual is >= this fraction of eta
    inner_scale_min: float = 1e-3  # the inner tolerance is tightened at most this much
    sigma0_scale: float = 1.0      # sigma_0 = this x the mean upper bound (C): sigma scales as x / (Z v + c)
    # sigma_0 of a path's warm start (the last C's solution, scaled into the new box) in units of
    # the cold one: the warm point is close, so its proximal steps are short and a smaller sigma
    # takes fewer passes (chosen with tools/bench_path.py; any scale well below 1 beats 1)
    path_sigma_scale: float = 0.125
    sigma_min: float = SIGMA_MIN
    sigma_max: float = SIGMA_MAX
    # ---- the line search (inner.py)
    armijo_mu: float = 1e-4
    max_halvings: int = 40
    exact_slope: float = 0.2       # line_search='exact' stops once |slope| <= this fraction of slope(0)
    cold_gradient_step: bool = True  # the first step from x = 0 is along -grad psi when all rows tie (C-SVC)
    # ---- the Newton systems and their cost model (newton.py)
    dense_p_max: int = DENSE_P_MAX  # largest p for which the p x p Newton system may be formed (LAPACK
                                    # cannot be interrupted: this keeps one call short)
    smw_j_max: int = 2000          # largest free set for which the |J| x |J| system may be formed
    blas_speedup: float = 8.0      # Cholesky flops per sparse scalar flop (cost model of the systems)
    dense_rows_speedup: float = 50.0  # products of rows copied dense, per sparse flop: one core's dgemm
                                      # runs far faster than the sparse loops (random Fourier features)
    cg_iter_guess: int = 25
    cg_max_iter: int = 500
    cg_rtol: float = 0.3           # loosest relative residual of the CG Newton directions
    cg_inexact_passes: float = 3.0  # the extra Newton steps an inexact CG direction costs, in passes over X
                                    # (exact dense directions take fewer Newton steps than CG ones; a step
                                    # is one pass for Z d plus line-search projections and updates worth
                                    # a few more; chosen with tools/bench_ssnal.py)
    kink_rows: int = 3             # a CG system keeps the rows that left the last one's J when at most
                                   # this many did (see NewtonSystems.with_kinks)
    dense_block_bytes: int = 1 << 18  # rows copied dense a block at a time (L2-resident)
    blas_min_flops: float = 1e6    # below this a dense copy of the rows and a BLAS call cost more than they save
    # ---- eta tested early, or estimated (linear.py)
    early_grad: float = 100.0      # inner iterates with |grad psi| <= this x its tolerance may be tested for
    early_eta_prev: float = 10.0   # eta, when the last outer iteration's eta was <= this x tol (the estimate
                                   # costs a projection: not worth it in the outer iterations far from the end)
    estimated_eta_min: float = 2.0  # an outer iteration's eta is estimated from Z v (no pass) while the last
    estimated_eta_error: float = 0.25  # one's was above early_eta_prev x tol, the estimate above
                                   # estimated_eta_min x tol and its error bound gain |grad psi| below
                                   # estimated_eta_error x it: the estimate saves a pass per outer iteration
                                   # and stays close to eta while its bound is small; where the bound is
                                   # large the estimate's error is too, and eta is computed (chosen with
                                   # tools/bench_ssnal.py)
    early_step_passes: float = 2.0  # Newton steps costing this many passes (CG systems) make the exact eta
                                    # test, one pass, worth making without the estimate's bound
    early_every_step_passes: float = 5.0  # and this many, worth making after every step, not only once
                                          # |grad psi| fell tenfold since the last test: on such steps the
                                          # test is a small share of the step and can end the solve sooner
    # ---- screening (screening.py)
    screen_factor: float = 1.0     # rows are held at their bound for an inner solve beyond this many first
    screen_quantile: float = 0.99  # moves (that quantile over the rows)
    screen_min_share: float = 0.3  # ... when the held rows carry this share of the stored values
    # ---- presolve (presolve.py)
    merge_min_share: float = 0.05  # equal samples are merged when that removes this share of the stored values
    coordinate_start_p: float = DENSE_P_MAX  # C-SVC with more features than this (Newton systems by CG)
                                             # starts from dual coordinate descent epochs
    coordinate_rate: float = 0.6   # those epochs go on while each gains at most this share of the one before
    coordinate_max_epochs: int = 50
    # ---- the kernel front end (kernel.py, working_set.py)
    kernel_max_rounds: int = 50    # working-set rounds
    # the hand-over (handover.py): a blocked solve is estimated at this many of its kernel rows per
    # support vector, handover_min_rows at least (its first working sets' rows), and the solve may
    # spend this share of it before it hands over: the low end of block_smo's rows per support
    # vector (tools/bench_ssnal_grid.py measures both sides), so the estimate stays below its time,
    # and a share that leaves room for the work one check cannot cut short (the warm start's
    # features, a Newton step) within half a blocked solve
    handover_rows: float = 1.5
    handover_min_variables: int = 6000  # where block_smo's fixed costs are paid back (solver "auto")
    handover_min_rows: int = 2048
    handover_share: float = 0.2
    handover_probe_rows: int = 64   # block_smo's kernel rows timed for the estimate
    # a blocked solve estimated under this many seconds (its least estimate, before the warm start)
    # is handed over at once: the attempt's own fixed costs would be a large share of it
    handover_at_once: float = 0.15
    # rows joining the working set per round at most, the largest KKT violations first: a warm start
    # far from the solution (random Fourier features at a large gamma) can mark many thousand rows,
    # and on all of them at once the free sets outgrow Cholesky and the cache (CG on columns computed
    # anew at every product); this cap keeps the free sets Cholesky-sized, and a smaller one costs
    # more rounds (chosen with tools/bench_ssnal_grid.py)
    kernel_join_max: int = 2000
    kernel_max_backtracks: int = 40
    kernel_line_rtol: float = 0.2  # the step's slope of psi is at most this fraction of the initial one
    kernel_line_trials: int = 12
    # each round starts from the warm start's sigma, not raised to shrink its first free set: with
    # kernel_join_max rows joining a round the free sets are Cholesky-sized anyway, and a raised sigma
    # can leave a large free set in place while the Newton steps of whole rounds fail
    # a round solves U to this fraction of the whole problem's eta at its start (or to tol / 2, the
    # larger): while violators outside U set that eta, the rows joining next move U's solution
    # again, so solving U further is wasted Newton steps
    round_reduction: float = 0.03
    # below this tolerance the kept gradient's rounding (float32 columns, 2^-24 per value summed over
    # the support) reaches eta's scale, and the kept gradient can report an eta far below the exact
    # one: it is recomputed in float64 (one product over the support) before the stop is declared
    exact_gradient_tol: float = 1e-5
    products_min_columns: int = 64  # uncached columns from which a product bypasses the cache
    store_values: int = 1 << 21    # kernel values computed at once for the cache (16 MB)
    dense_j_max: int = 4000        # Newton systems up to this order (and 8 |J|^2 <= -m) by Cholesky
    always_dense_j: int = 400      # ... and up to this order whatever the budget
    kernel_cg_rtol: float = 1e-6   # CG Newton directions: inexact ones cost more Newton steps than CG
    kernel_cg_max_iter: int = 1000
    cg_condition: float = 3.0      # Newton systems of a block whose condition is bounded by this: by CG
                                   # (~11 products to kernel_cg_rtol) whatever their order, not Cholesky
    # K_UU held sparse (RBF): the values below sparse_drop / |U| are dropped, so a row loses less than
    # sparse_drop (K_ii = 1), far below the float32 rounding (2^-24) of the cached columns the dense
    # path reads; Newton systems by CG on the kept values while sigma x sparse_drop stays below
    # kernel_cg_rtol
    sparse_drop: float = 2.0 ** -40
    sparse_max_density: float = 1.0 / 32  # held sparse when at most this share of K_UU is kept ...
    sparse_min_rows: int = 800     # ... and U has this many rows (smaller: dense systems anyway)
    sparse_sample_rows: int = 128  # rows whose kept share decides, before the whole block is built
    sparse_value_bytes: int = 12   # a kept value and its column (at most half the -m budget in all)
