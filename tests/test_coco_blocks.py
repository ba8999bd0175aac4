"""COCO read in blocks (readers/coco/cocolayout.py, readers/coco/cocoblocks.py): the same rows, hits,
counts and class map as the sequential read, in processes or inline; what the fast path does not
know read the sequential way, errors and all."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import InputError
from labelgate.readers.coco import cocoblocks, cocolayout
from labelgate.readers.coco.coco import read_coco
from labelgate.readers.coco.cocolayout import blocks, find_layout
from labelgate.readers.common.boxsizes import summary
from labelgate.readers.common.sink import RowSink, RowWriter

SEQUENTIAL = 1 << 60  # a threshold no file reaches


def document(seed: int, *, order: tuple[str, ...] = ("images", "annotations", "categories")) -> Any:
    """A COCO document with the faults the reader names: boxes without area or outside their
    image, unknown categories, unlisted images, malformed boxes and ids, crowd annotations."""
    rng = random.Random(seed)
    images = [
        {"id": i, "file_name": f"part{i % 3}/{i}.jpg", "width": 640, "height": 480}
        for i in range(40)
    ]
    images[3]["width"] = None
    categories = [
        {"id": c, "name": f"class {c}", "keypoints": ["a", "b"], "skeleton": [[1, 2 + c % 2]]}
        for c in rng.sample(range(1, 40), 8)
    ]
    ids = [c["id"] for c in categories]
    annotations: list[Any] = []
    for n in range(300):
        item: dict[str, Any] = {
            "id": n + 1,
            "image_id": rng.randrange(0, 44),
            "category_id": rng.choice([*ids, 99, 0]),
            "bbox": [rng.uniform(-5, 600), rng.uniform(0, 470), rng.uniform(-1, 90), 20.5],
            "iscrowd": int(rng.random() < 0.1),
            "segmentation": [[1.5, 2.5, 3.5, 4.5, 5.0, 6.0]],
        }
        if rng.random() < 0.3:  # keypoints: 2 a category, sometimes 3, some visible
            item["keypoints"] = [rng.uniform(0, 700), 5.0, rng.choice([0, 2, 3])] * rng.choice(
                [2, 3]
            )
            item["num_keypoints"] = rng.randrange(3)
        fault = rng.randrange(40)
        if fault == 0:
            item["bbox"] = ["10", 2, 3, 4]
        elif fault == 1:
            item["category_id"] = "3"
        elif fault == 2:
            item["id"] = True
        elif fault == 3:
            item["image_id"] = [1]
        elif fault == 4:
            item["bbox"] = [1, 2, 3]
        annotations.append(item)
    whole = {"images": images, "annotations": annotations, "categories": categories}
    return {"info": {"description": "generated"}} | {k: whole[k] for k in order}


def read(path: Path, folder: Path, **fast: Any) -> tuple[Any, ...]:
    """Everything a read gives: the rows, the facts, the class map, the files the scan reads."""
    folder.mkdir()
    sink = RowSink(folder)
    facts = AnnotationFacts("coco", "test", limit=5)
    found = read_coco(path, sink, facts, None, "file_name", **fast)
    sink.close()
    rows = [pq.read_table(p).to_pylist() for p in sink.paths]
    groups = [pq.ParquetFile(p).metadata.num_row_groups for p in sink.paths]
    plan = sink.image_rows()  # each row's image: the batches of images
    images = None if plan is None else (plan.image.tolist(), plan.images, plan.without_boxes)
    sizes = summary(sink.box_sizes())  # the boxes' sizes per class, counted by each worker
    return rows, groups, facts, found, images, sizes


MODES = {
    "inline": {"least": 0, "block": 512, "workers": 1},
    "processes": {"least": 0, "block": 700, "workers": 2},
    "one block": {"least": 0, "workers": 2},
}


def in_blocks(path: Path, folder: Path, mode: str) -> tuple[Any, ...]:
    """``read`` in the blocks of ``mode``, checked to have been read so (not given back)."""
    spied: list[bool] = []
    real = cocoblocks.read_blocks

    def spy(*args: Any, **kwargs: Any) -> RowWriter | None:
        writer = real(*args, **kwargs)
        spied.append(writer is not None)
        return writer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("labelgate.readers.coco.coco.read_blocks", spy)
        found = read(path, folder, **MODES[mode])
    assert spied == [True]
    return found


class TestSameAsSequential:
    @pytest.mark.parametrize("mode", list(MODES))
    @pytest.mark.parametrize("seed", [0, 1, 2])
    @pytest.mark.parametrize("indent", [None, 2])
    def test_generated_files_with_faults(
        self, tmp_path: Path, seed: int, indent: int | None, mode: str
    ) -> None:
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(document(seed), indent=indent))
        sequential = read(path, tmp_path / "a", least=SEQUENTIAL)
        assert in_blocks(path, tmp_path / "b", mode) == sequential
        facts = sequential[2]
        assert {"LG027", "LG028", "LG030", "LG031", "LG050"} <= set(facts.hits)

    @pytest.mark.parametrize("mode", list(MODES))
    @pytest.mark.parametrize(
        "order",
        [("images", "annotations", "categories"), ("images", "categories", "annotations")],
    )
    def test_a_grouping_category(self, tmp_path: Path, mode: str, order: tuple[str, ...]) -> None:
        """Roboflow's first category (the others' supercategory, used by no annotation) is the
        class map's placeholder in both reads, the categories before or after the annotations."""
        doc = document(5, order=order)
        for category in doc["categories"]:
            category["supercategory"] = "all"
        doc["categories"].insert(0, {"id": 50, "name": "all", "supercategory": "none"})
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc, indent=2))
        sequential = read(path, tmp_path / "a", least=SEQUENTIAL)
        assert in_blocks(path, tmp_path / "b", mode) == sequential
        assert sequential[3].placeholders == {50}
        doc["annotations"][-1] |= {"category_id": 50, "bbox": [1, 1, 5, 5], "iscrowd": 0}
        path.write_text(json.dumps(doc, indent=2))  # an annotated parent: a class
        sequential = read(path, tmp_path / "c", least=SEQUENTIAL)
        assert in_blocks(path, tmp_path / "d", mode) == sequential
        assert sequential[3].placeholders == frozenset()

    def test_rows_cross_the_batch_of_65536(self, tmp_path: Path) -> None:
        doc = document(3)
        doc["annotations"] = [
            {
                "id": n,
                "image_id": n % 40,
                "category_id": doc["categories"][0]["id"],
                "bbox": [1, 1, 2, 2],
            }
            for n in range(70_000)
        ]
        doc["annotations"][69_999]["bbox"] = [1, 1, 0, 2]
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        sequential = read(path, tmp_path / "a", least=SEQUENTIAL)
        fast = read(path, tmp_path / "b", least=0, block=100_000, workers=2)
        assert fast == sequential
        assert sequential[1] == [2]  # two row groups either way
        assert sequential[2].hits["LG027"].examples[0].row == 69_999


