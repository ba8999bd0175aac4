"""The DOM headless Chromium builds from a page (CI installs Chromium: .ci/run); skipped where
Chromium is not installed, failed on CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

__all__ = ["dump_dom"]


def dump_dom(page: Path, *flags: str) -> str:
    """The DOM of ``page`` once loaded, with Chromium's ``flags`` (a window size...) added."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs chromium (.ci/run): the HTML report must be rendered")
        pytest.skip("chromium is not installed here")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                *flags,
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout
