"""The contract as a pandera schema, and pandera as a validation engine.

    from labelgate.engines.pandera import schema
    schema(contract).validate(df, lazy=True)   # SchemaErrors.failure_cases names the rows

Importing this module registers labelgate's checks with pandera's extension API
(``Check.labelgate_class_index``, ``Check.labelgate_integral``, ``Check.labelgate_label_names``),
so a schema written with ``to_yaml`` reads back with ``DataFrameSchema.from_yaml`` once it is
imported. Only this module imports pandera and pandas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from labelgate.contract import Contract
from labelgate.contract.classmap import normalise_name
from labelgate.contract.section import section_failures, section_schema
from labelgate.core.codes import Code
from labelgate.core.report import Report
from labelgate.core.rules import code_of, masks
from labelgate.engines.common import Translator, engine_report, load_frame
from labelgate.errors import UsageError
from labelgate.run.validation import run

try:
    import pandas as pd
    import pandera
    import pandera.errors
    import pandera.pandas as pa
    from pandera import extensions
except ImportError:  # pragma: no cover - pandera is a core dependency
    raise ImportError(
        "labelgate.engines.pandera needs pandera: pip install 'pandera[pandas]'"
    ) from None

__all__ = [
    "check_code",
    "export_schema",
    "schema",
    "validate_with_pandera",
]


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
        passes: pd.Series = ~masks(series, num_classes, ignore_index).rejected
        return passes

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
        in_range = masks(labels, len(names), ignore_index).usable & labels.notna()
        agree: pd.Series = ~(in_range & expected.notna()) | (expected == labels)
        return agree


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


def export_schema(contract: Contract) -> pa.DataFrameSchema:
    """What ``labelgate export pandera`` writes: ``schema`` and the contract's own
    ``pandera:`` section (its other columns and frame checks); a column both name keeps the
    checks of both."""
    built = schema(contract)
    if contract.pandera is None:
        return built
    section = section_schema(contract.pandera)
    columns = dict(built.columns)
    for name, column in section.columns.items():
        mine = columns.get(name)
        if mine is None:
            columns[name] = column
            continue
        columns[name] = pa.Column(
            column.dtype if column.dtype is not None else mine.dtype,
            checks=[*mine.checks, *column.checks],
            nullable=mine.nullable and column.nullable,
            unique=mine.unique or column.unique,
            report_duplicates=mine.report_duplicates,
            required=True,
        )
    return pa.DataFrameSchema(
        columns, checks=[*built.checks, *section.checks], name=built.name, strict=False
    )


def _judged(value: Any, num_classes: int, ignore_index: int) -> Code:
    """A class-index failure: the judge names its code."""
    return code_of(value, num_classes, ignore_index) or "LG004"


def _section(value: Any, num_classes: int, ignore_index: int) -> Code:
    """Any other check is one of the contract's pandera section."""
    return "LG019"


TRANSLATOR = Translator("pandera", _section)
TRANSLATOR.register("LG003", "not_nullable")
TRANSLATOR.register("LG014", "field_uniqueness")
TRANSLATOR.register("LG002", "labelgate_integral*")
TRANSLATOR.register("LG010", "labelgate_label_names*")
TRANSLATOR.register(_judged, "labelgate_class_index*")


def check_code(check: str, value: Any, num_classes: int, ignore_index: int) -> Code:
    """The labelgate code of a pandera failure case on the label, id or name column."""
    return TRANSLATOR.code(check, value, num_classes, ignore_index)


def validate_with_pandera(
    paths: list[str], contract: Contract, *, max_examples: int = 20, strict: bool = False
) -> Report:
    """Run the contract's row-level rules through pandera, and every other check through
    labelgate, on the same input: the default engine's verdict, with pandera's failing rows.

    Unlike the default engine this loads the needed columns whole into pandas.
    """
    done = run(paths, contract, max_examples=max_examples, strict=strict)
    with done:
        data = done.dataset
        section = None if contract.pandera is None else section_schema(contract.pandera)
        other = set() if section is None else set(section.columns)
        df = load_frame(data, extra=sorted(other))
        built = schema(data.contract)
        if section is not None:
            built = pa.DataFrameSchema(
                {**built.columns, **section.columns},
                checks=[*built.checks, *section.checks],
                name=built.name,
                strict=False,
            )
        failures: dict[Code, set[int]] = {}
        for row, column, check, value in section_failures(built, df, 0):
            if row < 0:
                continue
            code = (
                "LG019"
                if column in other
                else check_code(check, value, data.k, data.contract.ignore_index)
            )
            failures.setdefault(code, set()).add(row)
        return engine_report(
            done, df, failures, "pandera", pandera.__version__, max_examples=max_examples
        )
