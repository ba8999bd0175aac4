"""A block of COCO annotations read into columns by Arrow (``readers/coco/cocoarrow.py``): it clears
exactly what ``cocofast.clear`` clears over orjson's objects, and it reads nothing orjson would
refuse (the file then goes to the sequential read, which words the problem)."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.coco import cocoarrow, cocoblocks, cocojudge
from labelgate.readers.coco.coco import read_coco
from labelgate.readers.coco.cocofast import ImageSizes, ImageTable, clear
from labelgate.readers.common.sink import RowSink
from tests.test_coco_fast import FAULTS, SEQUENTIAL, annotation, read, write

IMAGES = {i: (640.0, 480.0) for i in range(29)} | {29: None}


def block(
    items: list[dict[str, Any]], spaced: bool = True, indent: int | None = None, end: str = "\n"
) -> bytes:
    """Elements as a block's bytes: the objects of an array, no brackets (``indent``: over
    lines, each ending in ``end``)."""
    text = json.dumps(items, separators=(", ", ": ") if spaced else (",", ":"), indent=indent)
    return text[1:-1].replace("\n", end).encode()


def same(data: bytes, used: Counter[Any] | None = None, background: int | None = None) -> bool:
    """Whether the Arrow read of ``data`` clears what orjson's does; true when it is read."""
    table = ImageTable.of(IMAGES)
    fast = cocoarrow.clear_block(data, table, Counter(used or {}), background)
    if fast is None:
        return False
    items = orjson.loads(b"[" + data + b"]")  # never refused where Arrow read the block
    slow = clear(items, table, Counter(used or {}), background)
    assert slow is not None
    found, lines = fast
    assert np.array_equal(found.mask, slow.mask)
    kept = found.mask
    assert np.array_equal(found.ids[kept], slow.ids[kept])
    assert np.array_equal(found.categories[kept], slow.categories[kept])
    assert np.array_equal(found.codes[kept], slow.codes[kept])
    assert [lines.element(i) for i in range(len(items))] == items
    return True


def items_with(faults: dict[int, list[str]], seed: int = 0, count: int = 40) -> list[Any]:
    rng = random.Random(seed)
    return [annotation(n, rng, faults.get(n, [])) for n in range(count)]


@pytest.mark.parametrize("spaced", [True, False])
def test_a_clean_block_is_read_as_columns(spaced: bool) -> None:
    assert same(block(items_with({}), spaced), Counter({1: 1, 3: 1, 7: 1, 11: 1}))


@pytest.mark.parametrize(("indent", "end"), [(1, "\n"), (4, "\n"), (2, "\r\n"), ("\t", "\n")])
def test_an_indented_block_is_read_as_columns(indent: Any, end: str) -> None:
    """Line breaks between tokens read as tabs (Roboflow's exports are indented); an RLE too."""
    items = items_with({})
    items[4]["segmentation"] = {"size": [480, 640], "counts": "PQ3"}
    data = block(items, True, indent, end)
    assert data.count(end.encode()) > len(items)
    assert same(data, Counter({1: 1, 3: 1, 7: 1, 11: 1}))


def test_a_line_break_inside_a_string_is_not_read_as_columns() -> None:
    """JSON forbids a raw line break in a string, as orjson does: Arrow refuses the tab it
    becomes."""
    data = block(items_with({}), True, 2).replace(b'"iscrowd": 0', b'"iscrowd": 0, "a": "x\ny"', 1)
    assert cocoarrow.clear_block(data, ImageTable.of(IMAGES), Counter(), None) is None
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(b"[" + data + b"]")


def test_elements_separated_two_ways_are_left_to_orjson() -> None:
    items = items_with({})
    data = block(items).replace(b"}, {", b"},\n {", 1).replace(b"}, {", b"},  {", 1)
    assert cocoarrow.clear_block(data, ImageTable.of(IMAGES), Counter(), None) is None
    assert orjson.loads(b"[" + data + b"]") == items


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_clears_as_orjson_s_objects(fault: str) -> None:
    data = block(items_with({3: [fault], 20: [fault]}))
    read = same(data, Counter({1: 1, 3: 1, 7: 1}))
    usual = {"rle", "crowd", "wide", "unlisted image", "area past band", "point past edge"}
    if fault in usual:
        assert read  # a usual fault leaves the block to Arrow, the annotation judged alone


