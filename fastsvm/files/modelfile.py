"""Model files.

LIBSVM's text format is read and written exactly as LIBSVM 3.37's svm_load_model /
svm_save_model do: the same header keys in the same order, ``%.17g`` for every real number of
the header and for the SV coefficients, ``%.8g`` for support-vector feature values, ``%d`` for
integers, ``0:serial`` as the only feature of a precomputed-kernel support vector, and a space
after every number of an SV line. LIBLINEAR model files are read too and turned into the
equivalent linear Model (weight vectors held as support vectors), which LIBSVM's tools then
predict the same way.

Reading is strict: anything LIBSVM would misread, crash on or silently accept as garbage stops
with ``FileFormatError`` (``file:line: problem``) before any model is built.
"""
import math
import os
import re

import numpy as np
import scipy.sparse as sp

from .atomic import atomic_output
from ..csr import row_spans
from ..errors import FastSVMError, FileFormatError
from ..models.model import KERNEL_TYPES, SVM_TYPES, Model

# what printf writes; no nan/inf/hex. One way to split the digits: a long run of them followed by
# a stray character must fail in linear time (with overlapping ways to split them, a regex
# backtracks over every split: quadratic in the run's length; tests/test_modelfile.py holds it)
_FLOAT = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_FLOAT_RE = re.compile(_FLOAT)
_INT_RE = re.compile(r"[+-]?\d+")
_INDEX_RE = re.compile(r"\d+")
# the index:value pairs of an SV line (each followed by a blank or the end of the line)
_PAIRS_RE = re.compile(rf"(?:\d+:{_FLOAT}(?=[ \t]|$)[ \t]*)*")
_INT32_MAX = 2**31 - 1
N_DENSITY_MARKS = 10

# LIBLINEAR's solver names, by their -s number
_LIBLINEAR_SOLVERS = {
    "L2R_LR": 0, "L2R_L2LOSS_SVC_DUAL": 1, "L2R_L2LOSS_SVC": 2, "L2R_L1LOSS_SVC_DUAL": 3,
    "MCSVM_CS": 4, "L1R_L2LOSS_SVC": 5, "L1R_LR": 6, "L2R_LR_DUAL": 7,
    "L2R_L2LOSS_SVR": 11, "L2R_L2LOSS_SVR_DUAL": 12, "L2R_L1LOSS_SVR_DUAL": 13,
    "ONECLASS_SVM": 21,
}
_LIBLINEAR_REGRESSION = ("L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL")

# the kernel parameters LIBSVM writes (and needs) for each kernel
_KERNEL_KEYS = {"linear": (), "polynomial": ("degree", "gamma", "coef0"), "rbf": ("gamma",),
                "sigmoid": ("gamma", "coef0"), "precomputed": ()}
# the probability keys LIBSVM's training produces for each svm type
_PROBABILITY_KEYS = {"c_svc": ("probA", "probB"), "nu_svc": ("probA", "probB"),
                     "one_class": ("prob_density_marks",), "epsilon_svr": ("probA",),
                     "nu_svr": ("probA",)}


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------

def save_model(model, path):
    """Write a model file in LIBSVM's format.

    The file is byte for byte what LIBSVM's svm_save_model writes, so LIBSVM's own tools read
    it. It is written atomically (a temporary file in the same directory, then renamed): a
    crash never leaves half a model; a device or a pipe is written in place.

    Parameters
    ----------
    model : Model
        The model, e.g. from fit_model, load_model or an estimator's ``model_``.
    path : str or path-like
        The file to write.

    See Also
    --------
    load_model : Read a model file.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    >>> model = fastsvm.fit_model(X, [1, 1, -1, -1], fastsvm.Params(kernel_type="linear"))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "linear.model")
    ...     fastsvm.save_model(model, path)
    ...     with open(path) as f:
    ...         print(f.readline().strip())
    svm_type c_svc
    """
    with atomic_output(path) as f:
        _write_model(model, f)


def _g17(x):
    return "%.17g" % x


