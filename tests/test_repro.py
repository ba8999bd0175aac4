"""labelgate repro: a bundle that replays the failing batches anywhere, and names nobody."""

from __future__ import annotations

import getpass
import json
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES, cli_here

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

pytest.importorskip("torch")

# Tests that read the bundle below, made once per module: on one xdist worker, made once
SHARED_BUNDLE = pytest.mark.xdist_group("repro_shared_bundle")


def make(tmp_path: Path, sample: str, *flags: str) -> Path:
    out = tmp_path / "bundle"
    result = cli_here("repro", str(SAMPLES / sample), *flags, "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def oob_bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """oob_0_2_4.parquet's bundle, made in one folder, then moved to another under a name of
    its own: where it was made (nothing is left there) and where it is."""
    made = make(tmp_path_factory.mktemp("made"), "oob_0_2_4.parquet", "-k", "4")
    moved = made.rename(tmp_path_factory.mktemp("elsewhere") / "regression-case-7")
    return made, moved


@pytest.fixture(scope="module")
def oob_replayed(oob_bundle: tuple[Path, Path]) -> subprocess.CompletedProcess[str]:
    """``python repro.py --device cpu`` run in the moved bundle."""
    return subprocess.run(
        [sys.executable, "repro.py", "--device", "cpu"],
        cwd=oob_bundle[1],
        capture_output=True,
        text=True,
        check=False,
    )


class TestBundle:
    def test_contents(self, tmp_path: Path) -> None:
        out = make(tmp_path, "two_sources_one_based.parquet", "-k", "4")
        assert sorted(p.name for p in out.iterdir()) == [
            "README.md",
            "batches.parquet",
            "case.json",
            "environment.json",
            "replay.py",
            "repro.py",
        ]
        table = pq.read_table(out / "batches.parquet")
        assert table.column_names == ["batch", "row", "id", "label"]  # no path, no name, no source
        assert sorted(set(table.column("batch").to_pylist())) == [2, 3, 4]
        case = json.loads((out / "case.json").read_text())
        assert case["input"] == ["two_sources_one_based.parquet"]
        assert [b["recorded"] for b in case["failing_batches"]] == ["raises"] * 3
        env = json.loads((out / "environment.json").read_text())
        assert env["torch"].startswith("2.") and env["dtype"] == "int64"
        assert env["shapes"]["2"] == {"target": [32], "logits": [32, 4]}
        assert {"labelgate", "python", "pyarrow", "cuda", "hip", "device", "code_revision"} <= set(
            env
        )

    def test_many_failing_batches(self, tmp_path: Path) -> None:
        """The first 1000 failing batches are bundled; the README counts the ones left out."""
        import numpy as np
        import pyarrow as pa

        from labelgate import Contract
        from labelgate.commands.bundle import make_bundle

        labels = np.zeros(32 * 1_200, dtype=np.int64)
        labels[::32] = 9  # every batch holds a label past K
        pq.write_table(pa.table({"label": labels}), tmp_path / "l.parquet")
        bundle = make_bundle(
            [str(tmp_path / "l.parquet")], Contract(num_classes=4), str(tmp_path / "b")
        )
        assert bundle is not None and bundle.batches == list(range(1000))
        case = json.loads((tmp_path / "b" / "case.json").read_text())
        assert len(case["failing_batches"]) == 1000
        readme = (tmp_path / "b" / "README.md").read_text()
        assert "998, 999; 200 more batches fail in the input, left out of this bundle" in readme

    @SHARED_BUNDLE
    def test_names_nobody_and_no_absolute_path(self, oob_bundle: tuple[Path, Path]) -> None:
        made, out = oob_bundle
        forbidden = {
            str(Path.home()),
            str(made.parent),
            str(SAMPLES),
            socket.gethostname(),
            getpass.getuser(),
        }
        forbidden.discard("root")  # a word too common to search for; the home path covers it
        for path in out.iterdir():
            text = path.read_bytes().decode("utf-8", errors="replace")
            for word in forbidden:
                assert word not in text, (path.name, word)

    @SHARED_BUNDLE
    def test_replays_and_reproduces(self, oob_replayed: subprocess.CompletedProcess[str]) -> None:
        """The bundle as its user has it: moved from where it was made."""
        result = oob_replayed
        assert result.returncode == 1, result.stdout + result.stderr
        assert (
            "batch 0 on cpu (cpu): raised: IndexError: Target 4 is out of bounds. -> reproduced"
            in result.stdout
        )
        assert "1 of 1 failing batches reproduced" in result.stdout

    def test_nan_batch(self, tmp_path: Path) -> None:
        out = make(tmp_path, "all_ignored_batch.parquet", "-k", "4")
        case = json.loads((out / "case.json").read_text())
        assert case["failing_batches"] == [{"batch": 1, "recorded": "nan", "rows": 32}]
        result = subprocess.run(
            [sys.executable, str(out / "repro.py"), "--device", "cpu"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1 and "nan: loss nan -> reproduced" in result.stdout

    @SHARED_BUNDLE
    def test_moved_bundle_still_runs(
        self, oob_bundle: tuple[Path, Path], oob_replayed: subprocess.CompletedProcess[str]
    ) -> None:
        made, moved = oob_bundle
        assert not made.exists() and moved.name == "regression-case-7"
        result = oob_replayed
        assert result.returncode == 1 and "reproduced" in result.stdout


class TestCommand:
    def test_nothing_to_reproduce(self, tmp_path: Path) -> None:
        out = tmp_path / "b"
        result = cli_here("repro", str(SAMPLES / "clean.parquet"), "-k", "4", "--out", str(out))
        assert result.returncode == 0 and "nothing to reproduce" in result.stdout
        assert not out.exists()

    def test_refuses_a_folder_with_files(self, tmp_path: Path) -> None:
        (tmp_path / "keep.txt").write_text("mine")
        result = cli_here(
            "repro", str(SAMPLES / "oob_0_2_4.parquet"), "-k", "4", "--out", str(tmp_path)
        )
        assert result.returncode == 2 and "not an empty folder" in result.stderr
        assert (tmp_path / "keep.txt").read_text() == "mine"
