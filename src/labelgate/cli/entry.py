"""The process's entry: the ``labelgate`` script and ``python -m labelgate``.

A run ends as the interpreter would end it, less its teardown: the threads it left are joined and
the exit handlers run (temporary folders removed, worker pools and clients stopped, logging
flushed), stdout and stderr are flushed, then the process exits with the command's status. What is
skipped is the interpreter freeing every module and object one by one, memory the system takes
back at once at exit: about 40 ms of CPU of a three-row ``validate`` (docs/performance.md, "Cold
start"). ``main`` itself returns its status and leaves the process as it found it, for callers
that run it in their own process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

from labelgate.cli.main import main

__all__ = ["leave", "run"]

# Python's own status when it cannot flush stdout at exit (a reader that went away)
FLUSH_FAILED = 120


def run() -> NoReturn:
    """Run the command line of this process and exit with its status."""
    leave(main())


def leave(status: int) -> NoReturn:
    """Exit with ``status`` after what the interpreter's own exit does first, in its order:
    the non-daemon threads joined (``threading._shutdown``, as ``Py_FinalizeEx`` calls it), the
    ``atexit`` handlers run, the standard streams flushed."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        status = FLUSH_FAILED
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(status)
