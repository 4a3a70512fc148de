"""LIBSVM/svmlight data files: read into CSR (drop-in for scikit-learn's loaders), write back.

Reading streams the input in chunks of whole lines through the Cython parser (``_core/_parser``),
which parses each chunk with several threads without the GIL and grows its output arrays in
place, so the text is never held whole and the arrays reach numpy without a copy. This module
opens and decompresses, carries the partial last line of a chunk to the next one, resolves
``zero_based``/``n_features``, builds the matrices and turns parse errors into
``FileFormatError('file:line: what is wrong')``.
"""
import bz2
import contextlib
import gzip
import io
import lzma
import numbers
import os
import re

import numpy as np
import scipy.sparse as sp

from .. import __version__
from .._core._parser import ERROR_CODES, MAX_INDEX, LineError, Parser
from .atomic import atomic_output
from ..csr import to_csr
from ..errors import FastSVMError, FileFormatError, ParameterError
from ..parallel import effective_n_jobs

__all__ = ["load_svmlight_file", "load_svmlight_files", "dump_svmlight_file", "format_rows", "row_line"]

# The read buffer starts small and doubles while it is under 1/_BUFFER_SHARE of the arrays parsed
# so far, up to CHUNK_BYTES: text in flight (plus the other threads' scratch output) then stays
# a small fraction of the result at every file size. Chunks of at least _THREADED_BYTES are
# split among threads; smaller ones cost more in thread hand-offs than they save.
CHUNK_BYTES = 16 << 20
_FIRST_CHUNK = 256 << 10
_BUFFER_SHARE = 16
_THREADED_BYTES = 512 << 10
_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_COMPRESSED_WRITERS = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="wb"),
    ".bz2": lambda raw: bz2.BZ2File(raw, "wb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, "wb"),
}
_TOKEN = re.compile(rb"[^\s#]{0,61}")


# ---------------------------------------------------------------- reading

# scikit-learn's load_svmlight_file(s) parameters, with n_jobs: a drop-in replacement keeps its signature
def load_svmlight_file(f, *, n_features=None, dtype=np.float64, multilabel=False, zero_based="auto",  # noqa: PLR0913
                       query_id=False, offset=0, length=-1, n_jobs=None):
    """Load a dataset in LIBSVM/svmlight format into a sparse CSR matrix.

    The same arguments and results as ``sklearn.datasets.load_svmlight_file``, plus ``n_jobs``.
    Any malformed line raises FileFormatError naming the file and the line, and nothing is
    returned.

    Parameters
    ----------
    f : str, path-like, int or file object
        The file: a path (``.gz``, ``.bz2`` and ``.xz`` files are decompressed on the fly), a
        file descriptor, or a file object, binary or text (not closed).
    n_features : int, default=None
        The number of features (columns of X). None: inferred from the largest index. Needed
        when offset or length is given.
    dtype : numpy data type, default=np.float64
        Data type of X (y is float64).
    multilabel : bool, default=False
        Multi-label files are not supported: True raises ParameterError
        (sklearn.datasets.load_svmlight_file reads them).
    zero_based : bool or 'auto', default='auto'
        Whether the column indices in the file are zero-based (True) or one-based (False, as
        LIBSVM writes them). 'auto' takes them as one-based when no index 0 occurs and every
        file has features; with offset or length, 'auto' means True.
    query_id : bool, default=False
        Also return the ``qid:`` value of each row.
    offset : int, default=0
        Skip the first offset bytes, then the rest of the line they end in.
    length : int, default=-1
        If positive, stop reading new lines once the position offset + length is reached.
    n_jobs : int, default=None
        Parsing threads. None means all cores.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        The rows, their column indices int32 and sorted.
    y : ndarray of shape (n_samples,)
        The labels, float64.
    query_id : ndarray of shape (n_samples,)
        The query ids, int64; returned only with query_id=True.

    Raises
    ------
    FileFormatError
        On a malformed line.

    See Also
    --------
    load_svmlight_files : Several files with a common number of features.
    dump_svmlight_file : Write a dataset in this format.

    Examples
    --------
    >>> import io
    >>> from fastsvm import load_svmlight_file
    >>> X, y = load_svmlight_file(io.BytesIO(b"1 1:0.5 3:2\\n-1 2:1.5\\n"))
    >>> X.shape
    (2, 3)
    >>> X.toarray()
    array([[0.5, 0. , 2. ],
           [0. , 1.5, 0. ]])
    >>> y
    array([ 1., -1.])
    """
    return tuple(load_svmlight_files([f], n_features=n_features, dtype=dtype, multilabel=multilabel,
                                     zero_based=zero_based, query_id=query_id, offset=offset,
                                     length=length, n_jobs=n_jobs))


