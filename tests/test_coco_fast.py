"""COCO annotations cleared a block at a time (readers/coco/cocofast.py): a block read with the
annotations it clears counted in bulk gives the rows, hits, counts and images of the
per-annotation read, whatever faults its annotations hold and wherever they sit."""

from __future__ import annotations

import json
import math
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import InputError
from labelgate.readers.coco import cocoarrow, cocoblocks, cocofast, cocojudge
from labelgate.readers.coco.coco import read_coco
from labelgate.readers.common.imageindex import GroupCodes
from labelgate.readers.common.sink import RowSink

SEQUENTIAL = 1 << 60  # a threshold no file reaches

W, H = 640, 480


def triangle(x: float, y: float, w: float, h: float) -> tuple[list[float], float, float]:
    """A triangle on a box's corners: its coordinates, area and perimeter (the area's band)."""
    coords = [x, y, x + w, y, x, y + h]
    return coords, w * h / 2, w + h + math.hypot(w, h)


def annotation(n: int, rng: random.Random, faults: list[str]) -> dict[str, Any]:
    """A clean annotation of image ``n % 30``, then ``faults`` applied."""
    x, y = round(rng.uniform(0, 500), 2), round(rng.uniform(0, 380), 2)
    w, h = round(rng.uniform(1, 120), 2), round(rng.uniform(1, 90), 2)
    coords, area, band = triangle(x, y, w, h)
    item: dict[str, Any] = {
        "id": n + 1,
        "image_id": n % 30,
        "category_id": rng.choice([1, 3, 7, 11]),
        "bbox": [x, y, w, h],
        "area": area,
        "iscrowd": 0,
        "segmentation": [coords],
    }
    for fault in faults:
        FAULTS[fault](item, band)
    return item


def _set(key: str, value: Any) -> Any:
    def apply(item: dict[str, Any], band: float) -> None:
        item[key] = value

    return apply


def _box(i: int, value: Any) -> Any:
    def apply(item: dict[str, Any], band: float) -> None:
        box = item.get("bbox")
        if isinstance(box, list):  # an earlier fault may have nulled or dropped the box
            box[i] = value

    return apply


def _edge(past: float) -> Any:
    """The box moved to end ``past`` pixels beyond its image's right edge."""

    def apply(item: dict[str, Any], band: float) -> None:
        box = item.get("bbox")
        if isinstance(box, list) and type(box[2]) is float:
            box[0] = W - box[2] + past

    return apply


def _poly(edit: Any) -> Any:
    def apply(item: dict[str, Any], band: float) -> None:
        seg = item.get("segmentation")
        if isinstance(seg, list) and seg and isinstance(seg[0], list):
            edit(seg)

    return apply


def _area(delta: float) -> Any:
    """The written area moved to ``band + delta`` from the mask's (LG045 past the band)."""

    def apply(item: dict[str, Any], band: float) -> None:
        if isinstance(item.get("area"), float):
            item["area"] += band + delta

    return apply


def _drop(key: str) -> Any:
    def apply(item: dict[str, Any], band: float) -> None:
        item.pop(key, None)

    return apply


FAULTS: dict[str, Any] = {
    "wide": _box(2, 700.0),  # past the image
    "flat": _box(3, 0),  # no area
    "left": _box(0, -3.5),
    "tall": _box(3, 500.0),
    "past right edge": _edge(0.25),
    "on right edge": _edge(0.0),
    "bool box": _box(1, True),
    "text box": _box(1, "5"),
    "int box": _box(0, 12),
    "crowd": _set("iscrowd", 1),
    "crowd true": _set("iscrowd", True),
    "unknown category": _set("category_id", 99),
    "background": _set("category_id", 0),
    "unlisted image": _set("image_id", 77),
    "unsized image": _set("image_id", 29),
    "float id": _set("id", 5.0),
    "bool id": _set("id", True),
    "huge id": _set("id", 2**70),
    "no category": _drop("category_id"),
    "text category": _set("category_id", "3"),  # a rejected row, its id as written
    "bool category": _set("category_id", True),
    "null box": _set("bbox", None),  # LG031, as docs/formats.md says
    "no box": _drop("bbox"),
    "no segmentation": _drop("segmentation"),
    "empty segmentation": _set("segmentation", []),
    "null segmentation": _set("segmentation", None),
    "rle": _set("segmentation", {"size": [H, W], "counts": [0, W * H]}),
    "bad rle": _set("segmentation", {"size": [H, W], "counts": [3]}),
    "odd polygon": _poly(lambda s: s[0].append(1.0)),
    "short polygon": _poly(lambda s: s.append([1.0, 2.0, 3.0, 4.0])),
    "empty polygon": _poly(lambda s: s.append([])),
    "second polygon": _poly(lambda s: s.append([10.0, 10.0, 20.0, 10.0, 10.0, 20.0])),
    "point past edge": _poly(lambda s: s[0].__setitem__(2, W + 1.5)),
    "point on tolerance": _poly(lambda s: s[0].__setitem__(2, W + 1.0)),
    "point below zero": _poly(lambda s: s[0].__setitem__(1, -0.5)),
    "text point": _poly(lambda s: s[0].__setitem__(0, "1")),
    "huge point": _poly(lambda s: s[0].__setitem__(0, 10**400)),
    "area past band": _area(1e-3),
    "area within band": _area(-1e-3),
    "area on band": _area(0.0),
    "no area": _drop("area"),
    "text area": _set("area", "12"),
    "huge area": _set("area", 10**400),
    "keypoints": _set("keypoints", [1.0, 2.0, 2]),
}


