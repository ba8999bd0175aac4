"""The boxes' sizes per class (readers/common/boxsizes.py): quantiles held to a pass per class
computed straight from the boxes with numpy, and the parallel COCO read counting what the
sequential read counts."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.coco.coco import read_coco
from labelgate.readers.common import boxsizes
from labelgate.readers.common.boxsizes import (
    BINS,
    EXACT,
    PER_DECADE,
    QUANTILES,
    BoxSizes,
    bin_of,
    summary,
)
from labelgate.readers.common.sink import RowSink

SEQUENTIAL = 1 << 60
BIN = 10 ** (1 / PER_DECADE)  # a bin's width, as a ratio


def boxes(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.choice([1, 2, 5], size=n, p=[0.7, 0.25, 0.05])
    widths = np.exp(rng.uniform(np.log(2), np.log(600), n)).round(2)
    heights = np.exp(rng.uniform(np.log(2), np.log(400), n)).round(2)
    return labels, widths, heights


def numpy_pass(labels: np.ndarray, widths: np.ndarray, heights: np.ndarray) -> dict[int, dict]:
    out = {}
    for label in np.unique(labels).tolist():
        at = labels == label
        dims = (widths[at], heights[at], widths[at] / heights[at])
        out[label] = [
            {name: float(np.quantile(v, q, method="lower")) for name, q in QUANTILES} for v in dims
        ]
    return out


class TestAgainstNumpy:
    def test_binned_quantiles_within_a_bin_and_exact_ends(self) -> None:
        labels, widths, heights = boxes(0, 6_000)
        sizes = BoxSizes()
        for label, w, h in zip(labels.tolist(), widths.tolist(), heights.tolist(), strict=True):
            sizes.add(label, w, h)
        sizes.fold()
        expected = numpy_pass(labels, widths, heights)
        assert sorted(sizes.boxes) == sorted(expected)
        for label, dims in expected.items():
            assert sizes.boxes[label] == int((labels == label).sum())
            for d, want in enumerate(dims):
                got = sizes.quantiles(label, d)
                assert got is not None
                assert got["min"] == want["min"] and got["max"] == want["max"]
                for name in want:
                    assert want[name] / BIN <= got[name] <= want[name] * BIN, (label, d, name)

    def test_a_small_class_is_exact(self) -> None:
        labels, widths, heights = boxes(1, 300)
        sizes = BoxSizes()
        sizes.extend(labels, widths, heights)
        for label, dims in numpy_pass(labels, widths, heights).items():
            assert (labels == label).sum() <= EXACT
            for d, want in enumerate(dims):
                assert sizes.quantiles(label, d) == want

    def test_boxes_without_a_size_are_counted_apart(self) -> None:
        sizes = BoxSizes()
        sizes.extend(np.array([3, 3, 3]), np.array([0.0, np.nan, 4.0]), np.array([2.0, 1.0, 2.0]))
        assert (sizes.boxes[3], sizes.unsized[3]) == (3, 1 + 1)
        assert sizes.quantiles(3, 2) == {name: 2.0 for name, _ in QUANTILES}

    def test_shares_merged_count_as_the_whole(self) -> None:
        labels, widths, heights = boxes(2, 5_000)
        whole = BoxSizes()
        whole.extend(labels, widths, heights)
        merged = BoxSizes()
        for part in np.array_split(np.arange(labels.size), 7):
            share = BoxSizes()
            share.extend(labels[part], widths[part], heights[part])
            merged.merge(share)
        assert summary(merged) == summary(whole)


class OneClassAtATime(BoxSizes):
    """The counting as a pass per class: each class's boxes binned on their own."""

    def _count(self, labels: np.ndarray, widths: np.ndarray, heights: np.ndarray) -> None:
        with np.errstate(divide="ignore", invalid="ignore"):
            sized = np.isfinite(widths) & np.isfinite(heights) & (widths > 0) & (heights > 0)
            aspects = widths / heights
        sized &= np.isfinite(aspects) & (aspects > 0)
        for label in np.unique(labels).tolist():
            at = labels == label
            n = int(at.sum())
            if self.above is not None and label >= self.above:
                self.unmeasured += n
                continue
            kept = np.stack([widths[at], heights[at], aspects[at]])[:, sized[at]]
            self.boxes[label] = self.boxes.get(label, 0) + n
            self.unsized[label] = self.unsized.get(label, 0) + n - kept.shape[1]
            self._keep(label, kept)
            if label not in self.counts:
                self.counts[label] = np.zeros((3, BINS), dtype=np.int64)
                self.least[label] = np.full(3, np.inf)
                self.most[label] = np.full(3, -np.inf)
            for d in range(3):
                self.counts[label][d] += np.bincount(bin_of(kept[d]), minlength=BINS)
            if kept.shape[1]:
                self.least[label] = np.minimum(self.least[label], kept.min(axis=1))
                self.most[label] = np.maximum(self.most[label], kept.max(axis=1))
        self._trim()


