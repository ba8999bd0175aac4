"""labelgate on a folder of 512x512 PNG masks against a bare loop that only decodes them.

    python benchmarks/masks.py [--masks 1000 4000] [--dir /tmp/labelgate-masks] [--repeat 1]

Writes (once per count) a folder of single-channel (L) PNG masks, 512x512, each a background with
a few filled polygons of classes 1..20 outlined by 255 (Pascal VOC's look), in shuffled
subfolders; one mask holds a 21. Then, each in a fresh process:

- floor (1 process):  a Python loop over the files doing `np.asarray(Image.open(path))` and
                      nothing else: Pillow's decode, the least any tool reading them pays;
- floor (N processes): the same loop split over the cores labelgate uses (a process pool,
                      chunks of 16 files), the floor of the same parallel work;
- labelgate:          `labelgate validate DIR --classes 21 --ignore-index 255 --input-format
                      masks --format json`: decode, histogram, every check, the report.

labelgate must find the planted 21 (LG004, one mask) or the run stops. Printed: wall time, peak
RSS (the largest process), masks per second, and labelgate's time as a ratio to each floor in the
same run. Figures are comparable only within one run, on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import run

FLOOR = """
import os, sys, json
from concurrent.futures import ProcessPoolExecutor
import numpy as np
from PIL import Image

def decode(paths):
    pixels = 0
    for p in paths:
        with Image.open(p) as im:
            pixels += np.asarray(im).size
    return pixels

if __name__ == "__main__":
    root, workers = sys.argv[1], int(sys.argv[2])
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".png"))
    if workers == 1:
        total = decode(files)
    else:
        chunks = [files[i : i + 16] for i in range(0, len(files), 16)]
        with ProcessPoolExecutor(workers) as pool:
            total = sum(pool.map(decode, chunks))
    print(json.dumps({"masks": len(files), "pixels": total}))
"""


def make(root: Path, count: int) -> None:
    """The masks, written once: deterministic shapes, PNG compression level 6 (Pillow's)."""
    import numpy as np
    from PIL import Image, ImageDraw

    if (root / "done").exists():
        return
    rng = np.random.default_rng(count)
    for i in range(count):
        img = Image.new("L", (512, 512), 0)
        draw = ImageDraw.Draw(img)
        for _ in range(int(rng.integers(2, 6))):
            x, y = rng.integers(0, 448, 2).tolist()
            points = [
                (x + int(rng.integers(0, 64)), y + int(rng.integers(0, 64))) for _ in range(6)
            ]
            cls = int(rng.integers(1, 21))
            draw.polygon(points, fill=cls, outline=255, width=3)
        if i == count // 2:
            draw.rectangle((0, 0, 9, 9), fill=21)  # the planted fault
        folder = root / f"{int(rng.integers(0, 16)):02d}"
        folder.mkdir(parents=True, exist_ok=True)
        img.save(folder / f"{rng.integers(0, 1 << 40):011x}.png")
    (root / "done").write_text("")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--masks", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--dir", default="/tmp/labelgate-masks")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    workers = len(os.sched_getaffinity(0))
    print(f"{platform.processor() or platform.machine()}, {workers} cores, Python "
          f"{platform.python_version()}")  # fmt: skip
    floor_script = Path(args.dir) / "floor.py"
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    floor_script.write_text(FLOOR)
    for count in args.masks:
        root = Path(args.dir) / f"masks-{count}"
        make(root, count)
        tools = {
            "floor (1 process)": [sys.executable, str(floor_script), str(root), "1"],
            f"floor ({workers} processes)": [
                sys.executable,
                str(floor_script),
                str(root),
                str(workers),
            ],
            "labelgate": [
                sys.executable,
                "-m",
                "labelgate",
                "validate",
                str(root),
                "--classes",
                "21",
                "--ignore-index",
                "255",
                "--input-format",
                "masks",
                "--format",
                "json",
            ],
        }
        results: dict[str, tuple[float, float]] = {}
        for name, argv in tools.items():
            best = None
            for _ in range(args.repeat):
                wall, rss, out = run(argv)
                if best is None or wall < best[0]:
                    best = (wall, rss)
            assert best is not None
            results[name] = best
            if name == "labelgate":
                doc = json.loads(out)
                lg004 = [f for f in doc["findings"] if f["code"] == "LG004"]
                if (
                    doc["counts"]["rows"] != count
                    or not lg004
                    or lg004[0]["examples"][0]["value"] != 21
                ):
                    raise SystemExit(f"labelgate missed the planted 21: {doc['findings']}")
            elif json.loads(out)["masks"] != count:
                raise SystemExit(f"{name} read {out} for {count} masks")
        print(f"\n{count} masks of 512x512 (PNG, mode L)")
        print(
            f"{'tool':<22} {'seconds':>8} {'masks/s':>8} {'peak RSS MB':>12} {'x 1-proc':>9} {'x N-proc':>9}"
        )
        one = results["floor (1 process)"][0]
        many = results[f"floor ({workers} processes)"][0]
        for name, (wall, rss) in results.items():
            print(
                f"{name:<22} {wall:8.2f} {count / wall:8.0f} {rss:12.0f} {wall / one:9.2f} {wall / many:9.2f}"
            )


if __name__ == "__main__":
    main()