def write(path: Path, seed: int, faults: dict[int, list[str]], count: int) -> None:
    rng = random.Random(seed)
    images: list[dict[str, Any]] = [
        {"id": i, "file_name": f"{i}.jpg", "width": W, "height": H} for i in range(30)
    ]
    del images[29]["width"]
    categories = [{"id": c, "name": f"c{c}"} for c in (1, 3, 7, 11)]
    annotations = [annotation(n, rng, faults.get(n, [])) for n in range(count)]
    doc = {"images": images, "annotations": annotations, "categories": categories}
    path.write_text(json.dumps(doc))


def read(
    path: Path, folder: Path, background: int | None, task: str | None = None, **fast: Any
) -> tuple[Any, ...]:
    """Everything a read gives: the rows, the facts, the class map, each row's image."""
    folder.mkdir()
    sink = RowSink(folder)
    facts = AnnotationFacts("coco", "test", limit=5)
    try:
        found = read_coco(path, sink, facts, background, None, task, **fast)
    except InputError as exc:  # a file both reads refuse (a number past 64 bits)
        return (str(exc),)
    sink.close()
    rows = [pq.read_table(p).to_pylist() for p in sink.paths]
    groups = [pq.ParquetFile(p).metadata.num_row_groups for p in sink.paths]
    plan = sink.image_rows()
    images = None if plan is None else (plan.image.tolist(), plan.images, plan.without_boxes)
    return rows, groups, facts, found, images


def both(
    path: Path, tmp: Path, background: int | None = None, task: str | None = None
) -> tuple[Any, Any, int]:
    """The per-annotation read and the block read (cleared in bulk): what each gives, and how
    many annotations the block read cleared (from Arrow's columns or from orjson's objects)."""
    cleared = 0
    real, columns = cocofast.clear, cocoarrow.clear_block

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal cleared
        found = real(*args, **kwargs)
        cleared += 0 if found is None else int(found.mask.sum())
        return found

    def counting_columns(*args: Any, **kwargs: Any) -> Any:
        nonlocal cleared
        fast = columns(*args, **kwargs)
        cleared += 0 if fast is None else int(fast[0].mask.sum())
        return fast

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cocojudge, "clear", counting)
        patch.setattr(cocojudge, "clear_block", counting_columns)
        sequential = read(path, tmp / "a", background, task, least=SEQUENTIAL)
        blocks = read(path, tmp / "b", background, task, least=0, block=1_500, workers=1)
    return sequential, blocks, cleared


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_is_judged_as_the_per_annotation_read(tmp_path: Path, fault: str) -> None:
    path = tmp_path / "a.json"
    write(path, 0, {3: [fault], 40: [fault], 41: [fault], 90: [fault]}, 120)
    sequential, blocks, cleared = both(path, tmp_path)
    assert blocks == sequential
    if len(sequential) > 1:  # read, not refused
        assert cleared > 0  # the other annotations went the bulk way


