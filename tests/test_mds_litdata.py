"""Training shards: MosaicML MDS (fixtures written by streaming's MDSWriter, and by
tests/mdswrite.py, which follows it byte for byte) and LitData (written by ``litdata.optimize``
in the tests): each shard a source, every fault named by shard and sample index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.readers import choose
from labelgate.run.validation import run

from .mdswrite import PLAIN_COLUMNS, plain_samples, write_mds, zstd_samples
from .support.inproc import run_here

WRITTEN = Path(__file__).parent / "fixtures" / "mds_written"


def validate(path: Path, k: int = 4, **contract: Any) -> Report:
    return run([str(path)], Contract(num_classes=k, **contract), max_examples=0).report


def named(report: Report, code: str) -> list[tuple[int, str, Any]]:
    (f,) = [f for f in report.findings if f.code == code]
    return [(e.row, e.id, e.value) for e in f.examples]


def codes(report: Report) -> set[str]:
    return {f.code for f in report.findings if f.severity in ("error", "warning")}


# -- MDS ----------------------------------------------------------------------------------------


class TestMdsWrittenByStreaming:
    """tests/fixtures/mds_written/ was written by mosaicml-streaming 0.13.0 (make.py beside it)."""

    def test_plain_shards_name_the_label_past_k(self) -> None:
        path = WRITTEN / "plain"
        assert choose([str(path)]).reader.name == "mds"
        report = validate(path)
        assert named(report, "LG004") == [(6, "shard.00001.mds:2", 4)]
        assert [s["source"] for s in report.sources] == [f"shard.0000{i}.mds" for i in range(3)]
        assert report.counts["rows"] == 12 and report.input["annotations"]["read"]["shards"] == 3

    def test_zstd_shards_and_the_one_based_shard(self) -> None:
        report = validate(WRITTEN / "zstd")
        assert named(report, "LG004") == [(7, "shard.00001.mds.zstd:3", 4)]
        (lg011,) = [f for f in report.findings if f.code == "LG011"]
        assert "shard.00001.mds.zstd" in lg011.message and "shard.00000" not in lg011.message

    def test_this_writer_writes_streamings_bytes(self, tmp_path: Path) -> None:
        samples = plain_samples()
        write_mds(tmp_path, PLAIN_COLUMNS, [samples[i : i + 4] for i in (0, 4, 8)])
        for name in ("shard.00000.mds", "shard.00001.mds", "shard.00002.mds", "index.json"):
            assert (tmp_path / name).read_bytes() == (WRITTEN / "plain" / name).read_bytes(), name

    def test_the_labels_read_are_the_samples_labels(self) -> None:
        from labelgate.readers.base import ReadOptions
        from labelgate.readers.opened import open_input

        for name, column, samples in (
            ("plain", "label", plain_samples()),
            ("zstd", "cls", zstd_samples()),
        ):
            folder = Path(__import__("tempfile").mkdtemp())
            opened = open_input([str(WRITTEN / name)], "auto", folder, ReadOptions())
            import pyarrow.parquet as pq

            table = pq.read_table(opened.paths[0])
            assert table.column("label").to_pylist() == [s[column] for s in samples]
            shutil.rmtree(folder)


def faulty(tmp_path: Path, columns: dict[str, str], **kw: Any) -> Path:
    """Three shards of four, K=4: shard 0 clean, shard 1 a 4 at index 1 and a -1 at index 2,
    shard 2 1-based (1..4)."""
    labels = [[0, 1, 2, 3], [0, 4, -1, 3], [1, 2, 3, 4]]
    shards = [
        [{"image": bytes([i]) * (i + 1), "label": v, "note": f"n{i}"} for i, v in enumerate(s)]
        for s in labels
    ]
    return write_mds(tmp_path / "ds", columns, shards, **kw)


class TestMdsFaults:
    @pytest.mark.parametrize("compression", [None, "zstd"])
    @pytest.mark.parametrize("encoding", ["int", "int16", "str_int"])
    def test_each_fault_by_shard_and_index(
        self, tmp_path: Path, encoding: str, compression: str | None
    ) -> None:
        columns = {"image": "bytes", "label": encoding, "note": "str"}
        path = faulty(tmp_path, columns, compression=compression)
        report = validate(path)
        suffix = ".zstd" if compression else ""
        assert named(report, "LG004")[0] == (5, f"shard.00001.mds{suffix}:1", 4)
        assert named(report, "LG005") == [(6, f"shard.00001.mds{suffix}:2", -1)]
        (lg011,) = [f for f in report.findings if f.code == "LG011"]
        assert f"shard.00002.mds{suffix}" in lg011.message

    def test_gzip_shards(self, tmp_path: Path) -> None:
        import gzip

        path = faulty(tmp_path, {"image": "bytes", "label": "int", "note": "str"})
        index = json.loads((path / "index.json").read_text())
        for entry in index["shards"]:
            raw = path / entry["raw_data"]["basename"]
            packed = gzip.compress(raw.read_bytes())
            (path / f"{raw.name}.gz").write_bytes(packed)
            raw.unlink()
            entry["compression"] = "gz"
            entry["zip_data"] = {"basename": f"{raw.name}.gz", "bytes": len(packed), "hashes": {}}
        (path / "index.json").write_text(json.dumps(index))
        assert named(validate(path), "LG005") == [(6, "shard.00001.mds.gz:2", -1)]

    def test_label_column_by_name_and_none_detected(self, tmp_path: Path) -> None:
        columns = {"coarse": "uint8", "image": "bytes", "label": "int", "note": "str"}
        shards = [[{"coarse": i % 2, "image": b"x", "label": 9, "note": ""} for i in range(4)]]
        path = write_mds(tmp_path / "ds", columns, shards)
        assert codes(validate(path, 2)) == {"LG004", "LG008"}  # every label 9
        ok = run_here("validate", str(path), "--classes", "2", "--label-column", "coarse")
        assert ok.returncode == 0, ok.stderr
        other = write_mds(tmp_path / "other", {"y": "int"}, [[{"y": 0}]])
        bad = run_here("validate", str(other), "--classes", "2")
        assert bad.returncode == 2 and "LG001" in bad.stderr and "--label-column" in bad.stderr

    def test_a_label_encoding_that_holds_no_integer_is_refused(self, tmp_path: Path) -> None:
        path = write_mds(tmp_path / "ds", {"label": "str"}, [[{"label": "cat"}]])
        result = run_here("validate", str(path), "--classes", "2")
        assert result.returncode == 2 and "encoded as 'str'" in result.stderr

    def test_str_int_that_is_no_integer_is_named(self, tmp_path: Path) -> None:
        shards = [[{"label": v} for v in ("0", "1", "one", "1")]]
        path = write_mds(tmp_path / "ds", {"label": "str_int"}, shards)
        report = validate(path, 2)
        assert named(report, "LG031") == [(2, "shard.00000.mds:2", None)]
        assert report.counts["rejected"] == 1


class TestDetection:
    def test_other_index_files_are_no_shards(self, tmp_path: Path) -> None:
        (tmp_path / "index.json").write_text('{"version": 2, "shards": [{"format": "json"}]}')
        result = run_here("validate", str(tmp_path), "--classes", "4")
        assert result.returncode == 2 and "unknown format" in result.stderr

    def test_the_index_itself_and_a_format_named(self, tmp_path: Path) -> None:
        path = faulty(tmp_path, {"label": "int"})
        assert choose([str(path / "index.json")]).reader.name == "mds"
        result = run_here("validate", str(path), "--classes", "4", "--input-format", "litdata")
        assert result.returncode == 2 and "has no config" in result.stderr


class TestMdsUnreadable:
    def test_an_index_naming_no_shard(self, tmp_path: Path) -> None:
        report = validate(write_mds(tmp_path / "ds", {"label": "int"}, []))
        assert codes(report) == {"LG008"} and report.counts["rows"] == 0

    def test_an_index_naming_a_missing_shard(self, tmp_path: Path) -> None:
        path = faulty(tmp_path, {"image": "bytes", "label": "int", "note": "str"})
        (path / "shard.00001.mds").unlink()
        result = run_here("validate", str(path), "--classes", "4")
        assert (
            result.returncode == 2 and "shard 'shard.00001.mds', which is missing" in result.stderr
        )
        assert result.stderr.startswith("labelgate: error:") and result.stderr.count("\n") == 1

    def test_a_truncated_shard(self, tmp_path: Path) -> None:
        path = faulty(tmp_path, {"image": "bytes", "label": "int", "note": "str"})
        shard = path / "shard.00002.mds"
        shard.write_bytes(shard.read_bytes()[:-5])
        result = run_here("validate", str(path), "--classes", "4")
        assert result.returncode == 2 and "shard.00002.mds" in result.stderr
        assert "truncated" in result.stderr

    @pytest.mark.parametrize("basename", ["../outside.mds", "/etc/passwd"])
    def test_a_shard_outside_the_dataset(self, tmp_path: Path, basename: str) -> None:
        path = faulty(tmp_path, {"label": "int"})
        index = json.loads((path / "index.json").read_text())
        index["shards"][0]["raw_data"]["basename"] = basename
        (path / "index.json").write_text(json.dumps(index))
        result = run_here("validate", str(path), "--classes", "4")
        assert result.returncode == 2 and "not a file inside the dataset" in result.stderr

    def test_offsets_past_the_shard(self, tmp_path: Path) -> None:
        import numpy as np

        path = faulty(tmp_path, {"label": "int"})
        shard = path / "shard.00000.mds"
        data = bytearray(shard.read_bytes())
        data[8:12] = np.uint32(1 << 30).tobytes()  # the second sample's begin
        shard.write_bytes(bytes(data))
        result = run_here("validate", str(path), "--classes", "4")
        assert result.returncode == 2 and "offsets" in result.stderr


# -- LitData ------------------------------------------------------------------------------------


def _sample(i: int) -> dict[str, Any]:
    import numpy as np

    labels = [0, 1, 2, 3, 0, 4, -1, 3, 1, 2, 3, 4]  # chunk 1: a 4 and a -1; chunk 2: 1-based
    return {"image": np.full((2, 3), i, dtype=np.uint8), "label": labels[i], "name": f"s{i}"}


def _nested(i: int) -> dict[str, Any]:
    return {"meta": {"cls": [0, 1, 2, 3, 0, 4, -1, 3][i], "path": f"p{i}"}, "pair": (i, b"x")}


@pytest.fixture(scope="module")
def litdata_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The faults through ``litdata.optimize`` (its worker process costs seconds, so once); the
    zstd layouts through ``BinaryWriter``, the writer optimize's workers write with."""
    litdata = pytest.importorskip("litdata")
    from litdata.streaming.writer import BinaryWriter

    root = tmp_path_factory.mktemp("litdata")
    made = {"plain": root / "plain", "footer": root / "footer"}
    import multiprocessing

    method = multiprocessing.get_start_method(allow_none=True)
    try:
        litdata.optimize(
            fn=_sample, inputs=list(range(12)), output_dir=str(made["plain"]), chunk_size=4,
            num_workers=0,
        )  # fmt: skip
    finally:  # optimize sets the process's start method to spawn (data_processor.py, force=True)
        multiprocessing.set_start_method(method, force=True)
    writer = BinaryWriter(str(made["footer"]), chunk_size=4)
    for i in range(12):  # bytes and int leaves: 0.2.76 keeps the rows as an Arrow footer
        writer[i] = {"image": bytes([i]) * 9, "label": _sample(i)["label"]}
    writer.done()
    writer.merge()
    try:
        import zstd  # noqa: F401  (litdata's compressor)
    except ImportError:
        return made
    for name, level in (("framed", None), ("whole", "chunk")):
        made[name] = root / name
        writer = BinaryWriter(
            str(made[name]), chunk_size=4, compression="zstd", compression_level=level
        )
        for i in range(8):
            writer[i] = _nested(i)
        writer.done()
        writer.merge()
    return made


