"""The smoke step: batches replayed in fresh child processes; the raw file fails where predicted."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Batching, Contract
from labelgate.commands.smoke import nvidia_torch, run_smoke
from labelgate.inputs.dataset import open_dataset
from tests.conftest import ROOT, SAMPLES, cli_here, run_cli_without

pytestmark = pytest.mark.slow  # subprocesses, engines or clusters: the full tier only

pytest.importorskip("torch")

# Tests that read the runs below, each made once per module: on one xdist worker, made once
SHARED_RUNS = pytest.mark.xdist_group("smoke_shared_runs")
BENCHMARK = runpy.run_path(str(ROOT / "benchmarks" / "smoke_cpu.py"))


@pytest.fixture(scope="module")
def fixed_oob(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fixed") / "fixed.parquet"
    pq.write_table(pa.table({"id": [101, 102, 103], "label": [0, 2, 3]}), path)
    return path


# Imported by every Python process started with its folder on PYTHONPATH: when it exits, the
# process appends its script and the modules it imported to the file $RECORD_IMPORTS names
RECORDER = """
import atexit, json, os, sys

def _record():
    with open(os.environ["RECORD_IMPORTS"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"script": sys.argv[0], "modules": sorted(sys.modules)}) + "\\n")

atexit.register(_record)
"""


@pytest.fixture(scope="module")
def child_imports(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    """An environment whose Python processes record what they import, and the record."""
    folder = tmp_path_factory.mktemp("recorder")
    (folder / "sitecustomize.py").write_text(RECORDER, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    record = folder / "imports.jsonl"
    return {"PYTHONPATH": path, "RECORD_IMPORTS": str(record)}, record


@pytest.fixture(scope="module")
def benchmark_runs(
    child_imports: tuple[dict[str, str], Path],
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Each command of ``benchmarks/smoke_cpu.py`` (smoke on the CPU, JSON), run once in this
    process: what it prints and its exit status, by case; each smoke child records what it
    imported (``child_imports``)."""
    env = child_imports[0]
    return {
        case: cli_here(*BENCHMARK["argv"](case), cwd=SAMPLES, env=env)
        for case in BENCHMARK["CASES"]
    }


def benchmark_run(runs: dict[str, subprocess.CompletedProcess[str]], case: str) -> dict[str, Any]:
    """The JSON ``run`` of one benchmark case."""
    run: dict[str, Any] = json.loads(runs[case].stdout)["run"]
    return run


@pytest.fixture(scope="module")
def unfixed_alone() -> subprocess.CompletedProcess[str]:
    """``smoke oob_0_2_4.parquet`` as text, in a process of its own where pandas, pandera, GX,
    rich and yaml cannot be imported."""
    hidden = ("pandas", "pandera", "great_expectations", "rich", "yaml")
    return run_cli_without(
        hidden, "smoke", "oob_0_2_4.parquet", "-k", "4", "--device", "cpu", cwd=SAMPLES
    )


@pytest.fixture(scope="module")
def before_and_after(fixed_oob: Path) -> subprocess.CompletedProcess[str]:
    """``smoke FIXED --before oob_0_2_4.parquet`` as JSON: one parent replays the raw file (it
    fails in its child), then the fixed one."""
    raw = str(SAMPLES / "oob_0_2_4.parquet")
    return cli_here(
        "smoke", str(fixed_oob), "-k", "4", "--before", raw, "--device", "cpu", "--format", "json"
    )


