"""A reliability probe kept as tests: seeded mutations of real data and model files.

In process, every mutated file either parses or raises FileFormatError naming the file and a
line; nothing else escapes and no case hangs (a watchdog ends the run, with every thread's stack,
if one case takes longer than CASE_SECONDS: a hang in nogil code cannot be interrupted from
Python). Through the programs, in subprocesses: exit 0 or 1, never a traceback, and a failure is
one line. No case allocates more than 1 GB: in process the address space may grow by
ALLOCATION_LIMIT at most, and each program runs in ALLOCATION_LIMIT of address space (all a
program needs on these files), so a larger request fails and the case with it. The default run
is small; ``-m slow`` runs the sizes of the probe.
"""
import contextlib
import faulthandler
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fastsvm.files.datafile import load_svmlight_file
from fastsvm.files import modelfile
from fastsvm.errors import FileFormatError
from fastsvm.files.modelfile import load_model, save_model
from fastsvm.params import Params
from fastsvm.training.trainer import fit_model

from conftest import SHIPPED_DATA

CASE_SECONDS = 60          # a case that takes longer is a hang
BIN = Path(sys.executable).parent
ALLOCATION_LIMIT = 1 << 30   # the largest allocation a case may make

# tokens a fuzzer would put where a number or a pair stands
SPECIAL_TOKENS = [b"2147483647:1", b"2147483648:1", b"99999999999999999999:1", b"-1:1", b"0:1",
                  b"-0:2", b"1:nan", b"1:inf", b"1:-inf", b"nan", b"inf", b"1e309", b"-1e309",
                  b"1:1e-400", b"1:1e309", b":", b"1:", b":1", b"1:1:1", b"qid:x", b"qid:1", b"\x00",
                  b"+", b"-", b"0x10", b"1e", b".", b"3e9", b"1e23", b"-2147483649", b"1.5", b"#",
                  b"\xff\xfe", b"\r", b"SV", b"w", b"label", b"nr_class", b"total_sv", b"2000000000"]
HEADER_KEYS = [b"svm_type", b"kernel_type", b"degree", b"gamma", b"coef0", b"nr_class", b"total_sv",
               b"rho", b"label", b"probA", b"probB", b"nr_sv", b"prob_density_marks", b"solver_type",
               b"nr_feature", b"bias", b"SV", b"w"]


