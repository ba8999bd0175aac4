"""The smallest table of labels that fails each check a table shows, and the input mended;
tests/test_explain.py runs every one: each fails with its code, and passes without it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXAMPLES", "Example"]

_K4 = ("--classes", "4")


@dataclass(frozen=True, slots=True)
class Example:
    """A CSV validated with ``flags`` that fails the check; the CSV and flags that pass it."""

    fails: str
    passes: str
    flags: tuple[str, ...] = _K4
    passing_flags: tuple[str, ...] = _K4


EXAMPLES: dict[str, Example] = {
    "LG002": Example("id,label\n1,0\n2,cat\n", "id,label\n1,0\n2,1\n"),
    "LG003": Example("id,label\n1,0\n2,\n", "id,label\n1,0\n2,-100\n"),
    "LG004": Example("id,label\n1,0\n2,4\n", "id,label\n1,0\n2,3\n"),
    "LG005": Example("id,label\n1,0\n2,-1\n", "id,label\n1,0\n2,-100\n"),
    "LG006": Example(
        "id,label\n1,0\n2,3\n", "id,label\n1,0\n2,3\n", ("--classes", "4", "--ignore-index", "2")
    ),
    "LG007": Example(
        "id,label\n1,0\n2,1\n3,-100\n4,-100\n",
        "id,label\n1,0\n2,-100\n3,1\n4,-100\n",
        ("--classes", "2", "--batch-size", "2"),
        ("--classes", "2", "--batch-size", "2"),
    ),
    "LG008": Example("id,label\n1,-100\n2,-100\n", "id,label\n1,0\n2,-100\n"),
    "LG012": Example("id,label\n1,0\n2,1\n", "id,label\n1,0\n2,1\n", _K4, ("--classes", "2")),
    "LG014": Example(
        "id,label\n1,0\n1,1\n", "id,label\n1,0\n2,1\n", ("--classes", "2"), ("--classes", "2")
    ),
}
