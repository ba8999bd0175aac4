"""labelgate triage: the first failure, its step and family, on real logs and on hostile input."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from labelgate.triage import MAX_LINE, triage_lines, triage_stream
from tests.conftest import ROOT, run_cli

FIXTURES = ROOT / "tests" / "fixtures" / "triage"
REFERENCE = ROOT.parent / "shared" / "reference" / "cuda-h200-torch2.11"

# What PyTorch printed on an H200, one case per file (see the reference's README).
REFERENCE_CASES = {
    "ce_oob_async.txt": ("index_out_of_range", 2),
    "ce_oob_async__blocking.txt": ("index_out_of_range", 1),
    "ce_oob_cpu.txt": ("index_out_of_range", 1),
    "ce_neg1.txt": ("index_out_of_range", 1),
    "ce_neg1__blocking.txt": ("index_out_of_range", 1),
    "ce_neg1_cpu.txt": ("index_out_of_range", 1),
    "seg_255.txt": ("index_out_of_range", 2),
    "embedding_oob.txt": ("index_out_of_range", 1),
    "embedding_oob__blocking.txt": ("index_out_of_range", 1),
    "train_loop.txt": ("index_out_of_range", 6),
    "train_loop__blocking.txt": ("index_out_of_range", 5),
    "oom.txt": ("out_of_memory", 1),
    "op_int_matmul.txt": ("op_unavailable", 1),
    "op_half_cholesky.txt": ("op_unavailable", 1),
    "op_bool_cumsum_half.txt": ("op_unavailable", 3),
    "ce_float_target.txt": ("op_unavailable", 1),
    "ce_int32_target.txt": ("op_unavailable", 1),
    "device_mismatch.txt": ("device_mismatch", 1),
    "device_mismatch_loss.txt": ("device_mismatch", 1),
    "ce_weight_mismatch.txt": ("other", 1),
    "ce_all_ignored.txt": (None, None),
    "ce_5class_head_on_4.txt": (None, None),
}


def triage_file(path: Path) -> dict[str, object]:
    with path.open("rb") as f:
        return triage_stream(f).to_dict()


@pytest.fixture
def reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip("../shared/reference is not present in this checkout")
    return REFERENCE


class TestReferenceLogs:
    @pytest.mark.parametrize(("name", "expected"), REFERENCE_CASES.items())
    def test_family_and_first_line(
        self, reference: Path, name: str, expected: tuple[str | None, int | None]
    ) -> None:
        doc = triage_file(reference / name)
        family, line = expected
        assert doc["family"] == family
        first = doc["first_error"]
        assert (first["line"] if isinstance(first, dict) else None) == line

    def test_train_loop_steps(self, reference: Path) -> None:
        asynchronous = triage_file(reference / "train_loop.txt")
        blocking = triage_file(reference / "train_loop__blocking.txt")
        assert asynchronous["step"] == {
            "completed": "iter 3",
            "in_progress": "iter 4",
            "asynchronous": True,
        }
        assert blocking["step"] == {
            "completed": "iter 2",
            "in_progress": "iter 3",
            "asynchronous": False,
        }
        assert any("CUDA_LAUNCH_BLOCKING=1" in c for c in asynchronous["checks"])  # type: ignore[union-attr]
        assert not any("CUDA_LAUNCH_BLOCKING=1" in c for c in blocking["checks"])  # type: ignore[union-attr]

    def test_hints(self, reference: Path) -> None:
        loss = triage_file(reference / "ce_neg1.txt")["checks"]
        assert any("labelgate validate" in c for c in loss)  # type: ignore[union-attr]
        assert any("restart it" in c for c in loss)  # type: ignore[union-attr]
        embedding = triage_file(reference / "embedding_oob.txt")["checks"]
        assert any("embedding or vocabulary index" in c for c in embedding)  # type: ignore[union-attr]
        int32 = triage_file(reference / "ce_int32_target.txt")["checks"]
        assert "cast them to int64" in int32[0]  # type: ignore[index]
        assert "GPU is faulty" in str(triage_file(reference / "ce_oob_async.txt")["avoid"])
        assert "every CUDA error" in str(triage_file(reference / "oom.txt")["avoid"])


def fixture_rows() -> list[dict[str, str]]:
    with (FIXTURES / "SOURCES.tsv").open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


class TestPublicLogs:
    def test_every_fixture_is_listed_with_a_source(self) -> None:
        rows = fixture_rows()
        assert {r["file"] for r in rows} == {p.name for p in FIXTURES.glob("*.log")}
        assert all(r["source"] for r in rows)
        assert {r["family"] for r in rows} == {
            "index_out_of_range",
            "out_of_memory",
            "op_unavailable",
            "device_mismatch",
        }

    @pytest.mark.parametrize("row", fixture_rows(), ids=lambda r: r["file"])
    def test_fixture(self, row: dict[str, str]) -> None:
        doc = triage_file(FIXTURES / row["file"])
        assert doc["family"] == row["family"]
        assert doc["first_error"]["line"] == int(row["first_line"])  # type: ignore[index]
        assert doc["rank"] == (int(row["rank"]) if row["rank"] else None)
        step = doc["step"]
        assert step["completed"] == (row["completed"] or None)  # type: ignore[index]
        assert step["in_progress"] == (row["in_progress"] or None)  # type: ignore[index]

    def test_consequences_are_listed_not_blamed(self) -> None:
        doc = triage_file(FIXTURES / "rank_prefixed_train_loop.log")
        assert doc["first_error"]["text"].startswith("[rank1]:")  # type: ignore[index]
        assert [c["line"] for c in doc["consequences"]] == [12, 15]  # type: ignore[union-attr]

    def test_rocm_gets_no_nvidia_advice(self) -> None:
        log = [
            "iter 7 loss 0.31",
            "RuntimeError: HIP error: device-side assert triggered",
            "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
            "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
        ]
        t = triage_lines(log)
        assert t.family == "index_out_of_range"
        assert not any("CUDA_LAUNCH_BLOCKING" in c and "rerun" in c for c in t.checks)
        assert any("ROCm" in c for c in t.checks)


class TestConstructedForms:
    """Forms no fixture above shows whole; the lines follow what PyTorch and Triton print."""

    def test_torch_compile_triton_index_assert(self) -> None:
        log = [
            "step 40 loss 2.31",
            "/tmp/torchinductor_user/ab/cabcd.py:22: unknown: block: [0,0,0], thread: [0,0,0] "
            "Assertion `index out of bounds: 0 <= tmp4 < 50257` failed.",
            "Traceback (most recent call last):",
            '  File "train.py", line 88, in <module>',
            "    loss.backward()",
            "RuntimeError: CUDA error: device-side assert triggered",
        ]
        t = triage_lines(log)
        assert t.family == "index_out_of_range"
        assert t.first_error == {"line": 2, "text": log[1]}
        assert t.step["completed"] == "step 40"

    def test_glog_prefixed_lines(self) -> None:
        log = [
            "E0305 20:23:38.866000 747 torch/_inductor/compile_fx.py:533] RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
        ]
        assert triage_lines(log).family == "out_of_memory"


class TestHostileInput:
    def test_empty(self) -> None:
        t = triage_stream(io.BytesIO(b""))
        assert t.family is None and t.first_error is None and t.lines == 0

    def test_binary_garbage_and_invalid_utf8(self) -> None:
        data = (
            bytes(range(256)) * 4000
            + b"\n\xff\xfe\x00\nRuntimeError: CUDA out of memory.\xff Tried to allocate 2 GiB\n"
        )
        t = triage_stream(io.BytesIO(data))
        assert t.family == "out_of_memory"
        assert t.first_error is not None and "\ufffd" in t.first_error["text"]

    def test_megabyte_lines(self) -> None:
        line = b"x" * (3 * MAX_LINE) + b"\n"
        data = line * 3 + b"IndexError: Target 4 is out of bounds.\n"
        t = triage_stream(io.BytesIO(data))
        assert t.family == "index_out_of_range" and t.first_error == {
            "line": 4,
            "text": "IndexError: Target 4 is out of bounds.",
        }

    def test_a_gigabyte_streamed_in_flat_memory(self) -> None:
        class Log(io.RawIOBase):
            """1 GiB of progress lines, generated as read; one failure near the end."""

            line = b"step 1 loss 0.5 " + b"." * 16_000 + b"\n"
            total = 1 << 30

            def __init__(self) -> None:
                self.sent = 0
                self.tail = b"RuntimeError: Expected all tensors to be on the same device\n"

            def readable(self) -> bool:
                return True

            def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
                if self.sent >= self.total:
                    chunk, self.tail = self.tail, b""
                else:
                    repeat = max(1, len(buffer) // len(self.line))
                    chunk = self.line * repeat
                    self.sent += len(chunk)
                n = min(len(buffer), len(chunk))
                buffer[:n] = chunk[:n]
                if n < len(chunk) and self.sent < self.total:
                    self.sent -= len(chunk) - n  # keep whole lines: resend the rest later
                return n

        tracemalloc.start()
        t = triage_stream(io.BufferedReader(Log(), buffer_size=1 << 20))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert t.family == "device_mismatch" and t.lines > 60_000
        assert peak < 16 * 2**20, peak


class TestCommand:
    def test_stdin_and_json(self) -> None:
        log = b"Epoch 2 [300/500] loss 0.3\nRuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB\n"
        result = subprocess.run(
            [sys.executable, "-m", "labelgate", "triage", "-", "--format", "json"],
            input=log,
            capture_output=True,
            check=False,
        )
        assert result.returncode == 1
        doc = json.loads(result.stdout)
        assert set(doc) == {
            "schema_version",
            "family",
            "first_error",
            "exception",
            "step",
            "rank",
            "consequences",
            "checks",
            "avoid",
            "lines",
        }
        assert doc["step"]["completed"] == "epoch 2 [300/500]" and doc["family"] == "out_of_memory"

    def test_clean_log_exits_0(self, tmp_path: Path) -> None:
        log = tmp_path / "ok.log"
        log.write_text("step 1 loss 0.5\nstep 2 loss 0.4\n")
        result = run_cli("triage", str(log))
        assert result.returncode == 0 and "no error found in 2 lines" in result.stdout

    def test_text(self) -> None:
        result = run_cli("triage", str(FIXTURES / "rank_prefixed_train_loop.log"))
        assert result.returncode == 1
        assert "first error, line 5 (rank 1)" in result.stdout
        assert "later errors (2), probably consequences of the first" in result.stdout

    def test_missing_log(self, tmp_path: Path) -> None:
        result = run_cli("triage", str(tmp_path / "none.log"))
        assert (
            result.returncode == 2
            and "no such file" in result.stderr
            and "Traceback" not in result.stderr
        )
