"""The HTML report's pictures of flagged annotations (render/pictures.py): one for each kind of
shape, bounded in count and bytes, on a blank canvas without images, never read outside the
images folder, escaped, and laid out inside their cards in headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import labelgate
from labelgate.render import pictures
from labelgate.render.html import render_html
from tests.support.chromium import dump_dom

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
BLUE = (0, 0, 255)  # the images' colour
GREEN = (0, 255, 0)  # the colour of the file outside the images folder
CATEGORIES = [
    {"id": 1, "name": "person", "keypoints": ["nose", "eye"], "skeleton": []},
    {"id": 2, "name": "car"},
]


def _png(path: Path, colour: tuple[int, int, int], size: tuple[int, int] = (64, 48)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def _coco(tmp_path: Path, annotations: list[dict[str, Any]], names: list[str]) -> Path:
    images = [{"id": i + 1, "file_name": n, "width": 64, "height": 48} for i, n in enumerate(names)]
    for n in names:
        if "/" not in n and "<" not in n:
            _png(tmp_path / "images" / n, BLUE)
    for i, a in enumerate(annotations):
        a.setdefault("id", 100 + i)
        a.setdefault("image_id", 1)
        a.setdefault("category_id", 2)
        a.setdefault("iscrowd", 0)
    path = tmp_path / "annotations.json"
    doc = {"images": images, "annotations": annotations, "categories": CATEGORIES}
    path.write_text(json.dumps(doc))
    return path


def _kinds(tmp_path: Path) -> Path:
    """A box past the edge, a box without width, a polygon of two points, keypoints with a
    visibility of 3: each its own check."""
    return _coco(
        tmp_path,
        [
            {"bbox": [40, 10, 40, 20]},
            {"bbox": [10, 10, 0, 20]},
            {"bbox": [5, 5, 20, 20], "segmentation": [[5, 5, 25, 25]], "area": 1},
            {
                "bbox": [5, 5, 30, 30],
                "category_id": 1,
                "keypoints": [10, 10, 2, 20, 20, 3],
                "num_keypoints": 2,
            },
        ],
        ["a.png"],
    )


def _validate(path: Path, **options: Any) -> labelgate.ValidationReport:
    return labelgate.validate(str(path), classes=3, **options)


def _sections(page: str) -> dict[str, list[bytes]]:
    """Each finding's pictures (decoded PNG bytes) by code, from the page."""
    out: dict[str, list[bytes]] = {}
    for block in re.split(r"<h3>", page)[1:]:
        code = block[:5]
        found = re.findall(r'src="data:image/png;base64,([^"]+)"', block)
        out.setdefault(code, []).extend(base64.b64decode(b) for b in found)
    return out


def _colours(png: bytes) -> set[tuple[int, int, int]]:
    im = Image.open(io.BytesIO(png)).convert("RGB")
    return {c for _, c in im.getcolors(im.width * im.height) or []}


