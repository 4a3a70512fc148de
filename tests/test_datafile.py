"""LIBSVM/svmlight data files: identical to scikit-learn's reader on real data, strict on bad
lines (file:line), tolerant where LIBSVM is, exact round trips, thread-count independence, and a
pure-Python twin of the Cython parser."""
import bz2
import gzip
import io
import lzma
import os
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file as sk_load
from sklearn.datasets import load_svmlight_files as sk_load_files

import fastsvm
from fastsvm.files import datafile
from fastsvm.csr import to_csr
from fastsvm.files.datafile import dump_svmlight_file, load_svmlight_file, load_svmlight_files
from fastsvm.errors import FastSVMError, FileFormatError

from conftest import shared_file, shared_files


def assert_same(X, y, X2, y2):
    """Same shape, data (bitwise, signed zeros included), indices, indptr and labels."""
    assert X.shape == X2.shape
    assert X.data.dtype == X2.data.dtype
    assert np.array_equal(X.data.view(np.uint8), np.ascontiguousarray(X2.data).view(np.uint8))
    assert np.array_equal(X.indices, X2.indices)
    assert np.array_equal(X.indptr, X2.indptr)
    assert np.array_equal(np.asarray(y).view(np.uint8), np.ascontiguousarray(y2, dtype=np.float64).view(np.uint8))


