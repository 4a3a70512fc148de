"""Every writer of a user's file (model, data, svm-scale parameters) goes through fastsvm.files.atomic:
a failed or killed write leaves the old file, the next write cleans the temporaries a killed one
left, the directory is synced after the rename, and the permissions are what open() gives."""
import os
import stat
import time

import numpy as np
import pytest
import scipy.sparse as sp

from fastsvm.files import atomic
from fastsvm.files.datafile import dump_svmlight_file, load_svmlight_file
from fastsvm.models.model import Model
from fastsvm.files.modelfile import load_model, save_model
from fastsvm.files.scaling import fit_scaling, load_scaling, save_scaling

X = sp.csr_matrix(np.array([[0.5, 0.0, 2.0], [1.0, -1.0, 0.0]]))
Y = np.array([1.0, -1.0])


def write_model(path):
    save_model(Model("c_svc", "linear", X, sv_coef=[[1.0, -1.0]], rho=[0.0], labels=[1, -1], n_sv=[1, 1]), path)


def write_data(path):
    dump_svmlight_file(X, Y, path, zero_based=False)


def write_scaling(path):
    save_scaling(fit_scaling(X, Y), path)


WRITERS = {"model": (write_model, load_model), "data": (write_data, load_svmlight_file),
           "scaling": (write_scaling, load_scaling)}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_next_write_removes_stale_temporaries_only(kind, tmp_path):
    write, read = WRITERS[kind]
    path = tmp_path / "out"
    old = time.time() - 2 * atomic.STALE_TEMPORARY_SECONDS
    stale = tmp_path / ".out.00112233aabb.tmp"          # what a killed write of ``out`` leaves
    running = tmp_path / ".out.0123456789ab.tmp"        # a write going on right now
    others = [tmp_path / ".out.xyz.tmp", tmp_path / ".other.0123456789ab.tmp"]
    for p in [stale, running, *others]:
        p.write_bytes(b"partial")
    for p in [stale, *others]:
        os.utime(p, (old, old))
    write(path)
    read(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", running.name] + [p.name for p in others])


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_write_syncs_the_directory_after_the_rename(kind, tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}") and (tmp_path / "out").exists())
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    WRITERS[kind][0](tmp_path / "out")
    assert synced == [False, True]   # the file's data, then the directory holding the new name


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_failed_write_keeps_the_old_file_and_its_permissions(kind, tmp_path, monkeypatch):
    write, _ = WRITERS[kind]
    path = tmp_path / "out"
    path.write_bytes(b"old content\n")
    path.chmod(0o640)

    def fail(*args):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(atomic.os, "replace", fail)
        with pytest.raises(OSError):
            write(path)
    assert path.read_bytes() == b"old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    write(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640   # as open(path, "w") would have kept it
