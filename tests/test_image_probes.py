"""The image checks' per-image work kept small without changing a verdict: file names joined as
strings give the path ``pathlib`` gives (or the same refusal), a file read whole and one opened
as a file give the same probe, and a chunk sends back only the probes that hold a finding."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.images import imagedecode
from labelgate.readers.images.imagecheck import EMPTY, _named, _rooted
from labelgate.readers.images.imagedecode import LEAVES, MISSING

from .test_images import bomb, jpeg, png

ROOTS = [Path("/data/images"), Path(), Path("/"), Path("rel/dir"), Path("a b/c")]


def oracle(root: Path, file: str) -> tuple[str | None, str]:
    """The name checked and joined with pathlib, as the checks did before they used strings (a
    name that pathlib joins to the folder itself is refused)."""
    name = file.replace("\\", "/")
    pure = PurePosixPath(name)
    if pure.is_absolute() or PureWindowsPath(file).drive or ".." in pure.parts:
        return None, LEAVES
    if not pure.parts:  # '', '.', './': the folder itself, never read as an image
        return None, EMPTY
    return str(root / pure), ""


names = st.text(alphabet="ab.:/\\C é", max_size=12)


class TestNamed:
    @settings(max_examples=400, deadline=None)
    @given(root=st.sampled_from(ROOTS), file=names)
    def test_a_name_joins_or_is_refused_as_pathlib_would(self, root: Path, file: str) -> None:
        r = ImageRecord(key=1, name="image 1", file=file)
        assert _named(_rooted(root), r) == oracle(root, file)

    @pytest.mark.parametrize(
        "file",
        ["../x.jpg", "a/../../x.jpg", "/etc/hostname", "C:x.jpg", "c:\\x.jpg", "\\\\srv\\s\\x"],
    )
    def test_names_leaving_the_folder_are_refused(self, file: str) -> None:
        r = ImageRecord(key=1, name="image 1", file=file)
        assert _named(_rooted(Path("/data")), r) == (None, LEAVES)

    def test_a_yolo_stem_finds_its_image_by_listing(self, tmp_path: Path) -> None:
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "a.PNG").write_bytes(b"")
        (tmp_path / "sub" / "a.txt").write_bytes(b"")
        root = _rooted(tmp_path)
        found = _named(root, ImageRecord(key=1, name="a", file="sub/a", stem=True))
        assert found == (str(tmp_path / "sub" / "a.PNG"), "")
        gone = _named(root, ImageRecord(key=2, name="b", file="sub/b", stem=True))
        assert gone == (None, MISSING)


def verdict(p: imagedecode.Probe) -> tuple[object, ...]:
    return p.missing, p.error is None, p.bomb, p.size, p.oriented


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    """One image of each kind the probe tells apart."""
    jpeg(tmp_path / "good.jpg", (100, 80))
    jpeg(tmp_path / "turned.jpg", (100, 80), orientation=6)
    png(tmp_path / "good.png", (64, 48))
    noisy = tmp_path / "noisy.jpg"  # scan data past the header: a cut keeps the header whole
    Image.effect_noise((300, 200), 60).convert("RGB").save(noisy, "JPEG", quality=95)
    data = noisy.read_bytes()
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) // 2])
    (tmp_path / "noise.png").write_bytes(b"not an image" * 10)
    bomb(tmp_path / "bomb.png")
    os.mkfifo(tmp_path / "fifo.jpg")
    names = ["good.jpg", "turned.jpg", "good.png", "cut.jpg", "noise.png", "bomb.png"]
    return [str(tmp_path / n) for n in [*names, "fifo.jpg", "gone.jpg"]]


class TestProbe:
    def test_a_file_read_whole_and_one_opened_probe_alike(
        self, files: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        root = str(Path(files[0]).parent)
        whole = [imagedecode.probe(f, root) for f in files]
        monkeypatch.setattr(imagedecode, "WHOLE", -1)  # every file opened, its tail read apart
        opened = [imagedecode.probe(f, root) for f in files]
        # the verdict alike (an error's wording names the object Pillow read from)
        assert [verdict(p) for p in opened] == [verdict(p) for p in whole]
        good, turned, good_png, cut, noise, bombed, fifo, gone = whole
        assert good.oriented == (100, 80) and turned.oriented == (80, 100)
        assert good_png.size == (64, 48) and good.error is None and good_png.error is None
        assert cut.error is not None and "end-of-image" in cut.error  # verify() passed it
        assert noise.error is not None and not noise.bomb
        assert bombed.bomb
        assert fifo.error == "not a regular file"
        assert gone.missing == MISSING

    def test_a_chunk_sends_back_only_the_probes_that_hold_a_finding(self, files: list[str]) -> None:
        root = str(Path(files[0]).parent)
        sizes: list[tuple[float, float] | None] = [
            (100.0, 80.0),  # good.jpg: as recorded
            (80.0, 100.0),  # turned.jpg: recorded as it loads
            (64.0, 47.0),  # good.png: one pixel off
            (100.0, 80.0),
            None,
            None,
            None,
            None,
        ]
        items = [(f, root, s) for f, s in zip(files, sizes, strict=True)]
        found = imagedecode._probe_chunk(items)
        assert [at for at, _ in found] == [2, 3, 4, 5, 6, 7]
        assert found[0][1].size == (64, 48)
        clean = [(files[0], root, None), (files[1], root, (80.0, 100.0))]
        assert imagedecode._probe_chunk(clean) == []


def test_findings_keep_their_images_across_many_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from labelgate import Contract
    from labelgate.run.validation import run

    from .test_images import by_code, coco, ids

    monkeypatch.setattr(imagedecode, "CHUNK", 8)  # 80 images: 10 chunks on the process pool
    names = []
    for n in range(80):
        if n != 20:
            jpeg(tmp_path / f"{n}.jpg", (16, 12))
        names.append((f"{n}.jpg", 16, 13 if n in (3, 17, 38, 79) else 12))
    report = run([str(coco(tmp_path, names))], Contract(num_classes=2), max_examples=0).report
    found = by_code(report)
    assert ids(found["LG043"]) == {"image 4", "image 18", "image 39", "image 80"}
    assert ids(found["LG041"]) == {"image 21"}