def write(tmp_path, content, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


# ---------------------------------------------------------------- real data = scikit-learn

@pytest.mark.parametrize("name", shared_files())
def test_shared_file_identical_to_sklearn(name):
    path = shared_file(name)
    X, y = load_svmlight_file(path)
    if name.endswith(".xz"):
        with lzma.open(path) as f:
            X_ref, y_ref = sk_load(f)
    else:
        X_ref, y_ref = sk_load(str(path))
    assert_same(X, y, X_ref, y_ref)
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    assert isinstance(X, sp.csr_matrix) and X.has_sorted_indices


def test_shared_pair_loaded_jointly_like_sklearn():
    train, test = shared_file("a9a"), shared_file("a9a.t")   # 123 vs 122 features on their own
    ours = load_svmlight_files([train, test])
    ref = sk_load_files([str(train), str(test)])
    assert ours[0].shape[1] == ours[2].shape[1] == 123
    assert_same(ours[0], ours[1], ref[0], ref[1])
    assert_same(ours[2], ours[3], ref[2], ref[3])


# ---------------------------------------------------------------- malformed files

MALFORMED = [
    # (content, options, line, text the message must contain)
    (b"1 1:2\nabc 1:2\n", {}, 2, "label 'abc' is not a number"),
    (b"1 1:2\n-1 3:\n", {}, 2, "feature '3:' has no value"),
    (b"1 :4\n", {}, 1, "feature ':4' has no index"),
    (b"1 1:1\n\n1 abc\n", {}, 3, "'abc' is not an index:value pair"),
    (b"1 1:2x\n", {}, 1, "bad feature value in '1:2x'"),
    (b"1 1:1\n1 1:2:3\n", {}, 2, "bad feature value in '1:2:3'"),
    (b"1 1:1\n-1 a:1\n", {}, 2, "bad feature index in 'a:1'"),
    (b"1 2:1\n1 0:1\n", {"zero_based": False}, 2, "feature index 0 in '0:1'"),
    (b"1 1:1\n1 -3:1\n", {}, 2, "negative feature index in '-3:1'"),
    (b"1 2:1 2:3\n", {}, 1, "feature index 2 appears twice"),
    (b"1 1:1\n1 3:1 1:2 3:5\n", {}, 2, "feature index 3 appears twice"),
    (b"1 1:1\n1 2:nan\n", {}, 2, "feature value in '2:nan' is not finite"),
    (b"1 1:-Infinity\n", {}, 1, "feature value in '1:-Infinity' is not finite"),
    (b"1 1:1\nnan 1:1\n", {}, 2, "label 'nan' is not finite"),
    (b"-inf 1:1\n", {}, 1, "label '-inf' is not finite"),
    (b"# header\n3:1 4:5\n", {}, 2, "missing label: the line starts with the feature '3:1'"),
    (b"1 2:1\n1 3:", {}, 2, "has no value (the input ends in the middle of this line)"),
    (b"1 2:1\n1 3", {}, 2, "'3' is not an index:value pair (the input ends in the middle of this line)"),
    (b"1 2147483647:1\n", {}, 1, "feature index in '2147483647:1' is too large"),
    (b"1 1:1\n1 99999999999999999999:1\n", {}, 2, "is too large"),
    (b"1 1:1e400\n", {}, 1, "number out of the double range in '1:1e400'"),
    (b"1 1:1\n1e999 1:1\n", {}, 2, "number out of the double range in '1e999'"),
    (b"1 qid:x 1:1\n", {}, 1, "bad query id 'qid:x'"),
    (b"1 1:1 qid:3\n", {}, 1, "bad feature index in 'qid:3'"),
    (b"1,2 1:1\n", {}, 1, "label '1,2' is not a number"),
    (b"1 1:1\n\n\n-1 1:+-1\n", {}, 4, "bad feature value in '1:+-1'"),
    (b"1 1:1 \x00\n", {}, 1, "'\\x00' is not an index:value pair"),
    (b"1 1:0x10\n", {}, 1, "bad feature value in '1:0x10'"),
    (b"1 1:1_0\n", {}, 1, "bad feature value in '1:1_0'"),
    (b"1 1:.\n", {}, 1, "bad feature value in '1:.'"),
    (b"1 1:1e\n", {}, 1, "bad feature value in '1:1e'"),
    (b"1 1:1\r\n1 1:1\r\n1 x:1\r\n", {}, 3, "bad feature index in 'x:1'"),
    (b"1 1:1 # fine\n-1 2:1 3:1 #\n+1 5:1:\n", {}, 3, "bad feature value in '5:1:'"),
    (b"1 1:1\n1 4:1\n", {"n_features": 3, "zero_based": False}, 2, "feature index 4 is beyond n_features=3"),
    (b"1 3:1\n", {"n_features": 3, "zero_based": True}, 1, "feature index 3 is beyond n_features=3"),
    # "auto": index 0 on line 1 makes the file zero-based, so index 3 on line 2 is out of range
    (b"1 0:1\n1 3:1\n", {"n_features": 3}, 2, "feature index 3 is beyond n_features=3"),
]


@pytest.mark.parametrize("content, options, line, fragment", MALFORMED,
                         ids=[repr(case[0][-16:]) for case in MALFORMED])
def test_malformed_file_names_file_and_line(tmp_path, content, options, line, fragment):
    path = write(tmp_path, content)
    with pytest.raises(FileFormatError) as info:
        load_svmlight_file(path, **options)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message
    assert "\n" not in message
    assert info.value.line == line and info.value.filename == str(path)


def test_malformed_cases_are_distinct():
    assert len({case[0] for case in MALFORMED}) == len(MALFORMED) >= 20


def test_error_in_nameless_stream_and_compressed_file(tmp_path):
    with pytest.raises(FileFormatError, match=r"^<stream>:2: label 'x' is not a number$"):
        load_svmlight_file(io.BytesIO(b"1 1:1\nx 1:1\n"))
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(b"1 1:1\n" * 10 + b"1 1:1 1:2\n"))
    with pytest.raises(FileFormatError, match=r"bad\.gz:11: feature index 1 appears twice$"):
        load_svmlight_file(path)