def test_a_clean_file_is_cleared_but_for_each_category_s_first(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write(path, 1, {}, 200)
    tasks = []
    real = cocoblocks._run

    def run(todo: list[Any], *args: Any) -> Any:
        tasks.extend(todo)
        return real(todo, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cocoblocks, "_run", run)
        sequential, blocks, cleared = both(path, tmp_path)
    assert blocks == sequential
    unsized = len(range(29, 200, 30))  # image 29 has no width: its boxes are judged one by one
    # and in each task the first annotation of each of the 4 categories (its example)
    assert len(tasks) > 1
    assert cleared == 200 - unsized - 4 * len(tasks)


@pytest.mark.parametrize("task", ["instance", "keypoints", None])
def test_the_task_s_severities_survive_the_merge(tmp_path: Path, task: str | None) -> None:
    """Under its task a malformed mask is an error: the blocks' merge keeps that severity."""
    path = tmp_path / "a.json"
    write(path, 4, {2: ["short polygon"], 70: ["odd polygon"], 100: ["bad rle"]}, 120)
    sequential, blocks, _ = both(path, tmp_path, task=task)
    assert blocks == sequential
    severity = blocks[2].hits["LG044"].severity
    assert severity == ("error" if task == "instance" else None)


def test_background_is_never_cleared(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write(path, 2, {5: ["background"], 50: ["background"]}, 100)
    sequential, blocks, _ = both(path, tmp_path, background=0)
    assert blocks == sequential
    assert blocks[2].hits["LG032"].count == 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 1000),
    faults=st.dictionaries(
        st.integers(0, 149), st.lists(st.sampled_from(sorted(FAULTS)), max_size=3), max_size=25
    ),
)
def test_any_faults_anywhere_read_as_the_per_annotation_read(
    tmp_path: Path, seed: int, faults: dict[int, list[str]]
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "a.json"
    write(path, seed, faults, 150)
    sequential, blocks, _ = both(path, folder)
    assert blocks == sequential


def test_rejected_rows_and_missing_boxes_are_named_by_both_reads(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    write(
        path, 5, {4: ["text category"], 60: ["no category"], 7: ["null box"], 90: ["no box"]}, 120
    )
    sequential, blocks, _ = both(path, tmp_path)
    assert blocks == sequential
    rows, facts = blocks[0][0], blocks[2]
    assert len(rows) == 120  # every annotation a row
    # no category, or no box to train (a null or missing bbox): rejected rows, as torchvision's
    # and detectron2's loaders raise on them (docs/formats.md)
    assert [r["id"] for r in rows if r["label"] is None] == [5, 8, 61, 91]
    assert facts.rejected == 4
    lg031 = facts.hits["LG031"]
    assert [(e.id, e.row) for e in lg031.examples] == [(5, 4), (8, 7), (61, 60), (91, 90)]
    assert lg031.examples[0].value == "3"  # the category id as written
    assert "annotations without a bbox" in lg031.message.split("; ")


@pytest.mark.parametrize("least", [SEQUENTIAL, 0])
def test_images_sharing_an_id_are_named(tmp_path: Path, least: int) -> None:
    """pycocotools keys the images by id: two images under one id are one image to a loader."""
    path = tmp_path / "a.json"
    write(path, 6, {}, 40)
    doc = json.loads(path.read_text())
    doc["images"] += [{"id": 3, "file_name": "x.jpg", "width": W, "height": H}] * 2
    doc["images"].append({"id": 8, "file_name": "y.jpg", "width": W, "height": H})
    path.write_text(json.dumps(doc))
    facts = read(path, tmp_path / "r", None, least=least, block=1_500, workers=1)[2]
    h = facts.hits["LG031"]
    assert (h.count, h.unit, h.details["image_ids"]) == (3, "images", {"3": 3, "8": 2})
    assert [(e.id, e.value) for e in h.examples] == [("image 3", 3), ("image 8", 8)]
    assert "image ids 3, 8" in h.message


@pytest.mark.parametrize("same_name", [True, False])
def test_files_of_one_run_share_one_image_index(tmp_path: Path, same_name: bool) -> None:
    """Two COCO files read into one sink: each row names its image as the per-annotation read
    names it, also when both files have the same name (Roboflow's _annotations.coco.json in each
    split: their images are other images, keyed by the file's path, never merged by name)."""
    paths = [tmp_path / d / ("a.json" if same_name else f"{d}.json") for d in ("x", "y")]
    for seed, path in enumerate(paths):
        path.parent.mkdir()
        write(path, seed, {7: ["unlisted image"]}, 90)
    shared = []
    real = GroupCodes.expect

    def expect(
        self: GroupCodes, count: int, lookup: Any, keys: Any = None, indexed: Any = None
    ) -> None:
        if keys is not None:  # the parent's, sharing the index's table
            shared.append(count)
        real(self, count, lookup, keys, indexed)

    def run(folder: Path, **fast: Any) -> Any:
        folder.mkdir()
        sink = RowSink(folder)
        facts = AnnotationFacts("coco", "test", limit=5)
        for path in paths:
            read_coco(path, sink, facts, None, **fast)
        sink.close()
        plan = sink.image_rows()
        assert plan is not None
        rows = [pq.read_table(p).to_pylist() for p in sink.paths]
        return rows, facts, plan.image.tolist(), plan.images, plan.without_boxes

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GroupCodes, "expect", expect)
        sequential = run(tmp_path / "a", least=SEQUENTIAL)
        blocks = run(tmp_path / "b", least=0, block=1_500, workers=1)
    assert blocks == sequential
    assert sequential[3] == 60 + 2  # each file's 30 images and its unlisted image 77
    assert shared == [30, 30]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers forked: Linux")
def test_forked_workers_find_the_image_table_their_parent_left(tmp_path: Path) -> None:
    """The tasks sent to forked workers carry no image table (a 200,000-image table pickled per
    task cost a tenth of a second each); the read is the per-annotation one all the same."""
    path = tmp_path / "a.json"
    write(path, 3, {9: ["wide"], 60: ["unlisted image"]}, 120)
    sent: list[Any] = []
    real = cocojudge.in_order

    def spy(fn: Any, items: list[Any], *args: Any, **kwargs: Any) -> Any:
        sent.extend(items)
        return real(fn, items, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cocojudge, "in_order", spy)
        sequential = read(path, tmp_path / "a", None, least=SEQUENTIAL)
        blocks = read(path, tmp_path / "b", None, least=0, block=1_500, workers=2)
    assert blocks == sequential
    assert len(sent) > 1
    assert all(t.images == {} and t.inherited for t in sent)
    assert not cocojudge._INHERITED  # let go once the read is done


def test_merged_parts_remember_no_more_records_than_one_read() -> None:
    """Each part of a read in blocks remembers up to 100,000 counted records a code; the merge
    keeps that bound (a file where every annotation has a finding grew without it)."""
    from labelgate.core import annotations

    facts = AnnotationFacts("coco", "test")
    facts.hit("LG045", Example(row=0, id=-1, source="a.json"), message="m", fix="f")
    for part in range(3):
        facts.remember("LG045", ((part * 10**6 + i, "a.json") for i in range(annotations._SEEN)))
    assert len(facts.seen["LG045"]) == annotations._SEEN
    for _ in range(2):
        facts.hit("LG045", Example(row=0, id=10**9, source="a.json"), message="m", fix="f")
    assert facts.hits["LG045"].count == 3  # past the bound a record is no longer told apart


@pytest.mark.parametrize("error", [OSError(19, "No such device"), ValueError("empty file")])
def test_a_file_that_cannot_be_mapped_is_read_sequentially(
    tmp_path: Path, error: Exception
) -> None:
    """Every COCO file is read in blocks from a memory map where it can be; where the file
    system refuses the map, or the file was emptied since, the sequential read reads it."""
    import mmap

    path = tmp_path / "a.json"
    write(path, 5, {4: ["wide"]}, 60)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise error

    sequential = read(path, tmp_path / "a", None, least=SEQUENTIAL)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mmap, "mmap", refuse)
        blocks = read(path, tmp_path / "b", None, least=0, block=1_500, workers=1)
    assert blocks == sequential
    assert sequential[2].hits["LG028"].count == 1