# Text that orjson refuses and Arrow reads, or that Arrow reads another way: never cleared here.
REFUSED = {
    "NaN": (b'"area": ', b'"area": NaN, "was": '),
    "NaN elsewhere": (b'"iscrowd": 0', b'"iscrowd": 0, "score": NaN'),
    "Infinity": (b'"iscrowd": 0', b'"iscrowd": 0, "score": -Infinity'),
    "past a float": (b'"iscrowd": 0', b'"iscrowd": 0, "score": 1.8e308'),
    "past a float, nested": (b'"iscrowd": 0', b'"iscrowd": 0, "x": {"y": [1e309]}'),
    "past int64": (b'"iscrowd": 0', b'"iscrowd": 0, "score": 99999999999999999999'),
    "past int64, unsigned": (b'"iscrowd": 0', b'"iscrowd": 0, "n": 9223372036854775808'),
    "past int64, nested": (
        b'"iscrowd": 0',
        b'"iscrowd": 0, "x": {"y": [1, 2e0, -100000000000000000000]}',
    ),
    "19 digits as a float": (b'"area": ', b'"area": 1000000000000000000, "was": '),
    "not UTF-8": (b'"iscrowd": 0', b'"iscrowd": 0, "name": "\xff"'),
    "surrogate as UTF-8": (b'"iscrowd": 0', b'"iscrowd": 0, "name": "\xed\xa0\x80"'),
    "duplicate key": (b'"iscrowd": 0', b'"iscrowd": 0, "id": 4'),
    "keypoints": (b'"iscrowd": 0', b'"iscrowd": 0, "keypoints": [1, 2, 2]'),
    "segments": (b'"iscrowd": 0', b'"iscrowd": 0, "segments_info": []'),
    "gap in a string": (b'"iscrowd": 0', b'"iscrowd": 0, "note": "a}, {b"'),
    "float id": (b'"id": 2,', b'"id": 2.0,'),
    "two types": (b'"iscrowd": 0', b'"iscrowd": 0, "z": "a"'),  # after one of "z": 1
}


@pytest.mark.parametrize("edit", sorted(REFUSED))
def test_what_orjson_refuses_or_reads_otherwise_is_not_read_as_columns(edit: str) -> None:
    old, new = REFUSED[edit]
    items = items_with({})
    if edit == "two types":  # a field of a number in one annotation and text in another
        items[0]["z"] = 1
    data = block(items)
    assert old in data
    edited = data.replace(old, new, 2)
    assert edited != data
    assert cocoarrow.clear_block(edited, ImageTable.of(IMAGES), Counter(), None) is None


def test_digits_in_text_and_large_floats_under_1e18_are_read_as_columns() -> None:
    """Only a number Arrow may read otherwise than orjson gives a block back: 19 digits in a
    string, or an integer of 18 digits, are read as they are."""
    items = items_with({})
    items[2]["file"] = "0000000000000000000000001.jpg"
    items[5]["score"] = 999999999999999999
    items[6]["area"] = 9.99e17
    assert same(block(items), Counter({1: 1, 3: 1, 7: 1, 11: 1}))


def test_an_rle_is_judged_alone_and_other_fields_are_read_past() -> None:
    items = items_with({9: ["crowd"]})
    for at in (4, 6):  # compressed RLEs (one kind of counts a block: one type a field)
        items[at]["segmentation"] = {"size": [480, 640], "counts": "PQ3"}
    items[7]["attributes"] = {"occluded": False, "track": [1, 2]}
    items[8]["score"] = 0.75
    data = block(items)
    used = Counter({1: 1, 3: 1, 7: 1, 11: 1})
    assert same(data, used)
    found = cocoarrow.clear_block(data, ImageTable.of(IMAGES), used, None)
    assert found is not None
    mask = found[0].mask
    assert not mask[4] and not mask[6] and not mask[9]  # the RLEs and the crowd
    assert mask[7] and mask[8]  # read past their other fields, cleared


