"""Hostile checkpoints, model configs, tokenizers and logs (round four): each case an input made
here, each refused in one ``labelgate: error:`` line (exit 2) or judged unsound, never a
traceback, a hang, gigabytes of memory, an overwritten input or a byte of a secret shown."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate.errors import InputError, UsageError
from labelgate.training.checkpoints import Checkpoint, find_checkpoints, read_checkpoint
from tests.limits import assert_clean_exit, run_bounded

torch = pytest.importorskip("torch")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error(result: Any) -> str:
    """The run refused its input in exactly one ``labelgate: error:`` line, exit 2."""
    assert_clean_exit(result, 2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("labelgate: error: "), result.stderr
    return str(lines[0])


def safetensors_file(path: Path, header: Any, data: bytes = b"") -> Path:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def judged(path: Path) -> list[str]:
    kind = "safetensors" if path.suffix == ".safetensors" else "torch"
    contents = read_checkpoint(Checkpoint(str(path), kind, None, None, (str(path),)))
    assert all("\n" not in p for p in contents.problems)
    return contents.problems


def state() -> dict[str, Any]:
    return {"fc.weight": torch.zeros(4, 3), "fc.bias": torch.zeros(4)}


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"label": [0, 1, 2, 1]}), path)
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"id2label": {"0": "a", "1": "b", "2": "c"}}))
    torch.save({"fc.weight": torch.zeros(3, 2), "fc.bias": torch.zeros(3)}, folder / "m.pt")
    return folder


class TestOutputsNeverReplaceAnInput:
    @pytest.mark.parametrize("target", ["config.json", "m.pt"])
    def test_onto_the_model_folders_files(self, labels: Path, model: Path, target: str) -> None:
        before = digest(model / target)
        out = model / target
        line = one_error(
            run_bounded("validate", str(labels), "-k", "3", "--model", str(model), "-o", str(out))
        )
        assert "would overwrite or sit inside the input" in line
        assert digest(model / target) == before

    def test_onto_the_model_checkpoint_given_itself(self, labels: Path, model: Path) -> None:
        ckpt = model / "m.pt"
        before = digest(ckpt)
        one_error(
            run_bounded("validate", str(labels), "-k", "3", "--model", str(ckpt), "-o", str(ckpt))
        )
        assert digest(ckpt) == before

    def test_onto_the_tokenizer(self, tmp_path: Path, labels: Path) -> None:
        tok = tmp_path / "tok"
        tok.mkdir()
        (tok / "tokenizer.json").write_text("{}")
        args = ("--tokenizer", str(tok), "--max-length", "8", "-o", str(tok / "tokenizer.json"))
        one_error(run_bounded("validate", str(labels), *args))
        assert (tok / "tokenizer.json").read_text() == "{}"

    def test_onto_an_image(self, tmp_path: Path, labels: Path) -> None:
        images = tmp_path / "images"
        images.mkdir()
        (images / "a.jpg").write_bytes(b"\xff\xd8 image")
        args = ("-k", "3", "--images", str(images), "-o", str(images / "a.jpg"))
        one_error(run_bounded("validate", str(labels), *args))
        assert (images / "a.jpg").read_bytes() == b"\xff\xd8 image"

    def test_an_output_that_links_to_the_config(
        self, tmp_path: Path, labels: Path, model: Path
    ) -> None:
        link = tmp_path / "report.txt"
        link.symlink_to(model / "config.json")
        before = digest(model / "config.json")
        one_error(
            run_bounded("validate", str(labels), "-k", "3", "--model", str(model), "-o", str(link))
        )
        assert link.is_symlink() and digest(model / "config.json") == before


class TestNoSecretShown:
    SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"

    def test_triage_data_linked_to_credentials(self, tmp_path: Path) -> None:
        secret = tmp_path / "credentials"
        secret.write_text(
            f"aws_access_key_id,aws_secret_access_key\nAKIAIOSFODNN7EXAMPLE,{self.SECRET}\n"
        )
        data = tmp_path / "d.csv"
        data.symlink_to(secret)
        log = tmp_path / "t.log"
        log.write_text("step 5\nRuntimeError: CUDA error: device-side assert triggered\n")
        result = run_bounded("triage", str(log), "--data", str(data), "-k", "3")
        one_error(result)
        assert "aws_secret" not in result.stderr and self.SECRET not in result.stderr

    def test_a_token_file_as_data(self, tmp_path: Path) -> None:
        token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
        data = tmp_path / "d.csv"
        data.write_text(token + "\n")
        result = run_bounded("validate", str(data), "-k", "3")
        assert token not in one_error(result)

    def test_a_csv_row_in_a_parse_error(self, tmp_path: Path) -> None:
        data = tmp_path / "d.csv"
        data.write_text(f"user,label\n{self.SECRET}\n")
        line = one_error(run_bounded("validate", str(data), "-k", "3"))
        assert self.SECRET not in line and "Expected 2 columns, got 1" in line


class TestTokenizer:
    def test_a_split_regex_that_panics_is_one_line(self, tmp_path: Path) -> None:
        tokenizers = pytest.importorskip("tokenizers")
        tok = tokenizers.Tokenizer(
            tokenizers.models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]")
        )
        tok.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex("(a+)+b"), "isolated")
        tok.save(str(tmp_path / "tokenizer.json"))
        data = tmp_path / "sft.parquet"
        pq.write_table(pa.table({"prompt": ["a" * 3000], "completion": ["a"]}), data)
        args = ("--tokenizer", str(tmp_path), "--max-length", "16")
        result = run_bounded("validate", str(data), *args)
        assert "panic" in one_error(result)
        assert "panicked" not in result.stderr and "backtrace" not in result.stderr

    def test_a_fifo_named_tokenizer_json(self, tmp_path: Path, labels: Path) -> None:
        os.mkfifo(tmp_path / "tokenizer.json")
        args = ("--tokenizer", str(tmp_path), "--max-length", "8")
        assert "FIFO" in one_error(run_bounded("validate", str(labels), *args, timeout=30))


@pytest.mark.slow
class TestLongAttributes:
    BIG = 60 << 20

    def test_cvat(self, tmp_path: Path) -> None:
        from tests.conftest import SAMPLES

        text = (SAMPLES / "formats" / "cvat_good.xml").read_text()
        at = text.index('label="')
        path = tmp_path / "task.xml"
        path.write_text(text[:at] + f'junk="{"x" * self.BIG}" ' + text[at:])
        result = run_bounded("validate", str(path), "--input-format", "cvat", timeout=60)
        assert_clean_exit(result, 0, 1, 2)

    def test_label_studio(self, tmp_path: Path) -> None:
        from tests.conftest import SAMPLES

        source = SAMPLES / "formats" / "labelstudio_good"
        text = (source / "export.json").read_text()
        (tmp_path / "label_config.xml").write_text((source / "label_config.xml").read_text())
        path = tmp_path / "export.json"
        path.write_text(text.replace('"id": "r1"', f'"id": "r1", "junk": "{"x" * self.BIG}"', 1))
        result = run_bounded("validate", str(path), "--input-format", "labelstudio", timeout=60)
        assert "a JSON string of more than 16 MB" in one_error(result)


def deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        node.append([])
        node = node[0]
    return root


class TestTorchCheckpoints:
    @pytest.mark.parametrize("kind", ["list", "dict"])
    def test_a_deeply_nested_pickle(self, tmp_path: Path, kind: str) -> None:
        import sys

        deep: Any = deep_list(3000)
        if kind == "dict":
            deep = {"a": {}}
            node = deep["a"]
            for _ in range(3000):
                node["a"] = {}
                node = node["a"]
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(20000)
        try:
            torch.save({**state(), "deep": deep}, tmp_path / "m.pt")
        finally:
            sys.setrecursionlimit(limit)
        assert any("nested deeper than 64 levels" in p for p in judged(tmp_path / "m.pt"))

    def test_a_pickle_holding_itself(self, tmp_path: Path) -> None:
        loop: list[Any] = []
        loop.append(loop)
        torch.save({**state(), "loop": loop}, tmp_path / "m.pt")
        assert judged(tmp_path / "m.pt") == []  # judged, once each

    @pytest.mark.slow  # 80 MB deflated, then a run under a 1 GB cap
    def test_a_deflate_bomb_in_a_member(self, tmp_path: Path) -> None:
        torch.save(state(), tmp_path / "good.pt")
        run = tmp_path / "run"
        run.mkdir()
        with (
            zipfile.ZipFile(tmp_path / "good.pt") as src,
            zipfile.ZipFile(run / "m.pt", "w") as out,
        ):
            for info in src.infolist():
                out.writestr(info.filename, src.read(info))
            out.writestr("good/data/9", bytes(80 << 20), compress_type=zipfile.ZIP_DEFLATED)
        assert (run / "m.pt").stat().st_size < 1 << 20
        result = run_bounded("resume", str(run), memory_mb=1024, timeout=60)
        assert_clean_exit(result, 1)
        assert "inflate to over 64 MB" in result.stdout

    def test_a_memo_index_of_two_billion_costs_nothing(self, tmp_path: Path) -> None:
        """LONG_BINPUT 2^31-1 in the pickle: C's unpickler sizes its memo array by the index
        (gigabytes for four bytes); the scan's memo is a dict."""
        torch.save(state(), tmp_path / "good.pt")
        run = tmp_path / "run"
        run.mkdir()
        with (
            zipfile.ZipFile(tmp_path / "good.pt") as src,
            zipfile.ZipFile(run / "m.pt", "w") as out,
        ):
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("data.pkl"):  # the top dict memoised at 2^31-1
                    assert b"}q\x00" in data
                    data = data.replace(b"}q\x00", b"}r\xff\xff\xff\x7f", 1)
                out.writestr(info.filename, data)
        # torch's own weights-only loader reads it (its memo is a dict too): a sound checkpoint,
        # judged under a 2 GB cap that the C unpickler's memo array would break
        result = run_bounded("resume", str(run), memory_mb=2048, timeout=60)
        assert_clean_exit(result, 0)
        assert "resume from:" in result.stdout

    def storage_claims(self, tmp_path: Path, old: bytes, new: bytes) -> Path:
        torch.save({"w": torch.zeros(3, 2)}, tmp_path / "good.pt")
        buffer = io.BytesIO()
        with zipfile.ZipFile(tmp_path / "good.pt") as src, zipfile.ZipFile(buffer, "w") as out:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("data.pkl"):
                    assert old in data
                    data = data.replace(old, new)
                out.writestr(info.filename, data)
        (tmp_path / "m.pt").write_bytes(buffer.getvalue())
        return tmp_path / "m.pt"

    def test_a_tensor_past_its_storage(self, tmp_path: Path) -> None:
        path = self.storage_claims(tmp_path, b"K\x03K\x02\x86", b"K\x09K\x02\x86")  # 9x2 on 6
        assert any("reaches past its storage" in p for p in judged(path))

    def test_a_storage_past_its_member(self, tmp_path: Path) -> None:
        # the FloatStorage's numel (6, BININT1) before the TUPLE: claimed 96, 384 bytes
        path = self.storage_claims(tmp_path, b"q\x06K\x06t", b"q\x06K\x60t")
        assert any("claims 384 bytes, its member holds 24" in p for p in judged(path))

    def test_sizes_against_the_zip_directory(self, tmp_path: Path) -> None:
        torch.save(state(), tmp_path / "m.pt")
        raw = bytearray((tmp_path / "m.pt").read_bytes())
        with zipfile.ZipFile(tmp_path / "m.pt") as archive:
            start = archive.start_dir
        struct.pack_into("<I", raw, start + 20, 10**6)  # the first member's compressed size
        (tmp_path / "m.pt").write_bytes(bytes(raw))
        problems = judged(tmp_path / "m.pt")
        assert len(problems) == 1 and "refused, not loaded" in problems[0], problems

    def test_a_payload_is_one_line(self, tmp_path: Path, labels: Path) -> None:
        class Payload:
            def __reduce__(self) -> tuple[Any, ...]:
                return (os.system, ("echo pwned",))

        torch.save({**state(), "x": Payload()}, tmp_path / "m.pt")
        line = one_error(
            run_bounded("validate", str(labels), "-k", "4", "--model", str(tmp_path / "m.pt"))
        )
        assert "refused, not run (it asks for posix.system)" in line
        assert "weights_only` set to `False`" not in line

    def test_a_checkpoint_linked_outside_the_folder(self, tmp_path: Path) -> None:
        torch.save(state(), tmp_path / "elsewhere.pt")
        run = tmp_path / "run"
        run.mkdir()
        (run / "step-10.pt").symlink_to(tmp_path / "elsewhere.pt")
        (found,) = find_checkpoints(str(run))
        problems = read_checkpoint(found).problems
        assert problems == [
            "step-10.pt: the checkpoint file is a link that leads outside " + repr(str(run))
        ]


