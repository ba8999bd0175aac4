"""Regenerate the screenshots in docs/img/: the HTML report of a bundled sample, and the pictures
of flagged annotations on the detection, mask, instance and keypoint inputs, as headless Chromium
draws them.

    python docs/screenshot.py

Needs labelgate installed and Chromium (``chromium`` or ``chromium-browser``) on the PATH.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "data_samples"
# the pictures' pages: only the findings' headings and their pictures shown
ONLY_PICTURES = (
    "<style>body>*{display:none}body>h3,body>.pictures{display:block}"
    "body>.pictures{display:flex}</style></head>"
)


_LABELGATE = (sys.executable, "-m", "labelgate", "validate")


def _report(args: list[str], page: Path, cwd: Path = SAMPLES) -> None:
    subprocess.run(
        [*_LABELGATE, *args, "--format", "html", "--output", str(page)],
        cwd=cwd,
        check=False,  # the samples fail validation (exit 1): that is what they show
        capture_output=True,
    )


def _shoot(chromium: str, page: Path, out: Path, size: str, tmp: str) -> None:
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--window-size={size}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
    )


def _trimmed(path: Path) -> None:
    """The screenshot cut below its last non-white row (the window is taller than the page)."""
    from PIL import Image, ImageChops

    with Image.open(path) as im:
        rgb = im.convert("RGB")
    box = ImageChops.difference(rgb, Image.new("RGB", rgb.size, "white")).getbbox()
    if box is not None:
        rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + 16))).save(path)


def _people(folder: Path) -> Path:
    """A small COCO input with its images: an instance polygon past its image's edge, a
    two-point polygon, and keypoints whose visibility is 3 (none of the bundled samples holds
    instance masks or keypoints with images)."""
    from PIL import Image, ImageDraw

    images = folder / "images"
    images.mkdir(parents=True)
    for i in range(2):
        im = Image.new("RGB", (160, 120), (233, 236, 239))
        pen = ImageDraw.Draw(im)
        pen.rectangle([30 + 20 * i, 20, 90 + 20 * i, 110], fill=(116, 143, 252))
        pen.ellipse([45 + 20 * i, 5, 75 + 20 * i, 35], fill=(250, 176, 5))
        im.save(images / f"person_{i}.png")
    doc = {
        "images": [
            {"id": i + 1, "file_name": f"person_{i}.png", "width": 160, "height": 120}
            for i in range(2)
        ],
        "categories": [
            {"id": 1, "name": "person", "keypoints": ["head", "hip", "foot"], "skeleton": []}
        ],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "iscrowd": 0,
                "bbox": [30, 5, 140, 105],
                "area": 9000,
                "segmentation": [[30, 20, 90, 20, 170, 110, 30, 110]],
            },
            {
                "id": 2,
                "image_id": 2,
                "category_id": 1,
                "iscrowd": 0,
                "bbox": [50, 20, 60, 90],
                "area": 10,
                "segmentation": [[50, 20, 110, 110]],
            },
            {
                "id": 3,
                "image_id": 2,
                "category_id": 1,
                "iscrowd": 0,
                "bbox": [50, 5, 60, 105],
                "area": 5400,
                "num_keypoints": 3,
                "keypoints": [80, 20, 2, 80, 70, 3, 80, 108, 2],
            },
        ],
    }
    path = folder / "people.json"
    path.write_text(json.dumps(doc))
    return path


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("needs chromium on the PATH")
    img = HERE / "img"
    img.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        _report(
            ["two_sources_one_based.parquet", "--classes", "4", "--class-names", "classes.txt"],
            page,
        )
        _shoot(chromium, page, img / "report.png", "1000,2200", tmp)
        people = _people(Path(tmp) / "people")
        shots = {
            "pictures-detection.png": (
                ["formats/coco_bad.json", "--classes", "4", "--background", "0"],
                SAMPLES,
            ),
            "pictures-shapes.png": (["formats/cvat_bad.xml"], SAMPLES),
            "pictures-masks.png": (
                ["masks/jpeg", "--classes", "3", "--input-format", "masks"],
                SAMPLES,
            ),
            "pictures-instances.png": ([people.name, "--classes", "2"], people.parent),
            "pictures-sample-instances.png": (["formats/coco_instances_bad.json"], SAMPLES),
            "pictures-sample-keypoints.png": (["formats/coco_keypoints_bad.json"], SAMPLES),
        }
        for name, (args, cwd) in shots.items():
            _report(args, page, cwd)
            page.write_text(page.read_text().replace("</head>", ONLY_PICTURES, 1))
            _shoot(chromium, page, img / name, "1400,1400", tmp)
            _trimmed(img / name)
    print(f"wrote {', '.join(['report.png', *shots])} in {img}")


if __name__ == "__main__":
    main()
