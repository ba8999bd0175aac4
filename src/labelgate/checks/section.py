"""The contract's ``pandera:`` section checked on the file's other columns, chunk by chunk (LG019).

The schema is the contract's (``labelgate.contract.section``); this runs it over the input.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from labelgate.contract.section import plain, section_failures, section_schema
from labelgate.core.report import Example
from labelgate.inputs.dataset import Dataset

__all__ = ["check_section"]


def check_section(data: Dataset, max_examples: int) -> dict[str, Any]:
    """Check the contract's pandera section chunk by chunk (a pass over those columns alone).

    Checks that span rows (unique) see one chunk at a time.
    """
    assert data.contract.pandera is not None
    schema = section_schema(data.contract.pandera)
    columns = list(schema.columns)
    missing = [c for c in columns if c not in data.schemas[0].schema.names]
    id_column = data.columns.id
    read = columns + ([id_column] if id_column and id_column not in columns else [])
    failing_rows: set[int] = set()
    by_check: Counter[str] = Counter()
    examples: list[Example] = []
    if missing:
        return {"rows": 0, "by_check": {}, "examples": [], "missing": missing}
    for _, first, batch in data.chunks(read):
        frame = batch.to_pandas()
        for row, column, check, value in section_failures(schema, frame[columns], first):
            by_check[f"{column}: {check}"] += 1
            if row < 0 or row in failing_rows:
                continue
            failing_rows.add(row)
            if max_examples == 0 or len(examples) < max_examples:
                ident = frame[id_column].iloc[row - first] if id_column else None
                b = int(data.plan.batch_of(row, 1)[0])
                examples.append(Example(row=row, id=plain(ident), batch=b, value=plain(value)))
    examples.sort(key=lambda e: e.row)
    return {
        "rows": len(failing_rows),
        "by_check": dict(by_check),
        "examples": examples,
        "missing": [],
    }
