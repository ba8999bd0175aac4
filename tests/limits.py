"""Running the command line under a memory and time bound, for the hostile-input tests."""

from __future__ import annotations

import os
import resource
import signal
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
    process = start_bounded(*args, memory_mb=memory_mb, env=env, cwd=cwd)
    return finish_bounded(process, timeout=timeout, stdin=stdin)


def start_bounded(
    *args: str,
    memory_mb: int = 1536,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """``python -m labelgate ARGS`` started under ``run_bounded``'s memory cap, not waited for
    (runs that must overlap); ``finish_bounded`` waits for it under the time bound."""

    def cap() -> None:
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    environ = {**os.environ, **(env or {})}
    # glibc reserves 64 MB of address space per thread arena: with Arrow's and the id check's
    # threads the cap then counts reservations, not use (a two-mask run reserves 1.7 GB, and
    # fails thread creation under the cap or not by import order); two arenas keep the cap on
    # what the run allocates
    environ.setdefault("MALLOC_ARENA_MAX", "2")
    # a run past its time bound is sent SIGABRT, and faulthandler writes where each thread waits
    environ.setdefault("PYTHONFAULTHANDLER", "1")
    environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SRC), environ.get("PYTHONPATH", "")) if p
    )
    return subprocess.Popen(
        [sys.executable, "-m", "labelgate", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=cap,
        env=environ,
        cwd=cwd,
    )


def finish_bounded(
    process: subprocess.Popen[bytes], *, timeout: float = 120, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Wait for a ``start_bounded`` run at most ``timeout`` seconds, and give its output as
    text. A run past it is aborted (faulthandler then writes every thread's stack) and the test
    fails with the end of what it wrote: a hang names where it waited."""
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        try:
            _, err = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        stacks = err.decode("utf-8", "replace")[-6000:]
        raise AssertionError(f"no end after {timeout} s; what it wrote last:\n{stacks}") from None
    return subprocess.CompletedProcess(
        process.args,
        process.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
    )


def assert_clean_exit(result: subprocess.CompletedProcess[str], *codes: int) -> None:
    """The run ended with one of ``codes`` (a verdict or a refusal), no traceback, no exit 3."""
    assert result.returncode in codes, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
