"""The contract's ``pandera:`` section as Great Expectations expectations, for ``labelgate export gx``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from labelgate.errors import UsageError

__all__ = ["section_expectations"]


def _between(column: str, **bounds: Any) -> tuple[str, dict[str, Any]]:
    return "ExpectColumnValuesToBeBetween", {"column": column, **bounds}


def _regex(column: str, regex: str) -> tuple[str, dict[str, Any]]:
    return "ExpectColumnValuesToMatchRegex", {"column": column, "regex": regex}


def _translated(column: str, check: str, arg: Any) -> tuple[str, dict[str, Any]]:
    """One pandera built-in check (its YAML name and argument) as a GX expectation's class name
    and keyword arguments; pandera's names are those of ``pandera.api.checks.Check``."""
    value = arg.get("value", arg) if isinstance(arg, Mapping) else arg
    if check == "isin":
        return "ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(value)}
    if check == "notin":
        return "ExpectColumnValuesToNotBeInSet", {"column": column, "value_set": list(value)}
    if check in ("eq", "equal_to"):
        return "ExpectColumnValuesToBeInSet", {"column": column, "value_set": [value]}
    if check in ("ne", "not_equal_to"):
        return "ExpectColumnValuesToNotBeInSet", {"column": column, "value_set": [value]}
    if check == "str_startswith":
        return _regex(column, "^" + re.escape(str(value)))
    if check == "str_endswith":
        return _regex(column, re.escape(str(value)) + "$")
    if check == "str_contains":
        return _regex(column, re.escape(str(value)))
    if check == "str_matches":
        return _regex(column, "^(?:" + str(value) + ")")
    if check in ("ge", "greater_than_or_equal_to"):
        return _between(column, min_value=value)
    if check in ("gt", "greater_than"):
        return _between(column, min_value=value, strict_min=True)
    if check in ("le", "less_than_or_equal_to"):
        return _between(column, max_value=value)
    if check in ("lt", "less_than"):
        return _between(column, max_value=value, strict_max=True)
    if check in ("in_range", "between") and isinstance(arg, Mapping):
        return _between(
            column,
            min_value=arg.get("min_value"),
            max_value=arg.get("max_value"),
            strict_min=not arg.get("include_min", True),
            strict_max=not arg.get("include_max", True),
        )
    raise UsageError(
        f"the contract's pandera section checks column {column!r} with {check!r}, which has no "
        "Great Expectations equivalent here: export it with `labelgate export pandera`"
    )


def section_expectations(section: Mapping[str, Any], gx: Any) -> list[Any]:
    """The section's column rules (not null, unique, and its built-in checks) as expectations.

    Raises:
        UsageError: a check GX has no expectation for (a frame-level check, or a custom one):
            the suite would silently hold less than the contract.
    """
    if section.get("checks"):
        raise UsageError(
            "the contract's pandera section has frame-level checks, which have no Great "
            "Expectations equivalent: export it with `labelgate export pandera`"
        )
    e = gx.expectations
    out: list[Any] = []
    for column, spec in (section.get("columns") or {}).items():
        spec = spec or {}
        if spec.get("nullable") is False:
            out.append(e.ExpectColumnValuesToNotBeNull(column=column))
        if spec.get("unique"):
            out.append(e.ExpectColumnValuesToBeUnique(column=column))
        if spec.get("dtype"):  # GX's type names for pandas are numpy's and Python's: str, int64
            out.append(e.ExpectColumnValuesToBeOfType(column=column, type_=str(spec["dtype"])))
        for check, arg in (spec.get("checks") or {}).items():
            name, kwargs = _translated(column, check, arg)
            out.append(getattr(e, name)(**kwargs))
    return out
