"""Files written whole or not at all: model files, data files and svm-scale parameter files.

The content goes to ``.NAME.<12 hex>.tmp`` in the target's directory, is flushed and synced, gets
the permissions ``open(path, "w")`` would have given, and is renamed over the target; then the
directory is synced so that the rename survives a power loss. On any error the temporary file is
removed and an existing file at the path is left as it was. A save killed before its rename
leaves its temporary file: the next save to the same path removes those older than
STALE_TEMPORARY_SECONDS. A path that is a device or a pipe (/dev/stdout, a FIFO) is written in
place, as LIBSVM's tools write it: a rename would put a regular file where it was.
"""
import contextlib
import os
import re
import secrets
import stat
import time

# younger temporaries may belong to a save still running
STALE_TEMPORARY_SECONDS = 60.0


@contextlib.contextmanager
def atomic_output(path, binary=False):
    """A stream (text, ASCII with "\\n" lines, or ``binary``) whose content replaces ``path``
    only once the block ends without an error."""
    path = os.fspath(path)
    mode, text = ("wb", {}) if binary else ("w", {"encoding": "ascii", "newline": "\n"})
    if _is_special(path):
        with open(path, mode, **text) as stream:
            yield stream
        return
    directory, name = os.path.split(os.path.abspath(path))
    remove_stale_temporaries(directory, name)
    permissions = _new_file_mode(path)
    fd, tmp = _create_temporary(directory, name)
    try:
        with os.fdopen(fd, mode, **text) as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp, permissions)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_directory(directory)


def _is_special(path):
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _create_temporary(directory, name):
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), tmp   # never over a file
        except FileExistsError:
            continue


def _new_file_mode(path):
    """The permissions open() would give: the existing file's, else 0o666 less the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def remove_stale_temporaries(directory, name):
    """Delete ``.NAME.<12 hex>.tmp`` files (atomic_output's own pattern, nothing else) older than
    STALE_TEMPORARY_SECONDS from ``directory``."""
    pattern = re.compile(r"\." + re.escape(name) + r"\.[0-9a-f]{12}\.tmp")
    try:
        entries = os.scandir(directory)
    except OSError:
        return   # the save itself will report an unusable directory
    now = time.time()
    with entries:
        for entry in entries:
            if not pattern.fullmatch(entry.name):
                continue
            try:
                if entry.is_file(follow_symlinks=False) and \
                        now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS:
                    os.unlink(entry.path)
            except OSError:
                pass   # gone already, or not ours to remove


def _sync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass   # some file systems cannot sync a directory; the rename is done all the same
    finally:
        os.close(fd)