class TestKinds:
    def test_each_kind_is_drawn_over_its_image(self, tmp_path: Path) -> None:
        report = _validate(_kinds(tmp_path), images=str(tmp_path / "images"))
        page = render_html(report)
        drawn = _sections(page)
        for code in ("LG027", "LG028", "LG044", "LG046"):
            assert drawn.get(code), f"no picture for {code}"
            assert BLUE in _colours(drawn[code][0]), f"{code} not drawn over its image"
            assert (224, 49, 49) in _colours(drawn[code][0]), f"{code}: no annotation drawn"
        kinds = {f.code: e.drawing.kind for f in report.findings for e in f.examples if e.drawing}
        assert kinds["LG028"] == "box" and kinds["LG044"] == "polygon"
        assert kinds["LG046"] == "keypoints"
        assert report._repr_html_().count("data:image/png") == page.count("data:image/png")

    def test_yolo_images_beside_labels(self, tmp_path: Path) -> None:
        """YOLO's normalised box drawn over images/ beside labels/ (its conventional place)."""
        (tmp_path / "labels").mkdir()
        (tmp_path / "labels" / "img_0.txt").write_text("0 0.9 0.5 0.4 0.2\n")
        _png(tmp_path / "images" / "img_0.jpg", BLUE, (80, 40))
        (tmp_path / "data.yaml").write_text("nc: 2\nnames: [a, b]\n")
        report = labelgate.validate(str(tmp_path))
        drawn = _sections(render_html(report))["LG028"]
        assert len(drawn) == 1
        assert any(
            max(abs(c - b) for c, b in zip(col, BLUE, strict=True)) < 40
            for col in _colours(drawn[0])
        )  # a JPEG: about blue

    @pytest.mark.parametrize(
        ("sample", "args", "code"),
        [
            ("masks/jpeg", {"classes": 3, "input_format": "masks"}, "LG037"),
            ("masks/binary_0_255", {"classes": 2}, "LG036"),
        ],
    )
    def test_masks(self, sample: str, args: dict[str, Any], code: str) -> None:
        report = labelgate.validate(str(SAMPLES / sample), **args)
        drawn = _sections(render_html(report))[code]
        assert drawn and (224, 49, 49) in _colours(drawn[0])


