"""Regenerate the bundled samples: python data_samples/make_samples.py (deterministic)."""

from __future__ import annotations

import json
from pathlib import Path

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


if __name__ == "__main__":
    main()
