"""Hostile inputs, round three: the Python API checks what it is given before pyarrow or torch
sees it, and a corrupt Arrow file in a save_to_disk folder is refused, not a SIGBUS."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import labelgate
from labelgate import UsageError
from tests.limits import assert_clean_exit, run_bounded


class TestApiInputs:
    @pytest.mark.parametrize(
        ("data", "words"),
        [
            (pd.DataFrame({"label": [1, "a", 2.5]}), "column 'label' holds values of 3 types"),
            (pd.DataFrame({"label": [0, 1], "x": [1, "b"]}), "column 'x' holds values of 2 types"),
            (np.array([1, "a", None], dtype=object), "column 'label' holds values of 3 types"),
            (np.array([1 + 2j, 0j]), "dtype complex128"),
            (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype datetime64"),
            ({"label": [0, 1, 2], "id": [1, 2]}, "differ in length ('label': 3, 'id': 2)"),
            ({"label": [0, "x"]}, "column 'label' holds values of 2 types"),
        ],
    )
    def test_labelgate_errors_not_pyarrow_ones(self, data: object, words: str) -> None:
        with pytest.raises(UsageError) as caught:
            labelgate.validate(data, classes=4)
        assert words in str(caught.value)
        assert "'a'" not in str(caught.value)  # types are named, values never

    def test_a_bfloat16_tensor_is_judged_as_floats(self) -> None:
        torch = pytest.importorskip("torch")
        report = labelgate.validate(torch.tensor([0, 1, 3], dtype=torch.bfloat16), classes=4)
        assert "LG026" in {f.code for f in report.findings}
        with pytest.raises(UsageError, match="complex64"):
            labelgate.validate(torch.tensor([1 + 1j]), classes=4)


def corrupt_save_to_disk(folder: Path, offset: int) -> Path:
    """A save_to_disk folder whose Arrow stream has a string offset pointing past its data."""
    folder.mkdir()
    table = pa.table({"text": ["aaaa", "bbbb"], "label": [0, 1]})
    arrow = folder / "data-00000-of-00001.arrow"
    with pa.OSFile(str(arrow), "wb") as f, pa.ipc.new_stream(f, table.schema) as w:
        w.write_table(table)
    data = bytearray(arrow.read_bytes())
    at = data.find(bytes.fromhex("000000000400000008000000"))
    assert at > 0
    data[at + 4 : at + 8] = offset.to_bytes(4, "little", signed=True)
    arrow.write_bytes(bytes(data))
    features = {"text": {"dtype": "string", "_type": "Value"}}
    features["label"] = {"_type": "ClassLabel", "names": ["a", "b"]}
    (folder / "dataset_info.json").write_text(json.dumps({"features": features}))
    return folder


@pytest.mark.parametrize("offset", [100_000_000, 2_000_000_000, -5])
def test_a_corrupt_arrow_offset_is_refused(tmp_path: Path, offset: int) -> None:
    r = run_bounded("validate", str(corrupt_save_to_disk(tmp_path / "ds", offset)))
    assert_clean_exit(r, 2)  # before: killed by SIGBUS (exit 135), silently
    assert "cannot read a datasets Arrow file" in r.stderr