class TestBounds:
    def test_count_per_check(self, tmp_path: Path) -> None:
        boxes = [{"bbox": [50, 10, 30, 20 + i]} for i in range(12)]
        report = _validate(_coco(tmp_path, boxes, ["a.png"]), images=str(tmp_path / "images"))
        assert len(_sections(render_html(report))["LG028"]) == pictures.PER_CHECK

    def test_bytes_in_all(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        report = _validate(_kinds(tmp_path), images=str(tmp_path / "images"))
        full = [p for ps in _sections(render_html(report)).values() for p in ps]
        assert sum(map(len, full)) <= pictures.TOTAL_BYTES
        monkeypatch.setattr(pictures, "TOTAL_BYTES", len(full[0]) + 1)
        page = render_html(report)
        kept = [p for ps in _sections(page).values() for p in ps]
        assert len(kept) == 1
        assert f"{len(full) - 1} more pictures left out" in page

    def test_pixel_cap(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        report = _validate(_kinds(tmp_path), images=str(tmp_path / "images"))
        monkeypatch.setattr(pictures, "MAX_PIXELS", 100)
        page = render_html(report)
        assert "image of 64 x 48 pixels not opened (over 100)" in page
        assert all(BLUE not in _colours(p) for ps in _sections(page).values() for p in ps)

    def test_decompression_bomb(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        report = _validate(_kinds(tmp_path), images=str(tmp_path / "images"))
        monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)  # 64 x 48 is past twice that
        assert "image refused (a decompression bomb)" in render_html(report)


class TestFallbacks:
    def test_blank_canvas_without_images(self, tmp_path: Path) -> None:
        path = _kinds(tmp_path)
        (tmp_path / "images" / "a.png").unlink()
        (tmp_path / "images").rmdir()
        page = render_html(_validate(path))
        drawn = _sections(page)
        for code in ("LG027", "LG028", "LG044", "LG046"):
            colours = _colours(drawn[code][0])
            assert BLUE not in colours and (255, 255, 255) in colours  # the blank image area
        assert "no image at hand: drawn on a blank canvas" in page

    def test_without_pillow(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        report = _validate(_kinds(tmp_path), images=str(tmp_path / "images"))
        monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL raises ImportError
        page = render_html(report)
        assert page.count(pictures.NEEDS_PILLOW.replace("'", "&#x27;")) == 1
        assert "data:image/png" not in page and "<h2>Plots</h2>" in page

    def test_no_line_where_nothing_is_drawn(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "PIL", None)
        report = labelgate.validate(str(SAMPLES / "oob_0_2_4.parquet"), classes=4)
        assert "Pillow" not in render_html(report)


class TestSafety:
    def test_traversal_is_refused(self, tmp_path: Path) -> None:
        """A file name leaving the images folder is never opened: the secret's pixels never
        reach the page."""
        root = tmp_path / "data"
        _png(root / "secret.png", GREEN)
        _png(root / "images" / "a.png", BLUE)
        path = _coco(root, [{"bbox": [50, 10, 30, 20]}], ["../secret.png"])
        report = _validate(path, images=str(root / "images"))
        assert any(f.code == "LG041" for f in report.findings)
        page = render_html(report)
        drawn = _sections(page)["LG028"]
        assert drawn and all(GREEN not in _colours(p) for p in drawn)
        assert "image not opened (" in page

    def test_link_leaving_the_folder(self, tmp_path: Path) -> None:
        root = tmp_path / "data"
        _png(tmp_path / "secret.png", GREEN)
        (root / "images").mkdir(parents=True)
        (root / "images" / "a.png").symlink_to(tmp_path / "secret.png")
        path = _coco(root, [{"bbox": [50, 10, 30, 20]}], ["a.png"])
        page = render_html(_validate(path, images=str(root / "images")))
        assert all(GREEN not in _colours(p) for p in _sections(page)["LG028"])

    def test_names_are_escaped(self, tmp_path: Path) -> None:
        hostile = "<img src=x onerror=alert(1)>.png"
        path = _coco(tmp_path, [{"bbox": [50, 10, 30, 20]}], [hostile])
        page = render_html(_validate(path))
        assert hostile not in page
        assert "&lt;img src=x onerror=alert(1)&gt;.png" in page
        assert "<script" not in page.lower()


# Run only in the test's copy of the page (the report itself holds no script): each picture's
# decoded width, and whether it and its caption lie inside their card.
_LAYOUT = """<script>
window.addEventListener('load', () => {
  const inside = (r, c) => r.left >= c.left - 0.5 && r.right <= c.right + 0.5 &&
    r.top >= c.top - 0.5 && r.bottom <= c.bottom + 0.5 && r.width > 0 && r.height > 0;
  const rows = [];
  for (const card of document.querySelectorAll('figure.picture')) {
    const c = card.getBoundingClientRect();
    const img = card.querySelector('img'), cap = card.querySelector('figcaption');
    rows.push([img.naturalWidth, inside(img.getBoundingClientRect(), c),
               inside(cap.getBoundingClientRect(), c)].join(','));
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = rows.join(';');
  document.body.appendChild(pre);
});
</script>"""


def _laid_out(page: str, tmp_path: Path) -> list[tuple[int, bool, bool]]:
    """Each picture's (naturalWidth, image inside its card, caption inside its card), from
    headless Chromium at 1,400 px (CI installs Chromium: .ci/run)."""
    copy = page.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    target = tmp_path / "layout.html"
    target.write_text(copy.replace("</body>", _LAYOUT + "</body>"))
    dom = dump_dom(target, "--window-size=1400,1000", "--virtual-time-budget=5000")
    found = re.search(r'<pre id="layout">([^<]*)</pre>', dom)
    assert found is not None, "the layout script did not run"
    rows = [r.split(",") for r in found[1].split(";") if r]
    return [(int(w), a == "true", b == "true") for w, a, b in rows]


class TestChromium:
    def test_every_picture_inside_its_card(self, tmp_path: Path) -> None:
        hostile = "a_very_long_file_name_without_any_break_" * 3 + ".png"
        path = _coco(
            tmp_path,
            [
                {"bbox": [40, 10, 40, 20]},
                {"bbox": [10, 10, 0, 20]},
                {"bbox": [5, 5, 20, 20], "segmentation": [[5, 5, 25, 25]], "area": 1},
                {"bbox": [50, 10, 3000, 20], "image_id": 2},  # far past the edge
                {"bbox": [5, 5, 1, 40], "image_id": 2},
            ],
            ["a.png", hostile],
        )
        page = render_html(_validate(path, images=str(tmp_path / "images")))
        masks = render_html(
            labelgate.validate(str(SAMPLES / "masks/jpeg"), classes=3, input_format="masks")
        )
        both = page.replace(
            "</body>", masks.split("<body>", 1)[1].rsplit("</body>", 1)[0] + "</body>"
        )
        laid = _laid_out(both, tmp_path)
        assert len(laid) == both.count('<figure class="picture">') >= 6
        for width, image_inside, caption_inside in laid:
            assert width > 0 and image_inside and caption_inside


class TestBoxesPerImage:
    def test_counted_over_all_classes_and_per_class(self, tmp_path: Path) -> None:
        """Image 1 holds three boxes (two of class 2, one of class 1), image 2 one, image 3
        none: the histogram counts images by their boxes, the table each class's images."""
        boxes = [
            {"bbox": [1, 1, 5, 5]},
            {"bbox": [2, 2, 5, 5]},
            {"bbox": [3, 3, 5, 5], "category_id": 1},
            {"bbox": [3, 3, 5, 5], "image_id": 2},
        ]
        report = _validate(_coco(tmp_path, boxes, ["a.png", "b.png", "c.png"]))
        counted = report.input["annotations"]["boxes_per_image"]
        assert counted["images"] == 3
        assert counted["histogram"] == [1, 1, 0, 1]
        by_class = {c["label"]: c for c in counted["classes"]}
        assert by_class[2] == {"label": 2, "images": 2, "mean": 1.5, "most": 2}
        assert by_class[1] == {"label": 1, "images": 1, "mean": 1.0, "most": 1}
        page = render_html(report)
        assert 'id="plot-boxes"' in page and "boxes per image (3 images)" in page


def test_boxes_per_class_are_counted_as_one_pass_per_class_would() -> None:
    """The per-class figures from one sort equal each class counted on its own, the first
    ``CLASSES`` classes listed."""
    import numpy as np

    from labelgate.run import boxcounts

    rng = np.random.default_rng(5)
    image, label = rng.integers(0, 40, 3000), rng.integers(-3, boxcounts.CLASSES + 30, 3000)
    got = boxcounts._per_class(np.sort(label * 40 + image), 40)
    want = []
    for k in np.unique(label)[: boxcounts.CLASSES].tolist():
        counts = np.bincount(image[label == k])
        counts = counts[counts > 0]
        want.append(
            {
                "label": k,
                "images": int(counts.size),
                "mean": round(float(counts.mean()), 2),
                "most": int(counts.max()),
            }
        )
    assert got == want


@pytest.mark.parametrize(
    ("sample", "kind"),
    [
        ("formats/coco_instances_bad.json", "polygon"),
        ("formats/coco_keypoints_bad.json", "keypoints"),
    ],
)
def test_the_instance_and_keypoint_samples_draw_their_thumbnails(sample: str, kind: str) -> None:
    report = labelgate.validate(str(SAMPLES / sample))
    drawn = [e.drawing for f in report.findings for e in f.examples if e.drawing is not None]
    assert kind in {d.kind for d in drawn}
    assert render_html(report).count('<figure class="picture">') >= 1


def test_the_instance_and_keypoint_samples_lie_inside_their_cards(tmp_path: Path) -> None:
    pages = [
        render_html(labelgate.validate(str(SAMPLES / s)))
        for s in ("formats/coco_instances_bad.json", "formats/coco_keypoints_bad.json")
    ]
    both = pages[0].replace(
        "</body>", pages[1].split("<body>", 1)[1].rsplit("</body>", 1)[0] + "</body>"
    )
    laid = _laid_out(both, tmp_path)
    assert len(laid) == both.count('<figure class="picture">') >= 2
    for width, image_inside, caption_inside in laid:
        assert width > 0 and image_inside and caption_inside
