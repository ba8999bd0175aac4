"""Hostile outputs: every writer goes through one guard, so nothing a user gave is replaced or lost."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from labelgate import UsageError
from labelgate.io.atomic import atomic_path, folder_lock, scratch_path
from labelgate.io.files import check_inside
from tests.conftest import digest, run_cli
from tests.limits import assert_clean_exit, finish_bounded, start_bounded


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4], "label": [0, 1, 7, 2]}), path)
    return path


class _Drain(threading.Thread):
    """Reads a FIFO to its end, as a consumer of a named pipe would."""

    def __init__(self, fifo: Path) -> None:
        super().__init__(daemon=True)
        self.fifo, self.data = fifo, b""

    def run(self) -> None:
        with self.fifo.open("rb") as f:
            self.data = f.read()


class TestSpecialFilesAreWrittenInPlace:
    def test_atomic_path_writes_into_a_fifo_and_keeps_it(self, tmp_path: Path) -> None:
        fifo = tmp_path / "pipe.parquet"
        os.mkfifo(fifo)
        drain = _Drain(fifo)
        drain.start()
        with atomic_path(fifo) as tmp:
            assert tmp.parent != tmp_path  # staged elsewhere, not renamed over the FIFO
            tmp.write_bytes(b"PAR1 staged bytes")
        drain.join(10)
        assert stat.S_ISFIFO(fifo.stat().st_mode)
        assert drain.data == b"PAR1 staged bytes"
        assert [p.name for p in tmp_path.iterdir()] == ["pipe.parquet"]

    def test_fix_quarantine_into_a_fifo(self, labels: Path, tmp_path: Path) -> None:
        fifo = tmp_path / "rejected.parquet"
        os.mkfifo(fifo)
        drain = _Drain(fifo)
        drain.start()
        out = tmp_path / "fixed.parquet"
        r = run_cli("fix", str(labels), "-k", "4", "--out", str(out), "--quarantine", str(fifo))
        drain.join(30)
        assert r.returncode in (0, 1), r.stderr
        assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not a regular Parquet file
        assert drain.data[:4] == b"PAR1" and drain.data[-4:] == b"PAR1"

    def test_fix_quarantine_onto_dev_null_keeps_the_device(
        self, labels: Path, tmp_path: Path
    ) -> None:
        out = tmp_path / "fixed.parquet"
        r = run_cli("fix", str(labels), "-k", "4", "--out", str(out), "--quarantine", "/dev/null")
        assert r.returncode in (0, 1), r.stderr
        assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
        assert pq.read_metadata(out).num_rows == 3


class TestScratchNames:
    def test_an_input_named_like_the_old_scratch_file_survives(self, tmp_path: Path) -> None:
        given = tmp_path / ".fixed.quarantine-unused.parquet"
        pq.write_table(pa.table({"id": [1, 2], "label": [0, 1]}), given)
        before = digest(given)
        r = run_cli("fix", str(given), "-k", "2", "--out", str(tmp_path / "fixed.parquet"))
        assert r.returncode == 0, r.stderr
        assert digest(given) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            ".fixed.quarantine-unused.parquet",
            "fixed.parquet",
        ]

    def test_scratch_path_is_new_and_removed(self, tmp_path: Path) -> None:
        with scratch_path(tmp_path, ".parquet") as scratch:
            assert scratch.exists() and scratch.parent == tmp_path
        assert not scratch.exists()


class TestLinksInsideAnOutputFolder:
    def test_check_inside_refuses_a_linked_subfolder(self, tmp_path: Path) -> None:
        (tmp_path / "in" / "sub").mkdir(parents=True)
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "sub").symlink_to(tmp_path / "in" / "sub")
        with pytest.raises(UsageError, match="outside the output folder"):
            check_inside(tmp_path / "out", tmp_path / "out" / "sub" / "a.png", [])
        check_inside(tmp_path / "out", tmp_path / "out" / "new" / "a.png", [])

    def test_fix_masks_never_writes_through_a_link_into_the_input(self, tmp_path: Path) -> None:
        masks = tmp_path / "masks"
        (masks / "sub").mkdir(parents=True)
        mask = masks / "sub" / "a.png"
        Image.fromarray(np.array([[0, 255], [1, 255]], np.uint8)).save(mask)
        before = digest(mask)
        out = tmp_path / "fixed"
        out.mkdir()
        (out / "sub").symlink_to(masks / "sub")
        r = run_cli(
            "fix", str(masks), "--classes", "2", "--input-format", "masks",
            "--map-value", "255=1", "--out", str(out),
        )  # fmt: skip
        assert r.returncode == 2, r.stderr
        assert "outside the output folder" in r.stderr and "Traceback" not in r.stderr
        assert digest(mask) == before


class TestConcurrentWritersOfOneFolder:
    def test_a_held_folder_refuses_a_second_writer(self, tmp_path: Path) -> None:
        out = tmp_path / "new" / "out"
        with folder_lock(out, "--out"):
            assert out.is_dir()
            with (
                pytest.raises(UsageError, match="being written by another"),
                folder_lock(out, "--out"),
            ):
                pass
        with folder_lock(out, "--out"):  # released: the next run writes
            pass

    def test_five_fix_runs_into_one_out_folder(self, tmp_path: Path) -> None:
        masks = tmp_path / "masks"
        masks.mkdir()
        mask = (np.arange(32 * 32).reshape(32, 32) % 3).astype(np.uint8)
        for i in range(40):
            np.save(masks / f"m{i:02}.npy", mask)
        out = tmp_path / "fixed"
        args = ("fix", str(masks), "-k", "2", "--input-format", "masks", "--map-value", "2=1")
        runs = [start_bounded(*args, "--out", str(out), memory_mb=1536) for _ in range(5)]
        results = [finish_bounded(r, timeout=120) for r in runs]
        for r in results:  # before: a run validated the others' temporary files (LG031, exit 1)
            assert_clean_exit(r, 0, 2)
            assert r.returncode == 0 or "being written by another labelgate run" in r.stderr
        assert any(r.returncode == 0 for r in results)
        assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in masks.iterdir())
        for written in out.iterdir():  # every file whole and remapped
            assert np.array_equal(np.load(written), np.minimum(mask, 1))


class TestEnvironmentAndApiOutputs:
    def test_step_summary_on_an_input_is_refused(self, labels: Path) -> None:
        before = digest(labels)
        env = {**os.environ, "GITHUB_STEP_SUMMARY": str(labels)}
        import subprocess
        import sys

        r = subprocess.run(
            [sys.executable, "-m", "labelgate", "validate", str(labels), "-k", "4", "--format",
             "github"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert r.returncode == 2 and "GITHUB_STEP_SUMMARY" in r.stderr
        assert digest(labels) == before

    def test_step_summary_elsewhere_is_appended(self, labels: Path, tmp_path: Path) -> None:
        summary = tmp_path / "summary.md"
        summary.write_text("earlier step\n")
        env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
        import subprocess
        import sys

        r = subprocess.run(
            [sys.executable, "-m", "labelgate", "validate", str(labels), "-k", "4", "--format",
             "github"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert r.returncode == 1, r.stderr
        text = summary.read_text()
        assert text.startswith("earlier step\n") and "LG004" in text

    def test_report_save_over_its_input_is_refused(self, labels: Path) -> None:
        import labelgate

        before = digest(labels)
        report = labelgate.validate(str(labels), classes=4)
        with pytest.raises(UsageError, match="would overwrite"):
            report.save(str(labels))
        assert digest(labels) == before

    def test_report_save_over_its_class_map_is_refused(self, labels: Path, tmp_path: Path) -> None:
        import labelgate

        names = tmp_path / "classes.txt"
        names.write_text("a\nb\nc\nd\n")
        report = labelgate.validate(str(labels), classes=4, class_names=str(names))
        with pytest.raises(UsageError, match="would overwrite"):
            report.save(str(names))
        assert names.read_text() == "a\nb\nc\nd\n"
        report.save(str(tmp_path / "report.json"))
        assert (tmp_path / "report.json").read_text().startswith("{")
