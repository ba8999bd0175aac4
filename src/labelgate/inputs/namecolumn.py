"""Finding the name column by what it holds: a text column that is a function of the label.

A column called ``name`` or ``category`` is no conventional name for class names, but when its
text follows the label on nearly every row (one name per label, a different name for each label)
it is one, and the rows where it does not follow are the mislabelled ones (LG010).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from labelgate.contract.classmap import normalise_name

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pyarrow as pa

__all__ = ["SAMPLE_ROWS", "NameColumn", "find_name_column", "first_rows", "text_columns"]

SAMPLE_ROWS = 20_000  # rows of the first file read to judge; a bounded read
AGREEMENT = 0.98  # "nearly all rows": the share of named rows whose name is their label's own
MAX_CANDIDATES = 16  # text columns judged at most, in schema order
_NUMBER = re.compile(r"^\s*[+-]?\d+(\.\d*)?\s*$")


@dataclass(frozen=True, slots=True)
class NameColumn:
    """A text column found to name the classes.

    Attributes:
        column: its name.
        agreement: the share of the sampled rows, among those with a label and a name, whose
            name is the one most rows of their label give.
        rows: the sampled rows judged.
    """

    column: str
    agreement: float
    rows: int

    def how(self) -> str:
        """The note's wording: how the column was found."""
        return (
            f"detected (its text follows the label on {self.agreement:.1%} of the first "
            f"{self.rows} rows; name it with --name-column, or give another)"
        )


def text_columns(schema: pa.Schema, taken: Iterable[str | None]) -> list[str]:
    """The columns that could hold class names: text, not already given a role."""
    import pyarrow as pa

    used = {c for c in taken if c is not None}

    def is_text(t: pa.DataType) -> bool:
        if pa.types.is_dictionary(t):
            t = t.value_type
        return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or t == pa.string_view())

    names = [f.name for f in schema if f.name not in used and is_text(f.type)]
    return names[:MAX_CANDIDATES]


def find_name_column(sample: pa.Table, label: str, candidates: list[str]) -> NameColumn | None:
    """The candidate whose text is a function of ``label`` on nearly all sampled rows.

    A column qualifies when at least 98% of the rows with a label and a name pair them as most
    rows do in both directions (the label's usual name, and the name's usual label: a constant
    column, or a coarser grouping such as a split or a super-category, is no class name), at
    least two labels are seen with two rows each on average, and the names are words, not
    numbers (a label written again as text is no name). The best agreement wins; ties go to the
    earlier column.
    """
    best: NameColumn | None = None
    for column in candidates:
        judged = _judge(_pairs(sample, label, column))
        if judged is None:
            continue
        agreement, rows = judged
        if best is None or agreement > best.agreement:
            best = NameColumn(column, agreement, rows)
    return best


def _pairs(sample: pa.Table, label: str, column: str) -> Counter[tuple[str, str]] | None:
    """Rows per (label, name) pair, counted by Arrow; ``None`` where the pairs are too many for
    a name column (fewer than two rows a pair: text that varies row by row)."""
    import pyarrow as pa

    names = sample.column(column)
    if pa.types.is_dictionary(names.type):
        names = names.cast(names.type.value_type)
    both = pa.table({"l": sample.column(label), "n": names}).drop_null()
    counted = both.group_by(["l", "n"]).aggregate([([], "count_all")])
    if 2 * counted.num_rows > both.num_rows:
        return None
    out: Counter[tuple[str, str]] = Counter()
    for value, name, n in zip(*(counted.column(i).to_pylist() for i in range(3)), strict=True):
        if str(name).strip():
            out[(str(value).strip(), normalise_name(str(name)))] += n
    return out


def _judge(pairs: Counter[tuple[str, str]] | None) -> tuple[float, int] | None:
    """(agreement, rows judged), or ``None`` where the column is no name column."""
    if pairs is None:
        return None
    rows = sum(pairs.values())
    by_label: defaultdict[str, Counter[str]] = defaultdict(Counter)
    by_name: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for (value, name), n in pairs.items():
        by_label[value][name] += n
        by_name[name][value] += n
    if len(by_label) < 2 or rows < 2 * len(by_label):
        return None
    name_of = {v: c.most_common(1)[0][0] for v, c in by_label.items()}
    label_of = {name: c.most_common(1)[0][0] for name, c in by_name.items()}
    # A row agrees when its name is its label's usual one and its label its name's usual one:
    # a constant column, or a coarser grouping (a split, a super-category), fails the second.
    agreeing = {
        (v, name): n for (v, name), n in pairs.items() if name_of[v] == name and label_of[name] == v
    }
    agreement = sum(agreeing.values()) / rows
    named = {name for _, name in agreeing}
    if agreement < AGREEMENT or len(named) < 2 or all(_NUMBER.match(n) for n in named):
        return None
    return agreement, rows


def first_rows(batches: Iterable[pa.RecordBatch], limit: int = SAMPLE_ROWS) -> pa.Table | None:
    """The first ``limit`` rows of a stream of batches, as one table (``None``: no rows)."""
    import pyarrow as pa

    taken: list[pa.RecordBatch] = []
    count = 0
    for batch in islice(batches, 64):
        taken.append(batch.slice(0, limit - count))
        count += taken[-1].num_rows
        if count >= limit:
            break
    return pa.Table.from_batches(taken) if taken and count else None
