"""One file's partial, made independent of where the file sits, as plain data, checked when read.

A file's partial (``labelgate.scan.partial.Partial``) names rows and batches by their global
position. ``detach`` moves it to the file's own coordinates (row 0, file 0, batches counted from
the batch holding the file's first row) and ``attach`` moves it back to wherever the file now
sits. Batch boundaries move with the rows before the file: a detached partial is valid only at
the same *alignment* (global first row modulo the batch size), which its cache key holds.

``from_data`` rebuilds a partial from what ``to_data`` wrote, refusing (``ValueError``) anything
that is not exactly such a partial of a file of ``rows`` rows at that alignment: wrong types,
rows out of range, batch indices that are not the rows', and counts that do not add up against
one another (every row's (source, name, label) key; each check's failing rows against the keys'
values judged again). A forged entry that is consistent in every one of these can still lie;
the cache is trusted as far as its folder is (docs/ci-gate.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np

from labelgate.core.report import Example
from labelgate.core.rules import Status, failing_codes, judge
from labelgate.scan.partial import Hits, Ids, Key, Partial
from labelgate.scan.plan import Spec

__all__ = ["attach", "detach", "from_data", "to_data"]


def detach(part: Partial, first_row: int, file_index: int, batch_size: int) -> Partial | None:
    """The partial of the file at ``first_row`` (index ``file_index``) in its own coordinates;
    ``None`` if it holds what a file's partial should not (another file's rows, an id)."""
    if set(part.file_rows) - {file_index} or part.first_row != first_row:
        return None
    examples = [e for h in part.hits.values() for e in h.examples]
    examples += [e for ex in part.firsts.values() for e in ex]
    if any(
        e.id is not None or e.file is not None or e.position is not None or e.pixels is not None
        for e in examples
    ):
        return None
    return _moved(part, -first_row, -(first_row // batch_size), 0)


def attach(part: Partial, first_row: int, file_index: int, batch_size: int) -> Partial:
    """A detached partial moved to the file's place: global first row, index in reading order."""
    return _moved(part, first_row, first_row // batch_size, file_index)


def _moved(part: Partial, rows: int, batches: int, file_index: int) -> Partial:
    def ex(e: Example) -> Example:
        return replace(e, row=e.row + rows, batch=None if e.batch is None else e.batch + batches)

    index, bad, rejected = part.batch
    return replace(
        part,
        first_row=part.first_row + rows,
        file_rows=_one_file(part.file_rows, file_index),
        joint={k: [c, f + rows] for k, (c, f) in part.joint.items()},
        hits={
            code: Hits(
                h.count,
                Counter(h.by_source),
                _one_file(h.by_file, file_index),
                h.batches + batches,
                [ex(e) for e in h.examples],
            )
            for code, h in part.hits.items()
        },
        batch=(index + batches, bad.copy(), rejected.copy()),
        firsts={s: [ex(e) for e in got] for s, got in part.firsts.items()},
        ids=None if part.ids is None else replace(part.ids),
    )


def _one_file(counts: Counter[int], file_index: int) -> Counter[int]:
    """A one-file counter under another file index."""
    return Counter(dict.fromkeys([file_index], sum(counts.values())) if counts else {})


def to_data(part: Partial) -> dict[str, Any]:
    """A detached partial as JSON-ready data (``from_data`` reads it back)."""

    def ex(e: Example) -> list[Any]:
        return [e.row, e.batch, e.source, e.value]

    return {
        "rows": part.rows,
        "joint": [[*key, c, f] for key, (c, f) in part.joint.items()],
        "hits": {
            code: {
                "count": h.count,
                "by_source": [[s, c] for s, c in h.by_source.items()],
                "batches": h.batches.tolist(),
                "examples": [ex(e) for e in h.examples],
            }
            for code, h in part.hits.items()
        },
        "batch": [a.tolist() for a in part.batch],
        "firsts": [[s, [ex(e) for e in got]] for s, got in part.firsts.items()],
        "ids": None if part.ids is None else [part.ids.first, part.ids.last, part.ids.increasing],
    }


def from_data(data: Any, rows: int, align: int, spec: Spec) -> Partial:
    """The detached partial ``to_data`` wrote, for a file of ``rows`` rows (its footer's) whose
    first row sits ``align`` rows into a batch, scanned under ``spec``.

    Raises:
        ValueError: ``data`` is not exactly such a partial (see the module's docstring).
    """
    size = spec.batch_size
    _need(isinstance(data, dict) and set(data) == _FIELDS, "fields")
    _need(data["rows"] == rows and _int(rows), "row count")
    part = Partial(0, rows=rows, limit=spec.limit)
    if rows:
        part.file_rows[0] = rows
    last_batch = (align + rows - 1) // size if rows else -1

    def example(raw: Any) -> Example:
        _need(isinstance(raw, list) and len(raw) == 4, "example")
        row, batch, source, value = raw
        _need(_int(row) and 0 <= row < rows and batch == (align + row) // size, "example row")
        _need(_text(source) and (value is None or _int(value)), "example value")
        if source is not None:
            _need(spec.source is not None, "example source")
        return Example(row=row, batch=batch, source=source, value=value)

    _need(isinstance(data["joint"], list), "keys")
    for raw in data["joint"]:
        _need(isinstance(raw, list) and len(raw) == 5, "key")
        source, name, value, count, first = raw
        _need(_text(source) and _text(name) and (value is None or _int(value)), "key")
        _need(_int(count) and count >= 1 and _int(first) and 0 <= first < rows, "key count")
        key: Key = (source, name, value)
        _need(key not in part.joint, "key repeated")
        part.joint[key] = [count, first]
    _need(sum(c for c, _ in part.joint.values()) == rows, "keys' rows")
    by_status = _by_status(part.joint, spec)

    codes = failing_codes(spec.num_classes, spec.ignore_index)
    status_of = {code: status for status, code in codes.items()}
    _need(isinstance(data["hits"], dict), "hits")
    for code, raw in data["hits"].items():
        _need(code in status_of and isinstance(raw, dict) and set(raw) == _HIT_FIELDS, "hit")
        count = raw["count"]
        _need(_int(count) and count == by_status.get(status_of[code], 0) and count > 0, "hit")
        by_source: Counter[str | None] = Counter()
        for pair in raw["by_source"]:
            _need(isinstance(pair, list) and len(pair) == 2 and _text(pair[0]), "hit source")
            _need(_int(pair[1]) and pair[1] > 0 and pair[0] not in by_source, "hit source")
            by_source[pair[0]] = pair[1]
        _need(sum(by_source.values()) == count, "hit sources")
        batches = _sorted_in(raw["batches"], 0, last_batch)
        _need(1 <= len(batches) <= count, "hit batches")
        examples = [example(e) for e in _list(raw["examples"])]
        _need(len(examples) <= (count if spec.limit is None else min(count, spec.limit)), "many")
        _need(all(e.batch in set(batches.tolist()) for e in examples), "example batch")
        part.hits[code] = Hits(count, by_source, Counter({0: count}), batches, examples)
    wanted = {codes[s] for s, n in by_status.items() if s in codes and n}
    _need(wanted == set(part.hits), "hits' codes")

    _need(isinstance(data["batch"], list) and len(data["batch"]) == 3, "batch table")
    index = _sorted_in(data["batch"][0], 0, last_batch)
    bad = np.array(_ints(data["batch"][1]), np.int64)
    rejected = np.array(_ints(data["batch"][2]), np.int64)
    _need(len(index) == len(bad) == len(rejected), "batch table")
    _need(bool(((bad >= 1) & (bad <= size) & (rejected >= 0) & (rejected <= bad)).all()), "batch")
    not_usable = sum(n for s, n in by_status.items() if s != Status.USABLE)
    rejected_rows = sum(n for s, n in by_status.items() if s >= Status.HIGH)
    _need(int(bad.sum()) == not_usable and int(rejected.sum()) == rejected_rows, "batch rows")
    part.batch = (index, bad, rejected)

    want = max(spec.max_examples, 1)
    _need(isinstance(data["firsts"], list), "firsts")
    for raw in data["firsts"]:
        _need(isinstance(raw, list) and len(raw) == 2 and _text(raw[0]), "firsts")
        _need(raw[0] not in part.firsts and spec.name is not None, "firsts")
        got = [example(e) for e in _list(raw[1])]
        _need(len(got) <= want, "firsts")
        part.firsts[raw[0]] = got

    ids = data["ids"]
    if ids is not None:
        _need(isinstance(ids, list) and len(ids) == 3 and isinstance(ids[2], bool), "ids")
        _need(all(v is None or _int(v) for v in ids[:2]), "ids")
        part.ids = Ids(ids[0], ids[1], ids[2])
    return part


_FIELDS = {"rows", "joint", "hits", "batch", "firsts", "ids"}
_HIT_FIELDS = {"count", "by_source", "batches", "examples"}


def _by_status(joint: dict[Key, list[int]], spec: Spec) -> dict[int, int]:
    """Rows per status, judging every key's label value again."""
    keys = list(joint)
    values = np.array([0 if v is None else v for _, _, v in keys], np.int64)
    nulls = np.array([v is None for _, _, v in keys], bool)
    out: Counter[int] = Counter()
    if keys:
        statuses = judge(values, spec.num_classes, spec.ignore_index, null=nulls).tolist()
        for key, status in zip(keys, statuses, strict=True):
            out[status] += joint[key][0]
    return dict(out)


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"not a file's partial: {what}")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 63


def _text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _list(value: Any) -> list[Any]:
    _need(isinstance(value, list), "list")
    return list(value)


def _ints(value: Any) -> list[int]:
    items = _list(value)
    _need(all(_int(v) for v in items), "integers")
    return items


def _sorted_in(value: Any, lo: int, hi: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Strictly increasing integers within ``[lo, hi]``."""
    out = np.array(_ints(value), np.int64)
    _need(not len(out) or (out[0] >= lo and out[-1] <= hi), "batch range")
    _need(bool((np.diff(out) > 0).all()), "batch order")
    return out
