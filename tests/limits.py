"""Running the command line under a memory and time bound, for the hostile-input tests."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def run_bounded(
    *args: str,
    memory_mb: int = 1536,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m labelgate ARGS`` with its address space capped at ``memory_mb`` (an input that
    blows up memory fails the test by a MemoryError, exit 3, or a kill, not by swapping the
    machine) and its wall time at ``timeout`` seconds."""

    def cap() -> None:
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    environ = {**os.environ, **(env or {})}
    # glibc reserves 64 MB of address space per thread arena: with Arrow's and the id check's
    # threads the cap then counts reservations, not use (a two-mask run reserves 1.7 GB, and
    # fails thread creation under the cap or not by import order); two arenas keep the cap on
    # what the run allocates
    environ.setdefault("MALLOC_ARENA_MAX", "2")
    environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SRC), environ.get("PYTHONPATH", "")) if p
    )
    result = subprocess.run(
        [sys.executable, "-m", "labelgate", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        preexec_fn=cap,
        env=environ,
        cwd=cwd,
        check=False,
    )
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
    )


def assert_clean_exit(result: subprocess.CompletedProcess[str], *codes: int) -> None:
    """The run ended with one of ``codes`` (a verdict or a refusal), no traceback, no exit 3."""
    assert result.returncode in codes, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