@pytest.mark.parametrize("bad_lines, first", [((1700, 2900), 1701), ((2900,), 2901), ((10, 2999), 11)])
def test_earliest_error_reported_across_chunks_and_threads(tmp_path, bad_lines, first):
    lines = [b"1 1:0.5 3:1"] * 3000
    for k in bad_lines:
        lines[k] = b"1 1:0.5 3:oops"
    text = b"\n".join(lines) + b"\n"
    path = write(tmp_path, text)
    for n_jobs in (1, 2, 3):
        for chunk in (512, 4096, len(text) + 1):   # the last: one chunk split among the threads
            with pytest.raises(FileFormatError) as info:
                datafile._load_files([path], n_jobs=n_jobs, chunk_bytes=chunk)
            assert info.value.line == first, (n_jobs, chunk)


def test_failed_parse_frees_its_buffers(tmp_path):
    path = write(tmp_path, b"1 1:0.25 2:0.5 7:1\n" * 20000 + b"1 1:x\n")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with pytest.raises(FileFormatError) as info:
            datafile._load_files([path], chunk_bytes=4096, n_jobs=2)
        assert info.value.line == 20001
        leaked = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert leaked < 64 << 10   # the rows parsed before the error (> 700 kB) are gone


def test_bad_options():
    data = io.BytesIO(b"1 1:1\n")
    with pytest.raises(FastSVMError, match="multilabel"):
        load_svmlight_file(data, multilabel=True)
    with pytest.raises(FastSVMError, match="zero_based"):
        load_svmlight_file(data, zero_based="yes")
    with pytest.raises(FastSVMError, match="n_features is required"):
        load_svmlight_file(data, offset=3)
    with pytest.raises(FastSVMError, match="n_features"):
        load_svmlight_file(data, n_features=0)
    with pytest.raises(TypeError):
        load_svmlight_file(3.5)


# ---------------------------------------------------------------- tolerance

def test_comments_blank_lines_crlf_tabs_signs_and_unsorted_rows():
    text = (b"# a whole-line comment\r\n"
            b"+1 3:1.5\t1:2   # trailing comment 1:2\r\n"
            b"\r\n"
            b"   \t\n"
            b"-1 2:-0.25 10:1e3 4:.5#glued comment\n"
            b"1.5\n"
            b"1e3 7:-1E-2 5:5. 6:+3\n"
            b"-0 1:007")                        # no final newline
    X, y = load_svmlight_file(io.BytesIO(text), zero_based=False)
    dense = np.zeros((5, 10))
    dense[0, [0, 2]] = [2, 1.5]
    dense[1, [1, 3, 9]] = [-0.25, 0.5, 1000]
    dense[3, [4, 5, 6]] = [5, 3, -0.01]
    dense[4, 0] = 7
    assert np.array_equal(X.toarray(), dense)
    assert np.array_equal(y, [1, -1, 1.5, 1000, -0.0]) and np.signbit(y[4])
    assert np.all(np.diff(X.indices[X.indptr[1]:X.indptr[2]]) > 0)


def test_long_unsorted_row_is_sorted():
    rng = np.random.default_rng(3)
    cols = (rng.permutation(5000) + 1).tolist()
    line = "1 " + " ".join(f"{c}:{c / 7!r}" for c in cols) + "\n"
    X, y = load_svmlight_file(io.BytesIO(line.encode()), zero_based=False)
    assert np.array_equal(X.indices, np.arange(5000))
    assert np.array_equal(X.data, (np.arange(5000) + 1) / 7)


def test_query_ids_ignored_or_returned_like_sklearn():
    text = b"3 qid:1 1:1 2:2\n2 qid:1 1:0.5\n1 qid:-7 3:1\n0 qid:+12\n"
    X, y = load_svmlight_file(io.BytesIO(text))
    X2, y2, q = load_svmlight_file(io.BytesIO(text), query_id=True)
    Xr, yr, qr = sk_load(io.BytesIO(text), query_id=True)
    assert_same(X, y, Xr, yr)
    assert_same(X2, y2, Xr, yr)
    assert q.dtype == np.int64 and np.array_equal(q, qr) and np.array_equal(q, [1, 1, -7, 12])
    _, _, none = load_svmlight_file(io.BytesIO(b"1 1:1\n"), query_id=True)
    assert none.shape == (0,)   # no qid in the file: empty, as scikit-learn returns


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress),
                                              (".xz", lzma.compress), ("", lambda b: b)])
