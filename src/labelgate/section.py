"""The contract's ``pandera:`` section: the annotation file's other columns, checked as LG019.

The contract builds the section's schema when it is read (so a bad section names its key); the
validation run checks the columns chunk by chunk with ``check_section``. pandas and pandera
are imported only here, and only when a contract has a section.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from labelgate.report import Example

if TYPE_CHECKING:
    from labelgate.dataset import Dataset

__all__ = ["check_section", "plain", "section_failures", "section_schema"]


def plain(value: Any) -> Any:
    """A pandas or numpy scalar as plain Python (NaN as None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def section_schema(section: Mapping[str, Any]) -> Any:
    """The contract's ``pandera:`` section as a pandera ``DataFrameSchema`` (pandera's own YAML
    reader builds it)."""
    import pandera.pandas as pa
    import yaml

    document = {"schema_type": "dataframe", "columns": dict(section.get("columns") or {})}
    if section.get("checks"):
        document["checks"] = dict(section["checks"])
    return pa.DataFrameSchema.from_yaml(yaml.safe_dump(document))


def section_failures(schema: Any, df: Any, first_row: int) -> list[tuple[int, str, str, Any]]:
    """``(row, column, check, value)`` for every failure case of the pandas frame ``df`` under the
    pandera ``schema`` (rows offset by ``first_row``); a frame-level failure without a row is
    given row -1."""
    import pandas as pd
    import pandera.errors

    try:
        schema.validate(df, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        out = []
        for case in exc.failure_cases.itertuples(index=False):
            row = -1 if pd.isna(case.index) else int(case.index) + first_row
            value = None if pd.isna(case.failure_case) else case.failure_case
            out.append((row, str(case.column), str(case.check), value))
        return out
    return []


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