def _write_model(model, f):
    """The LIBSVM model text, header then one line per support vector."""
    k = model.nr_class
    n_pairs = k * (k - 1) // 2
    l = model.support_vectors.shape[0]
    kernel = model.kernel_type
    f.write(f"svm_type {model.svm_type}\nkernel_type {kernel}\n")
    if "degree" in _KERNEL_KEYS[kernel]:
        f.write("degree %d\n" % _int32(model.degree, "degree"))
    if "gamma" in _KERNEL_KEYS[kernel]:
        f.write(f"gamma {_g17(model.gamma)}\n")
    if "coef0" in _KERNEL_KEYS[kernel]:
        f.write(f"coef0 {_g17(model.coef0)}\n")
    f.write(f"nr_class {k}\ntotal_sv {l}\n")
    f.write("rho" + "".join(" " + _g17(v) for v in _values(model.rho, n_pairs, "rho")) + "\n")
    if model.labels is not None:
        f.write("label" + "".join(" %d" % _int32(v, "label") for v in model.labels) + "\n")
    for key, values, count in (("probA", model.prob_a, n_pairs), ("probB", model.prob_b, n_pairs),
                               ("prob_density_marks", model.prob_density_marks, N_DENSITY_MARKS)):
        if values is not None:
            f.write(key + "".join(" " + _g17(v) for v in _values(values, count, key)) + "\n")
    if model.n_sv is not None:
        f.write("nr_sv" + "".join(" %d" % v for v in model.n_sv) + "\n")
    f.write("SV\n")
    coef = model.sv_coef.reshape(k - 1, l)
    sv, starts, stops = row_spans(model.support_vectors)   # in place, not copied
    for i in range(l):
        parts = [_g17(c) + " " for c in coef[:, i]]
        if kernel == "precomputed":
            parts.append("0:%d " % _int32(model.sv_indices[i], "serial number"))
        else:
            lo, hi = starts[i], stops[i]
            parts.extend("%d:%.8g " % (j + 1, v) for j, v in zip(sv.indices[lo:hi], sv.data[lo:hi]))
        f.write("".join(parts) + "\n")


def _values(values, count, key):
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size != count:
        raise FastSVMError(f"model {key} has {values.size} values, LIBSVM's format needs {count}")
    return values


def _int32(value, what):
    value = int(value)
    if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
        raise FastSVMError(f"{what} {value} does not fit LIBSVM's int")
    return value


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------

def load_model(path):
    """Read a LIBSVM or LIBLINEAR model file (told apart by LIBLINEAR's ``solver_type`` key).

    Reading is strict: anything LIBSVM would misread stops with FileFormatError. LIBLINEAR
    models become linear Models: a binary classifier, a regressor or a one-class
    model is one support vector w with coefficient 1 and rho = -(bias weight x bias) (minus
    LIBLINEAR's rho for one-class). k one-vs-rest weight vectors become k support vectors whose
    one-vs-one coefficients make the decision value of pair (i, j) equal s_i - s_j, with the
    classes stored in reverse label order: LIBSVM's voting then picks the largest s and, on an
    exact tie, the class LIBLINEAR picks (the one earlier in its label list).

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    model : Model
        The model, as LIBSVM's svm_load_model reads it.

    Raises
    ------
    FileFormatError
        When the file does not parse; its message names the file and the line.

    See Also
    --------
    save_model : Write a model file.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import fastsvm
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 3.0], [3.0, 4.0]])
    >>> model = fastsvm.fit_model(X, [1, 1, -1, -1], fastsvm.Params(kernel_type="linear"))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "linear.model")
    ...     fastsvm.save_model(model, path)
    ...     loaded = fastsvm.load_model(path)
    >>> loaded.svm_type, loaded.kernel_type, loaded.nr_class
    ('c_svc', 'linear', 2)
    >>> fastsvm.predict(loaded, [[0.0, 0.5], [3.0, 3.5]])
    array([ 1., -1.])
    """
    reader = _Reader(path)
    header = reader.header()
    if "solver_type" in header.values or header.end_key == "w":
        return _liblinear_model(reader, header)
    return _libsvm_model(reader, header)


class _Header:
    """Header lines: key -> (line number, value tokens), and the key that ended the header."""

    def __init__(self):
        self.values = {}
        self.end_key = None
        self.end_line = None