# scikit-learn's signature, as load_svmlight_file's
def load_svmlight_files(files, *, n_features=None, dtype=np.float64, multilabel=False, zero_based="auto",  # noqa: PLR0913
                        query_id=False, offset=0, length=-1, n_jobs=None):
    """Load several datasets in LIBSVM/svmlight format with a common number of features.

    The same arguments and results as ``sklearn.datasets.load_svmlight_files``, plus
    ``n_jobs``. ``zero_based='auto'`` is decided over all files together, as scikit-learn
    does: indices are shifted down by one only if every file has features and none has index 0.

    Parameters
    ----------
    files : iterable of str, path-like, int or file object
        The files, each as load_svmlight_file's ``f``.
    n_features : int, default=None
        The number of features (columns of X). None: inferred from the largest index. Needed
        when offset or length is given.
    dtype : numpy data type, default=np.float64
        Data type of X (y is float64).
    multilabel : bool, default=False
        Multi-label files are not supported: True raises ParameterError
        (sklearn.datasets.load_svmlight_file reads them).
    zero_based : bool or 'auto', default='auto'
        Whether the column indices in the file are zero-based (True) or one-based (False, as
        LIBSVM writes them). 'auto' takes them as one-based when no index 0 occurs and every
        file has features; with offset or length, 'auto' means True.
    query_id : bool, default=False
        Also return the ``qid:`` value of each row.
    offset : int, default=0
        Skip the first offset bytes, then the rest of the line they end in.
    length : int, default=-1
        If positive, stop reading new lines once the position offset + length is reached.
    n_jobs : int, default=None
        Parsing threads. None means all cores.

    Returns
    -------
    result : list
        ``[X1, y1, X2, y2, ...]``, with ``q1`` after ``y1`` and so on when query_id is True:
        CSR matrices of the same number of columns and float64 labels.

    Examples
    --------
    >>> import io
    >>> from fastsvm import load_svmlight_files
    >>> train = io.BytesIO(b"1 1:0.5 3:2\\n-1 2:1.5\\n")
    >>> test = io.BytesIO(b"1 1:1\\n")
    >>> X_train, y_train, X_test, y_test = load_svmlight_files([train, test])
    >>> X_train.shape, X_test.shape
    ((2, 3), (1, 3))
    """
    return _load_files(files, n_features=n_features, dtype=dtype, multilabel=multilabel,
                       zero_based=zero_based, query_id=query_id, offset=offset, length=length,
                       n_jobs=n_jobs)


# load_svmlight_files' parameters (scikit-learn's) and the chunk size the tests make small
def _load_files(files, *, n_features=None, dtype=np.float64, multilabel=False, zero_based="auto",  # noqa: PLR0913
                query_id=False, offset=0, length=-1, n_jobs=None, chunk_bytes=CHUNK_BYTES):
    """load_svmlight_files with the chunk size exposed (tests use small chunks)."""
    if isinstance(files, (str, bytes, os.PathLike, int)) or hasattr(files, "read"):
        files = [files]
    if multilabel:
        raise ParameterError("multilabel=True is not supported; use "
                             "sklearn.datasets.load_svmlight_file for multi-label files")
    zero_based = _check_zero_based(zero_based)
    offset, length = _check_int("offset", offset, minimum=0), _check_int("length", length)
    if n_features is not None:
        n_features = _check_int("n_features", n_features, minimum=1, maximum=MAX_INDEX + 1)
    if offset > 0 or length > 0:
        if n_features is None:
            raise ParameterError("n_features is required when offset or length is given")
        if zero_based == "auto":   # each part must not guess its own base
            zero_based = True
    dtype = np.dtype(dtype)

    parsed = [_parse_file(f, zero_based, n_features, query_id, offset, length=length, n_jobs=n_jobs,
                          chunk_bytes=chunk_bytes)
              for f in files]

    shift = zero_based is False or (zero_based == "auto" and all(p.nnz > 0 and p.min_index > 0
                                                                 for p in parsed))
    if zero_based == "auto" and not shift and n_features is not None:
        for p in parsed:   # index n_features was allowed in case the files were one-based
            if p.watch_line > 0:
                raise FileFormatError(p.name, p.watch_line,
                                      f"feature index {n_features} is beyond n_features={n_features}")
    n_f = max((p.max_index - shift) if p.nnz else 0 for p in parsed) + 1
    n_features = n_f if n_features is None else n_features   # the parser refused larger indices

    result = []
    for p in parsed:
        arrays = p.arrays
        data, indices, indptr, labels, qid = arrays.data, arrays.indices, arrays.indptr, arrays.labels, arrays.qid
        if shift:
            indices -= 1
        X = sp.csr_matrix((data.astype(dtype, copy=False), indices, indptr),
                          shape=(len(labels), n_features), copy=False)
        X.has_canonical_format = True   # rows were sorted and checked for duplicates while parsing
        result += [X, labels]
        if query_id:
            result.append(qid if p.has_qid else np.empty(0, dtype=np.int64))
    return result


