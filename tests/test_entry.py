"""The process's entry (``labelgate.cli.entry``) ends a run as the interpreter would, less its
teardown: threads joined, exit handlers run, output flushed, the command's status kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, run_cli


def _python(code: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", code], env=env, text=True, timeout=60, check=False, **kwargs
    )


def test_buffered_output_and_exit_handlers_are_not_lost() -> None:
    done = _python(
        "import atexit\n"
        "from labelgate.cli.entry import leave\n"
        "atexit.register(print, 'handler ran')\n"
        "print('buffered', end=' ')\n"
        "leave(3)\n",
        capture_output=True,
    )
    assert done.returncode == 3
    assert done.stdout == "buffered handler ran\n"


def test_a_thread_still_working_is_joined_before_the_exit(tmp_path: Path) -> None:
    out = tmp_path / "written-by-thread"
    done = _python(
        "import threading, time\n"
        "from labelgate.cli.entry import leave\n"
        "def work():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(out)!r}, 'w').write('done')\n"
        "threading.Thread(target=work).start()\n"
        "leave(0)\n",
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "done"


def test_a_temporary_folder_left_to_its_finalizer_is_removed(tmp_path: Path) -> None:
    done = _python(
        "import tempfile\n"
        "from labelgate.cli.entry import leave\n"
        f"kept = tempfile.TemporaryDirectory(dir={str(tmp_path)!r})\n"
        "print(kept.name)\n"
        "leave(0)\n",
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert not Path(done.stdout.strip()).exists()
    assert list(tmp_path.iterdir()) == []


def test_a_reader_gone_is_python_s_status_120_without_a_traceback() -> None:
    """Output still buffered when the reader has gone: the status Python itself gives then."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _python(
            "from labelgate.cli.entry import leave\nprint('x' * 1000)\nleave(0)\n",
            stdout=write,
            stderr=subprocess.PIPE,
        )
    finally:
        os.close(write)
    assert done.returncode == 120
    assert "Traceback" not in done.stderr


def test_the_command_s_status_and_report_come_through_python_m(samples: Path) -> None:
    failed = run_cli("validate", str(samples / "oob_0_2_4.parquet"), "--classes", "4")
    assert failed.returncode == 1
    assert "row 2, id 103, batch 0, value 4" in failed.stdout
    assert run_cli("validate", str(samples / "clean.parquet"), "--classes", "4").returncode == 0
    missing = run_cli("validate", str(samples / "no-such-file.parquet"), "--classes", "4")
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1
