"""The command line as a user meets it: bad input exits 2 with one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES, run_cli, run_cli_without
from tests.support.inproc import run_here

pytestmark = pytest.mark.slow  # the full tier only: fresh processes, with and without torch


def assert_usage_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.fixture
def clean() -> str:
    return str(SAMPLES / "clean.parquet")


class TestBadInput:
    def test_missing_file(self, tmp_path: Path) -> None:
        missing = str(tmp_path / "nope.parquet")
        assert_usage_error(run_here("validate", missing, "--classes", "4"), missing, "no such file")

    def test_empty_directory(self, tmp_path: Path) -> None:
        assert_usage_error(run_here("validate", str(tmp_path), "--classes", "4"), str(tmp_path))

    def test_glob_without_match(self, tmp_path: Path) -> None:
        pattern = str(tmp_path / "*.parquet")
        assert_usage_error(run_here("validate", pattern, "--classes", "4"), "no file matches")

    def test_corrupt_parquet(self, tmp_path: Path) -> None:
        bad = tmp_path / "corrupt.parquet"
        bad.write_bytes(b"this is not parquet at all" * 10)
        assert_usage_error(run_here("validate", str(bad), "--classes", "4"), str(bad))

    def test_truncated_parquet(self, tmp_path: Path, clean: str) -> None:
        data = Path(clean).read_bytes()
        cut = tmp_path / "truncated.parquet"
        cut.write_bytes(data[: len(data) // 2])
        assert_usage_error(run_here("validate", str(cut), "--classes", "4"), str(cut))

    def test_damaged_pages(self, tmp_path: Path) -> None:
        path = tmp_path / "damaged.parquet"
        import numpy as np

        labels = np.random.default_rng(0).integers(0, 4, 50_000)
        pq.write_table(pa.table({"label": labels}), path, compression="zstd", use_dictionary=False)
        data = bytearray(path.read_bytes())
        for i in range(8, len(data) // 2):  # scribble over the data pages, keep the footer
            data[i] = 0xFF
        path.write_bytes(bytes(data))
        assert_usage_error(run_cli("validate", str(path), "--classes", "4"), str(path))

    def test_zero_byte_file(self, tmp_path: Path) -> None:
        empty = tmp_path / "empty.parquet"
        empty.write_bytes(b"")
        assert_usage_error(run_here("validate", str(empty), "--classes", "4"), "empty")

    def test_unknown_extension(self, tmp_path: Path) -> None:
        other = tmp_path / "labels.xlsx"
        other.write_bytes(b"x")
        assert_usage_error(run_here("validate", str(other), "--classes", "4"), "unknown format")

    def test_label_column_missing(self, clean: str) -> None:
        result = run_here("validate", clean, "--classes", "4", "--label-column", "target_x")
        assert_usage_error(result, "LG001", "target_x", "columns:")

    def test_label_column_not_detected(self, tmp_path: Path) -> None:
        path = tmp_path / "x.parquet"
        pq.write_table(pa.table({"a": [1, 2], "b": [3, 4], "text": ["x", "y"]}), path)
        assert_usage_error(run_here("validate", str(path), "--classes", "4"), "LG001", "a, b")

    def test_several_integer_columns_point_to_the_multilabel_option(self, tmp_path: Path) -> None:
        """A Kaggle multi-label CSV (one 0/1 column per class): the hint names --label-columns
        with its columns, and that command reads it; one integer column gets no such hint."""
        path = tmp_path / "ann.csv"
        path.write_text("image_name,dog,cat,person\n1.jpg,1,0,0\n2.jpg,0,1,1\n")
        result = run_here("validate", str(path), "--classes", "3")
        assert_usage_error(result, "LG001", "--label-columns dog,cat,person")
        assert run_here("validate", str(path), "--label-columns", "dog,cat,person").returncode == 0
        single = tmp_path / "one.csv"
        single.write_text("image_name,text\n1.jpg,a\n")
        assert "--label-columns" not in run_here("validate", str(single), "--classes", "3").stderr

    @pytest.mark.parametrize("k", ["0", "-3", "four", "2.5"])
    def test_classes_not_positive(self, clean: str, k: str) -> None:
        assert_usage_error(run_here("validate", clean, "--classes", k), "--classes", k)

    def test_classes_missing(self, clean: str) -> None:
        assert_usage_error(run_here("validate", clean), "--classes")

    def test_class_map_missing(self, clean: str, tmp_path: Path) -> None:
        missing = str(tmp_path / "classes.txt")
        assert_usage_error(
            run_here("validate", clean, "--classes", "4", "--class-names", missing), missing
        )

    def test_class_map_unparseable(self, clean: str, tmp_path: Path) -> None:
        bad = tmp_path / "classes.json"
        bad.write_text("{not json")
        assert_usage_error(
            run_here("validate", clean, "--classes", "4", "--class-names", str(bad)),
            str(bad),
            "JSON",
        )

    def test_class_map_binary(self, clean: str, tmp_path: Path) -> None:
        bad = tmp_path / "classes.txt"
        bad.write_bytes(b"\xff\xfe\x00\x81")
        assert_usage_error(
            run_here("validate", clean, "--classes", "4", "--class-names", str(bad)), str(bad)
        )

    def test_contract_with_typo(self, clean: str, tmp_path: Path) -> None:
        schema = tmp_path / "c.yaml"
        schema.write_text("num_classes: 4\nbatching:\n  szie: 8\n")
        assert_usage_error(
            run_here("validate", clean, "--schema", str(schema)),
            "batching.szie",
            "did you mean 'size'",
        )

    def test_output_over_input_refused(self, tmp_path: Path, clean: str) -> None:
        copy = tmp_path / "labels.parquet"
        copy.write_bytes(Path(clean).read_bytes())
        before = copy.read_bytes()
        result = run_here("validate", str(copy), "--classes", "4", "--output", str(copy))
        assert_usage_error(result, "--output")
        assert copy.read_bytes() == before

    def test_shuffle_needs_known_task(self, clean: str, tmp_path: Path) -> None:
        schema = tmp_path / "c.yaml"
        schema.write_text("num_classes: 4\ntask: tokens\n")
        assert_usage_error(run_here("validate", clean, "--schema", str(schema)), "tokens")


class TestOutput:
    def test_output_file_written_whole(self, tmp_path: Path, clean: str) -> None:
        out = tmp_path / "report.json"
        result = run_here("validate", clean, "--classes", "4", "--format", "json", "-o", str(out))
        assert result.returncode == 0
        assert result.stdout == ""
        assert json.loads(out.read_text())["status"] == "pass"
        assert [p.name for p in tmp_path.iterdir()] == ["report.json"]

    def test_max_examples_zero_lists_all(self) -> None:
        args = ["validate", "two_sources_one_based.parquet", "--classes", "4", "--format", "json"]
        few = json.loads(run_here(*args, cwd=SAMPLES).stdout)
        every = json.loads(run_here(*args, "--max-examples", "0", cwd=SAMPLES).stdout)
        lg004 = next(f for f in few["findings"] if f["code"] == "LG004")
        lg004_all = next(f for f in every["findings"] if f["code"] == "LG004")
        assert len(lg004["examples"]) == 13 or len(lg004["examples"]) == 20
        assert len(lg004_all["examples"]) == lg004_all["count"] == 13
        three = json.loads(run_here(*args, "--max-examples", "3", cwd=SAMPLES).stdout)
        assert [len(f["examples"]) <= 3 for f in three["findings"]] == [True] * len(
            three["findings"]
        )

    def test_help_and_version(self) -> None:
        assert run_here("--help").returncode == 0
        result = run_here("--version")
        assert result.returncode == 0 and "labelgate" in result.stdout

    def test_python_m_and_console_script_agree(self, clean: str) -> None:
        script = Path(sys.executable).parent / "labelgate"
        assert script.exists(), "the console script is installed beside the interpreter"
        a = subprocess.run(
            [str(script), "validate", clean, "-k", "4", "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        b = run_cli("validate", clean, "-k", "4", "--format", "json")
        assert a.returncode == b.returncode == 0
        strip = lambda s: {k: v for k, v in json.loads(s).items() if k != "environment"}  # noqa: E731
        assert strip(a.stdout) == strip(b.stdout)


class TestWithoutTorch:
    def test_shuffle_seed_hints_at_the_extra(self, clean: str) -> None:
        result = run_cli_without(("torch",), "validate", clean, "-k", "4", "--shuffle-seed", "3")
        assert_usage_error(result, "needs torch", "labelgate[torch]")

    def test_file_order_needs_no_torch(self, clean: str) -> None:
        result = run_cli_without(("torch",), "validate", clean, "-k", "4", "--format", "json")
        assert result.returncode == 0, result.stderr


class TestProgressBar:
    def test_reading_the_input_then_scanning_its_rows(self) -> None:
        from labelgate.cli.progress import ProgressBar

        ticks = iter([0.0, 0.9, 1.0, 1.1])
        bar = ProgressBar(clock=lambda: next(ticks))
        bar.reading(50, 100)  # at 0.9 s: the bar appears, counting bytes
        from rich.progress import Progress

        assert isinstance(bar._bar, Progress)
        (task,) = bar._bar.tasks
        assert task.description == "reading the input (bytes)" and task.completed == 50
        bar(3, 10)  # then the rows: the same bar, its words and counts the scan's
        assert task.description == "scanning labels" and (task.completed, task.total) == (3, 10)
        bar.close()

    def test_shown_only_after_half_a_second(self) -> None:
        from labelgate.cli.progress import ProgressBar

        ticks = iter([0.0, 0.1, 0.9])
        bar = ProgressBar(clock=lambda: next(ticks))
        bar(10, 100)  # at 0.1 s: nothing drawn yet
        assert bar._bar is None
        bar(50, 100)  # at 0.9 s: the bar appears
        assert bar._bar is not None
        bar(100, 100)
        bar.close()


def test_a_class_map_given_for_a_table_gives_k(tmp_path: Path) -> None:
    """A table with --class-names and no --classes: K is the map's names, said in a note; the
    1-based labels are then judged against it (AG News' 1..4 with 4 names: LG004)."""
    path = tmp_path / "news.csv"
    path.write_text("label,text\n1,a\n2,b\n3,c\n4,d\n")
    names = tmp_path / "classes.txt"
    names.write_text("World\nSports\nBusiness\nSci/Tech\n")
    result = run_here("validate", str(path), "--class-names", str(names))
    assert result.returncode == 1, result.stderr
    assert "K = 4 from the class map given" in result.stdout
    assert "LG004" in result.stdout
