"""Regenerate docs/img/report.png: the HTML report of a bundled sample, as headless Chromium draws it.

    python docs/screenshot.py

Needs labelgate installed and Chromium (``chromium`` or ``chromium-browser``) on the PATH.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "data_samples"


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("needs chromium on the PATH")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "labelgate",
                "validate",
                "two_sources_one_based.parquet",
                "--classes",
                "4",
                "--class-names",
                "classes.txt",
                "--format",
                "html",
                "--output",
                str(page),
            ],
            cwd=SAMPLES,
            check=False,  # the sample fails validation (exit 1): that is what it shows
        )
        out = HERE / "img" / "report.png"
        out.parent.mkdir(exist_ok=True)
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={tmp}/profile",
                "--window-size=1000,2200",
                f"--screenshot={out}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
