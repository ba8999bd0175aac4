"""Where a framework's conventions apply, and the faults only some frameworks' loaders raise on:
a framework named for an input of another task is refused; COCO annotation ids repeated in a
file are an AssertionError where the loader asserts them unique (detectron2, mmdet)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.contract import Contract
from labelgate.contract.frameworks import Framework, cite, framework_of
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Finding, Report
from labelgate.errors import UsageError

if TYPE_CHECKING:
    from labelgate.readers.opened import Opened

__all__ = ["framework_applies", "minival", "repeated_ids", "unique_ids"]


def framework_applies(opened: Opened | None, contract: Contract) -> None:
    """Refuse a framework named for an input its conventions do not cover (a table of class
    labels, a detection framework on masks, mmseg on boxes): accepted without a word, it would
    still set its background index and word the findings as its own.

    Raises:
        UsageError: the input is not of the framework's task.
    """
    fw = framework_of(contract.framework)
    facts = None if opened is None else opened.facts
    if fw is None or (facts is not None and facts.task == fw.task):
        return
    what = (
        "a table of class labels"
        if opened is None or facts is None
        else f"{facts.task} ({opened.format})"
    )
    raise UsageError(
        f"--framework {fw.name} applies to {fw.task} inputs, and this input is {what}: its "
        "labels are judged as PyTorch's loss takes them; drop --framework"
    )


def repeated_ids(report: Report, facts: AnnotationFacts) -> int:
    """The COCO annotations repeating an id of their file (LG014) that a loader asserting the
    ids unique raises on (detectron2 and mmdet; detectron2 lets files whose name holds
    'minival' pass, ``minival``: then those count for mmdet alone)."""
    if facts.format != "coco":
        return 0
    return sum(f.count for f in report.findings if f.code == "LG014")


def minival(report: Report) -> bool:
    """Whether an input file's name holds 'minival', which detectron2's assert lets pass."""
    paths = [str(f.get("path", "")) for f in report.input.get("files", [])]
    return any("minival" in Path(p).name for p in paths)


def unique_ids(f: Finding, fw: Framework) -> Finding:
    """LG014 as the error it is under a loader that asserts the ids unique."""
    if f.code != "LG014":
        return f
    return replace(
        f,
        severity="error",
        message=f"{f.message}; {fw.name} asserts annotation ids are unique while loading: "
        f"AssertionError ({cite(fw.sources['unique_ids'])})",
    )