def test_compressed_paths(tmp_path, suffix, compress):
    text = b"1 1:0.5 4:2\n-1 2:1\n" * 50
    path = write(tmp_path, compress(text), "d.svm" + suffix)
    X, y = load_svmlight_file(path)
    assert_same(X, y, *sk_load(io.BytesIO(text)))
    X, y = load_svmlight_file(str(path))
    assert_same(X, y, *sk_load(io.BytesIO(text)))


def test_file_objects_descriptors_and_text_streams(tmp_path):
    text = "1 1:0.5 4:2\n-1 2:1 # é\n"
    ref = sk_load(io.BytesIO(text.encode()))
    path = write(tmp_path, text.encode())
    with open(path, "rb") as f:
        assert_same(*load_svmlight_file(f), *ref)
        assert not f.closed
    with open(path, encoding="utf-8") as f:
        assert_same(*load_svmlight_file(f), *ref)
    assert_same(*load_svmlight_file(io.StringIO(text)), *ref)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert_same(*load_svmlight_file(fd), *ref)
    finally:
        os.close(fd)
    bad = write(tmp_path, b"1 1:1\n1 2:1 2:1\n", "bad.svm")
    with open(bad, "rb") as f, pytest.raises(FileFormatError, match=f"^{bad}:2: "):
        load_svmlight_file(f)


def test_line_longer_than_chunk(tmp_path):
    line = b"1 " + b" ".join(b"%d:%d" % (i, i) for i in range(1, 3000)) + b"\n"
    path = write(tmp_path, b"-1 1:1\n" + line + line)
    X, y = datafile._load_files([path], chunk_bytes=64)[:2]
    assert_same(X, y, *sk_load(str(path)))


def test_zero_based_auto_is_decided_jointly_like_sklearn(tmp_path):
    a = write(tmp_path, b"1 0:1 2:3\n", "a")
    b = write(tmp_path, b"1 1:1 5:3\n", "b")
    empty = write(tmp_path, b"1\n# only labels\n", "e")
    for files in ([a, b], [b], [b, empty], [empty], [b, b]):
        ours = load_svmlight_files(files)
        ref = sk_load_files([str(f) for f in files])
        for k in range(0, len(ref), 2):
            assert_same(ours[k], ours[k + 1], ref[k], ref[k + 1])
    with pytest.raises(FileFormatError, match="n_features=5"):
        load_svmlight_files([a, b], n_features=5)   # zero-based (a has 0): index 5 is column 5
    X1, _, X2, _ = load_svmlight_files([b, b], n_features=5)   # one-based: column 4 is the last
    assert X1.shape == X2.shape == (1, 5)


def test_dtype_float32_like_sklearn():
    text = b"1 1:0.1 2:3.4028235e38 3:1e-50\n-1 2:0.3333333333333333\n"
    X, y = load_svmlight_file(io.BytesIO(text), dtype=np.float32)
    Xr, yr = sk_load(io.BytesIO(text), dtype=np.float32)
    assert X.dtype == Xr.dtype == np.float32 and y.dtype == yr.dtype
    assert np.array_equal(X.data, Xr.data) and np.array_equal(y, yr)