@pytest.mark.parametrize("spaced", [True, False])
def test_an_rle_written_as_the_separators_is_read_as_columns(spaced: bool) -> None:
    items = items_with({})
    items[4]["segmentation"] = {"size": [480, 640], "counts": "PQ3"}
    assert same(block(items, spaced), Counter({1: 1, 3: 1, 7: 1, 11: 1}))


def test_an_rle_written_otherwise_leaves_the_block_to_orjson() -> None:
    items = items_with({})
    items[4]["segmentation"] = {"size": [480, 640], "counts": "PQ3"}
    data = block(items).replace(b'"segmentation": {', b'"segmentation" : {')
    assert cocoarrow.clear_block(data, ImageTable.of(IMAGES), Counter(), None) is None
    assert orjson.loads(b"[" + data + b"]")[4]["segmentation"]["counts"] == "PQ3"


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    faults=st.dictionaries(
        st.integers(0, 29), st.lists(st.sampled_from(sorted(FAULTS)), max_size=2), max_size=8
    ),
    used=st.sets(st.sampled_from([1, 3, 7, 11])),
    background=st.sampled_from([None, 0, 3]),
    spaced=st.booleans(),
    indent=st.sampled_from([None, None, 2]),
)
def test_any_block_clears_as_orjson_s_objects_or_is_left_to_them(
    seed: int,
    faults: dict[int, list[str]],
    used: set[int],
    background: int | None,
    spaced: bool,
    indent: int | None,
) -> None:
    data = block(items_with(faults, seed, 30), spaced, indent)
    same(data, Counter(dict.fromkeys(used, 1)), background)


@pytest.mark.parametrize(
    "first", [b"null", b" null", b"true", b"5", b'"x"', b"[]", b"{} {}", b"{}, null"]
)
def test_a_block_whose_first_element_is_no_object_never_reaches_arrow(first: bytes) -> None:
    """Arrow's JSON reader ends the process (a segmentation fault) on a first line that is
    ``null``: such a block, and any whose first element is no object, goes to orjson."""
    data = first + b", " + block(items_with({}, 3, 4))
    assert cocoarrow.clear_block(data, ImageTable.of(IMAGES), Counter(), None) is None
    images = first + b', {"id": 1, "file_name": "a.jpg", "width": 640, "height": 480}'
    assert cocoarrow.image_columns(images) is None


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), at=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_a_block_with_any_byte_changed_is_read_only_where_orjson_reads_it(
    seed: int, at: int, byte: int
) -> None:
    data = bytearray(block(items_with({}, seed, 12)))
    data[at % len(data)] = byte
    edited = bytes(data)
    if cocoarrow.image_columns(edited) is not None:  # as images: never a crash, orjson reads it
        orjson.loads(b"[" + edited + b"]")
    fast = cocoarrow.clear_block(edited, ImageTable.of(IMAGES), Counter(), None)
    if fast is None:
        return
    items = orjson.loads(b"[" + edited + b"]")  # raises where Arrow read what orjson refuses
    assert len(items) == len(fast[0].mask)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 1000), edit=st.sampled_from(sorted(REFUSED)))
def test_a_file_with_refused_text_reads_as_the_sequential_read(
    tmp_path_factory: pytest.TempPathFactory, seed: int, edit: str
) -> None:
    folder = tmp_path_factory.mktemp("refused")
    path = folder / "a.json"
    write(path, seed, {}, 90)
    old, new = REFUSED[edit]
    text = path.read_bytes()
    at = text.index(b'"annotations"') + 40 * 200  # an annotation some blocks in
    path.write_bytes(text[:at] + text[at:].replace(old, new, 1))
    sequential = read(path, folder / "a", None, least=SEQUENTIAL)
    blocks = read(path, folder / "b", None, least=0, block=1_500, workers=1)
    assert blocks == sequential


def test_the_worker_reads_usual_blocks_as_columns(tmp_path: Path) -> None:
    """The block read of a usual file goes the Arrow way (not orjson's objects) for its blocks."""
    path = tmp_path / "a.json"
    write(path, 7, {5: ["wide"]}, 150)
    calls = Counter[str]()
    real_columns, real_clear = cocojudge.clear_block, cocojudge.clear

    def columns(*args: Any) -> Any:
        found = real_columns(*args)
        calls["arrow" if found is not None else "refused"] += 1
        return found

    def objects(*args: Any) -> Any:
        calls["orjson"] += 1
        return real_clear(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cocojudge, "clear_block", columns)
        patch.setattr(cocojudge, "clear", objects)
        read(path, tmp_path / "b", None, least=0, block=1_500, workers=1)
    assert calls["arrow"] > 5 and not calls["orjson"] and not calls["refused"]


