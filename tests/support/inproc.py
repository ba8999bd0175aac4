"""``labelgate ARGS`` run in the test's own process, its stderr holding what a fresh process would
have printed there too: the warnings that Python's default filters show. Under pytest a warning is
recorded, not printed, so a test that a usage error is one line on stderr would miss one."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

from tests.conftest import cli_here

# What a fresh interpreter ignores by default (a DeprecationWarning is shown only from __main__,
# which a command never is): https://docs.python.org/3/library/warnings.html#default-warning-filter
HIDDEN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def run_here(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``cli_here(ARGS)`` with the warnings a fresh process would print appended to its stderr:
    for tests of what a command decides and says, at a fraction of ``run_cli``'s cost."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in HIDDEN:
            warnings.simplefilter("ignore", category)
        result = cli_here(*args, cwd=cwd, env=env)
    shown = [
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught
    ]
    result.stderr += "".join(shown)
    return result