def row_line(f, row):
    """The line number of data row ``row`` (0-based) of a file, counting blank and comment-only
    lines as the parser skips them; None past the last row. A second pass over the text, for
    messages about rows (e.g. their labels) found after reading."""
    with _open_for_reading(f) as (stream, _):
        if isinstance(stream, io.RawIOBase):
            stream = io.BufferedReader(stream)
        seen = -1
        for lineno, line in enumerate(stream, 1):
            text = line.encode("utf-8") if isinstance(line, str) else line
            if text.lstrip(b" \t\r\v\f")[:1] not in (b"", b"\n", b"#"):
                seen += 1
                if seen == row:
                    return lineno
    return None


class _Parsed:
    """One file's arrays and what the parser saw (for the joint zero_based/n_features decision)."""

    def __init__(self, name, parser):
        self.name = name
        self.nnz = parser.nnz
        self.min_index, self.max_index = parser.min_index, parser.max_index
        self.watch_line = parser.watch_line
        self.has_qid = parser.has_qid
        self.arrays = parser.result()


def _parse_file(f, zero_based, n_features, query_id, offset, *, length, n_jobs, chunk_bytes):
    if n_features is None:
        index_limit, watch = MAX_INDEX, -1
    elif zero_based is True:
        index_limit, watch = n_features - 1, -1
    elif zero_based is False:
        index_limit, watch = n_features, -1
    else:   # "auto": index n_features is fine if the files turn out one-based; note where it is
        index_limit, watch = n_features, n_features
    parser = Parser(allow_zero=zero_based is not False, index_limit=index_limit, limit_watch=watch,
                    keep_qid=bool(query_id), n_threads=effective_n_jobs(n_jobs))
    try:
        with _open_for_reading(f) as (stream, name):
            if offset > 0:
                _skip(stream, offset)
            try:
                _feed(stream, parser, chunk_bytes, offset, length)
            except _ParseFailure as failure:
                raise _format_error(name, *failure.args, offset, n_features=n_features) from None
        return _Parsed(name, parser)
    finally:
        parser.free()   # after an error: nothing half-read stays alive (a no-op after result())


class _ParseFailure(Exception):
    """(LineError, offending token bytes, error in an unterminated last line), carried out of
    the chunk loop while the buffer is still at hand."""


