"""Turning an Arrow label column into int64 values and a status per value, by PyTorch's rules."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import bool_mask, from_numpy, numbers
from labelgate.core.classcounts import ClassCounts
from labelgate.core.rules import Status, masks

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "Classified",
    "Status",
    "classify",
    "classify_indices",
    "classify_multilabel",
    "classify_soft",
    "is_list_type",
    "is_soft_type",
    "list_rows",
    "parse_text",
]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

_INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True, slots=True)
class Classified:
    """One chunk of targets, judged.

    Attributes:
        values: each target as int64 (0 where it has none: see ``status``).
        status: a ``Status`` per value.
        row_of: for token targets, the chunk row each value belongs to; ``None`` when one value
            is one row.
        row_status: the status of each row (for tokens: the worst of its values; a row with no
            usable token and nothing worse is IGNORED).
        raw: the column as read, for showing a bad value as it was written.
        position: for token targets, the index of each value within its row.
    """

    values: I64
    status: U8
    row_of: I64 | None
    row_status: U8
    raw: pa.Array
    position: I64 | None = None


def is_list_type(t: pa.DataType) -> bool:
    """Whether an Arrow type is a list (the token task's shape)."""
    import pyarrow as pa

    return bool(
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    )


def is_soft_type(t: pa.DataType) -> bool:
    """Whether an Arrow type is a list of floats (the soft task's shape)."""
    import pyarrow as pa

    return is_list_type(t) and bool(pa.types.is_floating(t.value_type))


def list_rows(
    column: pa.Array,
) -> tuple[pa.Array, npt.NDArray[np.bool_], I64, npt.NDArray[np.float64], I64]:
    """A list column's rows as flat numpy: the column (as a plain list), which rows are null,
    each row's length, every value as float64 (a null element is NaN), and each value's row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    null = bool_mask(column.is_null())
    if pa.types.is_fixed_size_list(column.type):
        column = column.cast(pa.list_(column.type.value_type))
    lengths = numbers(pc.list_value_length(column), 0).astype(np.int64)
    flat = numbers(pc.cast(pc.list_flatten(column), pa.float64()), np.nan).astype(np.float64)
    parents = numbers(pc.list_parent_indices(column)).astype(np.int64)
    return column, null, lengths, flat, parents


def classify_soft(
    column: pa.Array, *, num_classes: int, tolerance: float
) -> tuple[Classified, Counter[str]]:
    """Judge soft (probability) targets: each row K finite, non-negative values summing to 1.

    PyTorch checks none of this (a negative "probability" gives a finite loss); labelgate does.

    Returns:
        One status per row (USABLE, NULL or NOT_A_DISTRIBUTION), and how many rows broke each
        rule (``length``, ``not finite``, ``negative``, ``sum``).
    """
    column, null, lengths, flat, parents = list_rows(column)
    n = len(null)
    reasons: Counter[str] = Counter()
    bad = ~null & (lengths != num_classes)
    reasons["length"] = int(bad.sum())
    finite = np.isfinite(flat)
    not_finite = np.zeros(n, dtype=bool)
    not_finite[parents[~finite]] = True
    negative = np.zeros(n, dtype=bool)
    negative[parents[finite & (flat < 0)]] = True
    sums = np.bincount(parents, weights=np.where(finite, flat, 0.0), minlength=n)
    off = np.abs(sums - 1.0) > tolerance
    for name, mask in (("not finite", not_finite), ("negative", negative), ("sum", off)):
        mask &= ~null & ~bad
        reasons[name] = int(mask.sum())
        bad |= mask
    status = np.zeros(n, dtype=np.uint8)
    status[bad] = Status.NOT_A_DISTRIBUTION
    status[null] = Status.NULL
    zeros = np.zeros(n, dtype=np.int64)
    return Classified(zeros, status, None, status, column), Counter(
        {k: v for k, v in reasons.items() if v}
    )


def classify_multilabel(
    column: pa.Array, *, num_classes: int
) -> tuple[Classified, Counter[str], ClassCounts]:
    """Judge multi-hot targets for ``BCEWithLogitsLoss``: each row K finite values in [0, 1].

    PyTorch checks none of this: a 2 or a -1 (CheXpert's "uncertain") gives a finite loss, and
    for some logits a negative one; a blank (null) element is NaN once cast.

    Returns:
        One status per row (USABLE, NULL or NOT_A_DISTRIBUTION); how many rows broke each rule
        (``length``, ``not finite``, ``below 0``, ``above 1``), with ``class I`` keys counting the
        bad values of each class and ``no positive`` the usable rows without a value > 0; and
        the positives (values > 0) of each class in the usable rows.
    """
    column, null, lengths, flat, parents = list_rows(column)
    n = len(null)
    starts = np.concatenate([[0], np.cumsum(lengths)])[:-1]  # a null row has no values
    position = np.arange(len(flat), dtype=np.int64) - starts[parents]  # the class of a value
    reasons: Counter[str] = Counter()
    sized = ~null & (lengths == num_classes)  # rows judged value by value
    bad = ~null & ~sized
    reasons["length"] = int(bad.sum())
    wrong = np.zeros(len(flat), dtype=bool)  # the values that break a rule
    for name, element in (
        ("not finite", ~np.isfinite(flat)),
        ("below 0", flat < 0),
        ("above 1", flat > 1),
    ):
        rows = np.zeros(n, dtype=bool)
        rows[parents[element]] = True
        rows &= sized
        reasons[name] = int(rows.sum())
        bad |= rows
        wrong |= element
    for cls, count in enumerate(np.bincount(position[wrong & sized[parents]]).tolist()):
        if count:
            reasons[f"class {cls}"] = count
    usable = ~null & ~bad
    positive = (flat > 0) & usable[parents]
    positives = ClassCounts(num_classes)
    positives.add(position[positive])
    with_positive = np.zeros(n, dtype=bool)
    with_positive[parents[positive]] = True
    reasons["no positive"] = int((usable & ~with_positive).sum())
    return _row_verdicts(column, bad, null, reasons, positives)


def classify_indices(
    column: pa.Array, *, num_classes: int
) -> tuple[Classified, Counter[str], ClassCounts]:
    """Judge multi-label targets written as lists of the positive classes' indices (turned into
    multi-hot rows of K before the loss): every element a whole number in ``0..K-1``.

    Returns:
        As ``classify_multilabel``: one status per row; the rows breaking each rule
        (``not an index``: a blank, NaN or fraction; ``negative index``; ``index >= K``) and
        ``no positive`` (empty lists); the positives of each class (a class once per row).
    """
    column, null, lengths, flat, parents = list_rows(column)
    n = len(null)
    reasons: Counter[str] = Counter()
    bad = np.zeros(n, dtype=bool)
    whole = np.isfinite(flat) & (flat == np.floor(np.where(np.isfinite(flat), flat, 0.0)))
    for name, element in (
        ("not an index", ~whole),
        ("negative index", whole & (flat < 0)),
        ("index >= K", whole & (flat >= num_classes)),
    ):
        rows = np.zeros(n, dtype=bool)
        rows[parents[element]] = True
        rows &= ~null
        reasons[name] = int(rows.sum())
        bad |= rows
    usable = ~null & ~bad
    keep = usable[parents]
    pairs = np.unique(parents[keep] * num_classes + flat[keep].astype(np.int64))
    positives = ClassCounts(num_classes)
    positives.add(pairs % num_classes)
    reasons["no positive"] = int((usable & (lengths == 0)).sum())
    return _row_verdicts(column, bad, null, reasons, positives)


def _row_verdicts(
    column: pa.Array,
    bad: npt.NDArray[np.bool_],
    null: npt.NDArray[np.bool_],
    reasons: Counter[str],
    positives: ClassCounts,
) -> tuple[Classified, Counter[str], ClassCounts]:
    """A multi-label chunk's verdict: one status per row (USABLE, NULL or NOT_A_DISTRIBUTION),
    the rules broken (those broken at least once) and the positives per class."""
    n = len(null)
    status = np.zeros(n, dtype=np.uint8)
    status[bad] = Status.NOT_A_DISTRIBUTION
    status[null] = Status.NULL
    zeros = np.zeros(n, dtype=np.int64)
    found = Counter({k: v for k, v in reasons.items() if v})
    return Classified(zeros, status, None, status, column), found, positives


def classify(column: pa.Array, *, num_classes: int, ignore_index: int) -> Classified:
    """Judge every target in an Arrow column (a scalar per row, or a list per row for tokens).

    Args:
        column: the label column of one chunk.
        num_classes: K.
        ignore_index: the value the loss skips; skipped before the range check, as PyTorch does.

    Returns:
        The values and their status.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if not is_list_type(column.type):
        values, status = _scalars(column, num_classes, ignore_index)
        return Classified(values, status, None, status, column)

    n_rows = len(column)
    row_null = bool_mask(column.is_null())
    if pa.types.is_fixed_size_list(column.type):
        column = column.cast(pa.list_(column.type.value_type))
    flat = pc.list_flatten(column)
    parents = numbers(pc.list_parent_indices(column)).astype(np.int64)
    values, status = _scalars(flat, num_classes, ignore_index)
    offsets = numbers(column.offsets).astype(np.int64)
    starts = offsets[:-1] - offsets[0]
    position = (
        np.arange(len(parents), dtype=np.int64) - starts[parents] if len(parents) else parents
    )
    row_status = np.full(n_rows, Status.IGNORED, dtype=np.uint8)
    # USABLE (0) only if some token is usable and none is worse than IGNORED.
    worst = np.zeros(n_rows, dtype=np.uint8)
    np.maximum.at(worst, parents, status)
    has_usable = np.zeros(n_rows, dtype=bool)
    has_usable[parents[status == Status.USABLE]] = True
    row_status[has_usable] = Status.USABLE
    bad = worst > Status.IGNORED
    row_status[bad] = worst[bad]
    row_status[row_null] = Status.NULL
    return Classified(values, status, parents, row_status, flat, position)


def _scalars(arr: pa.Array, k: int, ignore_index: int) -> tuple[I64, U8]:
    import pyarrow as pa

    n = len(arr)
    t = arr.type
    null = bool_mask(arr.is_null())
    status = np.zeros(n, dtype=np.uint8)
    values = np.zeros(n, dtype=np.int64)
    if pa.types.is_integer(t):
        raw = numbers(arr)
        if raw.dtype == np.uint64:
            over = raw > np.uint64(_INT64_MAX)
            status[over] = Status.BAD_TYPE
            raw = np.where(over, 0, raw)
        values = raw.astype(np.int64, copy=False)
    elif pa.types.is_floating(t):
        f = numbers(arr, 0.0).astype(np.float64)
        nan = np.isnan(f)
        null |= nan
        ok = np.isfinite(f) & (np.abs(f) < 2.0**63)
        frac = ok & (f != np.floor(np.where(ok, f, 0.0)))
        status[~ok | frac] = Status.BAD_TYPE
        values = np.where(ok & ~frac, f, 0.0).astype(np.int64)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        values, text_bad, text_null = parse_text(arr)
        status[text_bad] = Status.BAD_TYPE
        null |= text_null
    elif pa.types.is_null(t):
        null[:] = True
    else:  # bool, decimal, binary, temporal, nested: not a class index
        status[:] = Status.BAD_TYPE
    status[null] = Status.NULL
    judged = status == 0
    m = masks(values, k, ignore_index)
    status[judged & m.ignored] = Status.IGNORED
    status[judged & m.negative] = Status.NEGATIVE
    status[judged & m.high] = Status.HIGH
    return values, status


def parse_text(arr: pa.Array) -> tuple[I64, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Integers written as text (CSV, JSON strings): ``"3"`` and ``"3.0"`` are 3; ``"3.5"`` and
    ``"cat"`` are not class indices; an empty cell is null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.utf8_trim_whitespace(arr.cast(pa.string()))
    empty = bool_mask(pc.equal(text, ""), null_as=True)
    is_int = bool_mask(pc.match_substring_regex(text, r"^[+-]?\d{1,18}$"))
    values = np.zeros(len(arr), dtype=np.int64)
    if is_int.any():
        # Arrow's cast refuses a leading "+", which the pattern (and Python's int) accept.
        unsigned = pc.replace_substring_regex(text, pattern=r"^\+", replacement="")
        ints = pc.cast(pc.if_else(from_numpy(is_int), unsigned, "0"), pa.int64())
        values = numbers(ints).astype(np.int64)
    bad = ~is_int & ~empty
    long = bool_mask(pc.match_substring_regex(text, r"^[+-]?\d{19,40}$")) & bad
    for i in np.flatnonzero(long).tolist():  # 19 digits and more: rare, exact in Python
        v = int(text[i].as_py())
        if -(2**63) <= v < 2**63:
            values[i] = v
            bad[i] = False
    past = long & bad  # integers past int64: bad, and not to be read as floats below
    bad &= ~past
    if bad.any():
        pattern = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
        numeric = bool_mask(pc.match_substring_regex(text, pattern)) & bad
        if numeric.any():
            floats = pc.cast(pc.if_else(from_numpy(numeric), text, "0"), pa.float64())
            f = numbers(floats)
            whole = numeric & np.isfinite(f) & (np.abs(f) < 2.0**63)
            whole &= f == np.floor(np.where(whole, f, 0.0))
            values[whole] = f[whole].astype(np.int64)
            bad &= ~whole
    return values, bad | past, empty
