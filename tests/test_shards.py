"""Training shards: WebDataset tars written by ``webdataset.ShardWriter`` and TFRecord files
written by the ``tfrecord`` package's writer, clean and with planted faults, each named by shard
and key or record index; unreadable shards refused with the shard named."""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.errors import InputError
from labelgate.readers import choose
from labelgate.readers.shards.braces import expand_urls
from labelgate.readers.shards.records import _python_crc32c, crc32c, masked_crc, records
from labelgate.run.validation import run

from .conftest import moto_s3
from .support.inproc import run_here

wds = pytest.importorskip("webdataset")
tfrecord = pytest.importorskip("tfrecord")


def validate(paths: list[str], classes: int = 4, **kw: Any) -> Report:
    contract = Contract(num_classes=classes, **kw)
    return run(paths, contract, max_examples=0).report


def ids(report: Report, code: str) -> set[str]:
    (f,) = [f for f in report.findings if f.code == code]
    return {str(e.id) for e in f.examples}


def codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def write_wds(folder: Path, labels: list[Any], *, per_shard: int = 5, member: str = "cls") -> Path:
    """Shards of ``per_shard`` samples (a 2 KB image and a label member each), by ShardWriter."""
    folder.mkdir(parents=True, exist_ok=True)
    with wds.ShardWriter(str(folder / "train-%06d.tar"), maxcount=per_shard, verbose=0) as w:
        for i, label in enumerate(labels):
            sample: dict[str, Any] = {"__key__": f"s{i:05d}", "jpg": os.urandom(2048)}
            if member == "json":
                sample["json"] = {"label": label, "caption": "x"}
            elif label is not None:
                sample[member] = label
            w.write(sample)
    return folder


def write_tfrecord(path: Path, labels: list[Any], feature: str = "image/class/label") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = tfrecord.TFRecordWriter(str(path))
    for label in labels:
        writer.write({"image/encoded": (os.urandom(1024), "byte"), feature: (label, "int")})
    writer.close()
    return path


class TestBraces:
    @pytest.mark.parametrize(
        "pattern",
        [
            "train-{000000..000009}.tar",
            "a{1..3}b{x,y}",
            "{07..10}",
            "{a..e..2}",
            "{4..1}",
            "{2..-1}",
            "x{a,{b,c}d}::y{1..2}",
            r"{1\{2,3}",
            "{\\\\{}}",  # a nested escape is undone once per level, as braceexpand does
            "{}",
            "{a}",
            "{Z..c}",
            "{1..10..3}",
        ],
    )
    def test_patterns_expand_as_webdataset_expands_them(self, pattern: str) -> None:
        from webdataset.shardlists import expand_urls as theirs

        assert expand_urls(pattern) == theirs(pattern)

    @settings(max_examples=200, deadline=None)
    # digits 0 and 1 only, 11 characters at most: no range past 111,111 names (MAX_SHARDS is 1M)
    @given(st.text(alphabet="ab01.,{}\\-:", max_size=11))
    def test_any_pattern_expands_as_braceexpand_does(self, pattern: str) -> None:
        from braceexpand import UnbalancedBracesError
        from webdataset.shardlists import expand_urls as theirs

        try:
            expected = theirs(pattern)
        except UnbalancedBracesError:
            with pytest.raises(InputError):
                expand_urls(pattern)
            return
        assert expand_urls(pattern) == expected


class TestCrc:
    def test_rfc3720_vectors(self) -> None:
        # RFC 3720 B.4: 32 bytes of zeros -> aa 36 91 8a (CRC 0x8A9136AA); 0xFF x32 -> 0x62A8AB43
        for data, crc in ((bytes(32), 0x8A9136AA), (b"\xff" * 32, 0x62A8AB43)):
            assert crc32c(data) == crc
            assert _python_crc32c(data) == crc
        assert _python_crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value

    def test_mask_matches_the_writer_of_the_tfrecord_package(self) -> None:
        import struct

        from tfrecord.writer import TFRecordWriter

        for data in (b"", b"abc", os.urandom(100)):
            assert struct.pack("<I", masked_crc(data)) == TFRecordWriter.masked_crc(data)