def test_offset_and_length_tile_the_file(tmp_path):
    """Parts read the lines starting in (offset, offset + length], so consecutive parts tile
    the file. Where such a line exists scikit-learn reads the same; where none does it still
    returns one line (also read by the next part), so empty parts are not compared."""
    rng = np.random.default_rng(5)
    X = sp.random(300, 40, density=0.2, random_state=rng, format="csr")
    y = rng.integers(0, 3, 300).astype(float)
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, path)
    size = path.stat().st_size
    cuts = [0, 1, 777, 778, size // 2, size - 5, size]
    parts_X, parts_y = [], []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        Xp, yp = load_svmlight_file(path, n_features=40, offset=lo, length=hi - lo)
        if Xp.shape[0]:
            assert_same(Xp, yp, *sk_load(str(path), n_features=40, offset=lo, length=hi - lo))
        parts_X.append(Xp)
        parts_y.append(yp)
    whole = sp.vstack(parts_X).tocsr()
    assert (whole != X).nnz == 0 and np.array_equal(np.concatenate(parts_y), y)


def test_exports():
    assert fastsvm.load_svmlight_file is load_svmlight_file
    assert fastsvm.dump_svmlight_file is dump_svmlight_file


# ---------------------------------------------------------------- writing and round trips

def random_problem(rng, n_rows, n_cols, density):
    X = sp.random(n_rows, n_cols, density=density, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.nnz) * 10.0 ** rng.integers(-300, 300, X.nnz)
    special = [1e-300, -0.0, 1 / 3, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308, 0.1]
    X.data[: min(len(special), X.nnz)] = special[: X.nnz]
    X = X.tolil()
    X[0, :] = 0                 # an empty row
    X = X.tocsr()
    X.eliminate_zeros()
    if X.nnz:
        X.data[0] = -0.0        # a stored negative zero
    return X, rng.standard_normal(n_rows) * 10.0 ** rng.integers(-20, 20, n_rows)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("zero_based", [True, False])
def test_dump_round_trip_is_exact(tmp_path, seed, zero_based):
    rng = np.random.default_rng(seed)
    X, y = random_problem(rng, 60 + 40 * seed, 25, 0.3)
    path = tmp_path / "rt.svm"
    dump_svmlight_file(X, y, path, zero_based=zero_based, comment="round trip\nsecond line")
    X2, y2 = load_svmlight_file(path, n_features=25, zero_based=zero_based)
    assert_same(X2, y2, X, y)
    X3, y3 = sk_load(str(path), n_features=25, zero_based=zero_based)
    assert_same(X2, y2, X3, y3)


def test_dump_dense_integer_labels_qid_and_streams(tmp_path):
    X = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [-2.0, 0.0, 1 / 3]])
    y = np.array([1, -1, 3])
    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, query_id=[4, 4, 9])
    assert buf.getvalue().splitlines()[1] == b"-1 qid:4"
    assert buf.getvalue().splitlines()[0] == b"1 qid:4 1:1.5"
    Xr, yr, qr = load_svmlight_file(io.BytesIO(buf.getvalue()), query_id=True, n_features=3)
    assert np.array_equal(Xr.toarray(), X) and np.array_equal(yr, y) and np.array_equal(qr, [4, 4, 9])
    text = io.StringIO()
    dump_svmlight_file(X, y, text, query_id=[4, 4, 9])
    assert text.getvalue().encode() == buf.getvalue()


def test_dump_empty_matrix_and_compressed_path(tmp_path):
    path = tmp_path / "empty.svm"
    dump_svmlight_file(sp.csr_matrix((0, 4)), np.zeros(0), path)
    assert path.read_bytes() == b""
    X, y = load_svmlight_file(path, n_features=4)
    assert X.shape == (0, 4) and y.shape == (0,)
    Xs, ys = load_svmlight_file(path)
    Xr, yr = sk_load(str(path))
    assert_same(Xs, ys, Xr, yr)   # scikit-learn's shape for an empty file: (0, 1)
    X, y = random_problem(np.random.default_rng(9), 30, 6, 0.5)
    gz = tmp_path / "x.svm.xz"
    dump_svmlight_file(X, y, gz)
    assert_same(*load_svmlight_file(gz, n_features=6), X, y)


