"""Regenerate the bundled samples: python data_samples/make_samples.py (deterministic)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).parent
NAMES = ["cat", "dog", "bird", "fish"]


def write(name: str, table: pa.Table) -> None:
    pq.write_table(table, HERE / name, compression="zstd", row_group_size=64)


def image_rows(n: int, *, start: int = 0, source: str = "web", shift: int = 0) -> dict[str, list]:
    labels = [(i * 7 + i // 3) % 4 for i in range(start, start + n)]
    return {
        "id": [f"img-{i:05d}" for i in range(start, start + n)],
        "path": [f"images/{source}/{i:05d}.jpg" for i in range(start, start + n)],
        "label": [v + shift for v in labels],
        "label_name": [NAMES[v] for v in labels],
        "source": [source] * n,
    }


def main() -> None:
    write("clean.parquet", pa.table(image_rows(200)))
    (HERE / "classes.txt").write_text("\n".join(NAMES) + "\n")
    (HERE / "classes_duplicate.txt").write_text("cat\ndog\nCat \nfish\n")

    write("oob_0_2_4.parquet", pa.table({"id": [101, 102, 103], "label": [0, 2, 4]}))

    rows = image_rows(120)
    for i in (5, 17, 18, 90):
        rows["label"][i] = -1
    write("neg1_sentinel.parquet", pa.table(rows))

    rows = image_rows(96)
    for i in range(32, 64):
        rows["label"][i] = -100
    write("all_ignored_batch.parquet", pa.table(rows))

    web, vendor = image_rows(80, source="web"), image_rows(80, start=80, source="vendor", shift=1)
    both = {k: web[k] + vendor[k] for k in web}
    write("two_sources_one_based.parquet", pa.table(both))

    rows = image_rows(64)
    for i in range(0, 64, 8):
        rows["label"][i] = 0
    write("ignore_inside_range.parquet", pa.table(rows))
    (HERE / "ignore_inside_range.yaml").write_text(
        "# A contract that declares ignore_index 0 for a 4-class problem: class 0 is never learned.\n"
        "version: '1'\nname: ignore-inside-range\nnum_classes: 4\nignore_index: 0\n"
        "class_names: classes.txt\n"
    )

    coco = [1, 2, 3, 5, 7, 11, 13, 18, 27, 44, 62, 67, 70, 72, 81, 85, 88, 90]
    write(
        "coco_sparse_ids.parquet",
        pa.table(
            {
                "annotation_id": list(range(1000, 1000 + 180)),
                "image_id": [400000 + i // 3 for i in range(180)],
                "category_id": [coco[i % len(coco)] for i in range(180)],
            }
        ),
    )

    tokens = []
    for i in range(48):
        length = 5 + i % 7
        if 16 <= i < 32:
            tokens.append([-100] * length)  # batch 1 (size 16): every token ignored
        else:
            tokens.append([-100] + [(i + j) % 5 for j in range(length - 2)] + [-100])
    write(
        "tokens_all_ignored_batch.parquet",
        pa.table({"id": list(range(48)), "ner_tags": pa.array(tokens, pa.list_(pa.int64()))}),
    )
    (HERE / "tokens.yaml").write_text(
        "# Token classification (Hugging Face shape): 5 tags, -100 on special tokens and padding.\n"
        "version: '1'\nname: ner-sample\ntask: tokens\nnum_classes: 5\n"
        "label_column: ner_tags\nid_column: id\nbatching:\n  size: 16\n"
    )

    soft = [[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0]] * 12
    soft[5] = [1.2, -0.2, 0.0, 0.0]  # a negative "probability": PyTorch takes it silently
    soft[17] = [0.5, 0.5, 0.0]  # K-1 values
    soft[30] = [0.6, 0.6, 0.0, 0.0]  # sums to 1.2
    write(
        "soft_labels.parquet",
        pa.table({"id": list(range(36)), "label": pa.array(soft, pa.list_(pa.float32()))}),
    )

    lines = []
    for i in range(60):
        lines.append(f'"{1 + (i * 5) % 4}","headline {i}","body text {i}"')
    (HERE / "one_based_no_header.csv").write_text("\n".join(lines) + "\n")

    with (HERE / "clean.jsonl").open("w") as f:
        for i, v in enumerate(image_rows(40)["label"]):
            f.write(json.dumps({"id": i, "label": v}) + "\n")

    multi = [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0]] * 10
    multi[3] = [0, -1, 0, 1]  # CheXpert's "uncertain"
    multi[17] = [1, None, 0, 0]  # a blank: "not mentioned"
    multi[22] = [0, 0, 0, 0]  # no positive class
    with (HERE / "multilabel.jsonl").open("w") as f:
        for i, labels in enumerate(multi):
            f.write(json.dumps({"id": 500 + i, "labels": labels}) + "\n")

    formats(HERE / "formats")
    masks(HERE / "masks")


def formats(root: Path) -> None:
    """One small good and one small bad example per annotation format."""
    import shutil

    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    animals = ["cat", "dog", "bird"]

    def coco(
        name: str, annotations: list[dict], images: list[dict], categories: list[dict]
    ) -> None:
        doc = {"images": images, "annotations": annotations, "categories": categories}
        (root / name).write_text(json.dumps(doc, indent=1) + "\n")

    images = [{"id": i, "file_name": f"{i:06d}.jpg", "width": 640, "height": 480} for i in range(6)]
    good = [
        {
            "id": 100 + i,
            "image_id": i % 6,
            "category_id": 1 + i % 3,
            "bbox": [10, 20, 30, 40],
            "iscrowd": 0,
            "area": 1200,
        }
        for i in range(18)
    ]
    cats = [{"id": 1 + i, "name": n, "supercategory": "animal"} for i, n in enumerate(animals)]
    cats0 = [{"id": 0, "name": "background", "supercategory": "none"}, *cats]
    coco("coco_good.json", good, images, cats0)
    bad = [dict(a) for a in good]
    bad[3]["bbox"] = [50, 60, 0, 40]  # zero width (LG027)
    bad[5]["bbox"] = [600, 400, 80, 100]  # past the image's edges (LG028)
    bad[7]["category_id"] = 7  # not in the table (LG030)
    bad[9]["image_id"] = 99  # an image that is not listed (LG031)
    bad[11]["id"] = 100  # a repeated annotation id (LG014)
    coco("coco_bad.json", bad, images, cats0)
    # instance segmentation: annotation 201's polygon reaches past its 640x480 image (LG028)
    square = [[10.0, 20.0, 40.0, 20.0, 40.0, 60.0, 10.0, 60.0]]
    instances = [{**a, "id": 200 + i, "segmentation": square} for i, a in enumerate(good[:6])]
    instances[1]["segmentation"] = [[600.0, 400.0, 700.0, 400.0, 700.0, 520.0, 600.0, 520.0]]
    instances[1]["bbox"] = [600, 400, 40, 80]
    coco("coco_instances_bad.json", instances, images, cats)
    # keypoints: annotation 301's second keypoint lies outside its box and its image (LG028),
    # 302's inside its image but past its box's right edge (LG050), 303's too but unlabelled
    person = [
        {
            "id": 1,
            "name": "person",
            "supercategory": "person",
            "keypoints": ["head", "foot"],
            "skeleton": [[1, 2]],
        }
    ]
    keypoints = [
        {
            "id": 300 + i,
            "image_id": i,
            "category_id": 1,
            "bbox": [10, 20, 30, 40],
            "iscrowd": 0,
            "area": 1200,
            "keypoints": [20, 25, 2, 25, 55, 2],
            "num_keypoints": 2,
        }
        for i in range(4)
    ]
    keypoints[1]["keypoints"] = [20, 25, 2, 700, 55, 2]
    keypoints[2]["keypoints"] = [20, 25, 2, 45, 55, 2]
    keypoints[3]["keypoints"] = [20, 25, 2, 45, 55, 0]
    keypoints[3]["num_keypoints"] = 1
    coco("coco_keypoints_bad.json", keypoints, images[:4], person)

    for kind in ("good", "bad"):
        base = root / f"yolo_{kind}"
        (base / "train" / "labels").mkdir(parents=True)
        (base / "val" / "labels").mkdir(parents=True)
        (base / "data.yaml").write_text(
            "path: .\ntrain: train/images\nval: val/images\nnc: 3\nnames: [cat, dog, bird]\n"
        )
        for split, n in (("train", 4), ("val", 2)):
            for i in range(n):
                lines = [f"{(i + j) % 3} 0.5 0.5 0.2 0.3" for j in range(3)]
                (base / split / "labels" / f"img_{i}.txt").write_text("\n".join(lines) + "\n")
        (base / "train" / "labels" / "empty.txt").write_text("")  # an image without objects
    bad_dir = root / "yolo_bad" / "train" / "labels"
    (bad_dir / "img_1.txt").write_text("1 0.5 0.5 0.2\n3 0.5 0.5 0.2 0.3\n0 0.95 0.5 0.2 0.3\n")
    (bad_dir / "img_2.txt").write_text("2 0.5 0.5 0.0 0.3\n")

    for kind in ("good", "bad"):
        base = root / f"voc_{kind}"
        base.mkdir()
        (base / "class_names.txt").write_text("\n".join(animals) + "\n")
        for i in range(4):
            objects = "".join(
                f"<object><name>{animals[(i + j) % 3]}</name><difficult>{j % 2}</difficult>"
                f"<bndbox><xmin>{10 + j}</xmin><ymin>20</ymin><xmax>{60 + j}</xmax>"
                "<ymax>90</ymax></bndbox></object>"
                for j in range(2)
            )
            (base / f"{i:04d}.xml").write_text(
                f"<annotation><filename>{i:04d}.jpg</filename><size><width>320</width>"
                f"<height>240</height><depth>3</depth></size>{objects}</annotation>\n"
            )
    (root / "voc_bad" / "0002.xml").write_text(
        "<annotation><filename>0002.jpg</filename><size><width>320</width><height>240</height>"
        "</size><object><name>tvmonitor</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>9</xmax><ymax>9</ymax></bndbox></object><object><name>dog</name><bndbox>"
        "<xmin>300</xmin><ymin>20</ymin><xmax>400</xmax><ymax>90</ymax></bndbox></object>"
        "<object><name>cat</name><bndbox><xmin>abc</xmin><ymin>20</ymin><xmax>60</xmax>"
        "<ymax>90</ymax></bndbox></object></annotation>\n"
    )

    for kind in ("good", "bad"):
        for split in ("train", "val"):
            for name in animals:
                folder = root / f"imagefolder_{kind}" / split / name
                folder.mkdir(parents=True)
                for i in range(2):
                    (folder / f"{name}_{i}.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    bad_tree = root / "imagefolder_bad"
    (bad_tree / "train" / ".ipynb_checkpoints").mkdir()
    (bad_tree / "train" / ".ipynb_checkpoints" / "cat_0-checkpoint.jpg").write_bytes(b"\xff\xd8")
    shutil.rmtree(bad_tree / "val" / "bird")
    (bad_tree / "val" / "bird").mkdir()
    (bad_tree / "val" / "bird" / "notes.txt").write_text("to label\n")

    features = {
        "text": {"dtype": "string", "_type": "Value"},
        "label": {"names": ["neg", "pos"], "_type": "ClassLabel"},
    }
    meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    for kind, labels in (("good", [0, 1] * 10), ("bad", [0, 1] * 7 + [-1] * 6)):
        table = pa.table({"text": [f"review {i}" for i in range(20)], "label": labels})
        pq.write_table(table.replace_schema_metadata(meta), root / f"hf_{kind}.parquet")
    tool_exports(root, animals)


def tool_exports(root: Path, animals: list[str]) -> None:
    """The exports of annotation tools: CVAT XML, Label Studio JSON, labelme JSON."""
    labels = "".join(f"<label><name>{n}</name><attributes/></label>" for n in animals)

    def cvat(name: str, images: list[str]) -> None:
        (root / name).write_text(
            "<?xml version='1.0' encoding='utf-8'?>\n<annotations><version>1.1</version>"
            f"<meta><task><name>pets</name><labels>{labels}</labels></task></meta>\n"
            + "\n".join(images)
            + "\n</annotations>\n"
        )

    good = [
        f'<image id="{i}" name="img_{i}.jpg" width="64" height="48">'
        f'<box label="{animals[i % 3]}" occluded="{i % 2}" xtl="4" ytl="4" xbr="30" ybr="40"/>'
        f'<polygon label="{animals[(i + 1) % 3]}" points="10,10;40,10;40,30"/>'
        f'<tag label="{animals[(i + 2) % 3]}"/></image>'
        for i in range(4)
    ]
    cvat("cvat_good.xml", good)
    bad = list(good)
    bad[1] = (
        '<image id="1" name="img_1.jpg" width="64" height="48">'
        '<box label="cow" xtl="4" ytl="4" xbr="30" ybr="40"/>'  # undeclared label (LG030)
        '<box label="dog" xtl="50" ytl="4" xbr="80" ybr="40"/>'  # past the edge (LG028)
        '<box label="cat" xtl="9" ytl="4" xbr="9" ybr="40"/>'  # zero width (LG027)
        '<polygon label="bird" points="10,10;40,10"/></image>'  # two points (LG031)
    )
    cvat("cvat_bad.xml", bad)

    config = (
        '<View>\n  <Image name="image" value="$image"/>\n'
        '  <RectangleLabels name="box" toName="image">\n'
        + "".join(f'    <Label value="{n}"/>\n' for n in animals)
        + '  </RectangleLabels>\n  <PolygonLabels name="poly" toName="image">\n'
        + "".join(f'    <Label value="{n}"/>\n' for n in animals)
        + '  </PolygonLabels>\n  <Choices name="scene" toName="image">\n'
        '    <Choice value="cat"/>\n    <Choice value="dog"/>\n  </Choices>\n</View>\n'
    )

    def rect(rid: str, name: str, x: float, w: float) -> dict:
        value = {"x": x, "y": 10, "width": w, "height": 30, "rotation": 0}
        return {
            "id": rid,
            "type": "rectanglelabels",
            "from_name": "box",
            "to_name": "image",
            "original_width": 640,
            "original_height": 480,
            "value": value | {"rectanglelabels": [name]},
        }

    def choice(rid: str, name: str) -> dict:
        return {
            "id": rid,
            "type": "choices",
            "from_name": "scene",
            "to_name": "image",
            "value": {"choices": [name]},
        }

    def task(tid: int, annotations: list[dict]) -> dict:
        return {"id": tid, "data": {"image": f"/data/{tid}.jpg"}, "annotations": annotations,
                "predictions": []}  # fmt: skip

    def ann(aid: int, result: list[dict], cancelled: bool = False) -> dict:
        return {"id": aid, "completed_by": 1 + aid % 2, "was_cancelled": cancelled,
                "result": result}  # fmt: skip

    tasks = [
        task(t, [ann(10 * t, [rect(f"r{t}", animals[t % 3], 10, 20), choice(f"c{t}", "cat")])])
        for t in range(1, 5)
    ]
    tasks[1]["annotations"].append(ann(21, [rect("r2b", "bird", 12, 20)]))  # a second annotator
    tasks[2]["predictions"] = [{"id": 7, "result": [rect("p3", "dog", 0, 5)]}]
    for kind in ("good", "bad"):
        (root / f"labelstudio_{kind}").mkdir()
        (root / f"labelstudio_{kind}" / "label_config.xml").write_text(config)
    (root / "labelstudio_good" / "export.json").write_text(json.dumps(tasks, indent=1) + "\n")
    bad_tasks = json.loads(json.dumps(tasks))
    bad_tasks[0]["annotations"][0]["result"][1] = choice("c1", "bird")  # not a Choice (LG030)
    bad_tasks[1]["annotations"][0]["result"][0] = rect("r2", "dog", 10, 0)  # zero width (LG027)
    bad_tasks[2]["annotations"][0]["result"][0] = rect("r3", "cat", 90, 20)  # past x=100% (LG028)
    polygon = {"id": "g4", "type": "polygonlabels", "from_name": "poly", "to_name": "image",
               "value": {"points": [[10, 10], [20, 20]], "polygonlabels": ["dog"]}}  # fmt: skip
    bad_tasks[3]["annotations"][0]["result"].append(polygon)  # two points (LG031)
    bad_tasks[3]["annotations"].append(ann(41, [rect("r4c", "cat", 10, 20)], cancelled=True))
    (root / "labelstudio_bad" / "export.json").write_text(json.dumps(bad_tasks, indent=1) + "\n")

    def labelme(folder: Path, name: str, shapes: list[tuple[str, str, list]]) -> None:
        doc = {
            "version": "5.5.0",
            "flags": {},
            "shapes": [
                {"label": lb, "points": pts, "group_id": None, "shape_type": kind, "flags": {}}
                for lb, kind, pts in shapes
            ],
            "imagePath": name.replace(".json", ".jpg"),
            "imageData": None,
            "imageHeight": 48,
            "imageWidth": 64,
        }
        (folder / name).write_text(json.dumps(doc, indent=1) + "\n")

    for kind in ("good", "bad"):
        folder = root / f"labelme_{kind}"
        folder.mkdir()
        (folder / "labels.txt").write_text("__ignore__\n_background_\n" + "\n".join(animals) + "\n")
        for i in range(3):
            labelme(
                folder,
                f"img_{i}.json",
                [
                    (animals[i], "rectangle", [[4, 4], [30, 40]]),
                    (animals[(i + 1) % 3], "polygon", [[10, 10], [40, 10], [40, 30]]),
                    (animals[(i + 2) % 3], "circle", [[20, 20], [25, 20]]),
                    ("__ignore__", "polygon", [[0, 0], [5, 0], [5, 5]]),
                ],
            )
    labelme(
        root / "labelme_bad",
        "img_1.json",
        [
            ("dog", "rectangle", [[4, 4]]),  # one point (LG031)
            ("cow", "polygon", [[10, 10], [40, 10], [40, 30]]),  # not in labels.txt (LG030)
            ("bird", "rectangle", [[40, 4], [70, 40]]),  # past the 64-pixel width (LG028)
        ],
    )


def voc_palette() -> list[int]:
    """Pascal VOC's colour map (its devkit's bit-interleaving), 256 colours."""
    out = []
    for i in range(256):
        r = g = b = 0
        c = i
        for j in range(8):
            r |= ((c >> 0) & 1) << (7 - j)
            g |= ((c >> 1) & 1) << (7 - j)
            b |= ((c >> 2) & 1) << (7 - j)
            c >>= 3
        out += [r, g, b]
    return out


def scene(h: int, w: int, classes: list[int], seed: int) -> np.ndarray:
    """A mask of rectangles of ``classes`` on background 0, each outlined by a 255 border."""
    rng = np.random.default_rng(seed)
    m = np.zeros((h, w), np.uint8)
    for c in classes:
        y0, x0 = int(rng.integers(0, h - 12)), int(rng.integers(0, w - 12))
        y1, x1 = y0 + int(rng.integers(8, 12)), x0 + int(rng.integers(8, 12))
        m[y0:y1, x0:x1] = 255
        m[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1] = c
    return m


def masks(root: Path) -> None:
    """Segmentation masks, good and bad (docs/segmentation.md)."""
    from PIL import Image

    palette = voc_palette()

    def png(path: Path, a: np.ndarray, mode: str = "L") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        img = Image.fromarray(a)
        if mode == "P":
            img.putpalette(palette)
        img.save(path, format="PNG")

    for i, classes in enumerate(([5, 15], [1, 20], [7, 12, 3], [9])):
        png(root / "voc_good" / f"2011_{i:06d}.png", scene(48, 64, classes, i), "P")
    for i, classes in enumerate(([5, 15], [1, 21], [7, 12, 3])):  # 21: one past VOC's 0..20
        png(root / "voc_bad" / f"2011_{i:06d}.png", scene(48, 64, classes, i), "P")
    for i in range(3):  # a foreground blob saved as white: 0/255, for 2 classes
        m = scene(48, 64, [1], 10 + i)
        png(root / "binary_0_255" / f"mask_{i}.png", np.where(m > 0, 255, 0).astype(np.uint8))
    for i in range(2):  # the same kind of mask saved as JPEG: stray values along the edges
        path = root / "jpeg" / f"mask_{i}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        m = (scene(48, 64, [1, 2], 20 + i) * 40).astype(np.uint8)
        Image.fromarray(m).save(path, format="JPEG", quality=75)
    colours = {0: (0, 0, 0), 1: (128, 0, 0), 2: (0, 128, 0)}
    for i in range(2):  # colour masks: one colour per class, plus (i == 1) one unlisted colour
        m = scene(48, 64, [1, 2], 30 + i)
        m[m == 255] = 0
        rgb = np.zeros((*m.shape, 3), np.uint8)
        for c, colour in colours.items():
            rgb[m == c] = colour
        if i == 1:
            rgb[:2, :2] = (255, 255, 0)
        png(root / "rgb" / f"mask_{i}.png", rgb, "RGB")
    (root / "rgb.yaml").write_text(
        "num_classes: 3\nignore_index: 255\ncolor_map:\n"
        + "".join(f"  {c}: [{r}, {g}, {b}]\n" for c, (r, g, b) in colours.items())
    )
    for i in range(2):  # Cityscapes labelIds (road 7, sidewalk 8, car 26, sky 23), K = 19
        m = np.full((32, 64), 7, np.uint8)
        m[:8] = 23
        m[20:, :10] = 8
        m[12:20, 20 + i : 40] = 26
        m[0, :4] = 0  # unlabelled
        png(root / "cityscapes" / f"frankfurt_{i:06d}_000019_gtFine_labelIds.png", m)
    npy = root / "npy"
    npy.mkdir(parents=True, exist_ok=True)
    for i in range(2):
        np.save(npy / f"mask_{i}.npy", scene(32, 32, [1, 2], 40 + i).astype(np.int64) % 255)


if __name__ == "__main__":
    main()
