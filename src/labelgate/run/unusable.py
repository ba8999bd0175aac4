"""Annotations no framework trains on, written as rejected rows: a box without area
(torchvision raises on it; detectron2, mmdet and ultralytics drop it) and, under ultralytics,
every box of an image it drops as corrupt. Their rows keep their id and source, their label
becomes null, so rows = usable + ignored + rejected holds and each is named by its finding."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.core.annotations import AnnotationFacts
from labelgate.readers.common.arrowcols import bools, ints, texts
from labelgate.run.rowfiles import rewrite_rows, with_label

__all__ = ["reject_boxes", "reject_files"]

_NO_AREA = "LG027"


def reject_boxes(paths: Sequence[str], facts: AnnotationFacts) -> int:
    """Null the rows of the boxes without area the reader counted (its LG027 records, by id
    and source); returns how many rows were nulled."""
    records = facts.seen.get(_NO_AREA)
    if not records or _NO_AREA not in facts.hits:
        return 0
    wanted = {(i, s) for i, s in records}
    return _null(
        paths,
        facts,
        lambda ids, sources: [(i, s) in wanted for i, s in zip(ids, sources, strict=True)],
        {i for i, _ in wanted},
        _NO_AREA,
    )


def reject_files(
    paths: Sequence[str], facts: AnnotationFacts, files: Iterable[str], code: str
) -> int:
    """Null the rows of every box of the label files given (YOLO ids are ``file:line``), whose
    image finding ``code`` names."""
    prefixes = tuple(f"{f}:" for f in files)
    if not prefixes:
        return 0
    return _null(
        paths, facts, lambda ids, _: [str(i).startswith(prefixes) for i in ids], None, code
    )


def _null(
    paths: Sequence[str], facts: AnnotationFacts, chosen: Any, ids: set[Any] | None, code: str
) -> int:
    """Null the label of each row ``chosen(ids, sources)`` picks among the rows whose id is in
    ``ids`` (every row where ``None``); the rows are added to ``facts.refused``, and to
    ``facts.rejected_by`` under ``code``. Each file is read a row group at a time, and rewritten
    (``rewrite_rows``) only where it holds such a row."""
    import pyarrow.parquet as pq

    nulled, row = 0, 0
    for path in paths:
        found: dict[int, Any] = {}  # position in the file -> its label as written
        with pq.ParquetFile(path) as f:
            n = f.metadata.num_rows
            if "label" in f.schema_arrow.names:
                first = 0
                for i in range(f.num_row_groups):
                    group = f.read_row_group(i, columns=["id", "source", "label"])
                    for r, v in _picked(group, ids, chosen):
                        if row + first + r not in facts.refused:
                            found[first + r] = v
                    first += group.num_rows
        if found:
            facts.refuse({row + r: v for r, v in found.items()}, code)
            for v in found.values():
                facts.rejected_classes[v] = facts.rejected_classes.get(v, 0) + 1
            rewrite_rows(path, partial(_nulled, rows=np.array(sorted(found), np.int64)))
            nulled += len(found)
        row += n
    return nulled


def _picked(table: Any, ids: set[Any] | None, chosen: Any) -> list[tuple[int, Any]]:
    """The rows of ``table`` (a row group's id, source and label) that ``chosen`` picks among
    those whose id is in ``ids`` (every row where ``None``) and whose label is not null: each
    row's position in ``table`` and its label."""
    import pyarrow as pa
    import pyarrow.compute as pc

    id_col = table.column("id")
    if ids is None:
        candidates = list(range(table.num_rows))
    else:
        typed = [i for i in ids if isinstance(i, int if pa.types.is_integer(id_col.type) else str)]
        if not typed:
            return []
        if pa.types.is_integer(id_col.type):
            wanted = ints([i for i in typed if isinstance(i, int)])
        else:
            wanted = texts([i for i in typed if isinstance(i, str)])
        mask = pc.is_in(id_col, value_set=wanted.cast(id_col.type))
        candidates = pc.indices_nonzero(pc.fill_null(mask, bools(np.zeros(1, bool))[0]))
        candidates = candidates.to_pylist()
    if not candidates:
        return []
    at = ints(candidates)
    picked = chosen(
        pc.take(id_col, at).to_pylist(), pc.take(table.column("source"), at).to_pylist()
    )
    rows = [r for r, p in zip(candidates, picked, strict=True) if p]
    old = pc.take(table.column("label"), ints(rows)).to_pylist()
    return [(r, v) for r, v in zip(rows, old, strict=True) if v is not None]


def _nulled(table: Any, first: int, rows: npt.NDArray[np.int64]) -> Any:
    """``table`` (a row group whose first row is row ``first`` of its file) with the label of
    each of ``rows`` (positions in the file, increasing) made null."""
    import pyarrow.compute as pc

    at = rows - first
    at = at[(at >= 0) & (at < table.num_rows)]
    if not at.size:
        return table
    mask = np.zeros(table.num_rows, dtype=bool)
    mask[at] = True
    label = table.column("label")
    return with_label(table, pc.if_else(bools(mask), ints([None])[0].cast(label.type), label))