def test_dump_is_atomic_and_validates(tmp_path, monkeypatch):
    path = tmp_path / "keep.svm"
    path.write_bytes(b"1 1:1\n")
    X, y = random_problem(np.random.default_rng(1), 200, 10, 0.5)
    calls, format_rows = [], datafile.format_rows

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return format_rows(*args, **kwargs)

    monkeypatch.setattr(datafile, "_WRITE_BLOCK_VALUES", 50)
    monkeypatch.setattr(datafile, "format_rows", failing)
    with pytest.raises(OSError, match="disk full"):
        dump_svmlight_file(X, y, path)
    assert path.read_bytes() == b"1 1:1\n"
    assert sorted(os.listdir(tmp_path)) == ["keep.svm"]   # no temporary left behind
    monkeypatch.undo()
    with pytest.raises(FastSVMError, match="NaN"):
        dump_svmlight_file(X, np.full(200, np.nan), path)
    with pytest.raises(FastSVMError, match="rows"):
        dump_svmlight_file(X, y[:5], path)
    with pytest.raises(FastSVMError, match="multilabel"):
        dump_svmlight_file(X, y, path, multilabel=True)
    r = int(np.argmax(np.diff(X.indptr) >= 2))
    swapped = X.indices.copy()
    swapped[X.indptr[r]:X.indptr[r] + 2] = swapped[X.indptr[r]:X.indptr[r] + 2][::-1]
    Xu = sp.csr_matrix((X.data.copy(), swapped, X.indptr.copy()), shape=X.shape)   # unsorted row
    before = Xu.indices.copy()
    dump_svmlight_file(Xu, y, path)
    assert np.array_equal(Xu.indices, before)  # the caller's matrix is not touched


# ---------------------------------------------------------------- threads and chunks

def messy_file(rng, n_rows, n_cols):
    """Random rows with unsorted indices, comments, blank lines, CRLF, qid and varied numbers."""
    forms = ["%.17g", "%.3e", "%g", "%+.6f", "%.1E"]
    out = []
    for i in range(n_rows):
        k = int(rng.integers(0, 12))
        cols = rng.choice(n_cols, size=k, replace=False) + 1
        vals = rng.standard_normal(k) * 10.0 ** rng.integers(-8, 8, k)
        label = rng.choice(["+1", "-1", "2", "1.5", "1e3", "-0.25"])
        toks = [label] + ([f"qid:{rng.integers(0, 9)}"] if i % 7 == 0 else [])
        toks += [f"{c}:{forms[(c + i) % len(forms)] % v}" for c, v in zip(cols, vals)]
        line = rng.choice([" ", "  ", "\t"]).join(toks)
        if i % 11 == 0:
            line += " # comment 3:4"
        out.append(line + ("\r\n" if i % 5 == 0 else "\n"))
        if i % 13 == 0:
            out.append(rng.choice(["\n", "# note\n", "   \n"]))
    return "".join(out).encode()


def test_threads_and_chunk_sizes_give_bytewise_identical_arrays(tmp_path):
    path = write(tmp_path, messy_file(np.random.default_rng(11), 6000, 500))
    ref = datafile._load_files([path], n_jobs=1, query_id=True)
    for n_jobs, chunk in [(2, 4096), (3, 1000), (2, 1 << 16), (4, 30_000), (1, 777)]:
        got = datafile._load_files([path], n_jobs=n_jobs, chunk_bytes=chunk, query_id=True)
        for a, b in zip([ref[0].data, ref[0].indices, ref[0].indptr, ref[1], ref[2]],
                        [got[0].data, got[0].indices, got[0].indptr, got[1], got[2]]):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (n_jobs, chunk)


# ---------------------------------------------------------------- pure-Python twin

