"""SSsNAL's screening: rows far beyond their bounds held there for the rest of an inner solve, and
the check, at its end, of the held rows that may have had to move."""
import numpy as np

from ..._core._screening import held_misses, hold_rows
from ...errors import FastSVMError


def screen(inner, pt_start, lam_start, factor, config):
    """(rows, held) after the first Newton step of an inner solve: the rows it continues on and
    the rows held at their bound for its remaining steps (see hold_rows), or (None, None).

    A row is held when its projection argument z = y - lam a lies further beyond its bound than
    `factor` times the first step's move of z on most rows (its config.screen_quantile): after the
    first outer iteration an inner solve typically changes x on a few per cent of the rows, and
    the later steps move z less than the first. Holding only pays when the held
    rows carry config.screen_min_share of the stored values: each later step then costs a pass
    over the others. The caller checks the held rows at the end (unsure_rows) and, if some had
    to move, goes on with them among the rows."""
    qp, K = inner.qp, inner.qp.K
    rows, held = np.empty(qp.m, dtype=np.int32), np.empty(qp.m, dtype=np.int32)
    split = hold_rows(inner.pt, inner.lam, pt_start, lam_start, inner.xp, a=K.a, lower=K.lower, upper=K.upper,
                      row_nnz=qp.Z.row_nnz, factor=factor, quantile=config.screen_quantile, rows=rows, held=held)
    if split.n_held == 0 or split.held_nnz < config.screen_min_share * qp.nnz:
        return None, None
    try:
        return inner.restricted(rows[:split.n_rows], K.d - split.held_ax), held[:split.n_held]
    except FastSVMError:  # rounding put d just outside what the rows' bounds allow: hold none
        return None, None


def unsure_rows(held, x, inner, Zw, qp, *, sigma, row_norms, error):
    """The held rows that may have had to move in the inner solve just ended (inner, from the
    center x): Zw differs from Z v by Z grad psi, so a held row is certain when its z from Zw lies
    beyond its bound by more than sigma |z_r| |grad psi| (error = sigma |grad psi|); the others
    are to be looked at exactly."""
    unsure = np.empty(held.shape[0], dtype=np.int32)
    return unsure[: held_misses(held, x, inner.xp, Zw, qp.c, a=qp.K.a, lower=qp.K.lower, upper=qp.K.upper, sigma=sigma,
                                lam=inner.lam, norms=row_norms, slack=error, out=unsure)]
