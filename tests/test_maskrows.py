"""The masks' Arrow rows, built from buffers: the arrays ``pa.array`` builds, and no pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path, PurePosixPath

import numpy as np
import pyarrow as pa
import pytest

from labelgate.readers.masks.maskrows import mask_batch
from labelgate.readers.masks.masks import _without_suffix

from .test_masks import png

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("label", pa.list_(pa.int64())),
        ("pixels", pa.list_(pa.int64())),
        ("source", pa.string()),
    ]
)


def test_the_batch_equals_the_one_pa_array_builds() -> None:
    paths = ["a.png", "d/é.png", "d/e/f.npy"]
    lengths = np.array([2, 0, 1], np.int64)
    read = np.array([True, False, True])
    values = np.array([0, 255, 7], np.int64)
    pixels = np.array([10, 6, 16], np.int64)
    got = mask_batch(SCHEMA, paths, lengths, read, values, pixels)
    want = pa.RecordBatch.from_arrays(
        [
            pa.array(paths),
            pa.array([[0, 255], None, [7]], pa.list_(pa.int64())),
            pa.array([[10, 6], None, [16]], pa.list_(pa.int64())),
            pa.array([".", "d", "d/e"]),
        ],
        schema=SCHEMA,
    )
    assert got.equals(want)
    assert got.column(1).null_count == 1


@pytest.mark.parametrize(
    "path", ["a.png", "d/a.b.png", ".png", "d/.png", "a.", "d.x/a", "d/a..png", "a"]
)
def test_the_image_stem_is_pathlibs(path: str) -> None:
    assert _without_suffix(path) == str(PurePosixPath(path).with_suffix(""))


def test_a_mask_run_imports_no_pandas(tmp_path: Path) -> None:
    for i in range(3):
        png(tmp_path / f"{i}.png", np.full((4, 4), i, np.uint8))
    code = (
        "import sys\n"
        "from labelgate import Contract\n"
        "from labelgate.run.validation import run\n"
        f"done = run([{str(tmp_path)!r}], Contract(num_classes=3), input_format='masks')\n"
        "assert done.report.status == 'pass', done.report.findings\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"