TENSOR = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


class TestSafetensors:
    @pytest.mark.parametrize(
        ("header", "why"),
        [
            (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
            (b"[1, 2]", "a JSON list, not an object"),
            ({"a": {**TENSOR, "data_offsets": [8, 0]}}, "invalid offset for tensor 'a'"),
            ({"a": {**TENSOR, "dtype": "Q99"}}, "no dtype safetensors knows"),
            ({"a": {**TENSOR, "shape": "2"}}, "its shape is not a list of sizes"),
            ({"a": {**TENSOR, "data_offsets": ["0", {}]}}, "data_offsets are not two offsets"),
            ({"a": [1]}, "a JSON list, not an object"),
            ({"__metadata__": {"a": 1}, "a": TENSOR}, "__metadata__ is not an object of strings"),
            ({"a": {**TENSOR, "shape": [3]}}, "8 bytes for a F32 tensor of shape [3]"),
            ({"a": {**TENSOR, "shape": [2**40, 2**40]}}, "overflows"),
        ],
    )
    def test_a_header_refused_before_any_offset_is_used(
        self, tmp_path: Path, header: Any, why: str
    ) -> None:
        path = safetensors_file(tmp_path / "m.safetensors", header, b"\0" * 8)
        problems = judged(path)
        assert len(problems) == 1 and why in problems[0], problems

    def test_overlapping_tensors_are_never_sound(self, tmp_path: Path) -> None:
        header = {"a": TENSOR, "b": {**TENSOR, "data_offsets": [4, 12]}}
        path = safetensors_file(tmp_path / "m.safetensors", header, b"\0" * 12)
        assert "invalid offset for tensor 'b'" in judged(path)[0]
        safetensors = pytest.importorskip("safetensors.numpy")
        with pytest.raises(Exception, match="invalid offset"):
            safetensors.load_file(str(path))  # the library's own verdict

    def test_bytes_past_the_last_tensor(self, tmp_path: Path) -> None:
        path = safetensors_file(tmp_path / "m.safetensors", {"a": TENSOR}, b"\0" * 12)
        assert "4 bytes past its last tensor" in judged(path)[0]


def hf_checkpoint(root: Path, trainer_state: bytes) -> Path:
    folder = root / "checkpoint-10"
    folder.mkdir(parents=True)
    torch.save(state(), folder / "pytorch_model.bin")
    (folder / "trainer_state.json").write_bytes(trainer_state)
    return folder


class TestTrainerStateAndConfig:
    @pytest.mark.parametrize(
        ("text", "why"),
        [
            (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
            (b"[1, 2]", "not a JSON object"),
            (b'{"global_step": "x"}', "global_step is not a step count"),
            (b'{"global_step": 3, "log_history": {"a": 1}}', "log_history is not a list"),
            (b'{"log_history": [{"loss": Infinity, "step": "zz"}]}', "at a step it does not say"),
        ],
    )
    def test_trainer_state(self, tmp_path: Path, text: bytes, why: str) -> None:
        folder = hf_checkpoint(tmp_path, text)
        (found,) = find_checkpoints(str(tmp_path))
        problems = read_checkpoint(found).problems
        assert any(why in p for p in problems), problems
        assert found.path == str(folder)

    def test_a_huge_trainer_state(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from labelgate.training import checkpoints

        monkeypatch.setattr(checkpoints, "MAX_STATE", 1 << 20)
        hf_checkpoint(tmp_path, b'{"log_history": [' + b"{}," * (1 << 19) + b"{}]}")
        (found,) = find_checkpoints(str(tmp_path))
        assert (
            "trainer_state.json: the trainer_state.json is over 1 MB"
            in read_checkpoint(found).problems
        )

    def test_a_deep_config(self, tmp_path: Path) -> None:
        from labelgate.contract.modelmap import load_model_map

        (tmp_path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
        with pytest.raises(InputError, match="nested deeper than 64 levels"):
            load_model_map(tmp_path)

    @pytest.mark.parametrize(
        "config",
        [
            {"num_labels": 10**9},
            {"num_labels": 10**400},
            {"id2label": {str(10**9): "a"}},
            {"id2label": {"0": {"a": 1}}},
            {"id2label": {"0": "a"}, "label2id": {"a": 2**70}},
        ],
    )
    def test_integers_bounded_before_use(self, tmp_path: Path, config: dict[str, Any]) -> None:
        from labelgate.contract.modelmap import load_model_map

        (tmp_path / "config.json").write_text(json.dumps(config))
        with pytest.raises(UsageError, match=r"num_labels|not an index|not a name"):
            load_model_map(tmp_path)


class TestSpecialFiles:
    def test_resume_log_on_dev_zero(self, tmp_path: Path) -> None:
        torch.save(state(), tmp_path / "step-1.pt")
        line = one_error(run_bounded("resume", str(tmp_path), "--log", "/dev/zero", timeout=30))
        assert "not a regular file" in line

    def test_resume_log_on_a_fifo(self, tmp_path: Path) -> None:
        torch.save(state(), tmp_path / "step-1.pt")
        os.mkfifo(tmp_path / "train.log")
        line = one_error(
            run_bounded("resume", str(tmp_path), "--log", str(tmp_path / "train.log"), timeout=30)
        )
        assert "is a FIFO" in line

    def test_model_on_a_fifo_named_config_json(self, tmp_path: Path, labels: Path) -> None:
        model = tmp_path / "model"
        model.mkdir()
        os.mkfifo(model / "config.json")
        line = one_error(
            run_bounded("validate", str(labels), "-k", "3", "--model", str(model), timeout=30)
        )
        assert "is a FIFO" in line

    def test_a_config_linked_out_of_the_model_folder(self, tmp_path: Path, labels: Path) -> None:
        (tmp_path / "outside.json").write_text(json.dumps({"num_labels": 3}))
        model = tmp_path / "model"
        model.mkdir()
        (model / "config.json").symlink_to(tmp_path / "outside.json")
        line = one_error(run_bounded("validate", str(labels), "-k", "3", "--model", str(model)))
        assert "a link that leads outside" in line

    def test_triage_on_dev_zero_and_on_a_fifo(self, tmp_path: Path) -> None:
        assert "not a regular file" in one_error(run_bounded("triage", "/dev/zero", timeout=30))
        os.mkfifo(tmp_path / "train.log")  # read once as it streams; no writer: empty, no hang
        done = run_bounded("triage", str(tmp_path / "train.log"), timeout=30)
        assert_clean_exit(done, 0)
        assert "no error found in 0 lines" in done.stdout
