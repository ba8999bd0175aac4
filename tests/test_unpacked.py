"""Packed inputs: gzip and zstd files, TSV, standard input, CVAT and Label Studio zip exports,
each read as what it holds and named as given; decompression bombs and zip-slip names refused."""

from __future__ import annotations

import io
import json
import stat
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from labelgate.io import packed

from .conftest import SAMPLES, cli_here, digest

FORMATS = SAMPLES / "formats"


def report(*args: str) -> dict[str, Any]:
    result = cli_here("validate", *args, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def verdict(r: dict[str, Any]) -> tuple[Any, ...]:
    """What a report finds, without the paths that name its input."""
    found = [(f["code"], f["count"], [e.get("id") for e in f["examples"]]) for f in r["findings"]]
    return r["counts"], found


def compress(source: Path, target: Path, codec: str) -> Path:
    with pa.CompressedOutputStream(str(target), codec) as out:
        out.write(source.read_bytes())
    return target


def csv_of(tmp_path: Path, name: str = "clean.csv", delimiter: str = ",") -> Path:
    table = pq.read_table(SAMPLES / "oob_0_2_4.parquet")
    path = tmp_path / name
    pcsv.write_csv(table, path, pcsv.WriteOptions(delimiter=delimiter))
    return path


def refused(*args: str) -> str:
    result = cli_here("validate", *args)
    assert result.returncode == 2, result.stdout
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("labelgate: error: ")
    return result.stderr


class TestCompressed:
    @pytest.mark.parametrize("codec, suffix", [("gzip", ".gz"), ("zstd", ".zst")])
    @pytest.mark.parametrize("kind", ["csv", "jsonl", "coco"])
    def test_reads_as_the_file_it_holds(
        self, tmp_path: Path, kind: str, codec: str, suffix: str
    ) -> None:
        plain = {
            "csv": csv_of(tmp_path, "labels.csv"),
            "jsonl": SAMPLES / "clean.jsonl",
            "coco": FORMATS / "coco_bad.json",
        }[kind]
        packed_file = compress(plain, tmp_path / f"given{plain.suffix}{suffix}", codec)
        before = digest(packed_file)
        r = report(str(packed_file), "--classes", "4")
        assert verdict(r) == verdict(report(str(plain), "--classes", "4"))
        assert [f["path"] for f in r["input"]["files"]] == [str(packed_file)]
        assert f"{packed_file}: decompressed ({codec}" in r["notes"][0]
        assert digest(packed_file) == before

    def test_examples_name_the_compressed_file(self, tmp_path: Path) -> None:
        a = compress(csv_of(tmp_path, "a.csv"), tmp_path / "a.csv.gz", "gzip")
        b = compress(csv_of(tmp_path, "b.csv"), tmp_path / "b.csv.gz", "gzip")
        r = report(str(a), str(b), "--classes", "4")
        (high,) = [f for f in r["findings"] if f["code"] == "LG004"]
        assert {e["file"] for e in high["examples"]} == {str(a), str(b)}

    def test_a_file_that_is_not_its_codec(self, tmp_path: Path) -> None:
        fake = tmp_path / "labels.csv.gz"
        fake.write_text("label\n1\n")
        assert "not gzip data" in refused(str(fake), "--classes", "4")

    def test_a_tar_gz_is_still_the_shard_readers(self) -> None:
        assert packed_kind("train-000.tar.gz") is None
        assert packed_kind("instances.json.gz") == "gzip"
        assert packed_kind("labels.jsonl.zst") == "zstd"


def packed_kind(name: str) -> str | None:
    from labelgate.readers.manifest import packing

    return packing(name)


class TestTsv:
    def test_a_tsv_reads_as_its_csv_does(self, tmp_path: Path) -> None:
        tsv = csv_of(tmp_path, "labels.tsv", "\t")
        r = report(str(tsv), "--classes", "4")
        assert verdict(r) == verdict(report(str(csv_of(tmp_path)), "--classes", "4"))
        assert r["input"]["files"][0]["format"] == "tsv"
        assert "LG004" in {f["code"] for f in r["findings"]}

    def test_a_compressed_tsv(self, tmp_path: Path) -> None:
        tsv = compress(csv_of(tmp_path, "labels.tsv", "\t"), tmp_path / "labels.tsv.zst", "zstd")
        assert report(str(tsv), "--classes", "4")["input"]["files"][0]["format"] == "tsv"


def piped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes) -> Path:
    """Standard input holding ``data``, and the folder temporary files are made in."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


class TestStdin:
    @pytest.mark.parametrize("kind", ["parquet", "csv", "tsv", "jsonl", "csv.gz"])
    def test_told_by_its_content_and_removed_after(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str
    ) -> None:
        given = {
            "parquet": SAMPLES / "oob_0_2_4.parquet",
            "csv": csv_of(tmp_path),
            "tsv": csv_of(tmp_path, "labels.tsv", "\t"),
            "jsonl": SAMPLES / "clean.jsonl",
            "csv.gz": compress(csv_of(tmp_path), tmp_path / "x.csv.gz", "gzip"),
        }[kind]
        plain = report(str(given), "--classes", "4")
        scratch = piped(monkeypatch, tmp_path, given.read_bytes())
        r = report("-", "--classes", "4")
        assert verdict(r) == verdict(plain)
        assert [f["path"] for f in r["input"]["files"]] == ["-"]
        assert (
            r["notes"][0].startswith("standard input: ") and "told by its content" in r["notes"][0]
        )
        assert list(scratch.iterdir()) == []  # the spooled copy is gone

    def test_a_coco_file_piped(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        coco = FORMATS / "coco_bad.json"
        plain = report(str(coco))
        piped(monkeypatch, tmp_path, coco.read_bytes())
        r = report("-")
        assert verdict(r) == verdict(plain) and r["input"]["files"][0]["format"] == "coco"

    def test_empty_and_given_twice(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        piped(monkeypatch, tmp_path, b"")
        assert "standard input is empty" in refused("-", "--classes", "4")
        assert "can be read once" in refused("-", "-", "--classes", "4")


def zipped(target: Path, members: dict[str, Path | bytes]) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in members.items():
            data = content if isinstance(content, bytes) else content.read_bytes()
            z.writestr(name, data)
    return target


class TestZipExports:
    def test_cvat_for_images(self, tmp_path: Path) -> None:
        folder = tmp_path / "cvat"
        folder.mkdir()
        (folder / "annotations.xml").write_bytes((FORMATS / "cvat_bad.xml").read_bytes())
        export = zipped(tmp_path / "task.zip", {"annotations.xml": FORMATS / "cvat_bad.xml"})
        r = report(str(export))
        assert verdict(r) == verdict(report(str(folder)))
        assert r["input"]["files"] == [{"path": str(export), "format": "cvat"}]
        assert (
            r["notes"][0] == f"{export}: a zip archive of 1 file(s), read as the folder they make"
        )

    def test_cvat_coco_export(self, tmp_path: Path) -> None:
        name = "annotations/instances_default.json"
        export = zipped(tmp_path / "coco.zip", {name: FORMATS / "coco_bad.json"})
        r = report(str(export))
        assert r["input"]["files"][0]["format"] == "coco"
        assert verdict(r) == verdict(report(str(FORMATS / "coco_bad.json")))

    def test_cvat_yolo_export_in_one_folder(self, tmp_path: Path) -> None:
        root = FORMATS / "yolo_bad"
        members: dict[str, Path | bytes] = {
            f"export/{f.relative_to(root)}": f for f in root.rglob("*") if f.is_file()
        }
        r = report(str(zipped(tmp_path / "yolo.zip", members)))
        assert r["input"]["files"][0]["format"] == "yolo"
        assert verdict(r) == verdict(report(str(root)))

    @pytest.mark.parametrize("minimal", [False, True])
    def test_label_studio_json_and_json_min(self, tmp_path: Path, minimal: bool) -> None:
        if minimal:
            rows = [{"id": 5, "image": "/a.jpg", "annotation_id": 9, "label": []}]
            rows[0]["label"] = [
                {"x": 1, "y": 1, "width": 5, "height": 5, "rectanglelabels": ["cat"]},
                {"x": 1, "y": 1, "width": 0, "height": 5, "rectanglelabels": ["cat"]},
            ]
            export = tmp_path / "export_min.json"
            export.write_text(json.dumps(rows))
            members: dict[str, Path | bytes] = {"project-1-at-2026.json": export}
        else:  # the labelling config beside the export, as the folder holds it
            export = FORMATS / "labelstudio_bad" / "export.json"
            config = export.with_name("label_config.xml")
            members = {"project-1-at-2026.json": export, "label_config.xml": config}
        plain = report(str(export))
        r = report(str(zipped(tmp_path / "ls.zip", members)))
        assert r["input"]["files"][0]["format"] == "labelstudio"
        assert verdict(r) == verdict(plain)


class TestBounds:
    def test_a_gzip_bomb(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.setattr(packed, "MAX_UNPACKED", 1 << 20)
        zeros = tmp_path / "zeros.csv"
        zeros.write_bytes(b"label\n" + b"0" * (2 << 20))
        bomb = compress(zeros, tmp_path / "bomb.csv.gz", "gzip")
        assert bomb.stat().st_size < 10_000
        error = refused(str(bomb), "--classes", "4")
        assert f"{bomb}: more than 1 MB once unpacked" in error and "decompression bombs" in error

    def test_a_zip_bomb_counts_what_inflates(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setattr(packed, "MAX_UNPACKED", 1 << 20)
        members: dict[str, Path | bytes] = {f"{i}.json": b" " * (300 << 10) for i in range(4)}
        error = refused(str(zipped(tmp_path / "bomb.zip", members)))
        assert "more than 1 MB once unpacked" in error

    def test_standard_input_is_bounded(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setattr(packed, "MAX_UNPACKED", 1 << 20)
        scratch = piped(monkeypatch, tmp_path, b"label\n" + b"1\n" * (1 << 20))
        assert "-: more than 1 MB once unpacked" in refused("-", "--classes", "4")
        assert list(scratch.iterdir()) == []

    @pytest.mark.parametrize("name", ["../evil.csv", "/tmp/evil.csv", "a/../../evil.csv", "C:/x"])
    def test_zip_slip_names_are_refused(self, tmp_path: Path, name: str) -> None:
        export = zipped(tmp_path / "slip.zip", {"labels.csv": b"label\n1\n", name: b"label\n1\n"})
        (tmp_path / "work").mkdir()
        error = refused(str(export), "--classes", "4")
        assert "leads outside the archive" in error
        assert not (tmp_path / "evil.csv").exists()

    def test_links_in_a_zip_are_skipped(self, tmp_path: Path) -> None:
        export = tmp_path / "linked.zip"
        with zipfile.ZipFile(export, "w") as z:
            z.writestr("annotations.xml", (FORMATS / "cvat_good.xml").read_bytes())
            link = zipfile.ZipInfo("images")
            link.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(link, "/etc")
        r = report(str(export))
        assert r["input"]["files"][0]["format"] == "cvat"
        assert "1 file(s)" in r["notes"][0]  # the link is not a file written out


def test_fix_writes_parquet_beside_out_and_leaves_the_input(tmp_path: Path) -> None:
    given = compress(csv_of(tmp_path), tmp_path / "labels.csv.gz", "gzip")
    before = digest(given)
    out, rejected = tmp_path / "fixed.parquet", tmp_path / "rejected.parquet"
    result = cli_here(
        "fix", str(given), "--classes", "4", "--out", str(out), "--quarantine", str(rejected)
    )
    assert result.returncode == 0, result.stderr
    assert digest(given) == before
    fixed = pq.read_table(out)
    assert fixed.num_rows + pq.read_table(rejected).num_rows == 3
