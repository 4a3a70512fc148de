"""Ctrl-C at any moment of a command: one line and exit 130, never a traceback.

The console script imports ``fastsvm.cli.<prog>`` and calls ``entry()``, which hands its work to
``run_interruptible``. A Ctrl-C before that (while the program's modules import) is only noted
(``defer_until_entry``, run by fastsvm.cli's __init__) and ends the command as soon as
``run_interruptible`` starts; from then on an interrupt during the imports, the work or the way
out ends the same way. An interrupt inside an extension's import can surface as another
exception (numpy turns it into an ImportError), and some imports drop it altogether (Cython's
module init registers its memoryview types with the ABCs under a bare except; importlib's lock
callbacks drop it as "Exception ignored", which is kept off stderr): a Ctrl-C that lands inside an
import is raised again once the import is over, and once a Ctrl-C was seen, whatever ends the work
is reported as the interrupt. This module imports only the standard library.
"""
import _thread
import os
import signal
import sys
import time

_seen = False      # a Ctrl-C arrived
_watching = False  # a Ctrl-C landed in an import: a thread waits for its end
_reported = False  # the interrupt is being reported: the process is on its way out


def _note(signum, frame):
    global _seen
    _seen = True


def _interrupt_once(signum, frame):
    # the first Ctrl-C stops the work; later ones must not break the way out (an interrupted
    # except-clause or save would print a traceback)
    global _seen, _watching
    if _reported:
        return
    _seen = True
    if _importing(frame):
        # the import may drop it: the handler stays for a second one once the import is over
        # (a no-op once this one is reported)
        if not _watching:
            _watching = True
            _thread.start_new_thread(_interrupt_after_imports, (_thread.get_ident(),))
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _importing(frame):
    """Whether frame runs inside an import (importlib's frames are on its stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _interrupt_after_imports(main):
    """(A thread of its own) Ctrl-C again in thread main once it is out of its imports: a no-op
    when the first one got out (its report ignores SIGINT)."""
    global _watching
    while _importing(sys._current_frames().get(main)):
        time.sleep(0.005)
    _watching = False
    _thread.interrupt_main()


def _unraisable(info):
    """sys.unraisablehook: an interrupt dropped in a callback is not printed (it is raised again
    once its import is over, or reported when the work ends)."""
    if not issubclass(info.exc_type, KeyboardInterrupt):
        sys.__unraisablehook__(info)


def defer_until_entry():
    """In a fastsvm-* program still on Python's own Ctrl-C handling: note a Ctrl-C instead of
    raising it in the middle of an import (a library importing fastsvm.cli keeps its handler)."""
    program = os.path.basename((getattr(sys, "argv", None) or [""])[0])
    if program.startswith("fastsvm-") and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note)


def run_interruptible(prog, work):
    """``work()`` -> its exit status, or 130 after one line on stderr when Ctrl-C ended it.
    Once the work is over, a late Ctrl-C is ignored: the process is already on its way out.
    A program started with SIGINT ignored (a script's background job) keeps ignoring it, as C
    programs such as svm-train do."""
    global _reported
    try:
        # inside the try: an interrupt before the handler is in place raises here, and is caught
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _interrupt_once)
            sys.unraisablehook = _unraisable
        if _seen:
            raise KeyboardInterrupt
        status = work()
        if _seen and status == 0:  # dropped where nothing could raise it again
            status = _interrupted(prog)
    except Exception:
        if not _seen:
            raise
        _reported = True  # before any call: a Ctrl-C raised again must not break this clause
        status = _interrupted(prog)
    except KeyboardInterrupt:
        _reported = True
        status = _interrupted(prog)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


def _interrupted(prog):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(f"{prog}: interrupted", file=sys.stderr)
    return 130