class TestProgress:
    """A sign of life while a large file is parsed: the bytes read, up to the file's size, in
    the block read and in the sequential one."""

    @pytest.mark.parametrize("fast", [{"block": 4096, "workers": 1}, {"least": 1 << 40}])
    def test_bytes_read_reach_the_size(self, tmp_path: Path, fast: dict[str, Any]) -> None:
        path = tmp_path / "instances.json"
        write(path, 3, {}, 600)
        size = path.stat().st_size
        heard: list[tuple[int, int | None]] = []
        read(path, tmp_path / "rows", None, progress=lambda n, t: heard.append((n, t)), **fast)
        assert heard and heard[-1] == (size, size)
        done = [n for n, _ in heard]
        assert done == sorted(done) and len(heard) > 1

    def test_a_terminal_sees_the_parse_and_a_log_does_not(self, tmp_path: Path) -> None:
        import os
        import pty
        import subprocess

        path = tmp_path / "instances.json"
        write(path, 3, {}, 600)
        code = (
            "import itertools, labelgate.cli.progress as p\n"
            # a clock a second later at each look: the bar is drawn at once
            "p.ProgressBar.__init__.__defaults__ = (itertools.count(0.0, 1.0).__next__, "
            "'scanning labels')\n"
            "from labelgate.cli import main\n"
            f"raise SystemExit(main(['validate', {str(path)!r}]))"
        )
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
        env.pop("CI", None)
        env.pop("GITHUB_ACTIONS", None)
        master, slave = pty.openpty()
        try:
            done = subprocess.run(
                [sys.executable, "-c", code],
                stdout=subprocess.PIPE,
                stderr=slave,
                env=env,
                timeout=120,
                check=False,
            )
            os.close(slave)
            seen = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            os.close(master)
        assert done.returncode in (0, 1)
        assert b"reading the input" in seen
        logged = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, env=env, timeout=120, check=False
        )
        assert logged.returncode == done.returncode and logged.stderr == b""
