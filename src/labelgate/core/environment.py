"""Where a report was made: versions, platform and code revision, read without importing torch
and, where the files allow, without a subprocess (each costs a fork and an exec on every run)."""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Any

from labelgate._version import __version__
from labelgate.core.installed import version

__all__ = ["environment"]

# The variables that move where git finds the repository or its refs.
_GIT_PLACES = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_NAMESPACE",
)
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1 or SHA-256 object names


def _version(dist: str) -> str | None:
    return version(dist)


def _git_dir(start: Path) -> Path | None:
    """The git directory ``git`` finds from ``start``: a ``.git`` folder, or the folder a
    ``.git`` file names (``gitdir: ...``, a worktree or a submodule); None where there is none."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            named = Path(text[len("gitdir:") :].strip())
            return named if named.is_absolute() else folder / named
    return None


def _ref(git: Path, common: Path, name: str) -> str | None:
    """The object a ref names: its loose file (in the worktree's folder or the common one), else
    its line in packed-refs; None where neither holds it (then git is asked)."""
    for folder in (git, common):
        loose = folder / name
        if loose.is_file():
            text = loose.read_text(encoding="ascii", errors="replace").strip()
            return text if _SHA.fullmatch(text) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            sha, _, ref = line.partition(" ")
            if ref == name and _SHA.fullmatch(sha):
                return sha
    return None


def _head(git: Path) -> str | None:
    """``git rev-parse HEAD`` read from the git directory's files, or None where anything is not
    the plain layout (another owner's repository, a reftable, a ref that is no object name)."""
    if not (git / "HEAD").is_file():
        return None
    if hasattr(os, "geteuid") and git.stat().st_uid != os.geteuid():
        return None  # git refuses another owner's repository (safe.directory): let it judge
    common = git
    if (git / "commondir").is_file():
        shared = Path((git / "commondir").read_text(encoding="utf-8").strip())
        common = shared if shared.is_absolute() else git / shared
    head = (git / "HEAD").read_text(encoding="ascii", errors="replace").strip()
    if _SHA.fullmatch(head):
        return head
    if head.startswith("ref: refs/"):
        return _ref(git, common, head[len("ref: ") :])
    return None


def _revision() -> str | None:
    """The code revision of the working directory, as ``git rev-parse --short=12 HEAD`` gives it
    (None outside a repository): read from the files, git asked only where they do not say."""
    if not any(k in os.environ for k in _GIT_PLACES):  # git's own rules then
        try:
            git = _git_dir(Path.cwd())
            if git is None:
                return None
            sha = _head(git)
        except (OSError, UnicodeError):
            sha = None
        if sha is not None:
            return sha[:12]
    return _git_revision()


def _git_revision() -> str | None:
    import subprocess

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _platform() -> str:
    """``platform.platform(terse=True)``. On Linux it is formed here from ``os.uname()`` and the C
    library's version as the standard library forms it, less its ``uname -p`` subprocess: the
    processor it asks for is dropped when it equals the machine or is unknown, as coreutils'
    ``uname -p`` answers on Linux."""
    if sys.platform != "linux":
        return platform.platform(terse=True)
    u = os.uname()
    libc, libc_version = platform.libc_ver()
    parts = (u.sysname, u.release, u.machine, "with", libc + libc_version)
    text = "-".join(x.strip() for x in parts if x)
    for ch in ' /\\:;"()':
        text = text.replace(ch, "_" if ch == " " else "-")
    text = text.replace("unknown", "")
    while "--" in text:
        text = text.replace("--", "-")
    return text.rstrip("-")


def environment() -> dict[str, Any]:
    """Versions and backend, read without importing torch (which is slow to import)."""
    import numpy as np

    return {
        "labelgate": __version__,
        "python": platform.python_version(),
        "platform": _platform(),
        "pyarrow": _version("pyarrow"),
        "numpy": np.__version__,
        "torch": _version("torch"),
        "backend": "cpu (validation runs no device code)",
        "code_revision": _revision(),
    }
