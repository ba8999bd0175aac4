"""The contract as a pandera schema, and pandera as a validation engine.

    from labelgate.pandera import schema
    schema(contract).validate(df, lazy=True)   # SchemaErrors.failure_cases names the rows

Importing this module registers labelgate's checks with pandera's extension API
(``Check.labelgate_class_index``, ``Check.labelgate_integral``, ``Check.labelgate_label_names``),
so a schema written with ``to_yaml`` reads back with ``DataFrameSchema.from_yaml`` once it is
imported. Only this module imports pandera and pandas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from labelgate.classmap import normalise_name
from labelgate.contract import Contract
from labelgate.errors import UsageError
from labelgate.report import Report

try:
    import pandas as pd
    import pandera
    import pandera.errors
    import pandera.pandas as pa
    from pandera import extensions
except ImportError:  # pragma: no cover - pandera is a core dependency
    raise ImportError("labelgate.pandera needs pandera: pip install 'pandera[pandas]'") from None

__all__ = ["ENGINE_CODES", "UNSUPPORTED", "check_code", "schema", "validate_with_pandera"]

# What each pandera check stands for, in labelgate's codes.
ENGINE_CODES = {"LG002", "LG003", "LG004", "LG005", "LG010", "LG014"}
UNSUPPORTED = {
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


def _register() -> None:
    if hasattr(pa.Check, "labelgate_class_index"):
        return  # registered already (a second import, or a reload)

    @extensions.register_check_method(
        statistics=["num_classes", "ignore_index"],
        supported_types=pd.Series,
        check_type="vectorized",
    )
    def labelgate_class_index(
        series: pd.Series, *, num_classes: int, ignore_index: int
    ) -> pd.Series:
        """A class index in [0, K), or the ignore_index (skipped before the range check)."""
        return (series == ignore_index) | ((series >= 0) & (series < num_classes))

    @extensions.register_check_method(
        statistics=[], supported_types=pd.Series, check_type="vectorized"
    )
    def labelgate_integral(series: pd.Series) -> pd.Series:
        """A whole number (a float label with a fractional part is corrupted data)."""
        numeric = pd.to_numeric(series, errors="coerce")
        whole: pd.Series = numeric.notna() & (numeric == np.floor(numeric))
        return whole

    @extensions.register_check_method(
        statistics=["label_column", "name_column", "names", "ignore_index"],
        supported_types=pd.DataFrame,
        check_type="vectorized",
    )
    def labelgate_label_names(
        df: pd.DataFrame,
        *,
        label_column: str,
        name_column: str,
        names: list[str],
        ignore_index: int,
    ) -> pd.Series:
        """Each row's name is the class map's name for its label (rows without either pass)."""
        index = {normalise_name(n): i for i, n in enumerate(names)}
        expected = df[name_column].map(
            lambda n: index.get(normalise_name(n), -1) if isinstance(n, str) else None
        )
        labels = df[label_column]
        in_range = (labels >= 0) & (labels < len(names)) & (labels != ignore_index)
        return ~(in_range & expected.notna()) | (expected == labels)


_register()


def schema(contract: Contract) -> pa.DataFrameSchema:
    """The contract's row-level rules as a pandera ``DataFrameSchema``.

    Args:
        contract: with ``num_classes`` and the label column resolved (or named).

    Returns:
        A schema over the label column (not null, whole numbers, class index or ignore_index),
        the id column (unique, repeats after the first reported), and, with a class map and a
        name column, a frame-level check that names agree with labels.

    Raises:
        UsageError: no K or no label column.
    """
    if contract.num_classes is None or contract.label_column is None:
        raise UsageError("a pandera schema needs num_classes and label_column")
    columns: dict[str, pa.Column] = {
        contract.label_column: pa.Column(
            nullable=False,
            checks=[
                pa.Check.labelgate_integral(),
                pa.Check.labelgate_class_index(
                    num_classes=contract.num_classes, ignore_index=contract.ignore_index
                ),
            ],
        )
    }
    if contract.id_column is not None:
        columns[contract.id_column] = pa.Column(
            unique=True, report_duplicates="exclude_first", nullable=True
        )
    checks = []
    if contract.class_map is not None and contract.name_column is not None:
        names = [contract.class_map.name_of().get(i, "") for i in range(contract.num_classes)]
        columns[contract.name_column] = pa.Column(nullable=True, required=True)
        checks.append(
            pa.Check.labelgate_label_names(
                label_column=contract.label_column,
                name_column=contract.name_column,
                names=names,
                ignore_index=contract.ignore_index,
            )
        )
    return pa.DataFrameSchema(columns, checks=checks, name=contract.name, strict=False)


def check_code(check: str, value: Any, ignore_index: int) -> str:
    """The labelgate code of a pandera failure case."""
    if check == "not_nullable":
        return "LG003"
    if check == "field_uniqueness":
        return "LG014"
    if check.startswith("labelgate_integral"):
        return "LG002"
    if check.startswith("labelgate_label_names"):
        return "LG010"
    if check.startswith("labelgate_class_index"):
        return (
            "LG005" if value is not None and float(value) < 0 and value != ignore_index else "LG004"
        )
    return "LG019"


def validate_with_pandera(
    paths: list[str], contract: Contract, *, max_examples: int = 20
) -> Report:
    """Run the contract's row-level rules through pandera and report in labelgate's format.

    Unlike the default engine this loads the needed columns whole into pandas. Checks pandera
    cannot express are listed in the report's notes, not passed silently.
    """
    from collections import defaultdict

    from labelgate.dataset import open_dataset
    from labelgate.report import SEVERITY_ORDER, Example, Finding
    from labelgate.validation import environment

    data = open_dataset(paths, contract)
    contract = data.contract
    if data.task != "multiclass":
        raise UsageError(f"--engine pandera checks the multiclass task; this input is {data.task}")
    import pyarrow as pyarrow_

    batches = [batch for _, _, batch in data.chunks()]
    table = pyarrow_.Table.from_batches(batches) if batches else None
    df = (
        table.to_pandas()
        if table is not None
        else pd.DataFrame({c: [] for c in data.columns.needed()})
    )
    failures: dict[str, list[tuple[int, Any]]] = defaultdict(list)
    try:
        schema(contract).validate(df, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        for case in exc.failure_cases.itertuples(index=False):
            row = None if pd.isna(case.index) else int(case.index)
            value = None if pd.isna(case.failure_case) else case.failure_case
            failures[check_code(str(case.check), value, contract.ignore_index)].append(
                (row if row is not None else -1, value)
            )
    n = len(df)
    plan = data.plan
    kept = plan.kept_batches(n)
    findings = []
    rejected_rows: set[int] = set()
    for code, cases in sorted(failures.items()):
        rows = sorted({r for r, _ in cases if r >= 0})
        if code in ("LG002", "LG003", "LG004", "LG005"):
            rejected_rows.update(rows)
        limit = len(rows) if max_examples == 0 else max_examples
        examples = []
        for r in rows[:limit]:
            b = int(plan.batch_of(r, 1)[0])
            examples.append(
                Example(
                    row=r,
                    id=_plain(df[contract.id_column].iloc[r]) if contract.id_column else None,
                    batch=b if b < kept else None,
                    source=_plain(df[contract.source_column].iloc[r])
                    if contract.source_column
                    else None,
                    value=_plain(df[contract.label_column].iloc[r]),
                )
            )
        severity = "warning" if code == "LG014" else "error"
        severity = contract.severity.get(code, severity)
        if severity == "off":
            continue
        findings.append(
            Finding(
                code=code,
                severity=severity,
                count=len(rows),
                unit="rows",
                message=f"{len(rows)} rows fail pandera's {code} check (engine: pandera)",
                examples=tuple(examples),
            )
        )
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code))
    labels = df[contract.label_column] if n else pd.Series([], dtype="float64")
    ignored = int(
        ((labels == contract.ignore_index) & ~labels.index.isin(list(rejected_rows))).sum()
    )
    counts = {
        "rows": n,
        "usable": n - ignored - len(rejected_rows),
        "ignored": ignored,
        "rejected": len(rejected_rows),
    }
    notes = [
        f"engine pandera: not checked here, no pandera form: {code} ({why})"
        for code, why in UNSUPPORTED.items()
    ]
    return Report(
        findings=tuple(findings),
        counts=counts,
        input={
            "rows": n,
            "label_type": str(data.label_type),
            "files": [
                {
                    "path": f.path,
                    "format": f.kind,
                    "size": f.size,
                    "rows": None,
                    "row_groups": None,
                    "hash": f.digest(),
                }
                for f in data.files
            ],
        },
        environment=environment() | {"engine": "pandera", "pandera": pandera.__version__},
        contract=contract.to_dict() | {"columns_found": data.columns.how},
        batches={
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
        },
        sources=[],
        classes=[],
        notes=tuple(notes),
    )


def _plain(value: Any) -> Any:
    """A pandas or numpy scalar as plain Python (NaN as None)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value
