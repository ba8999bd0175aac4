"""Fuzzing each reader with mutated inputs (COCO, YOLO, VOC, CVAT, Label Studio, LabelMe,
Hugging Face metadata, class maps): every run ends in a verdict or in labelgate's own error (exit 1
or 2 on the command line), never in another exception (a traceback, exit 3), and the process's
peak memory stays bounded.
"""

from __future__ import annotations

import copy
import json
import resource
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labelgate
from labelgate import LabelgateError, load_class_map
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow
FORMATS = SAMPLES / "formats"
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
GROWTH_LIMIT_MB = 1024  # of the peak resident memory over one fuzz test
DEEP = "\x00DEEP\x00"  # replaced, once serialised, by nesting deeper than any limit


@pytest.fixture(autouse=True)
def bounded_memory() -> Iterator[None]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) >> 10
    assert grown < GROWTH_LIMIT_MB, f"peak memory grew by {grown} MB"


def judged(run: Any) -> str:
    """Run ``run()``: a verdict, or labelgate's own error in one short message (the command
    line's exit 2); any other exception is a defect (exit 3) and fails the test."""
    try:
        run()
    except LabelgateError as exc:
        assert len(str(exc)) < 2000 and "[[[[" not in str(exc)
        return "refused"
    return "judged"


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["10", "996.0000", "", "\u202e", ":fire:", "::error::x", DEEP]),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> str:
    """``doc`` with one to four of its nodes replaced by any JSON value, serialised."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        node = doc
        while True:
            keys: list[Any] = (
                list(node) if isinstance(node, dict) else list(range(len(node)))
                if isinstance(node, list) else []
            )  # fmt: skip
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            child = node[key]
            if not isinstance(child, dict | list) or not child or draw(st.booleans()):
                node[key] = draw(json_values)
                break
            node = child
    depth = draw(st.integers(min_value=50, max_value=5000))
    return json.dumps(doc).replace(json.dumps(DEEP), "[" * depth + "]" * depth)


COCO = json.loads((FORMATS / "coco_good.json").read_text())


@SETTINGS
@given(text=mutated(COCO))
def test_coco(tmp_path: Path, text: str) -> None:
    path = tmp_path / "instances.json"
    path.write_text(text)
    judged(lambda: labelgate.validate(str(path), classes=4, input_format="coco"))


yolo_lines = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.one_of(
            st.integers(min_value=-5, max_value=2**66).map(str),
            st.floats(allow_nan=True).map(str),
            st.sampled_from(["nan", "inf", "-0", "1e400", "0x1", "", "\x00"]),
        ),
        max_size=9,
    ).map(" ".join),
)


@SETTINGS
@given(
    lines=st.lists(yolo_lines, max_size=8),
    raw=st.binary(max_size=200),
    data_yaml=st.one_of(st.just("names: [a, b]\nnc: 2\n"), st.text(max_size=80)),
)
def test_yolo(tmp_path: Path, lines: list[str], raw: bytes, data_yaml: str) -> None:
    root = tmp_path / "yolo"
    shutil.rmtree(root, ignore_errors=True)
    (root / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text(data_yaml)
    (root / "labels" / "a.txt").write_text("\n".join(lines))
    (root / "labels" / "b.txt").write_bytes(raw)
    judged(lambda: labelgate.validate(str(root), input_format="yolo", classes=2))


VOC_XML = (FORMATS / "voc_good" / "0000.xml").read_text()


@SETTINGS
@given(
    cut=st.integers(min_value=0, max_value=len(VOC_XML)),
    insert=st.one_of(
        st.text(max_size=40),
        st.sampled_from(["<object><name>", "</bndbox>", "&lt;", "<!DOCTYPE x [<!ENTITY a 'b'>]>"]),
    ),
    texts=st.lists(st.text(max_size=10), min_size=1, max_size=5),
)
def test_voc(tmp_path: Path, cut: int, insert: str, texts: list[str]) -> None:
    root = tmp_path / "voc"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    shutil.copy(FORMATS / "voc_good" / "class_names.txt", root / "class_names.txt")
    text = VOC_XML[:cut] + insert + VOC_XML[cut:]
    for value in texts:  # element texts replaced: names, coordinates, sizes
        start = text.find(">", text.find("<", len(text) // (len(texts) + 1)))
        end = text.find("<", start)
        if 0 <= start < end:
            text = text[: start + 1] + value.replace("<", "") + text[end:]
    (root / "0000.xml").write_text(text)
    judged(lambda: labelgate.validate(str(root), input_format="voc", classes=4))


CVAT_XML = (FORMATS / "cvat_good.xml").read_text()


@SETTINGS
@given(
    cut=st.integers(min_value=0, max_value=len(CVAT_XML)),
    insert=st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            [
                "<box label=",
                "</image>",
                ' xtl="nan"',
                ' points="1,1"',
                "<track id='1' label='cat'>",
                "<!DOCTYPE x [<!ENTITY a 'b'>]>",
            ]
        ),
    ),
    texts=st.lists(st.text(max_size=10), min_size=1, max_size=5),
)
def test_cvat(tmp_path: Path, cut: int, insert: str, texts: list[str]) -> None:
    text = CVAT_XML[:cut] + insert + CVAT_XML[cut:]
    for value in texts:  # attribute values replaced: labels, coordinates, sizes
        start = text.find('"', len(text) // (len(texts) + 1))
        end = text.find('"', start + 1)
        if 0 <= start < end:
            text = text[: start + 1] + value.replace('"', "").replace("<", "") + text[end:]
    path = tmp_path / "task.xml"
    path.write_text(text)
    judged(lambda: labelgate.validate(str(path), input_format="cvat"))


def beside(folder: Path, companion: Path) -> Path:
    """``folder`` made anew (each example of a test shares its ``tmp_path``), holding a copy of
    the file the mutated one is read with (a labelling config, a class list)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    shutil.copy(companion, folder / companion.name)
    return folder


