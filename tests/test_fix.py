"""labelgate fix: only proven fixes, every row accounted for, the input never harmed."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES
from tests.support.inproc import run_here

pytestmark = pytest.mark.slow  # the full tier only: 3,000,000 rows, every sample fixed

ROW = "| `labelgate fix "


def fix_table() -> list[tuple[str, int, int]]:
    rows = []
    text = (SAMPLES / "README.md").read_text()
    for line in text.splitlines():
        if line.startswith(ROW):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((cells[0].strip("`"), int(cells[1]), int(cells[2])))
    return rows


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fix_table_is_there() -> None:
    assert len(fix_table()) >= 7


@pytest.mark.parametrize(
    ("command", "fixed", "quarantined"), fix_table(), ids=lambda v: str(v)[14:60]
)
def test_fixable_samples_validate_clean(
    command: str, fixed: int, quarantined: int, tmp_path: Path
) -> None:
    args = [a.replace("OUT/", f"{tmp_path}/") for a in shlex.split(command)[1:]]
    before = {p.name: digest(p) for p in SAMPLES.iterdir() if p.is_file()}
    result = run_here(*args, "--format", "json", cwd=SAMPLES)
    assert result.returncode == 0, result.stdout + result.stderr
    log = json.loads(result.stdout)
    assert log["rows"] == {"in": fixed + quarantined, "fixed": fixed, "quarantined": quarantined}
    assert log["after"]["status"] == "pass"
    out = tmp_path / "fixed.parquet"
    assert pq.read_metadata(out).num_rows == fixed
    rejected = tmp_path / "rejected.parquet"
    assert (pq.read_metadata(rejected).num_rows if rejected.exists() else 0) == quarantined
    again = run_here("validate", str(out), *_contract_args(args), "--format", "json", cwd=SAMPLES)
    assert again.returncode == 0, again.stdout
    assert {
        p.name: digest(p) for p in SAMPLES.iterdir() if p.is_file()
    } == before  # inputs untouched


def _contract_args(args: list[str]) -> list[str]:
    keep, out = {"--classes", "--class-names", "--schema"}, []
    for flag, value in zip(args, [*args[1:], ""], strict=True):
        if flag in keep:
            out += [flag, value]
    return out


@pytest.fixture
def sources_file(tmp_path: Path) -> Path:
    """Two sources; `b` is 1-based with names; one row of `a` has an unknown label 9."""
    names = ["cat", "dog", "bird", "fish"]
    labels = [0, 1, 2, 3, 9, 1, 2, 3, 4, 2]
    table = pa.table(
        {
            "id": [f"r{i}" for i in range(10)],
            "path": [f"img/{i}.jpg" for i in range(10)],
            "label": pa.array(labels, pa.int32()),
            "label_name": [
                "cat",
                "dog",
                "bird",
                "fish",
                "cat",
                "cat",
                "dog",
                "bird",
                "fish",
                "dog",
            ],
            "source": ["a"] * 5 + ["b"] * 5,
        }
    ).replace_schema_metadata({"dataset": "pets", "owner": "data-team"})
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    del names
    return path


class TestOutputs:
    def test_remap_quarantine_ids_schema_metadata(self, sources_file: Path, tmp_path: Path) -> None:
        out, q, log = tmp_path / "fixed.parquet", tmp_path / "q.parquet", tmp_path / "log.json"
        result = run_here(
            "fix",
            str(sources_file),
            "-k",
            "4",
            "--out",
            str(out),
            "--quarantine",
            str(q),
            "--log",
            str(log),
        )
        assert result.returncode == 0, result.stdout + result.stderr
        fixed, rejected, original = (
            pq.read_table(out),
            pq.read_table(q),
            pq.read_table(sources_file),
        )
        assert fixed.schema == original.schema  # names, types (int32 kept) and metadata
        assert fixed.schema.metadata == {b"dataset": b"pets", b"owner": b"data-team"}
        assert fixed.column("label").to_pylist() == [0, 1, 2, 3, 0, 1, 2, 3, 1]
        assert fixed.column("id").to_pylist() == [
            "r0",
            "r1",
            "r2",
            "r3",
            "r5",
            "r6",
            "r7",
            "r8",
            "r9",
        ]
        assert rejected.column("id").to_pylist() == ["r4"]
        assert rejected.column("label").to_pylist() == [9]  # unchanged
        assert rejected.column("labelgate_reason").to_pylist() == ["LG004"]
        assert rejected.column("labelgate_row").to_pylist() == [4]
        entry = json.loads(log.read_text())
        assert entry["rows"] == {"in": 10, "fixed": 9, "quarantined": 1}
        b = next(s for s in entry["sources"] if s["source"] == "b")
        assert b["action"].startswith("remap from names") and b["changed"] == 5
        assert (
            "source 'b' (5 rows): remap from names (proven shift +1); 5 labels changed"
            in result.stdout
        )

    def test_no_global_shift_by_default(self, tmp_path: Path) -> None:
        out, q = tmp_path / "f.parquet", tmp_path / "q.parquet"
        result = run_here(
            "fix",
            "one_based_no_header.csv",
            "-k",
            "4",
            "--out",
            str(out),
            "--quarantine",
            str(q),
            cwd=SAMPLES,
        )
        # Not settled while the 1-based pattern stands: exit 1, naming the flag that settles it.
        assert result.returncode == 1
        assert "1-based pattern, not proven: unchanged" in result.stdout
        assert "not settled" in result.stdout and "--shift -1" in result.stdout
        labels = pq.read_table(out).column("0").to_pylist()
        assert sorted(set(labels)) == [1, 2, 3]  # 1..3 left as they are; the 4s quarantined
        assert pq.read_table(q).column("labelgate_reason").to_pylist() == ["LG004"] * 15


class TestSafety:
    def test_refuses_to_overwrite_the_input(self, sources_file: Path) -> None:
        before = digest(sources_file)
        result = run_here("fix", str(sources_file), "-k", "4", "--out", str(sources_file))
        assert (
            result.returncode == 2
            and "--in-place" in result.stderr
            and "Traceback" not in result.stderr
        )
        assert digest(sources_file) == before

    def test_rows_without_a_place_are_not_dropped(self, sources_file: Path, tmp_path: Path) -> None:
        out = tmp_path / "fixed.parquet"
        result = run_here("fix", str(sources_file), "-k", "4", "--out", str(out))
        assert result.returncode == 2
        assert "1 rows cannot be fixed (LG004: 1): name a --quarantine file" in result.stderr
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir() if p.name != "in.parquet"] == []

    def test_in_place_keeps_the_file_mode(self, tmp_path: Path) -> None:
        path = tmp_path / "labels.parquet"
        pq.write_table(pa.table({"label": [0, -1, 2]}), path)
        path.chmod(0o640)
        result = run_here(
            "fix", str(path), "-k", "4", "--map-value=-1=ignore", "--out", str(path), "--in-place"
        )
        assert result.returncode == 0, result.stderr
        assert pq.read_table(path).column("label").to_pylist() == [0, -100, 2]
        assert path.stat().st_mode & 0o777 == 0o640

    @pytest.mark.parametrize(
        ("extra", "says"),
        [
            (["--shift", "zz=-1"], "unknown source(s) zz"),
            (["--shift=-1"], "needs an input with no source column"),
            (["--map-value", "x=2"], "--map-value"),
            (["--out", "f.csv"], "written as Parquet"),
        ],
    )
    def test_usage_errors(
        self, sources_file: Path, tmp_path: Path, extra: list[str], says: str
    ) -> None:
        args = [
            "fix",
            str(sources_file),
            "-k",
            "4",
            "--out",
            str(tmp_path / "o.parquet"),
            "--quarantine",
            str(tmp_path / "q.parquet"),
            *extra,
        ]
        result = run_here(*args)
        assert result.returncode == 2, result.stdout
        assert says in result.stderr and "Traceback" not in result.stderr

    @pytest.mark.parametrize("in_place", [False, True])
    def test_killed_mid_write_leaves_input_intact(self, tmp_path: Path, in_place: bool) -> None:
        path = tmp_path / "big.parquet"
        n = 3_000_000
        rng = np.random.default_rng(1)
        labels = rng.integers(0, 4, n)
        labels[::1000] = -1
        pq.write_table(
            pa.table({"id": np.arange(n), "label": labels, "note": rng.random(n)}),
            path,
            row_group_size=200_000,
        )
        before = digest(path)
        out = path if in_place else tmp_path / "fixed.parquet"
        argv = [
            sys.executable,
            "-m",
            "labelgate",
            "fix",
            str(path),
            "-k",
            "4",
            "--map-value=-1=ignore",
            "--out",
            str(out),
        ]
        proc = subprocess.Popen(
            [*argv, *(["--in-place"] if in_place else [])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not any(
            p.name.startswith(f".{out.name}.tmp-") and p.stat().st_size > 0
            for p in tmp_path.iterdir()
        ):
            assert proc.poll() is None, "the fix finished before it could be interrupted"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert digest(path) == before
        if not in_place:
            assert not out.exists()


class TestClassMapBeside:
    def test_a_map_the_input_held_is_written_beside_the_output(self, tmp_path: Path) -> None:
        """COCO's categories are no file ``--class-names`` reads: the fix writes them beside
        ``--out`` (index -> name) and its log's command names that file."""
        out, q = tmp_path / "fixed.parquet", tmp_path / "q.parquet"
        result = run_here(
            "fix", "formats/coco_bad.json", "--out", str(out), "--quarantine", str(q), cwd=SAMPLES
        )
        assert result.returncode == 0, result.stdout + result.stderr
        written = tmp_path / "fixed.classes.json"
        categories = json.loads((SAMPLES / "formats/coco_bad.json").read_text())["categories"]
        names = json.loads(written.read_text())
        assert set(names.values()) == {c["name"] for c in categories}
        assert f"--class-names {written}" in result.stdout

    def test_a_file_the_user_gave_is_named_again_and_nothing_written(
        self, sources_file: Path, tmp_path: Path
    ) -> None:
        names = tmp_path / "names.txt"
        names.write_text("cat\ndog\nbird\nfish\n")
        out, q = tmp_path / "fixed.parquet", tmp_path / "q.parquet"
        result = run_here(
            "fix", str(sources_file), "-k", "4", "--class-names", str(names),
            "--out", str(out), "--quarantine", str(q),
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        assert not (tmp_path / "fixed.classes.json").exists()
        assert f"--class-names {names}" in result.stdout
