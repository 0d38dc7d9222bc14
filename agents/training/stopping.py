"""How a run stops cleanly, apart from torch so that a command can catch signals before
its heavy imports: ``StopSignal`` (SIGINT and SIGTERM caught until released) and
``say`` (printing that a closed stdout does not stop)."""

from __future__ import annotations

import os
import signal
import sys
import threading


class StopSignal:
    """Catches SIGINT and SIGTERM (in the main thread) until ``restore``, so that the
    run can checkpoint before it stops, in any phase; a second signal stops at once.
    ``train.py`` makes one before it imports torch, so a signal in the first seconds of
    a run is honoured too (and one that the shell told the process to ignore, as it does
    for a job started with ``&``, is caught all the same)."""

    def __init__(self, caught=()):
        """``caught``: signals a simpler handler caught before this one existed (the
        command's first lines); the first counts as caught here."""
        self.signum = None
        self.previous = {}
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._catch) for s in (signal.SIGINT, signal.SIGTERM)}
        if caught:
            self._catch(caught[0], None)

    def _catch(self, signum, frame):
        if self.signum is not None:  # asked twice: stop now (even where the signal was ignored before)
            self.restore()
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
            signal.raise_signal(signum)
        self.signum = signum
        name = signal.Signals(signum).name
        say(f"\n{name}: stopping at the end of this update or imitation chunk (again to stop at once)")

    def is_set(self) -> bool:
        return self.signum is not None

    def restore(self) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        self.previous = {}


def say(*parts) -> None:
    """Print a line; a closed stdout (``| tee log`` ended by the same Ctrl-C) does not
    stop the run: the rest is not printed."""
    try:
        print(*parts, flush=True)
    except (BrokenPipeError, OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