def images_doc(images: list[Any], count: int = 150, seed: int = 8) -> dict[str, Any]:
    rng = random.Random(seed)
    annotations = [annotation(n, rng, []) for n in range(count)]
    categories = [{"id": c, "name": f"c{c}"} for c in (1, 3, 7, 11)]
    return {"images": images, "annotations": annotations, "categories": categories}


def usual_images() -> list[Any]:
    images: list[Any] = [
        {"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in range(30)
    ]
    images[29]["width"] = None  # no size: its boxes judged one by one
    images[5]["height"] = 480.5
    return images


def forked(path: Path, folder: Path, spy: list[Any] | None = None) -> tuple[Any, ...]:
    """The block read on two forked workers, ``spy`` collecting what each images array read as
    columns gave."""
    real = cocoblocks.image_columns

    def made(data: bytes) -> Any:
        found = real(data)
        if spy is not None:
            spy.append(found)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cocoblocks, "image_columns", made)
        return read(path, folder, None, least=0, block=1_500, workers=2)


def records(path: Path, folder: Path, **fast: Any) -> list[Any]:
    """The image records a read leaves in its sink."""
    folder.mkdir()
    sink = RowSink(folder)
    read_coco(path, sink, AnnotationFacts("coco", "test"), None, **fast)
    sink.close()
    return list(sink.images.records)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers forked: Linux")
def test_images_read_as_columns_are_recorded_as_one_by_one(tmp_path: Path) -> None:
    """The images array read as columns: recorded at once as the handler records each, the
    workers judging against its table; the read is the sequential one all the same."""
    path = tmp_path / "a.json"
    images = usual_images()
    images[8]["file_name"] = None
    del images[9]["file_name"]
    images[10]["file_name"] = "caf\u00e9/été.jpg"
    path.write_text(json.dumps(images_doc(images), ensure_ascii=False))
    made: list[Any] = []
    blocks = forked(path, tmp_path / "b", made)
    assert blocks == read(path, tmp_path / "a", None, least=SEQUENTIAL)
    assert len(made) == 1 and made[0] is not None
    sequential = records(path, tmp_path / "c", least=SEQUENTIAL)
    assert records(path, tmp_path / "d", least=0, block=1_500, workers=2) == sequential
    assert [r.file for r in sequential[8:11]] == [None, None, "caf\u00e9/été.jpg"]
    assert not cocojudge._INHERITED and not cocojudge._TABLES  # let go once read


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers forked: Linux")
@pytest.mark.parametrize(
    "edit",
    ["duplicate id", "text id", "text width", "number file", "no object", "deep", "NaN size"],
)
def test_images_not_read_as_columns_read_as_the_sequential_read(tmp_path: Path, edit: str) -> None:
    images = usual_images()
    if edit == "duplicate id":
        images[7]["id"] = 3
    elif edit == "text id":
        images[7]["id"] = "7"
    elif edit == "text width":
        images[7]["width"] = "640"
    elif edit == "number file":
        images[7]["file_name"] = 7
    elif edit == "no object":
        images[7] = 7
    elif edit == "deep":
        images[7]["extra"] = json.loads("[" * 80 + "]" * 80)
    path = tmp_path / "a.json"
    text = json.dumps(images_doc(images))
    if edit == "NaN size":
        text = text.replace('"height": 480.5', '"height": NaN')
    path.write_text(text)
    sequential = read(path, tmp_path / "a", None, least=SEQUENTIAL)
    made: list[Any] = []
    assert forked(path, tmp_path / "b", made) == sequential
    assert made == [None]
    assert not cocojudge._INHERITED and not cocojudge._TABLES


