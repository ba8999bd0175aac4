"""Pieces the renderers share: the check titles a report is judged on, and a one-line verdict."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from labelgate.core.catalog import SCOPES, codes_in, entry
from labelgate.core.findings import plural
from labelgate.core.report import Example, Report
from labelgate.io.files import escape_controls

__all__ = [
    "base_paths",
    "check_titles",
    "counted",
    "displayed",
    "example_value",
    "framework_lines",
    "omitted_classes",
    "plain",
    "quoted",
    "task_shown",
    "verdict",
]


def check_titles(report: Report) -> dict[str, str]:
    """Code -> title of every check the report was judged on (the diff's checks for a diff)."""
    scopes = [s for s in SCOPES if s != "diff" or report.diff is not None]
    return {code: entry(code).title for code in codes_in(*scopes)}


def _shown(value: Any) -> Any:
    if isinstance(value, str):
        return escape_controls(value)
    if isinstance(value, dict):
        return {_shown(k): _shown(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_shown(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{f.name: _shown(getattr(value, f.name)) for f in dataclasses.fields(value)}
        )
    return value


def displayed(report: Report) -> Report:
    """The report with every control character in every string (data included: sources, class
    names, ids, values) written as a visible escape, for the human formats."""
    shown: Report = _shown(report)
    return shown


_SINGULAR = {"batches": "batch", "classes": "class", "entries": "entry"}


def counted(count: int, unit: str) -> str:
    """``1 row``, ``2 rows``, ``1 batch``: a count with its unit in the right number."""
    return plural(count, _SINGULAR.get(unit, unit.removesuffix("s")), unit)


def base_paths(report: Report) -> str | None:
    """For a diff, the BASE it compared against (its first files' paths); else ``None``."""
    if report.diff is None:
        return None
    files = report.diff.get("base", {}).get("input", {}).get("files", [])
    shown = ", ".join(str(f["path"]) for f in files[:3])
    more = len(files) - 3
    return (shown or "(no file)") + (f" (+{more} files)" if more > 0 else "")


def task_shown(report: Report) -> str:
    """The task in words: a detection reader's boxes say detection (the rows are judged in the
    multiclass shape), with the framework named when one is."""
    task = str(report.contract.get("task"))
    annotations = report.input.get("annotations") or {}
    if task in ("None", "multiclass") and annotations.get("task") == "detection":
        task = "detection"
    framework = report.contract.get("framework")
    return f"{task} ({framework})" if framework else task


def verdict(report: Report) -> str:
    """``PASS`` or ``FAIL`` with the error and warning counts."""
    errors = sum(f.severity == "error" for f in report.findings)
    warnings = sum(f.severity == "warning" for f in report.findings)
    strict = " (strict: warnings fail)" if report.strict else ""
    return f"{report.status.upper()}: {errors} error(s), {warnings} warning(s){strict}"


def plain(value: object) -> str:
    """A value from the data as a reader writes it, never as a Python repr: a missing value is
    ``null``, a float NaN ``NaN``, infinities ``Infinity`` and ``-Infinity`` (JSON's and
    JavaScript's words), a list ``[1, null, 0]``; strings as they are."""
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(quoted(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quoted(k)}: {quoted(v)}" for k, v in value.items()) + "}"
    return str(value)


def quoted(value: object) -> str:
    """Like ``plain``, with a string in quotes (``id 'img-7'`` tells text from a number)."""
    return repr(value) if isinstance(value, str) else plain(value)


def example_value(e: Example) -> str:
    """An example's value as shown in a table: with its pixel count, for a mask."""
    return plain(e.value) if e.pixels is None else f"{quoted(e.value)} ({e.pixels}\xa0px)"


def framework_lines(report: Report) -> list[str]:
    """One line per framework's reading of a detection input judged with none named: its
    verdict, the ``num_classes`` it needs and how, what it raises on and what it drops."""
    lines = []
    for r in report.frameworks:
        parts = [f"num_classes={r['num_classes']} ({r['ids']})"]
        if r["fits_classes"] is False:
            parts.append(f"--classes does not fit: it needs {r['num_classes']}")
        parts += [f"raises on {x}" for x in r["raises"]]
        parts += [f"drops {x}" for x in r["drops"]]
        parts += [f"trains {x}" for x in r.get("wrong", ())]
        lines.append(f"{r['framework']}: {r['verdict']}: " + "; ".join(parts))
    return lines


def omitted_classes(report: Report) -> str | None:
    """The line under a class table that leaves classes out (K past 65,536), else ``None``."""
    o = report.classes_omitted
    return f"{o['count']} more classes with no target (from index {o['first']})" if o else None