LABEL_STUDIO = json.loads((FORMATS / "labelstudio_good" / "export.json").read_text())


@SETTINGS
@given(text=mutated(LABEL_STUDIO))
def test_label_studio(tmp_path: Path, text: str) -> None:
    folder = beside(tmp_path / "ls", FORMATS / "labelstudio_good" / "label_config.xml")
    (folder / "export.json").write_text(text)
    judged(lambda: labelgate.validate(str(folder / "export.json"), input_format="labelstudio"))


LABELME = json.loads((FORMATS / "labelme_good" / "img_0.json").read_text())


@SETTINGS
@given(text=mutated(LABELME))
def test_labelme(tmp_path: Path, text: str) -> None:
    folder = beside(tmp_path / "labelme", FORMATS / "labelme_good" / "labels.txt")
    (folder / "img_0.json").write_text(text)
    judged(lambda: labelgate.validate(str(folder), input_format="labelme"))


FEATURES = {"features": {"label": {"_type": "ClassLabel", "names": ["neg", "pos"]}}}


@SETTINGS
@given(info=mutated(FEATURES), parquet_meta=mutated({"info": FEATURES}))
def test_hf_metadata(tmp_path: Path, info: str, parquet_meta: str) -> None:
    folder = tmp_path / "ds"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    table = pa.table({"label": [0, 1, 1]})
    with (
        pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as f,
        pa.ipc.new_stream(f, table.schema) as w,
    ):
        w.write_table(table)
    (folder / "dataset_info.json").write_text(info)
    judged(lambda: labelgate.validate(str(folder), input_format="hf", classes=2))
    path = tmp_path / "hf.parquet"
    pq.write_table(table.replace_schema_metadata({b"huggingface": parquet_meta.encode()}), path)
    judged(lambda: labelgate.validate(str(path), classes=2))


@SETTINGS
@given(
    suffix=st.sampled_from([".txt", ".names", ".json", ".yaml", ".yml", ".csv"]),
    content=st.one_of(
        st.text(max_size=120),
        json_values.map(json.dumps),
        mutated({"names": ["cat", "dog"], "nc": 2}),
        st.sampled_from(["0,cat\n1,dog\n", "a = b\n", "root:x:0:0::/:/bin/sh\n", "[a, b\n"]),
    ),
)
def test_class_maps(tmp_path: Path, suffix: str, content: str) -> None:
    path = tmp_path / f"classes{suffix}"
    path.write_text(content)
    judged(lambda: load_class_map(path))