@given(
    keys=st.lists(st.integers(-(2**63), 2**63 - 1), unique=True, max_size=30),
    asked=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30),
    picks=st.lists(st.integers(0, 29), max_size=10),
)
def test_an_image_table_of_integer_keys_finds_what_its_dict_finds(
    keys: list[int], asked: list[int], picks: list[int]
) -> None:
    asked = asked + [keys[p % len(keys)] for p in picks] if keys else asked
    nan = np.full(len(keys), np.nan)
    columns = ImageTable(None, nan, nan, np.array(keys, dtype=np.int64))
    lookup = ImageTable({k: i for i, k in enumerate(keys)}, nan, nan)
    wanted = np.array(asked, dtype=np.int64)
    assert columns.codes(wanted).tolist() == lookup.codes(wanted).tolist()
    assert len(columns) == len(lookup) and columns.keys() == lookup.keys()
    assert columns.position == lookup.position


LOOKED_UP = st.one_of(
    st.integers(-(2**64), 2**64),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.sampled_from([0, 1, 1.0, -1.0, True, False, 2**63, -(2**63), 2.0**63, float("nan")]),
)


@given(
    keys=st.lists(st.integers(-(2**63), 2**63 - 1), unique=True, max_size=20),
    asked=st.lists(LOOKED_UP, max_size=20),
)
def test_image_sizes_look_up_as_a_dict_of_the_same_images(
    keys: list[int], asked: list[Any]
) -> None:
    """The sizes read as columns answer every lookup as the handler's dict of the same images
    does (1.0 and True find 1; text, null and out-of-range numbers find nothing)."""
    width = np.arange(len(keys), dtype=np.float64)
    width[::3] = np.nan  # no size
    height = width + 0.5
    sizes = ImageSizes(ImageTable(None, width, height, np.array(keys, dtype=np.int64)))
    handler = {
        k: None if np.isnan(w) else (float(w), float(h))
        for k, w, h in zip(keys, width, height, strict=True)
    }
    assert list(sizes) == list(handler) and len(sizes) == len(handler)
    for key in [*asked, *keys]:
        assert (key in sizes) == (key in handler)
        assert sizes.get(key, "absent") == handler.get(key, "absent")


def test_rows_name_their_images_in_32_bits(tmp_path: Path) -> None:
    """Each box's image is held in 4 bytes for the batch plan (5M boxes: 20 MB, not 40)."""
    path = tmp_path / "a.json"
    write(path, 9, {}, 120)
    sink = RowSink(tmp_path / "rows")
    (tmp_path / "rows").mkdir()
    read_coco(path, sink, AnnotationFacts("coco", "test"), None, least=0, block=1_500)
    sink.close()
    plan = sink.image_rows()
    assert plan is not None and plan.image.dtype == np.int32 and len(plan.image) == 120


def test_annotations_of_an_empty_images_list_are_judged(tmp_path: Path) -> None:
    """A file listing no image: its boxes are judged without an image size, never looked up in
    an empty table (an internal error before)."""
    doc = images_doc([], count=60)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc))
    blocks = read(path, tmp_path / "b", None, least=0, block=1_500, workers=1)
    assert blocks == read(path, tmp_path / "a", None, least=SEQUENTIAL)
    assert len(blocks) > 1 and sum(len(rows) for rows in blocks[0]) == 60  # read, not refused


def test_images_read_as_columns_hold_no_object_per_image() -> None:
    """50,000 images read as columns are recorded in under 100 bytes an image (their file names
    as strings, their ids and size codes as arrays), not a record, a key, a name and a dict
    entry each (about 400 bytes an image); the records are made when asked for."""
    import tracemalloc

    from labelgate.readers.common.imageindex import ImageIndex

    images = [
        {"id": i, "file_name": f"{i:012d}.jpg", "width": 640, "height": 480 + i % 3}
        for i in range(50_000)
    ]
    found = cocoarrow.image_columns(b",".join(orjson.dumps(i) for i in images))
    assert found is not None
    index = ImageIndex()
    tracemalloc.start()
    try:
        cocoarrow.record_images(found, {}, index, "a.json", Path("a.json"))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 100 * len(images), held
    record = index.records[49_999]
    assert (record.key, record.name, record.file, record.size) == (
        ("a.json", 49_999),
        "image 49999",
        "000000049999.jpg",
        (640.0, 481.0),
    )