def mutate(text, rng):
    """One to three seeded mutations of a file's bytes."""
    data = bytearray(text)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(8))
        if not data:
            data = bytearray(rng.choice(SPECIAL_TOKENS))
        pos = int(rng.integers(len(data) + 1))
        if op == 0:     # flip bits of a few bytes
            for p in rng.integers(len(data), size=int(rng.integers(1, 9))):
                data[p] ^= 1 << int(rng.integers(8))
        elif op == 1:   # truncate
            del data[pos:]
        elif op == 2:   # a token replaced by a special one
            start = data.rfind(b" ", 0, pos) + 1
            end = data.find(b" ", pos)
            end = len(data) if end < 0 else end
            data[start:end] = rng.choice(SPECIAL_TOKENS)
        elif op == 3:   # a long line
            unit = rng.choice([b"1:1 ", b"9", b" ", b"-1 1:0.5 "])
            data[pos:pos] = b"\n" + unit * int(rng.integers(1000, 50000)) + b"\n"
        elif op == 4:   # lines deleted, doubled or swapped
            lines = bytes(data).split(b"\n")
            i, j = (int(k) for k in rng.integers(len(lines), size=2))
            action = int(rng.integers(3))
            if action == 0:
                del lines[i]
            elif action == 1:
                lines.insert(i, lines[j])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == 5:   # a header line's key or value changed
            lines = bytes(data).split(b"\n")
            i = int(rng.integers(min(len(lines), 12)))
            words = lines[i].split(b" ")
            k = int(rng.integers(len(words)))
            words[k] = rng.choice(HEADER_KEYS + SPECIAL_TOKENS)
            lines[i] = b" ".join(words)
            data = bytearray(b"\n".join(lines))
        elif op == 6:   # random bytes inserted
            data[pos:pos] = rng.integers(256, size=int(rng.integers(1, 16)), dtype=np.uint8).tobytes()
        else:           # line endings changed
            data = bytearray(bytes(data).replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n", b" \n"])))
    return bytes(data)


@pytest.fixture(scope="module")
def base_files(tmp_path_factory):
    """Small real files to mutate: data rows, a LIBSVM model of each kind, a LIBLINEAR model."""
    folder = tmp_path_factory.mktemp("fuzz_base")
    rows = (SHIPPED_DATA / "breast_cancer_scale").read_bytes().split(b"\n")[:40]
    data = folder / "data"
    data.write_bytes(b"\n".join(rows) + b"\n")
    X, y = load_svmlight_file(data)
    models = []
    for svm_type, kernel, targets in (("c_svc", "rbf", y), ("nu_svc", "polynomial", np.arange(40) % 3),
                                      ("epsilon_svr", "linear", X[:, 0].toarray().ravel()),
                                      ("one_class", "sigmoid", y)):
        path = folder / f"{svm_type}.model"
        save_model(fit_model(X, targets, Params(svm_type=svm_type, kernel_type=kernel,
                                                probability=svm_type == "c_svc", verbose=False)), path)
        models.append(path.read_bytes())
    models.append(b"solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 4\nbias 1\nw\n"
                  + b"".join(b"%g %g %g \n" % (i, -i, 0.5 * i) for i in range(5)))
    return {"data": [data.read_bytes()], "model": models, "folder": folder}


def check_outcome(path, read, counts):
    """Read ``path``; a parse or a FileFormatError naming path:line. Counts the outcomes."""
    try:
        result = read(path)
    except FileFormatError as e:
        message = str(e)
        assert e.line is not None and e.line >= 1 and message.startswith(f"{path}:{e.line}: "), message
        assert "\n" not in message, message
        counts["errors"] += 1
        return
    counts["parsed"] += 1
    if isinstance(result, tuple):   # data: a consistent CSR matrix of finite values
        X, y = result
        assert X.shape[0] == y.shape[0] and np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))


@contextlib.contextmanager
def address_space_growth_limited(limit):
    """The process's address space may grow by ``limit`` at most inside the block (an allocation
    beyond it raises MemoryError); the soft limit is restored after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = next(int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith("VmSize:"))
    cap = size + limit if hard == resource.RLIM_INFINITY else min(size + limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def fuzz(kind, bases, folder, n_cases, seed):
    read = load_svmlight_file if kind == "data" else load_model
    path = folder / f"fuzzed_{kind}"
    counts = {"parsed": 0, "errors": 0}
    rng = np.random.default_rng(seed)
    for case in range(n_cases):
        path.write_bytes(mutate(bases[case % len(bases)], rng))
        faulthandler.dump_traceback_later(CASE_SECONDS, exit=True)   # a hang ends the run
        try:
            with address_space_growth_limited(ALLOCATION_LIMIT):
                check_outcome(path, read, counts)
        except Exception as e:   # any other outcome (MemoryError too) is what this test looks for
            kept = folder / f"crash_{kind}_{seed}_{case}"
            path.replace(kept)
            pytest.fail(f"case {case} (seed {seed}, file {kept}): {type(e).__name__}: {e}")
        finally:
            faulthandler.cancel_dump_traceback_later()
    return counts


def test_a_case_cannot_allocate_more_than_the_limit():
    with address_space_growth_limited(ALLOCATION_LIMIT):
        np.ones(ALLOCATION_LIMIT // 16)   # half the limit: fine
        with pytest.raises(MemoryError):
            np.ones(ALLOCATION_LIMIT // 6)   # 1.33 x the limit (the process's own slack is below that)
    np.ones(ALLOCATION_LIMIT // 6)   # the limit is lifted after


@pytest.mark.parametrize("kind", ["data", "model"])
def test_fuzzed_files_parse_or_fail_with_file_and_line(base_files, kind):
    counts = fuzz(kind, base_files[kind], base_files["folder"], 1000, seed=37)
    # both outcomes occur: the mutations are neither all harmless nor all fatal
    assert counts["parsed"] > 0 and counts["errors"] > 0, counts


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["data", "model"])
def test_fuzzed_files_at_the_probes_size(base_files, kind):
    counts = fuzz(kind, base_files[kind], base_files["folder"], 100_000, seed=2037)
    print(f"\n{kind}: {counts}")
    assert counts["parsed"] + counts["errors"] == 100_000


def read_outcome(path):
    """A model file's reading: its arrays, or the error message."""
    try:
        model = load_model(path)
    except FileFormatError as e:
        return str(e)
    sv = model.support_vectors.tocsr()
    return (sv.shape, sv.indptr.tobytes(), sv.indices.tobytes(), sv.data.tobytes(),
            np.asarray(model.sv_coef).tobytes())