class TestLitData:
    def test_each_fault_by_chunk_and_index(self, litdata_sets: dict[str, Path]) -> None:
        path = litdata_sets["plain"]
        assert choose([str(path)]).reader.name == "litdata"
        report = validate(path)
        assert named(report, "LG004")[0] == (5, "chunk-0-1.bin:1", 4)
        assert named(report, "LG005") == [(6, "chunk-0-1.bin:2", -1)]
        (lg011,) = [f for f in report.findings if f.code == "LG011"]
        assert "chunk-0-2.bin" in lg011.message and "chunk-0-0" not in lg011.message
        assert [s["source"] for s in report.sources] == [f"chunk-0-{i}.bin" for i in range(3)]

    def test_chunks_holding_their_rows_as_arrow(self, litdata_sets: dict[str, Path]) -> None:
        path = litdata_sets["footer"]
        assert (path / "chunk-0-1.bin").read_bytes().endswith(b"LDARW01\0")
        report = validate(path)
        assert named(report, "LG005") == [(6, "chunk-0-1.bin:2", -1)]
        assert named(report, "LG004")[0] == (5, "chunk-0-1.bin:1", 4)
        (lg011,) = [f for f in report.findings if f.code == "LG011"]
        assert "chunk-0-2.bin" in lg011.message

    @pytest.mark.parametrize("name", ["framed", "whole"])
    def test_zstd_chunks_and_a_nested_label_leaf(
        self, litdata_sets: dict[str, Path], name: str
    ) -> None:
        if name not in litdata_sets:
            pytest.skip("litdata's zstd compressor (the zstd package) is not installed")
        report = validate(litdata_sets[name])
        suffix = ".zstd.bin" if name == "whole" else ".bin"
        assert named(report, "LG005") == [(6, f"chunk-0-1{suffix}:2", -1)]
        assert "label leaf 'meta.cls'" in report.input["annotations"]["detected_because"]

    def test_label_leaf_by_name(self, litdata_sets: dict[str, Path]) -> None:
        path = litdata_sets["plain"]
        result = run_here("validate", str(path), "--classes", "4", "--label-column", "name")
        assert result.returncode == 2 and "serialized as 'str'" in result.stderr
        result = run_here("validate", str(path), "--classes", "4", "--label-column", "nope")
        assert result.returncode == 2 and "label field 'nope' not found" in result.stderr

    def test_an_index_naming_a_missing_chunk(
        self, litdata_sets: dict[str, Path], tmp_path: Path
    ) -> None:
        path = tmp_path / "copy"
        shutil.copytree(litdata_sets["plain"], path)
        (path / "chunk-0-1.bin").unlink()
        result = run_here("validate", str(path / "index.json"), "--classes", "4")
        assert result.returncode == 2 and "shard 'chunk-0-1.bin', which is missing" in result.stderr

    @pytest.mark.parametrize("name", ["plain", "footer", "framed"])
    def test_a_truncated_chunk(
        self, litdata_sets: dict[str, Path], tmp_path: Path, name: str
    ) -> None:
        if name not in litdata_sets:
            pytest.skip("litdata's zstd compressor (the zstd package) is not installed")
        path = tmp_path / "copy"
        shutil.copytree(litdata_sets[name], path)
        chunk = sorted(path.glob("chunk-*.bin"))[-1]
        chunk.write_bytes(chunk.read_bytes()[:-3])
        result = run_here("validate", str(path), "--classes", "4")
        assert result.returncode == 2 and chunk.name in result.stderr
        assert "truncated" in result.stderr and result.stderr.count("\n") == 1
