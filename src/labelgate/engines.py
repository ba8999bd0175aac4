"""What the pandera and GX engines share: the frame they check, and a report from their failures."""

from __future__ import annotations

from typing import Any

import numpy as np

from labelgate.contract import Contract
from labelgate.dataset import Dataset, open_dataset
from labelgate.errors import UsageError
from labelgate.report import SEVERITY_ORDER, Example, Finding, Report

__all__ = ["NOT_ROW_LEVEL", "ROW_CODES", "build_report", "load_frame", "plain"]

ROW_CODES = {"LG002", "LG003", "LG004", "LG005"}  # a row failing one of these is rejected
# Checks no row-level engine (pandera, GX) can express, named in their reports' notes.
NOT_ROW_LEVEL = {
    "LG006": "ignore_index inside [0, K) is a property of the contract, not of rows",
    "LG007": "batch simulation",
    "LG008": "no usable target in the whole input",
    "LG009": "the class map's bijection",
    "LG011": "the per-source shift proof",
    "LG012": "class usage",
    "LG013": "the last batch",
    "LG015": "soft labels",
    "LG016": "sparse ids",
    "LG017": "expected_rows",
    "LG018": "the pinned class map",
}
DEFAULT_SEVERITY = {"LG014": "warning"}


def load_frame(
    paths: list[str], contract: Contract, *, extra: list[str] | None = None
) -> tuple[Dataset, Any]:
    """The needed columns (and ``extra`` ones), whole, as a pandas DataFrame (these engines do not
    stream).

    Raises:
        UsageError: the task is not multiclass.
    """
    import pandas as pd
    import pyarrow as pa

    data = open_dataset(paths, contract)
    if data.task != "multiclass":
        raise UsageError(
            f"the pandera and gx engines check the multiclass task; this input is {data.task}"
        )
    columns = data.columns.needed() + [c for c in extra or [] if c not in data.columns.needed()]
    batches = [batch for _, _, batch in data.chunks(columns)]
    if not batches:
        return data, pd.DataFrame({c: [] for c in columns})
    frame = pa.Table.from_batches(batches).to_pandas()
    label = data.columns.label
    if not pd.api.types.is_numeric_dtype(frame[label]):
        # CSV cells arrive as text: numbers written as text are numbers, as in the default engine.
        converted = pd.to_numeric(frame[label], errors="coerce")
        if converted.notna().sum() == frame[label].notna().sum():
            frame[label] = converted
    return data, frame


def plain(value: Any) -> Any:
    """A pandas or numpy scalar as plain Python (NaN as None)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def build_report(
    data: Dataset,
    df: Any,
    failures: dict[str, list[int]],
    *,
    engine: str,
    version: str,
    unsupported: dict[str, str],
    max_examples: int,
) -> Report:
    """A labelgate report from an engine's failing rows per code; what it cannot check is named."""
    from labelgate.validation import environment

    contract = data.contract
    plan = data.plan
    n = len(df)
    kept = plan.kept_batches(n)
    rejected: set[int] = set()
    findings = []
    for code, rows in sorted(failures.items()):
        if code in ROW_CODES:
            rejected.update(rows)
        severity = contract.severity.get(code, DEFAULT_SEVERITY.get(code, "error"))
        if severity == "off" or not rows:
            continue
        limit = len(rows) if max_examples == 0 else max_examples
        examples = []
        for r in rows[:limit]:
            b = int(plan.batch_of(r, 1)[0])
            examples.append(
                Example(
                    row=r,
                    id=plain(df[contract.id_column].iloc[r]) if contract.id_column else None,
                    batch=b if b < kept else None,
                    source=plain(df[contract.source_column].iloc[r])
                    if contract.source_column
                    else None,
                    value=plain(df[contract.label_column].iloc[r]),
                )
            )
        findings.append(
            Finding(
                code=code,
                severity=severity,
                count=len(rows),
                unit="rows",
                message=f"{len(rows)} rows fail {engine}'s {code} check (engine: {engine})",
                examples=tuple(examples),
            )
        )
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code))
    labels = df[contract.label_column]
    ignored = int(
        sum(
            1
            for i, v in enumerate(labels.tolist())
            if v == contract.ignore_index and i not in rejected
        )
    )
    counts = {
        "rows": n,
        "usable": n - ignored - len(rejected),
        "ignored": ignored,
        "rejected": len(rejected),
    }
    notes = tuple(
        f"engine {engine}: not checked here, no {engine} form: {code} ({why})"
        for code, why in unsupported.items()
    )
    files = [
        {
            "path": f.path,
            "format": f.kind,
            "size": f.size,
            "rows": None,
            "row_groups": None,
            "hash": f.digest(),
        }
        for f in data.files
    ]
    batches: dict[str, Any] = {
        "size": plan.size,
        "drop_last": plan.drop_last,
        "shuffle_seed": contract.batching.shuffle_seed,
        "count": kept,
        "last_size": plan.last_size(n),
        "dropped_rows": n - min(n, kept * plan.size),
        "with_rejected": None,
        "no_usable": None,
        "failing": [],
        "usable_per_batch": None,
    }
    return Report(
        findings=tuple(findings),
        counts=counts,
        input={"rows": n, "label_type": str(data.label_type), "files": files},
        environment=environment() | {"engine": engine, engine: version},
        contract=contract.to_dict() | {"columns_found": data.columns.how},
        batches=batches,
        sources=[],
        classes=[],
        notes=notes,
    )
