"""labelgate on a large COCO JSON against panlabel, pycocotools and a plain Python loop.

    python benchmarks/coco.py [--mb 1024] [--dir /tmp/labelgate-bench] [--repeat 1]
                              [--shape polygons|boxes] [--detection]
                              [--tools panlabel pycocotools python labelgate]

Writes (once) a COCO instances file of about --mb megabytes: 80 categories with COCO's sparse ids
(1..90), images of 640x480, annotations with boxes. `--shape polygons` (the default): 200,000
images, each box with one triangle polygon, values rounded to 2 decimals; planted: 3 zero-width
boxes, 2 boxes past their image, 2 annotations naming category 95 (not in the table).
`--shape boxes`: 120,000 images, boxes without polygons, values at full float precision (as many
exporters write them); planted: 2 zero-width boxes, 1 box past its image, 2 annotations naming
category 95. `--detection` runs labelgate with `--task detection --framework torchvision
--classes 91` as well. Then, each in a fresh process:

- panlabel:  `panlabel validate --format coco` (a Rust validator on serde): its zero-area boxes,
             boxes outside their image and unknown categories are counted as LG027, LG028, LG030;
- pycocotools: `COCO(FILE)`, the index every COCO loader builds (no checks: its annotation count);
- python:    `json.load` of the whole file and a loop over the annotations doing the checks
             labelgate's COCO reader does (category in the table, box with area, box inside its
             image, image listed), counting each;
- labelgate: `labelgate validate FILE --format json` (the reader, then every check).

Every tool must find the same counts (pycocotools: rows only), and labelgate's JSON report (less
its environment) must be byte for byte the one the first run saved beside the file
(``FILE.report.json``, ``FILE.detection.report.json``), or the run stops. The tools run in turn,
--repeat rounds; printed: each tool's median wall time and CPU seconds (user and system, its
workers included), its largest peak RSS, throughput, and its median wall time, CPU seconds and
memory as ratios to panlabel's and to the plain loop's in the same run.
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


def make(path: Path, megabytes: int, shape: str = "polygons") -> None:
    """Write the file in pieces (never the whole document in memory)."""
    import random

    rng = random.Random(0)
    ids = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]
    boxes = shape == "boxes"
    images = 120_000 if boxes else 200_000
    per = 200  # bytes per annotation, about
    count = megabytes * (1 << 20) // per
    faults = (
        {"zero": (17, 5000), "past": (4444,), "unknown": (77, 7777)}
        if boxes
        else {"zero": (17, 1000, 5000), "past": (333, 4444), "unknown": (77, 7777)}
    )
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
            box = [
                rng.uniform(0, 500),
                rng.uniform(0, 380),
                rng.uniform(5, 130),
                rng.uniform(5, 90),
            ]
            if not boxes:
                box = [round(v, 2) for v in box]
            cat = ids[n % len(ids)]
            if n in faults["zero"]:
                box[2] = 0.0
            if n in faults["past"]:
                box[0] = 630.0
            if n in faults["unknown"]:
                cat = 95
            ann: dict[str, object] = {
                "id": n + 1,
                "image_id": n % images,
                "category_id": cat,
                "bbox": box,
                "area": box[2] * box[3] if boxes else round(box[2] * box[3] / 2, 2),
                "iscrowd": 0,
            }
            if not boxes:  # the triangle the area above is of
                ann["segmentation"] = [
                    [box[0], box[1], box[0] + box[2], box[1], box[0], box[1] + box[3]]
                ]
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


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


DETECTION = ["--task", "detection", "--framework", "torchvision", "--classes", "91"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--dir", default="/tmp/labelgate-bench")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--shape", choices=["polygons", "boxes"], default="polygons")
    parser.add_argument("--detection", action="store_true", help="labelgate " + " ".join(DETECTION))
    parser.add_argument(
        "--tools", nargs="+", default=["panlabel", "pycocotools", "python", "labelgate"]
    )
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    shaped = "" if args.shape == "polygons" else "_boxes"
    path = folder / f"coco_{args.mb}mb{shaped}.json"
    if not path.exists():
        make(path, args.mb, args.shape)
    size = path.stat().st_size / (1 << 20)
    print(f"python {platform.python_version()}, {size:,.0f} MB COCO file, {args.shape}")
    py = sys.executable
    flags = DETECTION if args.detection else []
    every = {
        "panlabel": [
            shutil.which("panlabel") or "panlabel",  # spawned by path (no search of PATH)
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
            *flags,
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
    saved = path.with_suffix(".detection.report.json" if flags else ".report.json")
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in tools}
    found: dict[str, dict[str, int]] = {}
    for _ in range(args.repeat):
        for name, argv in tools.items():  # in turn: each round measures every tool
            wall, cpu, peak, out = measured(argv)
            if name == "labelgate":  # the same report as the first run's, revision after revision
                kept(name, out, saved)
            found[name] = read.get(name, json.loads)(out)
            runs[name].append((wall, cpu, peak))
            agree(found)  # labelgate runs first
    best = {
        name: (
            median([r[0] for r in rs]),
            median([r[1] for r in rs]),
            max(r[2] for r in rs),
        )
        for name, rs in runs.items()
    }
    bases = [b for b in ("panlabel", "python") if b in best]
    head = "".join(f" {'x wall ' + b:>16} {'x cpu ' + b:>15} {'x mem ' + b:>15}" for b in bases)
    print(f"cores: {len(os.sched_getaffinity(0))}, load average: {os.getloadavg()[0]:.1f}")
    print(f"medians of {args.repeat} run(s); peak: the largest")
    print(f"{'tool':12} {'wall s':>8} {'cpu s':>7} {'peak MB':>8} {'MB/s':>7}{head}")
    for name, (wall, cpu, peak) in best.items():
        ratios = "".join(
            f" {wall / best[b][0]:16.2f} {cpu / best[b][1]:15.2f} {peak / best[b][2]:15.2f}"
            for b in bases
        )
        print(f"{name:12} {wall:8.2f} {cpu:7.2f} {peak:8.0f} {size / wall:7.1f}{ratios}")
    for name in best:
        print(name, "runs:", " ".join(f"{w:.2f}s/{c:.2f}cpu/{p:.0f}MB" for w, c, p in runs[name]))
    print("all found:", json.dumps(found["labelgate"]))


if __name__ == "__main__":
    main()