def twin_parse(text):
    """The reference grammar in plain Python: float() is correctly rounded like the parser."""
    data, indices, indptr, labels = [], [], [0], []
    for line in text.split(b"\n"):
        line = line.split(b"#", 1)[0]
        tokens = line.split()
        if not tokens:
            continue
        labels.append(float(tokens[0]))
        features = tokens[1:]
        if features and features[0].startswith(b"qid:"):
            features = features[1:]
        row = sorted((int(i), float(v)) for i, v in (t.split(b":") for t in features))
        indices += [i for i, _ in row]
        data += [v for _, v in row]
        indptr.append(len(data))
    indices = np.array(indices, dtype=np.int32)
    shift = len(indices) > 0 and indices.min() > 0
    n_features = (indices.max() - shift + 1) if len(indices) else 1
    X = sp.csr_matrix((np.array(data, dtype=np.float64), indices - shift, np.array(indptr, dtype=np.int32)),
                      shape=(len(labels), n_features))
    return X, np.array(labels)


@pytest.mark.parametrize("seed", range(3))
def test_cython_parser_matches_python_twin(tmp_path, seed):
    text = messy_file(np.random.default_rng(100 + seed), 800, 60 + 300 * seed)
    path = write(tmp_path, text)
    X, y = datafile._load_files([path], chunk_bytes=2048, n_jobs=2)
    assert_same(X, y, *twin_parse(text))


def test_numbers_parse_exactly_like_float():
    """Fast path and strtod fallback against float() (correctly rounded) on hard cases."""
    rng = np.random.default_rng(21)
    numbers = ["0", "-0", "007", "1.", ".5", "-.5e-3", "9007199254740992", "9007199254740993",
               "9007199254740995", "123456789012345678901234567890", "0.1e23", "1e22", "1e23",
               "4.9406564584124654e-324", "2.4703282292062328e-324", "2.2250738585072011e-308",
               "1.7976931348623157e308", "0.000000000000000000000000000001234567890123456789",
               "1e-400", "179769313486231570000000000000000000000000000000000000000000000000000e239"]
    for _ in range(3000):
        digits = "".join(rng.choice(list("0123456789"), int(rng.integers(1, 25))))
        point = int(rng.integers(0, len(digits) + 1))
        text = digits[:point] + "." + digits[point:] if rng.random() < 0.7 else digits
        if rng.random() < 0.5:
            text += f"e{int(rng.integers(-330, 310))}"
        numbers.append(rng.choice(["", "-", "+"]) + text)
    numbers += [repr(float(v)) for v in rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500)]
    numbers = [n for n in numbers if np.isfinite(float(n))]
    text = "".join(f"{n} 1:{n}\n" for n in numbers).encode()
    X, y = load_svmlight_file(io.BytesIO(text), zero_based=True, n_features=2)
    expected = np.array([float(n) for n in numbers])
    assert y.tobytes() == expected.tobytes()
    rows = np.repeat(np.arange(len(numbers)), np.diff(X.indptr))
    assert np.array_equal(rows, np.arange(len(numbers)))        # one stored value per line
    assert X.data.tobytes() == expected.tobytes()


def test_to_csr_canonical_layout_and_checks():
    """to_csr gives float64 data, int32 sorted indices, no duplicates, finite values; a matrix
    already so is returned itself (the rows of a C path pass once per C), its values still
    checked; copy=True copies."""
    dense = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    messy = sp.csr_matrix((np.array([3.0, 1.0, 2.0, -1.0]), np.array([2, 0, 1, 1], dtype=np.int64),
                           np.array([0, 2, 4], dtype=np.int64)), shape=(2, 3))  # unsorted, a duplicate
    for given, expected in ((dense, dense), (messy, [[1.0, 0.0, 3.0], [0.0, 1.0, 0.0]]),
                            (sp.csc_matrix(dense), dense)):
        X = to_csr(given)
        assert type(X) is sp.csr_matrix and X.dtype == np.float64 and X.has_canonical_format
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        np.testing.assert_array_equal(X.toarray(), expected)
        assert to_csr(X) is X
        copied = to_csr(X, copy=True)
        assert copied is not X and not np.shares_memory(copied.data, X.data)
        X.data[0] = np.nan
        with pytest.raises(FastSVMError, match="NaN or infinity"):
            to_csr(X)
