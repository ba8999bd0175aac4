"""The text of ``labelgate explain CODE``."""

from __future__ import annotations

import json
from importlib.resources import files

from labelgate.core.catalog import CODES, entry, known
from labelgate.errors import UsageError
from labelgate.explain.examples import EXAMPLES

__all__ = ["explain", "paragraph"]

_WHO = {
    "input": "the input's resolution (it stops the run)",
    "scan": "the scan of the labels",
    "contract": "the contract's pinned class map",
    "section": "the contract's pandera section",
    "reader": "the annotation-format reader",
    "diff": "labelgate diff",
}


def paragraph(code: str) -> str:
    """The paragraph of docs/checks.md that explains ``code``, as packaged."""
    text = files("labelgate.explain").joinpath("paragraphs.json").read_text(encoding="utf-8")
    found: dict[str, str] = json.loads(text)
    return found.get(code, "")


def explain(code: str) -> str:
    """The catalog entry of ``code``, its paragraph of docs/checks.md and, where a table of
    labels shows it, an input that fails it and one that passes.

    Raises:
        UsageError: ``code`` is not in the catalog.
    """
    code = code.strip().upper()
    if not known(code):
        raise UsageError(
            f"{code!r} is no check code: the codes are {min(CODES)} to {max(CODES)} "
            "(labelgate explain LG004)"
        )
    e = entry(code)
    lines = [
        f"{e.code}: {e.title}",
        f"finds: {e.finds}",
        f"default severity: {e.shown_severity or e.severity}; judges: {e.scope}; "
        f"raised by {_WHO.get(e.raised_by, e.raised_by)}"
        + (f"; also in the {' and '.join(e.engines)} engines" if e.engines else ""),
        "",
        paragraph(code),
    ]
    example = EXAMPLES.get(code)
    if example is not None:
        lines += [
            "",
            f"fails: labelgate validate labels.csv {' '.join(example.flags)}",
            *(f"  {row}" for row in example.fails.splitlines()),
            f"passes: labelgate validate labels.csv {' '.join(example.passing_flags)}",
            *(f"  {row}" for row in example.passes.splitlines()),
        ]
    return "\n".join(lines).rstrip() + "\n"
