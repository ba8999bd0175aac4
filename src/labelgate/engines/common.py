"""What the pandera and GX engines share: the frame they check, and the full verdict they give.

A row-level engine runs the checks it can express (the catalog's ``engines`` field) on a pandas
frame; labelgate runs every other check itself on the same input, so the verdict and the exit
status are the default engine's, and the report says once what each ran.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from labelgate.contract.section import plain
from labelgate.core.catalog import CODES, engine_codes, entry
from labelgate.core.codes import Code
from labelgate.core.findings import apply_severity, finding
from labelgate.core.report import Example, Report
from labelgate.errors import UsageError
from labelgate.inputs.dataset import Dataset
from labelgate.run.validation import Validation
from labelgate.scan import NO_SOURCE

__all__ = ["REJECTING", "Translator", "engine_report", "load_frame"]

REJECTING = {"LG002", "LG003", "LG004", "LG005"}  # a row failing one of these is rejected


Judge = Callable[[Any, int, int], Code]  # (failing value, K, ignore_index) -> its code


class Translator:
    """An engine's failing checks as labelgate codes: each code registers the engine's check
    names that mean it (a name, or a prefix of generated names); a check registered to no code
    is judged by ``fallback`` from its failing value."""

    def __init__(self, engine: str, fallback: Judge) -> None:
        self.engine = engine
        self._fallback = fallback
        self._names: dict[str, Code | Judge] = {}

    def register(self, code: Code | Judge, *checks: str) -> None:
        """``checks`` (names, or prefixes ending in ``*``) fail rows with ``code``, or with the
        code a judge gives their failing value.

        Raises:
            ValueError: the code is not in the catalog, or a check is registered twice.
        """
        if isinstance(code, str) and code not in CODES:
            raise ValueError(f"{code!r} is not a check code of the catalog")
        for name in checks:
            if name in self._names:
                raise ValueError(f"{self.engine}'s check {name!r} is registered twice")
            self._names[name] = code

    def code(self, check: str, value: Any, k: int, ignore_index: int) -> Code:
        """The code of one failure of the engine's ``check`` on ``value``."""
        found: Code | Judge = self._fallback
        if check in self._names:
            found = self._names[check]
        else:
            for name, code in self._names.items():
                if name.endswith("*") and check.startswith(name[:-1]):
                    found = code
                    break
        if isinstance(found, str):
            return found
        return found(value, k, ignore_index)


def load_frame(data: Dataset, *, extra: list[str] | None = None) -> Any:
    """The dataset's needed columns (and ``extra`` ones), whole, as a pandas DataFrame (these
    engines do not stream).

    Raises:
        UsageError: the task is not multiclass.
    """
    import pandas as pd
    import pyarrow as pa

    if data.task != "multiclass":
        raise UsageError(
            f"the pandera and gx engines check the multiclass task; this input is {data.task}"
        )
    columns = data.columns.needed() + [c for c in extra or [] if c not in data.columns.needed()]
    batches = [batch for _, _, batch in data.chunks(columns)]
    if not batches:
        return pd.DataFrame({c: [] for c in columns})
    frame = pa.Table.from_batches(batches).to_pandas()
    label = data.columns.label
    if not pd.api.types.is_numeric_dtype(frame[label]):
        # CSV cells arrive as text: numbers written as text are numbers, as in the default engine.
        converted = pd.to_numeric(frame[label], errors="coerce")
        if converted.notna().sum() == frame[label].notna().sum():
            frame[label] = converted
    return frame


def _not_shifted(rows: list[int], report: Report, df: Any, source: str | None) -> list[int]:
    """The LG010 rows outside the sources whose shift LG011 proves by their names: those rows
    are one finding, LG011's, as in the default engine."""
    proven = {
        name
        for f in report.findings
        if f.code == "LG011"
        for name, how in f.details.get("sources", {}).items()
        if how.get("proof") == "names"
    }
    if not proven:
        return rows
    if source is None:
        return [] if NO_SOURCE in proven else rows
    names = [plain(v) for v in df[source].tolist()]
    return [r for r in rows if (NO_SOURCE if names[r] is None else str(names[r])) not in proven]


def engine_report(
    done: Validation,
    df: Any,
    failures: dict[Code, set[int]],
    engine: str,
    version: str,
    *,
    max_examples: int,
) -> Report:
    """The full verdict: the engine's failing rows for the checks it expresses, labelgate's own
    findings for every other check, and the engine's row accounting.

    Args:
        done: labelgate's validation of the same input and contract.
        df: the frame the engine checked (row ``i`` is the input's row ``i``).
        failures: check code -> the rows that fail it, as the engine found them.
        engine, version: the engine's name and version.
        max_examples: rows listed per finding (0: all).
    """
    data, report = done.dataset, done.report
    contract = data.contract
    mine = set(engine_codes(engine))
    plan = data.plan
    n = len(df)
    kept = plan.kept_batches(n)
    rejected: set[int] = set()
    found = [f for f in report.findings if f.code not in mine]
    listed = {code: sorted(rows) for code, rows in failures.items()}
    if "LG010" in listed:
        listed["LG010"] = _not_shifted(listed["LG010"], report, df, contract.source_column)
    facts = done.context.annotations
    if facts is not None and 0 < len(listed.get("LG003", ())) <= facts.rejected:
        # the null labels a reader wrote for annotations it rejected: its own findings name them
        rejected.update(listed.pop("LG003"))
    for code, rows in sorted(listed.items()):
        if code in REJECTING:
            rejected.update(rows)
        if not rows:
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
        found.append(
            finding(
                code,
                count=len(rows),
                unit="rows",
                message=f"{len(rows)} rows fail {engine}'s {code} check, {entry(code).title} (engine: {engine})",
                examples=tuple(examples),
            )
        )
    labels = df[contract.label_column]
    ignored = sum(
        1 for i, v in enumerate(labels.tolist()) if v == contract.ignore_index and i not in rejected
    )
    counts = {
        "rows": n,
        "usable": n - ignored - len(rejected),
        "ignored": ignored,
        "rejected": len(rejected),
    }
    ran = ", ".join(sorted(mine))
    note = f"engine {engine} {version} ran {ran}; labelgate ran every other check on the same input"
    return replace(
        report,
        findings=tuple(apply_severity(found, contract.severity)),
        counts=counts,
        environment=report.environment | {"engine": engine, engine: version},
        notes=(*report.notes, note),
    )