class TestOnTheCpu:
    @SHARED_RUNS
    def test_clean_sample_passes(self, benchmark_runs: dict[str, Any]) -> None:
        run = benchmark_run(benchmark_runs, "clean.parquet -k 4")
        assert run["clean"] and run["batches_processed"] == run["batches_expected"] == 7
        env = run["environment"]
        assert env["backend"] == "cpu" and env["cuda_launch_blocking"] is False
        assert run["shapes"]["first"] == {"logits": [32, 4], "target": [32], "dtype": "torch.int64"}

    @SHARED_RUNS
    def test_raw_sample_fails_in_the_child_and_the_parent_goes_on(
        self, before_and_after: subprocess.CompletedProcess[str]
    ) -> None:
        doc = json.loads(before_and_after.stdout)
        (failure,) = doc["before"]["failures"]
        assert failure["batch"] == 0 and failure["kind"] == "index_out_of_range"
        assert failure["error"] == "IndexError: Target 4 is out of bounds."
        assert [(e["row"], e["id"], e["value"]) for e in failure["examples"]] == [(2, 103, 4)]
        # The parent is unharmed: it runs the fixed file next, in the same process.
        assert doc["after"]["clean"]

    @SHARED_RUNS
    def test_all_ignored_batch_is_nan_at_its_index(self, benchmark_runs: dict[str, Any]) -> None:
        run = benchmark_run(benchmark_runs, "all_ignored_batch.parquet -k 4")
        assert [(f["batch"], f["kind"]) for f in run["failures"]] == [(1, "nan_loss")]
        assert run["batches_processed"] == run["batches_expected"] == 3 and run["processes"] == 1
        assert run["failures"][0]["examples"][0]["row"] == 32

    @SHARED_RUNS
    def test_tokens_nan_batch(self, benchmark_runs: dict[str, Any]) -> None:
        run = benchmark_run(benchmark_runs, "tokens_all_ignored_batch.parquet --schema tokens.yaml")
        assert [f["batch"] for f in run["failures"]] == [1]

    @SHARED_RUNS
    def test_the_cpu_child_goes_on_after_an_error(self, benchmark_runs: dict[str, Any]) -> None:
        """neg1_sentinel.parquet fails in batches 0 and 2 of 4: one child runs all four."""
        run = benchmark_run(benchmark_runs, "neg1_sentinel.parquet -k 4")
        assert [f["batch"] for f in run["failures"]] == [0, 2] and run["processes"] == 1
        assert run["batches_processed"] == run["batches_expected"] == 4

    def test_a_fresh_process_after_each_failure(self, tmp_path: Path) -> None:
        # What a GPU run does (a device-side assert loses the context), exercised on the CPU.
        path = tmp_path / "two_bad.parquet"
        pq.write_table(pa.table({"label": [0, 1, 7, 2, 3, 0, -1, 1, 2, 2]}), path)
        data = open_dataset([str(path)], Contract(num_classes=4, batching=Batching(size=2)))
        run = run_smoke(data, device="cpu", stop_on_error=True)
        assert run.failed_batches == [1, 3] and run.processes == 3
        assert run.processed == run.expected == 5 and not run.incomplete
        capped = run_smoke(data, device="cpu", stop_on_error=True, max_failures=1)
        assert capped.failed_batches == [1] and capped.incomplete and not capped.clean

    def test_max_batches(self) -> None:
        data = open_dataset([str(SAMPLES / "clean.parquet")], Contract(num_classes=4))
        run = run_smoke(data, device="cpu", max_batches=2)
        assert run.expected == run.processed == 2 and run.clean

    def test_shuffled_batches_are_the_validated_ones(self, tmp_path: Path) -> None:
        path = tmp_path / "l.parquet"
        pq.write_table(pa.table({"label": [0, 1, 9, 2, 3, 1, 0, 2]}), path)
        contract = Contract(num_classes=4, batching=Batching(size=2, shuffle_seed=11))
        from labelgate.run.validation import report_of

        predicted = report_of([str(path)], contract).batches["failing"]
        run = run_smoke(open_dataset([str(path)], contract), device="cpu")
        assert run.failed_batches == predicted and len(predicted) == 1


