"""labelgate on a large COCO JSON against panlabel, pycocotools and a plain Python loop.

    python benchmarks/coco.py [--mb 1024] [--dir /tmp/labelgate-bench] [--repeat 1]
                              [--tools panlabel pycocotools python labelgate]

Writes (once) a COCO instances file of about --mb megabytes: 80 categories with COCO's sparse ids
(1..90), images of 640x480, annotations with boxes; planted: 3 zero-width boxes, 2 boxes past their
image, 2 annotations naming category 95 (not in the table). Then, each in a fresh process:

- panlabel:  `panlabel validate --format coco` (a Rust validator on serde): its zero-area boxes,
             boxes outside their image and unknown categories are counted as LG027, LG028, LG030;
- pycocotools: `COCO(FILE)`, the index every COCO loader builds (no checks: its annotation count);
- python:    `json.load` of the whole file and a loop over the annotations doing the checks
             labelgate's COCO reader does (category in the table, box with area, box inside its
             image, image listed), counting each;
- labelgate: `labelgate validate FILE --format json` (the reader, then every check).

Every tool must find the same counts (pycocotools: rows only), and labelgate's JSON report (less
its environment) must be byte for byte the one the first run saved beside the file
(``FILE.report.json``), or the run stops. Printed: wall
time, peak RSS, throughput, and each tool's time and memory as ratios to panlabel's and to the
plain loop's in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import kept, measured

PLAIN = """
import json, sys
doc = json.load(open(sys.argv[1]))
cats = {c["id"] for c in doc["categories"]}
size = {i["id"]: (i["width"], i["height"]) for i in doc["images"]}
out = {"rows": 0, "LG027": 0, "LG028": 0, "LG030": 0, "LG031": 0}
for a in doc["annotations"]:
    out["rows"] += 1
    if a["category_id"] not in cats:
        out["LG030"] += 1
    if a["image_id"] not in size:
        out["LG031"] += 1
        continue
    x, y, w, h = a["bbox"]
    W, H = size[a["image_id"]]
    if w <= 0 or h <= 0:
        out["LG027"] += 1
    if x < 0 or y < 0 or x + w > W or y + h > H:
        out["LG028"] += 1
print(json.dumps(out))
"""

PYCOCOTOOLS = """
import contextlib, io, json, sys
from pycocotools.coco import COCO
with contextlib.redirect_stdout(io.StringIO()):
    coco = COCO(sys.argv[1])
print(json.dumps({"rows": len(coco.anns)}))
"""

PANLABEL_CODES = {
    "invalid_b_box_area": "LG027",
    "b_box_out_of_bounds": "LG028",
    "missing_category_ref": "LG030",
}


def make(path: Path, megabytes: int) -> None:
    """Write the file in pieces (never the whole document in memory)."""
    import random

    rng = random.Random(0)
    ids = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]
    images = 200_000
    per = 200  # bytes per annotation, about
    count = megabytes * (1 << 20) // per
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        f.write('{"info": {"description": "labelgate benchmark"}, "images": [')
        f.write(
            ",".join(
                json.dumps({"id": i, "file_name": f"{i:012d}.jpg", "width": 640, "height": 480})
                for i in range(images)
            )
        )
        f.write('], "annotations": [')
        for n in range(count):
            x, y = rng.uniform(0, 500), rng.uniform(0, 380)
            box = [
                round(x, 2),
                round(y, 2),
                round(rng.uniform(5, 130), 2),
                round(rng.uniform(5, 90), 2),
            ]
            cat = ids[n % len(ids)]
            if n in (17, 1000, 5000):
                box[2] = 0.0
            if n in (333, 4444):
                box[0] = 630.0
            if n in (77, 7777):
                cat = 95
            ann = {
                "id": n + 1,
                "image_id": n % images,
                "category_id": cat,
                "bbox": box,
                "area": round(box[2] * box[3] / 2, 2),  # the triangle below
                "iscrowd": 0,
                "segmentation": [
                    [box[0], box[1], box[0] + box[2], box[1], box[0], box[1] + box[3]]
                ],
            }
            f.write(("," if n else "") + json.dumps(ann))
        f.write('], "categories": [')
        f.write(
            ",".join(json.dumps({"id": i, "name": f"class_{i}", "supercategory": "x"}) for i in ids)
        )
        f.write("]}\n")
    tmp.rename(path)


def from_report(text: str) -> dict[str, int]:
    doc = json.loads(text)
    out = {"rows": doc["counts"]["rows"] + 0}
    for code in ("LG027", "LG028", "LG030", "LG031"):
        out[code] = sum(f["count"] for f in doc["findings"] if f["code"] == code)
    return out


def from_panlabel(text: str) -> dict[str, int]:
    """panlabel's issues counted under the codes labelgate gives them (rows: not reported)."""
    out = dict.fromkeys(PANLABEL_CODES.values(), 0)
    for issue in json.loads(text)["issues"]:
        code = PANLABEL_CODES.get(issue["code"])
        if code is not None:
            out[code] += 1
    return out


def agree(found: dict[str, dict[str, int]]) -> None:
    """Stop the run when two tools count differently what both count."""
    base = found["labelgate"]
    for name, counts in found.items():
        if any(counts[k] != base[k] for k in counts):
            raise SystemExit(f"the counts differ: {name} {counts}, labelgate {base}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--tools", nargs="+", default=["panlabel", "pycocotools", "python", "labelgate"]
    )
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"coco_{args.mb}mb.json"
    if not path.exists():
        make(path, args.mb)
    size = path.stat().st_size / (1 << 20)
    print(f"python {platform.python_version()}, {size:,.0f} MB COCO file")
    py = sys.executable
    every = {
        "panlabel": [
            "panlabel",
            "validate",
            "--format",
            "coco",
            "--output-format",
            "json",
            str(path),
        ],
        "pycocotools": [py, "-c", PYCOCOTOOLS, str(path)],
        "python": [py, "-c", PLAIN, str(path)],
        "labelgate": [
            py,
            "-m",
            "labelgate",
            "validate",
            str(path),
            "--format",
            "json",
            "--no-progress",
            "--max-examples",
            "5",
        ],
    }
    tools = {name: every[name] for name in ["labelgate", *args.tools] if name in every}
    if "labelgate" not in tools:
        raise SystemExit("--tools must name labelgate (the others are its baselines)")
    read = {"panlabel": from_panlabel, "labelgate": from_report}
    best: dict[str, tuple[float, float, float, dict[str, int]]] = {}
    for _ in range(args.repeat):
        for name, argv in tools.items():
            wall, cpu, peak, out = measured(argv)
            if name == "labelgate":  # the same report as the first run's, revision after revision
                kept(name, out, path.with_suffix(".report.json"))
            found = read.get(name, json.loads)(out)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, peak, cpu, found)
            agree({n: b[3] for n, b in best.items()})  # labelgate runs first
    bases = [b for b in ("panlabel", "python") if b in best]
    head = "".join(f" {'x time ' + b:>16} {'x mem ' + b:>15}" for b in bases)
    print(f"cores: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.1f}")
    print(f"{'tool':12} {'wall s':>8} {'cpu s':>7} {'peak MB':>8} {'MB/s':>7}{head}")
    for name, (wall, peak, cpu, _) in best.items():
        ratios = "".join(f" {wall / best[b][0]:16.2f} {peak / best[b][1]:15.2f}" for b in bases)
        print(f"{name:12} {wall:8.2f} {cpu:7.2f} {peak:8.0f} {size / wall:7.1f}{ratios}")
    print("all found:", json.dumps(best["labelgate"][3]))


if __name__ == "__main__":
    main()
