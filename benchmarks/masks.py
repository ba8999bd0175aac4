"""labelgate on a folder of 512x512 PNG masks against a bare loop that only decodes them.

    python benchmarks/masks.py [--masks 1000 4000] [--dir /tmp/labelgate-masks] [--repeat 1]
                               [--base REV]

Writes (once per count) a folder of single-channel (L) PNG masks, 512x512, each a background with
a few filled polygons of classes 1..20 outlined by 255 (Pascal VOC's look), in shuffled
subfolders; one mask holds a 21. Then, each in a fresh process:

- floor (1 process):  a Python loop over the files doing `np.asarray(Image.open(path))` and
                      nothing else: Pillow's decode, the least any tool reading them pays;
- floor (N processes): the same loop split over the cores labelgate uses (a process pool,
                      chunks of 16 files), the floor of the same parallel work;
- labelgate:          `labelgate validate DIR --classes 21 --ignore-index 255 --input-format
                      masks --format json`: decode, histogram, every check, the report;
- labelgate (REV):    with ``--base REV``, the same command run from that revision's ``src/``
                      (``git archive`` into ``--dir``; the repository is left as it is): before
                      and after a change, in one run.

labelgate must find the planted 21 (LG004, one mask) or the run stops; its JSON report (less the
``environment`` section) must be byte for byte the one the first run saved beside the masks
(``report-N.json``), at every revision run, or the run stops and shows where they differ.
Printed: wall time, CPU time (user and system, worker processes included: what a run costs when
other work shares the cores), peak RSS (the largest process), masks per second, each wall time as
a ratio to each floor, and each CPU time as a ratio to the N-process floor's. Figures are
comparable only within one run, on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import kept, measured

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


def base_src(rev: str, where: Path) -> Path:
    """The ``src/`` of revision ``rev``, extracted once under ``where``."""
    root = Path(__file__).resolve().parent.parent
    out = where / f"src-{rev}"
    if not (out / "src").is_dir():
        out.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(
            ["git", "-C", str(root), "archive", rev, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
    return out / "src"


def labelgate(root: Path, src: Path | None) -> list[str]:
    """The labelgate command, from ``src`` when given (else the one importable here)."""
    head = [sys.executable, "-m", "labelgate"]
    if src is not None:
        head = ["env", f"PYTHONPATH={src}", *head]
    return [*head, "validate", str(root), "--classes", "21", "--ignore-index", "255",
            "--input-format", "masks", "--format", "json", "--no-progress"]  # fmt: skip


def check(name: str, out: str, count: int, saved: Path) -> None:
    """Stop the run unless labelgate found the planted 21 and its report is the saved one."""
    doc = json.loads(out)
    lg004 = [f for f in doc["findings"] if f["code"] == "LG004"]
    if doc["counts"]["rows"] != count or not lg004 or lg004[0]["examples"][0]["value"] != 21:
        raise SystemExit(f"{name} missed the planted 21: {doc['findings']}")
    kept(name, out, saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--masks", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--dir", default="/tmp/labelgate-masks")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--base", help="also run labelgate at this git revision")
    args = parser.parse_args()
    workers = len(os.sched_getaffinity(0))
    print(f"{platform.processor() or platform.machine()}, {workers} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    floor_script = Path(args.dir) / "floor.py"
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    floor_script.write_text(FLOOR)
    for count in args.masks:
        root = Path(args.dir) / f"masks-{count}"
        make(root, count)
        many_name = f"floor ({workers} processes)"
        tools = {
            "floor (1 process)": [sys.executable, str(floor_script), str(root), "1"],
            many_name: [sys.executable, str(floor_script), str(root), str(workers)],
            "labelgate": labelgate(root, None),
        }
        if args.base:
            tools[f"labelgate ({args.base})"] = labelgate(root, base_src(args.base, Path(args.dir)))
        results: dict[str, tuple[float, float, float]] = {}
        for name, argv in tools.items():
            for _ in range(args.repeat):
                wall, cpu, rss, out = measured(argv)
                if name not in results or wall < results[name][0]:
                    results[name] = (wall, cpu, rss)
                if name.startswith("labelgate"):
                    check(name, out, count, Path(args.dir) / f"report-{count}.json")
                elif json.loads(out)["masks"] != count:
                    raise SystemExit(f"{name} read {out} for {count} masks")
        print(f"\n{count} masks of 512x512 (PNG, mode L), best of {args.repeat}")
        print(f"{'tool':<24} {'seconds':>8} {'CPU s':>7} {'masks/s':>8} {'peak RSS MB':>12} "
              f"{'x 1-proc':>9} {'x N-proc':>9} {'CPU x N-proc':>13}")  # fmt: skip
        one = results["floor (1 process)"][0]
        many, many_cpu, _ = results[many_name]
        for name, (wall, cpu, rss) in results.items():
            print(f"{name:<24} {wall:8.2f} {cpu:7.2f} {count / wall:8.0f} {rss:12.0f} "
                  f"{wall / one:9.2f} {wall / many:9.2f} {cpu / many_cpu:13.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