class _Reader:
    """The file's lines (LF or CRLF), with errors pointing at a line."""

    def __init__(self, path):
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()  # the newline ending the last line
        self.lines = lines
        self.pos = 0  # index of the next line to read

    def error(self, line, message):
        return FileFormatError(self.path, line, message)

    def next_line(self):
        """(line number, text) of the next line, or (None, None) at the end of the file."""
        if self.pos >= len(self.lines):
            return None, None
        raw = self.lines[self.pos]
        self.pos += 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            return self.pos, raw.decode("ascii")
        except UnicodeDecodeError:
            raise self.error(self.pos, "non-ASCII bytes in a model file") from None

    def header(self):
        """Read `key values...` lines up to the line holding only SV (LIBSVM) or w (LIBLINEAR)."""
        header = _Header()
        while True:
            lineno, text = self.next_line()
            if lineno is None:
                last = max(len(self.lines), 1)
                raise self.error(last, "file ends inside the header (no 'SV' or 'w' line)")
            tokens = text.split()
            if not tokens:
                continue
            key = tokens[0]
            if not header.values and not key.isidentifier():
                # a model starts with a key (svm_type, solver_type); a data file with a label
                raise self.error(lineno, f"this is not a LIBSVM model file: the line starts with {key[:20]!r}, "
                                         "not a key such as svm_type (a data file?)")
            if key in ("SV", "w"):
                if len(tokens) > 1:
                    raise self.error(lineno, f"unexpected text after '{key}'")
                header.end_key, header.end_line = key, lineno
                return header
            if key in header.values:
                raise self.error(lineno, f"'{key}' given twice")
            header.values[key] = (lineno, tokens[1:])

    def trailing(self):
        """Nothing but blank lines may follow the last support vector or weight."""
        while True:
            lineno, text = self.next_line()
            if lineno is None:
                return
            if text.strip():
                raise self.error(lineno, "unexpected text after the last line of the model")


class _Fields:
    """Typed access to header values, checking counts and number syntax."""

    def __init__(self, reader, header, known):
        self.reader = reader
        self.header = header
        for key, (lineno, _) in header.values.items():
            if key not in known:
                raise reader.error(lineno, f"unknown key '{key}' in the model header")

    def __contains__(self, key):
        return key in self.header.values

    def line(self, key):
        return self.header.values[key][0] if key in self else self.header.end_line

    def require(self, key, why=""):
        if key not in self:
            raise self.reader.error(self.header.end_line, f"the header has no '{key}'{why}")

    def tokens(self, key, count):
        lineno, tokens = self.header.values[key]
        if len(tokens) != count:
            raise self.reader.error(lineno, f"'{key}' needs {count} value{'s' * (count != 1)}, "
                                            f"found {len(tokens)}")
        return lineno, tokens

    def word(self, key, choices):
        lineno, (value,) = self.tokens(key, 1)
        if value not in choices:
            raise self.reader.error(lineno, f"unknown {key} '{value}' (expected one of "
                                            f"{', '.join(c for c in choices if c)})")
        return value

    def ints(self, key, count, minimum=-_INT32_MAX - 1):
        lineno, tokens = self.tokens(key, count)
        out = []
        for t in tokens:
            if not _INT_RE.fullmatch(t) or not minimum <= int(t) <= _INT32_MAX:
                low = "a non-negative" if minimum == 0 else "a positive" if minimum == 1 else "an"
                raise self.reader.error(lineno, f"'{key}' value '{t}' is not {low} integer")
            out.append(int(t))
        return out

    def unique_ints(self, key, count):
        """ints() that must all differ (a class label given twice would name two classes)."""
        values = self.ints(key, count)
        seen = set()
        for v in values:
            if v in seen:
                raise self.reader.error(self.line(key), f"'{key}' value {v} is given twice")
            seen.add(v)
        return values

    def int(self, key, minimum=-_INT32_MAX - 1):
        return self.ints(key, 1, minimum)[0]

    def floats(self, key, count):
        lineno, tokens = self.tokens(key, count)
        return np.array([_float(self.reader, lineno, t, f"'{key}' value") for t in tokens],
                        dtype=np.float64)

    def float(self, key):
        return float(self.floats(key, 1)[0])

    def counted(self, key, nr_class_key="nr_class"):
        """Keys whose value count depends on nr_class must come after it."""
        if nr_class_key not in self or self.line(nr_class_key) > self.line(key):
            raise self.reader.error(self.line(key), f"'{key}' must come after '{nr_class_key}'")


def _float(reader, lineno, token, what):
    if not _FLOAT_RE.fullmatch(token):
        raise reader.error(lineno, f"{what} '{token}' is not a number")
    value = float(token)
    if not math.isfinite(value):
        raise reader.error(lineno, f"{what} '{token}' is not finite")
    return value


_LIBSVM_KEYS = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv",
                "rho", "label", "probA", "probB", "prob_density_marks", "nr_sv")