class TestWebDataset:
    def test_a_folder_a_glob_a_brace_pattern_and_a_list_file(self, tmp_path: Path) -> None:
        root = write_wds(tmp_path / "s", [0, 1, 2, 3] * 3)
        (tmp_path / "shards.txt").write_text("s/train-000000.tar\ns/train-000001.tar\n")
        for named in (
            str(root),
            str(root / "*.tar"),
            str(root / "train-{000000..000002}.tar"),
            str(root / "train-000000.tar"),
        ):
            assert choose([named]).reader.name == "webdataset", named
            report = validate([named])
            assert not {"LG004", "LG005", "LG031"} & codes(report), named
        report = validate([str(tmp_path / "shards.txt")])
        assert report.input["annotations"]["read"]["samples"] == 10

    def test_planted_faults_named_by_shard_and_key(self, tmp_path: Path) -> None:
        labels: list[Any] = [0, 1, 2, 3] * 3
        labels[6], labels[9] = 4, -1  # K, and the -1 sentinel, both in the second shard
        root = write_wds(tmp_path / "s", labels)
        report = validate([str(root)])
        assert ids(report, "LG004") == {"train-000001.tar:s00006"}
        assert ids(report, "LG005") == {"train-000001.tar:s00009"}
        (f,) = [f for f in report.findings if f.code == "LG004"]
        assert f.examples[0].source == "train-000001.tar"

    def test_a_json_member_with_a_label_of_12(self, tmp_path: Path) -> None:
        labels = [0, 1, 2, 3, 12, 1]
        root = write_wds(tmp_path / "j", labels, member="json")
        report = validate([str(root)])
        assert ids(report, "LG004") == {"train-000000.tar:s00004"}
        assert any("'label'" in n for n in report.notes)

    def test_label_column_names_the_json_field(self, tmp_path: Path) -> None:
        folder = tmp_path / "j"
        folder.mkdir()
        with wds.ShardWriter(str(folder / "t-%03d.tar"), maxcount=10, verbose=0) as w:
            for i, y in enumerate([0, 1, 12]):
                w.write({"__key__": f"k{i}", "json": {"label": 0, "target": y}})
        report = validate([str(folder)], label_column="target")
        assert ids(report, "LG004") == {"t-000.tar:k2"}

    def test_samples_without_a_label_are_rejected_rows(self, tmp_path: Path) -> None:
        root = write_wds(tmp_path / "s", [0, 1, None, 3, "x"])
        report = validate([str(root)])
        assert ids(report, "LG031") == {"train-000000.tar:s00002", "train-000000.tar:s00004"}
        assert report.counts["rejected"] == 2

    def test_a_suffix_twice_in_a_sample_is_a_rejected_row_in_its_place(
        self, tmp_path: Path
    ) -> None:
        shard = tmp_path / "dup.tar"
        with tarfile.open(shard, "w") as tar:
            for name in ("a.cls", "a.cls", "b.cls", "c.cls"):
                info = tarfile.TarInfo(name)
                info.size = 1
                tar.addfile(info, io.BytesIO(b"1"))
        with pytest.raises(ValueError, match="duplicate file name"):
            list(wds.WebDataset(str(shard), shardshuffle=False))
        report = validate([str(shard)])
        (f,) = [f for f in report.findings if f.code == "LG031"]
        assert [(e.row, e.id) for e in f.examples] == [(0, "dup.tar:a")]
        assert report.counts["rows"] == 3

    def test_samples_and_labels_are_the_ones_webdataset_iterates(self, tmp_path: Path) -> None:
        import pyarrow.parquet as pq

        from labelgate.readers.base import ReadOptions
        from labelgate.readers.opened import open_input

        labels = [3, 1, 0, 2, 2, 1, 0]
        root = write_wds(tmp_path / "s", labels, per_shard=3)
        urls = sorted(str(p) for p in root.glob("*.tar"))
        theirs = [
            (Path(s["__url__"]).name + ":" + s["__key__"], int(s["cls"]))
            for s in wds.WebDataset(urls, shardshuffle=False)
        ]
        (tmp_path / "out").mkdir()
        opened = open_input([str(root)], "auto", tmp_path / "out", ReadOptions())
        table = pq.read_table(opened.paths[0])
        assert list(zip(table["id"].to_pylist(), table["label"].to_pylist(), strict=True)) == theirs

    def test_a_truncated_shard_is_refused_naming_it(self, tmp_path: Path) -> None:
        root = write_wds(tmp_path / "s", [0, 1, 2, 3] * 3)
        cut = root / "train-000001.tar"
        cut.write_bytes(cut.read_bytes()[:3000])
        done = run_here("validate", str(root), "--classes", "4")
        assert done.returncode == 2
        assert "train-000001.tar" in done.stderr and "Traceback" not in done.stderr

    @pytest.mark.parametrize("cut", [700, 2000, 3000, 4000, -512])
    def test_a_shard_cut_anywhere_is_refused(self, tmp_path: Path, cut: int) -> None:
        from labelgate.readers.shards.tarwalk import members

        root = write_wds(tmp_path / "s", [0, 1, 2])  # in a header, at a boundary, in an image
        shard = root / "train-000000.tar"
        raw = shard.read_bytes()
        shard.write_bytes(raw[:cut] if cut > 0 else raw[: raw.rstrip(b"\0").__len__() + cut])
        with pytest.raises(InputError, match=r"train-000000\.tar"):
            list(members(shard, "train-000000.tar", lambda n: True))

    def test_image_members_are_seeked_past_not_read(self, tmp_path: Path) -> None:
        from labelgate.readers.shards.tarwalk import members

        shard = tmp_path / "one.tar"
        with tarfile.open(shard, "w") as tar:
            for name, size in (("a.jpg", 5_000_000), ("a.cls", 1)):
                info = tarfile.TarInfo(name)
                info.size = size
                tar.addfile(info, _Zeros(size))
        got = [(n, d) for n, d, _ in members(shard, "one.tar", lambda n: n.endswith(".cls"))]
        assert got == [("a.jpg", None), ("a.cls", b"\0")]

    @pytest.mark.parametrize("form", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
    def test_long_and_nested_names_are_the_names_tarfile_reads(
        self, tmp_path: Path, form: int
    ) -> None:
        from labelgate.readers.shards.tarwalk import members

        shard = tmp_path / "names.tar"
        names = ["d/" + "x" * 120 + ".jpg", "d/" + "x" * 120 + ".cls", "caf\u00e9/a.cls", "b.cls"]
        if form == tarfile.USTAR_FORMAT:
            names = ["p" * 90 + "/" + "q" * 90 + ".cls", "b.cls"]
        with tarfile.open(shard, "w", format=form) as tar:
            for i, n in enumerate(names):
                info = tarfile.TarInfo(n)
                info.size = i + 1
                tar.addfile(info, _Zeros(i + 1))
            info = tarfile.TarInfo("folder")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        with tarfile.open(shard) as tar:
            theirs = [(m.name, m.size) for m in tar if m.isreg()]
        ours = [(n, size) for n, _, size in members(shard, "names.tar", lambda n: True)]
        assert ours == theirs

    def test_a_file_that_is_no_tar_is_refused(self, tmp_path: Path) -> None:
        from labelgate.readers.shards.tarwalk import members

        shard = tmp_path / "fake.tar"
        shard.write_bytes(b"PK" + os.urandom(2000))
        with pytest.raises(InputError, match=r"fake\.tar"):
            list(members(shard, "fake.tar", lambda n: True))

    def test_a_gzipped_shard(self, tmp_path: Path) -> None:
        folder = tmp_path / "z"
        folder.mkdir()
        with wds.ShardWriter(str(folder / "t-%03d.tar.gz"), maxcount=10, verbose=0) as w:
            for i, y in enumerate([0, 1, 5]):
                w.write({"__key__": f"k{i}", "cls": y, "jpg": b"x" * 100})
        report = validate([str(folder)])
        assert ids(report, "LG004") == {"t-000.tar.gz:k2"}


@pytest.fixture
def s3_shards(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """Three WebDataset shards (a K in the second) on a moto S3 server on loopback: the local
    folder and the URI of their prefix (endpoint and scheme in its query, as for tables)."""
    root = write_wds(tmp_path / "s", [0, 1, 2, 3, 1, 4, 2, 0, 3, 1, 2, 0])
    with moto_s3("data") as (s3, port):
        for f in sorted(root.iterdir()):
            with s3.open_output_stream(f"data/shards/{f.name}") as out:
                out.write(f.read_bytes())
        yield root, f"s3://data/shards?endpoint_override=127.0.0.1:{port}&scheme=http"


class TestRemoteWebDataset:
    def test_shards_on_s3_give_the_local_findings(self, s3_shards: tuple[Path, str]) -> None:
        root, uri = s3_shards
        prefix, _, query = uri.partition("?")
        local = validate([str(root)])
        pattern = f"{prefix}/train-{{000000..000002}}.tar?{query}"
        for named, fmt in ((uri, "webdataset"), (pattern, "auto")):
            remote = run([named], Contract(num_classes=4), max_examples=0, input_format=fmt)
            assert ids(remote.report, "LG004") == ids(local, "LG004") == {"train-000001.tar:s00005"}
            assert remote.report.counts == local.counts
            text = json.dumps(remote.report.to_dict())
            assert "labelgate-test-secret" not in text and "endpoint_override" not in text
        listed = root.parent / "remote.txt"
        listed.write_text("\n".join(f"{prefix}/train-00000{i}.tar?{query}" for i in range(3)))
        remote = run([str(listed)], Contract(num_classes=4), max_examples=0).report
        assert ids(remote, "LG004") == {"train-000001.tar:s00005"}


class TestRemoteTfRecord:
    def test_a_glob_of_shards_on_s3_gives_the_local_report(self, tmp_path: Path) -> None:
        root = tmp_path / "tf"
        write_tfrecord(root / "train-0.tfrecord", [0, 1, 2, 3])
        write_tfrecord(root / "train-1.tfrecord", [1, 4, 2, 0])  # a K in the second
        write_tfrecord(root / "valid-0.tfrecord", [7])  # not matched by the glob
        import gzip

        (root / "train-2.tfrecord.gz").write_bytes(
            gzip.compress(write_tfrecord(tmp_path / "z.tfrecord", [3, -1]).read_bytes())
        )
        local = run([str(root / "train-*")], Contract(num_classes=4), max_examples=0).report
        with moto_s3("data") as (s3, port):
            for f in sorted(root.iterdir()):
                with s3.open_output_stream(f"data/tf/{f.name}") as out:
                    out.write(f.read_bytes())
            query = f"endpoint_override=127.0.0.1:{port}&scheme=http"
            for named, fmt in (
                (f"s3://data/tf/train-*?{query}", "tfrecord"),
                (f"s3://data/tf/train-{{0..1}}.tfrecord?{query}", "auto"),
            ):
                remote = run([named], Contract(num_classes=4), max_examples=0, input_format=fmt)
                if fmt == "tfrecord":
                    assert remote.report.counts == local.counts
                    assert (
                        ids(remote.report, "LG005")
                        == ids(local, "LG005")
                        == {"train-2.tfrecord.gz:1"}
                    )
                assert ids(remote.report, "LG004") == ids(local, "LG004") == {"train-1.tfrecord:1"}
                text = json.dumps(remote.report.to_dict())
                assert "labelgate-test-secret" not in text and "endpoint_override" not in text
            with s3.open_output_stream("data/tf/cut.tfrecord") as out:
                out.write((root / "train-0.tfrecord").read_bytes()[:-3])
            with pytest.raises(InputError, match="truncated"):
                run([f"s3://data/tf/cut.tfrecord?{query}"], Contract(num_classes=4))


class _Zeros:
    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


class TestTfRecord:
    def test_clean_shards(self, tmp_path: Path) -> None:
        for i in range(2):
            write_tfrecord(tmp_path / f"train-{i:05d}-of-00002", [0, 1, 2, 3])
        assert choose([str(tmp_path)]).reader.name == "tfrecord"
        report = validate([str(tmp_path)])
        assert not {"LG004", "LG005", "LG011", "LG031"} & codes(report)
        assert report.counts["usable"] == 8

    def test_a_gzip_file_as_tensorflow_writes_one(self, tmp_path: Path) -> None:
        import gzip

        raw = write_tfrecord(tmp_path / "raw.tfrecord", [0, 9, 1]).read_bytes()
        (tmp_path / "raw.tfrecord").unlink()
        (tmp_path / "train.tfrecord.gz").write_bytes(gzip.compress(raw))
        assert choose([str(tmp_path / "train.tfrecord.gz")]).reader.name == "tfrecord"
        assert ids(validate([str(tmp_path)]), "LG004") == {"train.tfrecord.gz:1"}

    def test_planted_faults_named_by_shard_and_index(self, tmp_path: Path) -> None:
        write_tfrecord(tmp_path / "a.tfrecord", [0, 1, 2, 3])
        write_tfrecord(tmp_path / "b.tfrecord", [0, 4, -1, 3])
        report = validate([str(tmp_path)])
        assert ids(report, "LG004") == {"b.tfrecord:1"}
        assert ids(report, "LG005") == {"b.tfrecord:2"}

    def test_a_one_based_shard_is_lg011_naming_it(self, tmp_path: Path) -> None:
        write_tfrecord(tmp_path / "train-00000-of-00002", [0, 1, 2, 3, 0, 2])
        write_tfrecord(tmp_path / "train-00001-of-00002", [1, 2, 3, 4, 4, 2])  # ImageNet's 1..K
        report = validate([str(tmp_path)])
        (f,) = [f for f in report.findings if f.code == "LG011"]
        assert "train-00001-of-00002" in f.message
        assert "train-00000-of-00002" not in f.details["sources"]

    def test_class_texts_prove_the_one_based_shard(self, tmp_path: Path) -> None:
        from labelgate.contract.classmap import ClassMap

        names = ["cat", "dog", "bird", "fish"]
        for s, shift in ((0, 0), (1, 1)):  # the second shard numbers the same classes 1..4
            writer = tfrecord.TFRecordWriter(str(tmp_path / f"train-{s:05d}-of-00002"))
            for i in [0, 1, 2, 3, 1, 2]:
                writer.write(
                    {
                        "image/encoded": (os.urandom(256), "byte"),
                        "image/class/label": (i + shift, "int"),
                        "image/class/text": (names[i].encode(), "byte"),
                    }
                )
            writer.close()
        cmap = ClassMap.from_names(names, origin="classes.txt")
        report = run([str(tmp_path)], Contract(class_map=cmap), max_examples=0).report
        (f,) = [f for f in report.findings if f.code == "LG011"]
        assert f.severity == "error"  # proven by the names, not only a pattern
        assert set(f.details["sources"]) == {"train-00001-of-00002"}

    def test_fix_shifts_the_one_based_shard_alone(self, tmp_path: Path) -> None:
        import pyarrow.parquet as pq

        write_tfrecord(tmp_path / "in" / "a-00000-of-00002", [0, 1, 2, 3])
        write_tfrecord(tmp_path / "in" / "a-00001-of-00002", [1, 2, 3, 4])
        out = tmp_path / "fixed.parquet"
        done = run_here(
            "fix", str(tmp_path / "in"), "--classes", "4",
            "--shift", "a-00001-of-00002=-1", "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        table = pq.read_table(out)
        assert table["image/class/label"].to_pylist() == [0, 1, 2, 3, 0, 1, 2, 3]
        assert table["id"].to_pylist()[4] == "a-00001-of-00002:0"

    def test_the_label_feature_named(self, tmp_path: Path) -> None:
        write_tfrecord(tmp_path / "a.tfrecord", [0, 7, 1], feature="target")
        report = validate([str(tmp_path / "a.tfrecord")], label_column="target")
        assert ids(report, "LG004") == {"a.tfrecord:1"}

    def test_no_label_feature_lists_the_features(self, tmp_path: Path) -> None:
        write_tfrecord(tmp_path / "a.tfrecord", [0], feature="target")
        done = run_here("validate", str(tmp_path / "a.tfrecord"), "--classes", "4")
        assert done.returncode == 2
        assert "LG001" in done.stderr and "target" in done.stderr
        assert "Traceback" not in done.stderr
        given = run_here("validate", str(tmp_path / "a.tfrecord"), "--label-column", "y", "-k", "4")
        assert given.returncode == 2 and "label feature 'y'" in given.stderr

    @pytest.mark.parametrize("where", ["length crc", "data crc", "truncated"])
    def test_a_bad_crc_or_a_cut_file_is_refused_naming_it(self, tmp_path: Path, where: str) -> None:
        path = write_tfrecord(tmp_path / "bad.tfrecord", [0, 1, 2])
        raw = bytearray(path.read_bytes())
        if where == "length crc":
            raw[8] ^= 0xFF
        elif where == "data crc":
            raw[20] ^= 0xFF
        else:
            raw = raw[:-3]
        path.write_bytes(bytes(raw))
        with pytest.raises(InputError, match="record"):
            list(records(path, "bad.tfrecord"))
        done = run_here("validate", str(path), "--classes", "4", "--input-format", "tfrecord")
        assert done.returncode == 2, done.stdout
        record = 2 if where == "truncated" else 0
        assert f"bad.tfrecord: unreadable TFRecord shard: record {record}" in done.stderr
        assert "Traceback" not in done.stderr

    def test_records_whose_label_is_no_single_integer_are_rejected(self, tmp_path: Path) -> None:
        writer = tfrecord.TFRecordWriter(str(tmp_path / "a.tfrecord"))
        for value in ((1, "int"), ([1, 2], "int"), (0.5, "float"), (b"cat", "byte")):
            writer.write({"image/encoded": (b"x" * 64, "byte"), "image/class/label": value})
        writer.close()
        report = validate([str(tmp_path / "a.tfrecord")])
        assert ids(report, "LG031") == {"a.tfrecord:1", "a.tfrecord:2", "a.tfrecord:3"}
        assert report.counts["rejected"] == 3 and report.counts["usable"] == 1

    def test_detection_records_with_a_label_map(self, tmp_path: Path) -> None:
        (tmp_path / "label_map.pbtxt").write_text(
            "item {\n  id: 1\n  name: 'cat'\n}\nitem {\n  id: 2\n  name: 'dog'\n}\n"
        )
        writer = tfrecord.TFRecordWriter(str(tmp_path / "train.record"))
        for labels, texts in (([1, 2], [b"cat", b"dog"]), ([2, 3], [b"dog", b"dog"])):
            writer.write(
                {
                    "image/encoded": (os.urandom(512), "byte"),
                    "image/object/class/label": (labels, "int"),
                    "image/object/class/text": (texts, "byte"),
                }
            )
        writer.close()
        report = run([str(tmp_path / "train.record")], Contract(), max_examples=0).report
        assert report.input["annotations"]["task"] == "detection"
        assert "train.record:1:1" in ids(report, "LG004")


_FEATURE_VALUES = st.one_of(
    st.tuples(st.just("int64"), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4)),
    st.tuples(st.just("bytes"), st.lists(st.binary(max_size=300), max_size=3)),
    st.tuples(st.just("float"), st.lists(st.just(0.5), max_size=3)),
)


class TestExampleWire:
    @settings(max_examples=150, deadline=None)
    @given(
        st.dictionaries(
            st.sampled_from(["label", "image/encoded", "image/class/label", "é", "x" * 200]),
            _FEATURE_VALUES,
            max_size=4,
        )
    )
    def test_features_are_the_ones_protobuf_parses(self, feats: dict[str, Any]) -> None:
        from tfrecord import example_pb2

        from labelgate.readers.shards.example import features

        message = example_pb2.Example()
        for name, (kind, values) in feats.items():
            getattr(message.features.feature[name], f"{kind}_list").value.extend(values)
        wire = memoryview(message.SerializeToString())
        found = features(wire, [*feats, "absent"])
        assert "absent" not in found
        for name, (kind, values) in feats.items():
            assert found[name] == (kind, values)
