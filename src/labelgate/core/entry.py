"""One entry of the check catalog (``labelgate.core.catalog``) and the words it is written in:
severities, scopes, and the components that raise a code."""

from __future__ import annotations

from dataclasses import dataclass

from labelgate.core.codes import Code

__all__ = ["COMPONENTS", "SCOPES", "SEVERITIES", "Entry"]

SEVERITIES = ("error", "warning", "info", "off")
SCOPES = ("input", "row", "batch", "class map", "dataset", "diff")
# What raises a code: the input's resolution, the scan's checks, the contract's pin, its pandera
# section, an annotation-format reader (through AnnotationFacts.hit), or labelgate diff.
COMPONENTS = ("input", "scan", "contract", "section", "reader", "diff")


@dataclass(frozen=True, slots=True)
class Entry:
    """One check.

    Attributes:
        code: the stable code (``LG004``): the JSON key, JUnit test name, GitHub annotation title.
        title: what it finds, in a few words (JUnit and summaries).
        finds: what it finds, in a sentence (the README's and docs/checks.md's tables).
        severity: the default severity; a finding may carry another where its evidence says so
            (LG011 without proof, LG012 for rare classes), and the contract may override either.
        scope: what it judges: ``input`` (stops the run), ``row``, ``batch``, ``class map``,
            ``dataset`` or ``diff`` (``labelgate diff`` alone).
        engines: the row-level engines (``pandera``, ``gx``) that can express it; labelgate runs
            every other check itself whatever the engine.
        shown_severity: the severity column of the tables, where it says more than ``severity``.
        raised_by: what raises it (see ``COMPONENTS``): a reader's codes are the ones
            ``AnnotationFacts.hit`` accepts.
    """

    code: Code
    title: str
    finds: str
    severity: str
    scope: str
    engines: tuple[str, ...] = ()
    shown_severity: str = ""
    raised_by: str = "scan"

    def __post_init__(self) -> None:
        if (
            self.severity not in SEVERITIES[:3]
            or self.scope not in SCOPES
            or self.raised_by not in COMPONENTS
        ):
            raise ValueError(f"bad catalog entry {self!r}")