def _libsvm_model(reader, header):
    if header.end_key != "SV":
        raise reader.error(header.end_line, "a LIBSVM model's support vectors start with 'SV'")
    h = _Fields(reader, header, _LIBSVM_KEYS)
    for key in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
        h.require(key)
    svm_type = h.word("svm_type", SVM_TYPES)
    kernel = h.word("kernel_type", KERNEL_TYPES)
    classification = svm_type in ("c_svc", "nu_svc")
    nr_class = h.int("nr_class", minimum=1)
    if not classification and nr_class != 2:
        raise reader.error(h.line("nr_class"), f"nr_class of a {svm_type} model must be 2")
    n_pairs = nr_class * (nr_class - 1) // 2
    l = h.int("total_sv", minimum=0)
    if nr_class == 1 and l > 0:  # an SV line would have no coefficient (LIBSVM cannot read it)
        raise reader.error(h.line("total_sv"), "a single-class model has no support vectors")
    for key in ("rho", "label", "probA", "probB", "nr_sv"):
        if key in h:
            h.counted(key)

    kw = {}
    for key in _KERNEL_KEYS[kernel]:
        h.require(key, f" (needed by the {kernel} kernel)")
    if "degree" in h:
        kw["degree"] = h.int("degree", minimum=0 if kernel == "polynomial" else -_INT32_MAX - 1)
    for key in ("gamma", "coef0"):
        if key in h:
            kw[key] = h.float(key)

    rho = h.floats("rho", n_pairs)
    labels = n_sv = None
    if classification:
        h.require("label", f" (needed by a {svm_type} model)")
        h.require("nr_sv", f" (needed by a {svm_type} model)")
        labels = h.unique_ints("label", nr_class)
        n_sv = h.ints("nr_sv", nr_class, minimum=0)
        if sum(n_sv) != l:
            raise reader.error(h.line("nr_sv"), f"nr_sv adds up to {sum(n_sv)}, total_sv is {l}")
    else:
        for key in ("label", "nr_sv"):
            if key in h:
                raise reader.error(h.line(key), f"'{key}' belongs to classification models only")

    prob = {}
    allowed = _PROBABILITY_KEYS[svm_type]
    for key, name, count in (("probA", "prob_a", n_pairs), ("probB", "prob_b", n_pairs),
                             ("prob_density_marks", "prob_density_marks", N_DENSITY_MARKS)):
        if key in h:
            if key not in allowed:
                raise reader.error(h.line(key), f"'{key}' does not belong in a {svm_type} model")
            prob[name] = h.floats(key, count)
    if classification and ("prob_a" in prob) != ("prob_b" in prob):
        key = "probA" if "prob_a" in prob else "probB"
        raise reader.error(h.line(key), "probA and probB must be given together")

    coef, sv, serial = _read_support_vectors(reader, l, nr_class - 1, kernel == "precomputed")
    reader.trailing()
    try:
        return Model(svm_type=svm_type, kernel_type=kernel, support_vectors=sv, sv_coef=coef, rho=rho,
                     labels=labels, n_sv=n_sv, sv_indices=serial, **kw, **prob)
    except FastSVMError as e:
        raise reader.error(header.end_line, str(e)) from None


# every byte a binary model's SV lines hold when written as numbers: outside these, the lines go
# to the line-by-line reader (comments, qid, words, hex: its messages)
_PLAIN_SV_BYTES = b"0123456789+-.eE: \t\r\n"


def _read_support_vectors(reader, l, m, precomputed):
    """l SV lines of m coefficients and index:value pairs -> coef (m x l), CSR, serial numbers."""
    if m == 1 and not precomputed:
        fast = _parsed_support_vectors(reader, l)
        if fast is not None:
            return fast
    return _read_support_vectors_by_line(reader, l, m, precomputed)


def _parsed_support_vectors(reader, l):
    """A binary model's SV lines are data-file lines (the coefficient in the label's place): read
    by the data parser, which is compiled and reads the whole block at once. None (nothing consumed) when anything
    there is not plainly valid: the line-by-line reader then finds it and says where."""
    from .._core._parser import LineError, Parser
    lines = reader.lines[reader.pos:reader.pos + l]
    text = b"\n".join(lines)
    if len(lines) < l or text.translate(None, _PLAIN_SV_BYTES):
        return None
    parser = Parser(allow_zero=False, keep_qid=False, n_threads=1)
    try:
        if parser.parse(text, 0, len(text)) != l or parser.n_rows != l or parser.sorted_rows:
            return None   # a blank line, or indices out of order (a model file's must increase)
        parsed = parser.result()
        values, indices, indptr, coef = parsed.data, parsed.indices, parsed.indptr, parsed.labels
    except (LineError, MemoryError):
        return None
    finally:
        parser.free()
    reader.pos += l
    n_cols = int(indices.max()) if indices.size else 0
    return coef[None, :], sp.csr_matrix((values, indices - 1, indptr), shape=(l, n_cols)), None