SIZES = st.sampled_from([0.0, -1.0, np.nan, np.inf, 1e-300, 3e-5, 0.5, 2.0, 37.25, 640.0, 1e7])


@settings(max_examples=150, deadline=None)
@given(
    boxes=st.lists(
        st.tuples(st.integers(-2, 14), SIZES | st.floats(0.01, 5e3), SIZES), max_size=60
    ),
    repeat=st.integers(1, 8),
    cuts=st.lists(st.integers(0, 480), max_size=4),
    crowded=st.booleans(),
)
def test_the_classes_counted_together_are_each_class_counted_alone(
    boxes: list[tuple[int, float, float]], repeat: int, cuts: list[int], crowded: bool
) -> None:
    """Every class's boxes, unsized boxes, bins, least and largest values and exact values
    counted in one pass over a block's boxes are those of a pass per class, over several
    blocks: classes met again, classes past ``EXACT`` values and past ``MEASURED`` classes
    (both made small here)."""
    boxes = boxes * repeat  # classes of many boxes
    if crowded:  # a first block of every class: the largest ids dropped from then on
        boxes = [(k, 2.0, 3.0) for k in range(-2, 15)] + boxes
        cuts = [17, *cuts]
    labels = np.array([b[0] for b in boxes], dtype=np.int64)
    widths = np.array([b[1] for b in boxes], dtype=np.float64)
    heights = np.array([b[2] for b in boxes], dtype=np.float64)
    together, alone = BoxSizes(), OneClassAtATime()
    bounds = [0, *sorted(c % (len(boxes) + 1) for c in cuts), len(boxes)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(boxsizes, "EXACT", 6)
        patch.setattr(boxsizes, "MEASURED", 12)
        for a, b in pairwise(bounds):
            for sizes in (together, alone):
                sizes.extend(labels[a:b], widths[a:b], heights[a:b])
    assert (together.boxes, together.unsized) == (alone.boxes, alone.unsized)
    assert (together.unmeasured, together.above) == (alone.unmeasured, alone.above)
    assert together.counts.keys() == alone.counts.keys()
    assert together.exact.keys() == alone.exact.keys()
    for label in alone.counts:
        assert np.array_equal(together.counts[label], alone.counts[label])
        assert np.array_equal(together.least[label], alone.least[label])
        assert np.array_equal(together.most[label], alone.most[label])
    for label in alone.exact:
        assert np.array_equal(together.exact[label], alone.exact[label])
    assert summary(together) == summary(alone)


def coco(path: Path, n: int) -> None:
    labels, widths, heights = boxes(3, n)
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 1000, "height": 800} for i in range(50)]
    annotations = [
        {"id": k + 1, "image_id": k % 50, "category_id": c, "bbox": [1, 2, w, h], "iscrowd": 0}
        for k, (c, w, h) in enumerate(
            zip(labels.tolist(), widths.tolist(), heights.tolist(), strict=True)
        )
    ]
    annotations[7]["bbox"] = None  # no box: not measured, its row rejected
    categories = [{"id": c, "name": f"c{c}"} for c in (1, 2, 5)]
    path.write_text(
        json.dumps({"images": images, "annotations": annotations, "categories": categories})
    )


def read(path: Path, folder: Path, **fast: object) -> tuple[dict | None, list]:
    folder.mkdir()
    sink = RowSink(folder)
    facts = AnnotationFacts("coco", "test", limit=5)
    read_coco(path, sink, facts, None, "file_name", **fast)  # type: ignore[arg-type]
    sink.close()
    labels = [r["label"] for p in sink.paths for r in pq.read_table(p).to_pylist()]
    return summary(sink.box_sizes()), labels


class TestCocoReads:
    def test_parallel_and_sequential_reads_count_the_same(self, tmp_path: Path) -> None:
        path = tmp_path / "coco.json"
        coco(path, 4_000)
        sequential, labels = read(path, tmp_path / "a", least=SEQUENTIAL)
        parallel, _ = read(path, tmp_path / "b", least=0, block=20_000, workers=2)
        assert sequential is not None and parallel == sequential
        assert sequential["boxes"] == 3_999  # the box that is null is no box
        assert labels[7] is None  # and its row is rejected (LG031), not a usable target
        assert max(c["boxes"] for c in sequential["classes"]) > EXACT  # read from the bins


def test_the_html_report_draws_them(tmp_path: Path) -> None:
    from labelgate.render.boxsizes import box_sizes_html

    path = tmp_path / "coco.json"
    coco(path, 2_000)
    import labelgate

    report = labelgate.validate(str(path))
    html = box_sizes_html(report)
    assert "box sizes per class (1999 boxes, in pixels" in html
    assert html.count("<svg") == 3 * 3  # three classes drawn, each dimension
