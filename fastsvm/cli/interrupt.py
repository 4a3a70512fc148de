"""Ctrl-C at any moment of a command: one line and exit 130, never a traceback.

The console script imports ``fastsvm.cli.<prog>`` (light: the heavy imports are inside the
programs' functions) and calls ``entry()``, which hands its work to ``run_interruptible``: from
then on an interrupt during the imports, the work or the way out ends the same way. This module
imports only the standard library, so nothing heavy loads before the handling is in place.
"""
import signal
import sys


def _interrupt_once(signum, frame):
    # the first Ctrl-C stops the work; later ones must not break the way out (an interrupted
    # except-clause or save would print a traceback)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def run_interruptible(prog, work):
    """``work()`` -> its exit status, or 130 after one line on stderr when Ctrl-C ended it.
    Once the work is over, a late Ctrl-C is ignored: the process is already on its way out."""
    try:
        # inside the try: an interrupt before the handler is in place raises here, and is caught
        signal.signal(signal.SIGINT, _interrupt_once)
        status = work()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"{prog}: interrupted", file=sys.stderr)
        status = 130
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status