def _read_support_vectors_by_line(reader, l, m, precomputed):
    """_read_support_vectors line by line, for any model and with a message for any bad line."""
    # grown line by line: the header's counts are not trusted with an allocation
    coef, indptr, indices, values, first_lines = [], [0], [], [], []
    for i in range(l):
        lineno, text = reader.next_line()
        if lineno is None:
            raise reader.error(max(len(reader.lines), 1),
                               f"file ends after {i} of {l} support vectors")
        parts = text.split(None, m)
        rest = parts[m] if len(parts) > m else ""
        if len(parts) < m or not all(_FLOAT_RE.fullmatch(t) for t in parts[:m]) \
                or not _PAIRS_RE.fullmatch(rest):
            raise reader.error(lineno, _sv_line_problem(text.split(), m))
        coef.append([_float(reader, lineno, t, "coefficient") for t in parts[:m]])
        pairs = rest.replace(":", " ").split()
        indices.extend(pairs[0::2])
        values.extend(pairs[1::2])
        indptr.append(len(indices))
        first_lines.append(lineno)
    coef = np.array(coef, dtype=np.float64).reshape(l, m).T
    indptr = np.array(indptr, dtype=np.int64)
    row_of = np.repeat(np.arange(l), np.diff(indptr))  # the SV each stored pair belongs to

    def pair_error(k, message):
        return reader.error(first_lines[row_of[k]], message)

    idx = [int(t) for t in indices]
    too_large = [k for k, j in enumerate(idx) if j > _INT32_MAX]
    if too_large:
        raise pair_error(too_large[0], f"feature index {indices[too_large[0]]} is too large")
    idx = np.array(idx, dtype=np.int64)
    val = np.array([float(v) for v in values], dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(val))
    if bad.size:
        raise pair_error(bad[0], f"feature value '{values[bad[0]]}' is not finite")
    if precomputed:
        ok = np.diff(indptr) == 1
        ok[ok] = idx[indptr[:-1][ok]] == 0
        if not ok.all():
            raise reader.error(first_lines[int(np.argmin(ok))], "a precomputed-kernel support "
                               "vector is its coefficients and '0:serial' only")
        bad = np.flatnonzero((val != np.floor(val)) | (val < 1) | (val > _INT32_MAX))
        if bad.size:
            raise pair_error(bad[0], f"serial number '{values[bad[0]]}' is not a positive integer")
        sv = sp.csr_matrix((np.zeros(0), np.zeros(0, np.int32), np.zeros(l + 1, np.int32)), shape=(l, 0))
        return coef, sv, val.astype(np.int64)
    zero = np.flatnonzero(idx == 0)
    if zero.size:
        raise pair_error(zero[0], "feature index 0 (indices start at 1; index 0 is only for the "
                                  "precomputed kernel)")
    unsorted = np.flatnonzero((row_of[1:] == row_of[:-1]) & (idx[1:] <= idx[:-1]))
    if unsorted.size:
        raise pair_error(unsorted[0] + 1, "feature indices must increase along a line")
    n_cols = int(idx.max()) if idx.size else 0
    sv = sp.csr_matrix((val, (idx - 1).astype(np.int32), indptr.astype(np.int32)), shape=(l, n_cols))
    return coef, sv, None


def _sv_line_problem(tokens, m):
    """Why an SV line failed to parse, for the error message."""
    if len(tokens) < m:
        return f"expected {m} coefficient{'s' * (m != 1)} on a support-vector line, found {len(tokens)}"
    for t in tokens[:m]:
        if not _FLOAT_RE.fullmatch(t):
            return f"coefficient '{t}' is not a number"
    for t in tokens[m:]:
        index, colon, value = t.partition(":")
        if not (colon and _INDEX_RE.fullmatch(index) and _FLOAT_RE.fullmatch(value)):
            return f"'{t}' is not an index:value pair"
    return "malformed support-vector line"


# ----------------------------------------------------------------------------------------------
# LIBLINEAR
# ----------------------------------------------------------------------------------------------

_LIBLINEAR_KEYS = ("solver_type", "nr_class", "label", "nr_feature", "bias", "rho")


