"""labelgate's image checks (exists, decodes, size) against a floor that only opens and verifies.

    python benchmarks/images.py [--images 2000] [--dir /tmp/labelgate-images] [--repeat 3]

Writes (once per count) a folder of images, 640x480 with a few shapes: 4 in 5 JPEG (one JPEG in
10 of those with EXIF orientation 6, recorded turned: 480x640), 1 in 5 PNG, and beside them a COCO
file listing each with its width and height and one box; one JPEG is cut in half (the planted
fault). Then, each in a fresh process, best of ``--repeat``:

- floor (2 processes):   `Image.open(path)`, `.size`, `.verify()` over the same files on 2
                         processes (chunks of 64): the least a check that each image decodes and
                         has its size pays;
- labelgate:             `labelgate validate FOLDER/annotations.coco.json --format json`: the COCO
                         file read and validated, the images beside it checked;
- labelgate, no images:  the same COCO file in a folder without its images (nothing to check): the
                         rest of the run, subtracted to isolate the image checks.

labelgate must name the cut JPEG (LG042) and nothing else, or the run stops. Printed: seconds,
images per second, CPU seconds (user + system, the worker processes' included), and the ratios
of labelgate's image checks (with minus without) and of its whole run to the floor. The machine
may be shared: best-of-N figures, comparable only within one run; the load average is printed
before and after, and the CPU seconds move less with other load than the wall time does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import measured

FLOOR = """
import os, sys, json
from concurrent.futures import ProcessPoolExecutor
from PIL import Image

def probe(paths):
    sizes = 0
    for p in paths:
        with Image.open(p) as im:
            w, h = im.size
            im.verify()
        sizes += w * h
    return sizes

if __name__ == "__main__":
    root, workers = sys.argv[1], int(sys.argv[2])
    files = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith((".jpg", ".png")))
    chunks = [files[i : i + 64] for i in range(0, len(files), 64)]
    with ProcessPoolExecutor(workers) as pool:
        total = sum(pool.map(probe, chunks))
    print(json.dumps({"images": len(files), "pixels": total}))
"""


def make(root: Path, count: int) -> str:
    """The images and their COCO file, written once; returns the cut image's file name."""
    import numpy as np
    from PIL import Image, ImageDraw

    cut = f"{count // 2:06d}.jpg"
    if (root / "done").exists():
        return cut
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(count)
    images, anns = [], []
    for i in range(count):
        img = Image.new("RGB", (640, 480), tuple(int(v) for v in rng.integers(0, 255, 3)))
        draw = ImageDraw.Draw(img)
        for _ in range(4):
            x, y = rng.integers(0, 560, 2).tolist()
            draw.ellipse(
                (x, y, x + 80, y + 60), fill=tuple(int(v) for v in rng.integers(0, 255, 3))
            )
        png = i % 5 == 4
        name = f"{i:06d}.{'png' if png else 'jpg'}"
        width, height = 640, 480
        if png:
            img.save(root / name, "PNG")
        elif i % 10 == 3:  # EXIF orientation 6: loads turned, and recorded so
            exif = Image.Exif()
            exif[0x0112] = 6
            img.save(root / name, "JPEG", quality=85, exif=exif.tobytes())
            width, height = 480, 640
        else:
            img.save(root / name, "JPEG", quality=85)
        images.append({"id": i + 1, "file_name": name, "width": width, "height": height})
        anns.append({"id": i + 1, "image_id": i + 1, "category_id": 0, "bbox": [10, 10, 50, 40]})
    data = (root / cut).read_bytes()
    (root / cut).write_bytes(data[: len(data) // 2])
    coco = {"images": images, "annotations": anns, "categories": [{"id": 0, "name": "shape"}]}
    (root / "annotations.coco.json").write_text(json.dumps(coco))
    bare = root.parent / f"{root.name}-bare"
    bare.mkdir(exist_ok=True)
    shutil.copy(root / "annotations.coco.json", bare / "annotations.coco.json")
    (root / "done").write_text("")
    return cut


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, nargs="+", default=[2000])
    parser.add_argument("--dir", default="/tmp/labelgate-images")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    print(f"{platform.processor() or platform.machine()}, {cores} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    floor_script = Path(args.dir) / "floor.py"
    floor_script.write_text(FLOOR)
    for count in args.images:
        root = Path(args.dir) / f"images-{count}"
        cut = make(root, count)
        lg = [sys.executable, "-m", "labelgate", "validate"]
        tools = {
            "floor (2 processes)": [sys.executable, str(floor_script), str(root), "2"],
            "labelgate": [*lg, str(root / "annotations.coco.json"), "--format", "json"],
            "labelgate, no images": [
                *lg,
                str(root.parent / f"{root.name}-bare" / "annotations.coco.json"),
                "--format",
                "json",
            ],
        }
        best: dict[str, float] = {}
        cpu: dict[str, float] = {}  # user + system seconds, the workers' included
        for _ in range(args.repeat):  # interleaved, so a busy moment hits every tool alike
            for name, argv in tools.items():
                m = measured(argv)
                best[name] = min(best.get(name, m.wall), m.wall)
                cpu[name] = min(cpu.get(name, m.cpu), m.cpu)
                _verify(name, m.stdout, count, cut)
        print(f"load average after the runs: {os.getloadavg()[0]:.1f}")
        floor = best["floor (2 processes)"]
        checks = best["labelgate"] - best["labelgate, no images"]
        checks_cpu = cpu["labelgate"] - cpu["labelgate, no images"]
        print(f"\n{count} images of 640x480 (4/5 JPEG, 1/10 of those EXIF-turned; 1/5 PNG)")
        print(f"{'run':<22} {'seconds':>8} {'images/s':>9} {'x floor':>8} {'CPU s':>7}")
        for name, wall in best.items():
            print(
                f"{name:<22} {wall:8.2f} {count / wall:9.0f} {wall / floor:8.2f} {cpu[name]:7.2f}"
            )
        print(
            f"{'image checks':<22} {checks:8.2f} {count / max(checks, 1e-9):9.0f} "
            f"{checks / floor:8.2f} {checks_cpu:7.2f}   (labelgate minus labelgate without "
            f"images; CPU {checks_cpu / cpu['floor (2 processes)']:.2f}x the floor's)"
        )


def _verify(name: str, out: str, count: int, cut: str) -> None:
    doc = json.loads(out)
    if name.startswith("floor"):
        if doc["images"] != count:
            raise SystemExit(f"the floor read {doc['images']} of {count} images")
        return
    codes = {f["code"]: f for f in doc["findings"] if f["severity"] == "error"}
    if name == "labelgate":
        lg042 = codes.pop("LG042", None)
        if lg042 is None or [e.get("file") for e in lg042["examples"]] != [cut]:
            raise SystemExit(f"labelgate missed the cut image {cut}: {doc['findings']}")
    if codes:
        raise SystemExit(f"{name}: unexpected findings {sorted(codes)}")


if __name__ == "__main__":
    main()
