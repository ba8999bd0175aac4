"""The contract's ``pandera:`` section: the annotation file's other columns, checked as LG019.

The contract builds the section's schema when it is read (so a bad section names its key); the
validation run checks the columns chunk by chunk (``labelgate.checks.section``). pandas and
pandera are imported only here, and only when a contract has a section.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["plain", "section_failures", "section_schema"]


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