class TestGivenBack:
    """Layouts the fast path does not read: the sequential read gives the same answer."""

    @pytest.mark.parametrize(
        "order",
        [
            ("annotations", "images", "categories"),  # the images after the annotations
            ("categories", "images", "annotations"),
        ],
    )
    def test_other_orders(self, tmp_path: Path, order: tuple[str, ...]) -> None:
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(document(4, order=order)))
        assert read(path, tmp_path / "b", least=0, block=300) == read(
            path, tmp_path / "a", least=SEQUENTIAL
        )

    def test_a_cut_inside_a_string_gives_the_file_back(self, tmp_path: Path) -> None:
        doc = document(5)
        doc["annotations"][7]["note"] = '},{"images": [{"id": 1}]'
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        assert read(path, tmp_path / "b", least=0, block=64, workers=2) == read(
            path, tmp_path / "a", least=SEQUENTIAL
        )

    @pytest.mark.parametrize(
        ("fault", "words"),
        [
            (5, "an entry of annotations is not a JSON object"),
            (
                {"id": 2**70, "image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2]},
                "not valid JSON",
            ),
            ({"id": 1, "deep": json.loads("[" * 70 + "]" * 70)}, "nested deeper than 64"),
            ({"id": 2**63, "image_id": 1, "category_id": 1}, "not valid JSON"),
        ],
    )
    def test_bad_annotations_fail_as_in_the_sequential_read(
        self, tmp_path: Path, fault: Any, words: str
    ) -> None:
        doc = document(6)
        doc["annotations"].insert(250, fault)
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(InputError, match=words):
            read(path, tmp_path / "b", least=0, block=256, workers=2)

    def test_entries_that_are_no_objects_are_never_parsed_whole(self, tmp_path: Path) -> None:
        doc = document(10)
        doc["annotations"] = list(range(20_000))  # no cut between objects: one huge block
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        parsed: list[int] = []
        real = cocoblocks._parse

        def spy(data: bytes, where: str) -> Any:
            parsed.append(len(data))
            return real(data, where)

        with pytest.MonkeyPatch.context() as patch, pytest.raises(InputError, match="not a JSON"):
            patch.setattr(cocoblocks, "_parse", spy)
            read(path, tmp_path / "b", least=0, block=256)
        assert all(n <= 8 * 256 for n in parsed)  # the sequential read refused it, entry by entry

    def test_a_bad_category_after_the_annotations(self, tmp_path: Path) -> None:
        doc = document(7)
        doc["categories"].append({"id": "x", "name": "bad"})
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(InputError, match="category 'x' has no integer id"):
            read(path, tmp_path / "b", least=0, block=256)


class TestLayout:
    def test_arrays_and_blocks(self) -> None:
        text = json.dumps(document(8)).encode()
        layout = find_layout(text)
        assert layout is not None
        start, end = layout.arrays["annotations"]
        cuts = blocks(text, start, end, 1000)
        assert len(cuts) > 10
        parsed = [json.loads(b"[" + text[a:b] + b"]") for a, b in cuts]
        assert [x for part in parsed for x in part] == json.loads(text)["annotations"]

    @pytest.mark.parametrize(
        "text",
        [
            b'{"info": "images", "images": [], "annotations": [{"id": 1}]}',  # named first in a string
            b'{"images": [], "annotations": [{"id": 1}], "extra": {}}',  # a key after the last
            b'{"images": [], "annotations": [{"id": 1}]',  # unclosed
            b'[{"images": [], "annotations": [{"id": 1}]}]',  # no object at the top
            b'{"images": [], "annotations": [{"id": 1}], "info": 1, "info": 2}',  # a key twice
        ],
    )
    def test_unknown_layouts_are_none(self, text: bytes) -> None:
        assert find_layout(text) is None

    def test_the_arrays_after_the_annotations_are_found_from_the_end(self) -> None:
        """The categories after the annotations are their last mention: one named inside an
        annotation before them is passed over, and a mention across a search window's edge is
        found."""
        doc = document(9)
        doc["annotations"][5]["categories"] = [1, 2]  # a nested key of the same name
        text = json.dumps(doc).encode()
        layout = find_layout(text)
        assert layout is not None
        start, end = layout.arrays["categories"]
        assert json.loads(b"[" + text[start:end] + b"]") == doc["categories"]
        for window in (7, 13, 64):  # windows smaller than the file: edges fall everywhere
            assert cocolayout._rfind(text, b'"categories"', 0, window) == text.rfind(
                b'"categories"'
            )
            assert cocolayout._find(text, b'"images"', -1, window) == text.find(b'"images"')

    def test_a_nested_key_and_a_key_twice_read_as_the_sequential_read(self, tmp_path: Path) -> None:
        """An array key written twice (the sequential read reads both arrays): the
        annotations' range then holds the first one's closing bracket, so a block does not
        parse and the file is read sequentially."""
        doc = document(10)
        doc["annotations"][3]["categories"] = [{"id": 1, "name": "x"}]
        path = tmp_path / "coco.json"
        path.write_text(json.dumps(doc))
        assert read(path, tmp_path / "b", least=0, block=300) == read(
            path, tmp_path / "a", least=SEQUENTIAL
        )
        twice = json.dumps(doc)[:-1] + ', "categories": [{"id": 99, "name": "late"}]}'
        path.write_text(twice)
        assert read(path, tmp_path / "d", least=0, block=300) == read(
            path, tmp_path / "c", least=SEQUENTIAL
        )


@pytest.mark.parametrize(
    "plan",
    [
        [("table", 60_000), ("table", 40_000)],
        [("add", 30_000), ("table", 60_000), ("add", 10_000)],
        [("table", 65_536), ("add", 34_464)],
        [("add", 65_535), ("table", 1), ("table", 34_464)],
    ],
)
def test_tables_write_the_batches_add_writes(tmp_path: Path, plan: list[tuple[str, int]]) -> None:
    import pyarrow as pa

    one, many = (
        RowWriter(tmp_path / "a.parquet", id_type="int"),
        RowWriter(tmp_path / "b.parquet", id_type="int"),
    )
    for n in range(100_000):
        one.add(n, n % 7, "s", None)
    done = 0
    for how, count in plan:
        span = range(done, done + count)
        if how == "add":
            for n in span:
                many.add(n, n % 7, "s", None)
        else:
            columns = [list(span), [n % 7 for n in span], ["s"] * count]
            many.extend_table(pa.table(columns, schema=many.schema))
        done += count
    one.close()
    many.close()
    a, b = pq.ParquetFile(one.path), pq.ParquetFile(many.path)
    sizes = [a.metadata.row_group(i).num_rows for i in range(a.metadata.num_row_groups)]
    assert sizes == [b.metadata.row_group(i).num_rows for i in range(b.metadata.num_row_groups)]
    assert sizes == [65_536, 34_464]
    assert a.read().equals(b.read())
    assert one.rows == many.rows == 100_000


BASE = json.dumps(document(9)).encode()


def outcome(path: Path, folder: Path, **fast: Any) -> Any:
    try:
        return read(path, folder, **fast)
    except InputError as exc:
        return str(exc)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(BASE) - 1),
            st.integers(0, 3),
            st.sampled_from(list(b'{}[],:"\\0123456789.-e xtn')),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_damaged_files_read_as_the_sequential_read(tmp_path: Path, edits: Any) -> None:
    """Bytes inserted, removed or replaced anywhere: the read in blocks gives the sequential
    read's rows and facts, or its error, word for word."""
    text = bytearray(BASE)
    for where, how, byte in edits:
        at = min(where, len(text) - 1)  # an earlier removal shortened it
        if how == 0:
            text.insert(at, byte)
        elif how == 1:
            del text[at]
        else:
            text[at] = byte
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "coco.json"
    path.write_bytes(bytes(text))
    fast = outcome(path, folder / "b", least=0, block=400, workers=1)
    assert fast == outcome(path, folder / "a", least=SEQUENTIAL)