class TestCommand:
    @SHARED_RUNS
    def test_before_and_after(self, before_and_after: subprocess.CompletedProcess[str]) -> None:
        result = before_and_after
        assert result.returncode == 0, result.stdout + result.stderr
        doc = json.loads(result.stdout)
        assert doc["status"] == "pass"
        before = doc["before"]
        assert before["predicted_failures"] == [0] and before["failed_as_predicted"]
        assert before["failures"][0]["examples"] == [
            {"row": 2, "id": 103, "batch": 0, "source": None, "value": 4}
        ]
        assert doc["after"]["clean"] and doc["after"]["batches_processed"] == 1

    def test_a_csv_is_replayed_as_a_loader_reads_it(self, tmp_path: Path) -> None:
        """A CSV holds its labels as text; a column of integers is read as integers (as
        pandas' read_csv gives it), so a clean CSV passes and its fault is the real one; the
        same file gzipped is replayed the same and named as given."""
        import gzip

        clean, bad = tmp_path / "clean.csv", tmp_path / "bad.csv"
        clean.write_text("id,label\n101, 0\n102,+2\n103,3\n")
        bad.write_text("id,label\n101,0\n102,2\n103,4\n")
        packed = tmp_path / "bad.csv.gz"
        packed.write_bytes(gzip.compress(bad.read_bytes()))
        ok = cli_here("smoke", str(clean), "-k", "4", "--device", "cpu")
        assert ok.returncode == 0, ok.stdout + ok.stderr
        for path in (bad, packed):
            failed = cli_here("smoke", str(path), "-k", "4", "--device", "cpu")
            assert failed.returncode == 1, failed.stdout + failed.stderr
            assert "IndexError: Target 4 is out of bounds." in failed.stdout
            assert f"smoke: {path}" in failed.stdout
        words = tmp_path / "words.csv"
        words.write_text("id,label\n1,0\n2,cat\n")
        text = cli_here("smoke", str(words), "-k", "4", "--device", "cpu")
        assert text.returncode == 1 and "is text, not a class index" in text.stdout

    @SHARED_RUNS
    def test_unfixed_file_fails(self, unfixed_alone: subprocess.CompletedProcess[str]) -> None:
        """In a process of its own (the other tests of the command run it in this one): the
        child's failure is the process's exit status 1, and the text says where and why."""
        result = unfixed_alone
        assert result.returncode == 1
        assert (
            "batch 0: index_out_of_range: IndexError: Target 4 is out of bounds." in result.stdout
        )
        assert "a CPU pass is a hint, not a CUDA validation" in result.stdout

    def test_text_names_device_versions_shapes_time(self) -> None:
        result = cli_here("smoke", "clean.parquet", "-k", "4", cwd=SAMPLES)
        assert result.returncode == 0
        out = result.stdout
        assert (
            "backend cpu, torch 2.13.0" in out and "logits (32, 4), target (32,) torch.int64" in out
        )
        assert "batches processed 7 of 7 expected" in out and " s\n" in out

    def test_bad_device_is_a_usage_error(self) -> None:
        result = cli_here("smoke", "clean.parquet", "-k", "4", "--device", "tpu", cwd=SAMPLES)
        assert (
            result.returncode == 2
            and "--device" in result.stderr
            and "Traceback" not in result.stderr
        )

    def test_cuda_without_a_gpu_is_reported(self) -> None:
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has a GPU")
        result = cli_here("smoke", "clean.parquet", "-k", "4", "--device", "cuda", cwd=SAMPLES)
        assert result.returncode == 2, result.stdout
        assert (
            "torch sees no CUDA or ROCm GPU" in result.stderr and "Traceback" not in result.stderr
        )

    @SHARED_RUNS
    def test_needs_only_torch_pyarrow_and_labelgate(
        self, unfixed_alone: subprocess.CompletedProcess[str]
    ) -> None:
        result = unfixed_alone
        assert result.returncode == 1, result.stderr
        assert "IndexError: Target 4 is out of bounds." in result.stdout

    @SHARED_RUNS
    def test_the_child_imports_neither_pandas_nor_labelgate(
        self, benchmark_runs: dict[str, Any], child_imports: tuple[dict[str, str], Path]
    ) -> None:
        """Its time is torch's import: pandas (pyarrow's read_table imports it) and labelgate's
        package (``-m`` imports it) are not imported beside it."""
        records = [json.loads(line) for line in child_imports[1].read_text().splitlines()]
        assert len(records) == sum(
            benchmark_run(benchmark_runs, c)["processes"] for c in benchmark_runs
        )
        for record in records:
            assert Path(record["script"]).name == "replay.py" and "torch" in record["modules"]
            tops = {m.split(".")[0] for m in record["modules"]}
            assert not tops & {"pandas", "labelgate"}, record["script"]

    def test_without_torch_exit_2(self) -> None:
        result = run_cli_without(("torch",), "smoke", "clean.parquet", "-k", "4", cwd=SAMPLES)
        assert result.returncode == 2 and "labelgate[torch]" in result.stderr


def test_nvidia_build_is_read_without_importing_torch() -> None:
    import torch

    assert nvidia_torch() is (torch.version.hip is None)


@pytest.mark.gpu
class TestOnTheGpu:
    def test_device_side_assert_in_the_child(self, fixed_oob: Path) -> None:
        raw = open_dataset([str(SAMPLES / "oob_0_2_4.parquet")], Contract(num_classes=4))
        run = run_smoke(raw, device="cuda")
        (failure,) = run.failures
        assert failure.batch == 0 and failure.kind == "index_out_of_range"
        if run.env["backend"] == "cuda":
            assert run.env["cuda_launch_blocking"] is True
            assert any("t >= 0 && t < n_classes" in m for m in failure.device_messages)
        after = run_smoke(open_dataset([str(fixed_oob)], Contract(num_classes=4)), device="cuda")
        assert after.clean and after.env["backend"] in ("cuda", "rocm")


@SHARED_RUNS
def test_the_cpu_table_of_docs_smoke_is_the_benchmark_s_but_for_its_times(
    benchmark_runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    """docs/smoke.md's wall-time table is ``benchmarks/smoke_cpu.py``'s output on one machine:
    its times are that machine's, every other column (batches, processes, failed batches, exit
    status) is what a fresh run of each of its commands prints, made into the benchmark's rows.
    The commands run in this process (``cli_here``): what a run decides is the same in a process
    of its own, whose start only the benchmark's times count."""

    def rows(table: str) -> dict[str, list[str]]:
        cells = [line.strip("|").split("|") for line in table.splitlines() if "`labelgate " in line]
        return {c[0].strip(): [x.strip() for x in c[2:]] for c in cells}

    page = (ROOT / "docs" / "smoke.md").read_text().split("## Wall time on the CPU", 1)[1]
    fresh = "\n".join(
        BENCHMARK["row"](case, 0.0, done.stdout, done.returncode)
        for case, done in benchmark_runs.items()
    )
    documented = rows(page.split("\n## ", 1)[0])
    assert len(documented) == 7
    assert rows(fresh) == documented