def _feed(stream, parser, chunk_bytes, offset, length):
    """Give the parser every line of the stream, chunk by chunk. With offset > 0 the line that
    offset falls in is left to the previous part; with length > 0 only lines starting at or
    before offset + length are read (scikit-learn's rule, so consecutive parts tile the file)."""
    read_into = _reader(stream)
    chunk_bytes = max(int(chunk_bytes), 2)
    threaded_bytes = min(_THREADED_BYTES, chunk_bytes // 2)
    buf = bytearray(min(chunk_bytes, _FIRST_CHUNK))
    filled, pos = 0, offset          # pos: stream position of buf[0]
    skip_partial = offset > 0
    limit = offset + length if length > 0 else None
    while True:
        filled, eof = _fill(read_into, buf, filled)
        begin = 0
        if skip_partial:
            nl = buf.find(b"\n", 0, filled)
            begin = filled if nl < 0 else nl + 1
            skip_partial = nl < 0
        end = filled if eof else buf.rfind(b"\n", begin, filled) + 1
        done = eof
        if limit is not None and not skip_partial:
            if pos + begin > limit:
                return
            nl = buf.find(b"\n", limit - pos, filled)
            if nl >= 0:
                end, done = nl + 1, True
        if end > begin:
            try:
                parser.parse(buf, begin, end, 0 if end - begin >= threaded_bytes else 1)
            except LineError as err:
                token = _TOKEN.match(buf, err.offset, end).group() if err.offset >= 0 else b""
                unfinished = (eof and end == filled and buf[end - 1] != ord("\n")
                              and err.offset > buf.rfind(b"\n", begin, end))
                raise _ParseFailure(err, token, unfinished) from None
        if done:
            return
        keep = max(begin, end)
        buf[: filled - keep] = buf[keep:filled]   # carry the unfinished line
        pos += keep
        filled -= keep
        if filled == len(buf):                    # a line longer than the buffer
            buf.extend(bytes(len(buf)))
        elif len(buf) < chunk_bytes and len(buf) * _BUFFER_SHARE <= parser.nbytes:
            buf.extend(bytes(min(len(buf), chunk_bytes - len(buf))))


def _fill(read_into, buf, filled):
    """Read until buf is full or the stream ends: (bytes in buf, at end of stream)."""
    with memoryview(buf) as view:
        while filled < len(buf):
            got = read_into(view[filled:])
            if not got:
                return filled, True
            filled += got
    return filled, False


def _reader(stream):
    """A readinto(view) -> n for any readable stream."""
    if not isinstance(stream, io.TextIOBase) and hasattr(stream, "readinto"):
        return stream.readinto
    return _ReadIntoAdapter(stream)


class _ReadIntoAdapter:
    """readinto() for streams that only have read(); text is encoded as UTF-8."""

    def __init__(self, stream):
        self.stream = stream
        self.pending = b""

    def __call__(self, view):
        if not self.pending:
            data = self.stream.read(len(view))
            self.pending = data.encode("utf-8") if isinstance(data, str) else bytes(data or b"")
        n = min(len(view), len(self.pending))
        view[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


def _skip(stream, offset):
    if getattr(stream, "seekable", lambda: False)():
        stream.seek(offset)
        return
    while offset > 0:
        got = len(stream.read(min(offset, CHUNK_BYTES)))
        if not got:
            return
        offset -= got


@contextlib.contextmanager
def _open_for_reading(f):
    """(binary or text stream, name for messages); closes only what it opened."""
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        opener = _COMPRESSED.get(os.path.splitext(path)[1])
        stream = opener(path, "rb") if opener else open(path, "rb", buffering=0)
        with stream:
            yield stream, path
    elif isinstance(f, numbers.Integral) and not isinstance(f, bool):
        with open(int(f), "rb", buffering=0, closefd=False) as stream:
            yield stream, f"<fd {int(f)}>"
    elif hasattr(f, "read"):
        name = getattr(f, "name", None)
        yield f, os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else "<stream>"
    else:
        raise TypeError(f"expected a path, file descriptor or file object, got {type(f).__name__}")


_MESSAGES = {
    "bad_label": "label {tok} is not a number",
    "nonfinite_label": "label {tok} is not finite",
    "missing_label": "missing label: the line starts with the feature {tok}",
    "not_a_pair": "{tok} is not an index:value pair",
    "bad_index": "bad feature index in {tok}",
    "negative_index": "negative feature index in {tok}",
    "zero_index": "feature index 0 in {tok}: feature indices start at 1",
    "index_too_large": "feature index in {tok} is too large (at most %d)" % MAX_INDEX,
    "bad_value": "bad feature value in {tok}",
    "nonfinite_value": "feature value in {tok} is not finite",
    "overflow": "number out of the double range in {tok}",
    "duplicate_index": "feature index {detail} appears twice",
    "beyond_n_features": "feature index {detail} is beyond n_features={limit}",
    "bad_qid": "bad query id {tok} (expected qid:<integer>)",
    "too_many_values": "more than 2**31 - 1 stored values, which int32 CSR indices cannot address",
}
_CODE_NAMES = {code: name for name, code in ERROR_CODES.items()}


def _format_error(name, err, token, unfinished, offset, *, n_features):
    """FileFormatError for a LineError; token: the text of the offending token; unfinished:
    the error is in a last line that lacks its newline."""
    kind = _CODE_NAMES[err.code]
    tok = repr(token[:60].decode("utf-8", "backslashreplace"))
    if len(token) > 60:
        tok = tok[:-1] + "...'"
    if kind == "bad_value" and token.find(b":") == len(token) - 1:
        message = f"feature {tok} has no value"
    elif kind == "bad_index" and token.startswith(b":"):
        message = f"feature {tok} has no index"
    else:
        message = _MESSAGES[kind].format(tok=tok, detail=err.detail, limit=n_features)
    if unfinished:
        message += " (the input ends in the middle of this line)"
    if offset > 0:
        message += f" (line counted from byte offset {offset})"
    return FileFormatError(name, err.line, message)


def _check_zero_based(zero_based):
    if isinstance(zero_based, str):
        if zero_based != "auto":
            raise ParameterError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
        return zero_based
    if not isinstance(zero_based, (bool, np.bool_)):
        raise ParameterError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    return bool(zero_based)


def _check_int(name, value, minimum=None, maximum=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ParameterError(f"{name} must be {bounds}, got {value}")
    return value


# ---------------------------------------------------------------- writing

def dump_svmlight_file(X, y, f, *, zero_based=True, comment=None, query_id=None, multilabel=False):
    """Write a dataset in LIBSVM/svmlight format.

    The same arguments as ``sklearn.datasets.dump_svmlight_file``. Values and float labels are
    written with ``%.17g``, so reading the file back gives identical floats; integer labels
    with ``%d``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows; zeros are not written.
    y : array-like of shape (n_samples,)
        The labels.
    f : str, path-like or file object
        A path, written atomically (a temporary file in the same directory, then renamed;
        ``.gz``, ``.bz2`` and ``.xz`` files compressed), or a file object, binary or text (not
        closed).
    zero_based : bool, default=True
        Write zero-based column indices (False: one-based, as LIBSVM writes them).
    comment : str or bytes, default=None
        A comment written at the top of the file, each of its lines after ``#``, under two
        lines naming the writer and the index base. None: no header.
    query_id : array-like of shape (n_samples,), default=None
        Query ids, written as ``qid:`` after each label.
    multilabel : bool, default=False
        Multi-label output is not supported: True raises ParameterError.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from fastsvm import dump_svmlight_file
    >>> out = io.BytesIO()
    >>> dump_svmlight_file(np.array([[0.5, 0.0], [0.0, 2.0]]), np.array([1, -1]), out, zero_based=False)
    >>> print(out.getvalue().decode().splitlines()[-2:])
    ['1 1:0.5', '-1 2:2']
    """
    if multilabel:
        raise ParameterError("multilabel=True is not supported by fastsvm's writer")
    zero_based = _check_zero_based(zero_based)
    if zero_based == "auto":
        raise ParameterError("zero_based must be True or False when writing")
    header = _comment_header(comment, zero_based)
    X, y, query_id = _check_rows(X, y, query_id)
    if isinstance(f, (str, bytes, os.PathLike)):
        path = os.fsdecode(f)
        with atomic_output(path, binary=True) as raw:
            wrap = _COMPRESSED_WRITERS.get(os.path.splitext(path)[1])
            stream = wrap(raw) if wrap else raw
            _write(stream, X, y, query_id, zero_based, header=header)
            if wrap:
                stream.close()   # the compressed trailer; raw stays open
    elif hasattr(f, "write"):
        _write(f, X, y, query_id, zero_based, header=header)
    else:
        raise TypeError(f"expected a path or a writable file object, got {type(f).__name__}")


def format_rows(X, y, *, zero_based=True, query_id=None, value_format="%.17g"):
    """The LIBSVM text (bytes) of the rows of a CSR matrix X (canonical, as ``to_csr`` gives)
    with labels y. Integer labels are written with %d, others with value_format; so are values
    (the default round-trips exactly; the synthetic data generator uses shorter ones).

    One %-format string and one flat argument tuple per call, so the per-value work runs in C;
    call it on blocks of rows to bound memory."""
    n_rows, heads = X.shape[0], 1 + (query_id is not None)
    label_format = "%d" if np.asarray(y).dtype.kind in "iub" else value_format
    formats = _RowFormats(label_format + (" qid:%d" if query_id is not None else ""),
                          f" %d:{value_format}")
    lengths = np.diff(X.indptr)
    template = "".join(map(formats.__getitem__, lengths.tolist()))
    args = np.empty(2 * X.nnz + heads * n_rows, dtype=object)
    starts = 2 * X.indptr[:-1].astype(np.int64) + heads * np.arange(n_rows)
    args[starts] = np.asarray(y).tolist()
    if query_id is not None:
        args[starts + 1] = np.asarray(query_id).tolist()
    slots = 2 * np.arange(X.nnz) + heads * (np.repeat(np.arange(n_rows), lengths) + 1)
    args[slots] = (X.indices.astype(np.int64) + (not zero_based)).tolist()
    args[slots + 1] = X.data.tolist()
    return (template % tuple(args.tolist())).encode("ascii")


class _RowFormats(dict):
    """Format string of a row by its number of features, built on first use."""

    def __init__(self, head, feature):
        super().__init__()
        self.head, self.feature = head, feature

    def __missing__(self, n):
        self[n] = text = self.head + self.feature * n + "\n"
        return text


_WRITE_BLOCK_VALUES = 1 << 18   # values formatted per call of format_rows


def _write(stream, X, y, query_id, zero_based, *, header):
    text_mode = isinstance(stream, io.TextIOBase)
    emit = (lambda b: stream.write(b.decode("utf-8"))) if text_mode else stream.write
    if header:
        emit(header)
    r0 = 0
    while r0 < X.shape[0]:
        # rows up to ~_WRITE_BLOCK_VALUES stored values (at least one row)
        r1 = int(np.searchsorted(X.indptr, X.indptr[r0] + _WRITE_BLOCK_VALUES, side="right")) - 1
        r1 = min(max(r1, r0 + 1), X.shape[0])
        emit(format_rows(X[r0:r1], y[r0:r1], zero_based=zero_based,
                         query_id=None if query_id is None else query_id[r0:r1]))
        r0 = r1


def _comment_header(comment, zero_based):
    if not comment:
        return b""
    if isinstance(comment, bytes):
        comment.decode("ascii")   # raises on non-ASCII bytes, as scikit-learn does
    else:
        comment = str(comment).encode("utf-8")
    if b"\0" in comment:
        raise ParameterError("comment contains a NUL byte")
    lines = [f"# Generated by dump_svmlight_file from fastsvm {__version__}".encode(),
             f"# Column indices are {'zero' if zero_based else 'one'}-based".encode(), b"#"]
    lines += [b"# " + line for line in comment.splitlines()]
    return b"\n".join(lines) + b"\n"


def _check_rows(X, y, query_id):
    """Canonical CSR X (without touching the caller's matrix), 1-D finite y, optional qid."""
    copy = sp.issparse(X) and not getattr(X, "has_canonical_format", False)
    X = to_csr(X, copy=copy)
    if sp.issparse(y):
        if y.shape[1] != 1:
            raise FastSVMError(f"expected y of shape (n_samples, 1), got {y.shape}")
        y = y.toarray().ravel()
    y = np.asarray(y)
    if y.ndim != 1:
        raise FastSVMError(f"expected y of shape (n_samples,), got {y.shape}")
    if y.dtype.kind not in "iubf":
        raise FastSVMError(f"labels must be numbers, got dtype {y.dtype}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise FastSVMError("labels contain NaN or infinity")
    if y.shape[0] != X.shape[0]:
        raise FastSVMError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if query_id is not None:
        query_id = np.asarray(query_id)
        if query_id.shape != y.shape or query_id.dtype.kind not in "iu":
            raise FastSVMError(f"expected integer query_id of shape {y.shape}, got "
                               f"{query_id.dtype} of shape {query_id.shape}")
    if y.dtype.kind == "b":
        y = y.astype(np.int64)
    return X, y, query_id