def test_fast_and_line_by_line_support_vector_readers_agree(base_files, monkeypatch):
    """A binary model's SV lines are read by the data parser: on fuzzed binary models it gives
    exactly what the line-by-line reader gives (the same arrays, or the same file:line error)."""
    binary = [m for m in base_files["model"] if b"nr_class 2" in m and b"precomputed" not in m]
    path = base_files["folder"] / "fuzzed_binary_model"
    rng = np.random.default_rng(38)
    fast_reads = 0
    for case in range(600):
        path.write_bytes(mutate(binary[case % len(binary)], rng))
        fast = read_outcome(path)
        with monkeypatch.context() as patch:
            patch.setattr(modelfile, "_parsed_support_vectors", lambda reader, l: None)
            slow = read_outcome(path)
        assert fast == slow, f"case {case}:\n{path.read_bytes()[:2000]!r}"
        fast_reads += not isinstance(fast, str)
    assert fast_reads > 0


def limited_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ALLOCATION_LIMIT, ALLOCATION_LIMIT))


def run_program(*args):
    return subprocess.run([str(BIN / args[0]), *map(str, args[1:])], capture_output=True, text=True,
                          timeout=120, preexec_fn=limited_memory,
                          env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))


def fuzz_programs(base_files, tmp_path, n_files, seed):
    """Fuzzed data through fastsvm-train (and its model through fastsvm-predict), fuzzed models
    through fastsvm-predict. Returns the number of runs."""
    rng = np.random.default_rng(seed)
    valid_data = base_files["folder"] / "data"
    runs = []
    for case in range(n_files):
        kind = "data" if case % 2 == 0 else "model"
        path = tmp_path / f"{kind}_{case}"
        path.write_bytes(mutate(base_files[kind][case % len(base_files[kind])], rng))
        if kind == "data":
            model = tmp_path / f"model_of_{case}"
            runs.append((path, run_program("fastsvm-train", "-q", "-j", "1", path, model)))
            if runs[-1][1].returncode == 0:
                runs.append((path, run_program("fastsvm-predict", "-q", path, model, tmp_path / "out")))
        else:
            runs.append((path, run_program("fastsvm-predict", "-q", valid_data, path, tmp_path / "out")))
    for path, result in runs:
        assert "Traceback" not in result.stderr, f"{path}:\n{result.stderr}"
        assert result.returncode in (0, 1), f"{path}: exit {result.returncode}\n{result.stderr}"
        if result.returncode == 1:
            assert len(result.stderr.splitlines()) == 1, f"{path}:\n{result.stderr}"
            assert "out of memory" not in result.stderr, f"{path}: an allocation over 1 GB\n{result.stderr}"
    return len(runs)


def test_programs_on_fuzzed_files_exit_cleanly(base_files, tmp_path):
    fuzz_programs(base_files, tmp_path, 12, seed=37)


@pytest.mark.slow
def test_programs_on_fuzzed_files_at_the_probes_size(base_files, tmp_path):
    print(f"\nprogram runs: {fuzz_programs(base_files, tmp_path, 400, seed=2037)}")
