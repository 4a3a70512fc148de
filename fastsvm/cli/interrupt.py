"""Ctrl-C at any moment of a command: one line and exit 130, never a traceback.

The console script imports ``fastsvm.cli.<prog>`` and calls ``entry()``, which hands its work to
``run_interruptible``. A Ctrl-C before that (while the program's modules import) is only noted
(``defer_until_entry``, run by fastsvm.cli's __init__) and ends the command as soon as
``run_interruptible`` starts; from then on an interrupt during the imports, the work or the way
out ends the same way. An interrupt inside an extension's import can surface as another
exception (numpy turns it into an ImportError): once a Ctrl-C was seen, whatever ends the work is
reported as the interrupt. This module imports only the standard library.
"""
import os
import signal
import sys

_seen = False  # a Ctrl-C arrived


def _note(signum, frame):
    global _seen
    _seen = True


def _interrupt_once(signum, frame):
    # the first Ctrl-C stops the work; later ones must not break the way out (an interrupted
    # except-clause or save would print a traceback)
    global _seen
    _seen = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


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
    try:
        # inside the try: an interrupt before the handler is in place raises here, and is caught
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _interrupt_once)
        if _seen:
            raise KeyboardInterrupt
        status = work()
    except Exception:
        if not _seen:
            raise
        status = _interrupted(prog)
    except KeyboardInterrupt:
        status = _interrupted(prog)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


def _interrupted(prog):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(f"{prog}: interrupted", file=sys.stderr)
    return 130