def _liblinear_model(reader, header):
    if header.end_key != "w":
        raise reader.error(header.end_line, "a LIBLINEAR model's weights start with 'w'")
    h = _Fields(reader, header, _LIBLINEAR_KEYS)
    for key in ("solver_type", "nr_class", "nr_feature", "bias"):
        h.require(key)
    solver = h.word("solver_type", _LIBLINEAR_SOLVERS)
    nr_class = h.int("nr_class", minimum=1)
    nr_feature = h.int("nr_feature", minimum=0)
    bias = h.float("bias")
    regression = solver in _LIBLINEAR_REGRESSION
    one_class = solver == "ONECLASS_SVM"
    labels = None
    if regression or one_class:
        if nr_class != 2:
            raise reader.error(h.line("nr_class"), f"nr_class of a {solver} model must be 2")
        if "label" in h:
            raise reader.error(h.line("label"), f"'label' does not belong in a {solver} model")
    else:
        h.require("label", f" (needed by a {solver} model)")
        h.counted("label")
        labels = np.array(h.unique_ints("label", nr_class), dtype=np.int64)
    if one_class:
        h.require("rho", " (needed by a ONECLASS_SVM model)")
        rho = h.float("rho")
    elif "rho" in h:
        raise reader.error(h.line("rho"), f"'rho' does not belong in a {solver} model")

    nr_w = 1 if nr_class == 2 and solver != "MCSVM_CS" else nr_class
    w_size = nr_feature + (1 if bias >= 0 else 0)
    w = []  # grown line by line: nr_feature is not trusted with an allocation
    for i in range(w_size):
        lineno, text = reader.next_line()
        if lineno is None:
            raise reader.error(max(len(reader.lines), 1),
                               f"file ends after {i} of {w_size} weight lines")
        tokens = text.split()
        if len(tokens) != nr_w:
            raise reader.error(lineno, f"a weight line needs {nr_w} value{'s' * (nr_w != 1)}, "
                                       f"found {len(tokens)}")
        w.append([_float(reader, lineno, t, "weight") for t in tokens])
    reader.trailing()
    w = np.array(w, dtype=np.float64).reshape(w_size, nr_w)

    # the bias feature's contribution to each decision value
    offset = w[nr_feature] * bias if bias >= 0 else np.zeros(nr_w)
    weights = np.ascontiguousarray(w[:nr_feature].T)  # one row per decision function
    info = {"format": "liblinear", "solver_type": solver}
    try:
        if regression or one_class:
            rho_value = (rho if one_class else 0.0) - offset[0]
            return Model(svm_type="one_class" if one_class else "epsilon_svr", kernel_type="linear",
                         support_vectors=_sparse_rows(weights), sv_coef=[[1.0]], rho=[rho_value],
                         info=info)
        if nr_class == 2 and nr_w == 1:  # binary: decision value w.x + b, positive for labels[0]
            return Model(svm_type="c_svc", kernel_type="linear", support_vectors=_sparse_rows(weights),
                         sv_coef=[[1.0]], rho=[0.0 - offset[0]], labels=labels, n_sv=[1, 0], info=info)
        return _one_vs_rest_model(weights, offset, labels, info)
    except FastSVMError as e:
        raise reader.error(header.end_line, str(e)) from None


def _one_vs_rest_model(weights, offset, labels, info):
    """k scores s_c = w_c.x + offset_c as a LIBSVM one-vs-one model, classes in reverse order:
    pair (a, b) gets coefficient +1 on class a's vector, -1 on class b's, rho = offset_b - offset_a."""
    k = len(labels)
    order = np.arange(k)[::-1]
    if k == 1:  # LIBSVM keeps no support vectors for a single class and predicts its label
        return Model(svm_type="c_svc", kernel_type="linear",
                     support_vectors=sp.csr_matrix((0, weights.shape[1])), sv_coef=np.zeros((0, 0)),
                     rho=np.zeros(0), labels=labels, n_sv=[0], info=info)
    coef = np.where(np.arange(k - 1)[:, None] < np.arange(k)[None, :], -1.0, 1.0)
    b = offset[order]
    rho = [b[j] - b[i] for i in range(k) for j in range(i + 1, k)]
    return Model(svm_type="c_svc", kernel_type="linear", support_vectors=_sparse_rows(weights[order]),
                 sv_coef=coef, rho=rho, labels=labels[order], n_sv=np.ones(k, dtype=np.int64), info=info)


def _sparse_rows(dense):
    """CSR of the non-zero weights (zeros add nothing to a dot product)."""
    m = sp.csr_matrix(dense)
    m.eliminate_zeros()
    return sp.csr_matrix((m.data, m.indices.astype(np.int32), m.indptr.astype(np.int32)),
                         shape=dense.shape)
