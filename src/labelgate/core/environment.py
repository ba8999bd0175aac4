"""Where a report was made: versions, platform and code revision, read without importing torch."""

from __future__ import annotations

import platform
import subprocess
from typing import Any

from labelgate._version import __version__
from labelgate.core.installed import version

__all__ = ["environment"]


def _version(dist: str) -> str | None:
    return version(dist)


def _revision() -> str | None:
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


def environment() -> dict[str, Any]:
    """Versions and backend, read without importing torch (which is slow to import)."""
    import numpy as np

    return {
        "labelgate": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "pyarrow": _version("pyarrow"),
        "numpy": np.__version__,
        "torch": _version("torch"),
        "backend": "cpu (validation runs no device code)",
        "code_revision": _revision(),
    }
