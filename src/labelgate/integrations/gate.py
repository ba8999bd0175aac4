"""What both callbacks share: a dataset validated in memory, and training stopped before its
first step when it fails (``LabelsRejected``); options checked when a callback is built."""

from __future__ import annotations

from typing import Any

from labelgate.api import CONTRACT_OPTIONS, VALIDATE_KEYWORDS, ValidationReport, validate
from labelgate.core.options import refuse_unknown
from labelgate.errors import LabelError

__all__ = ["LabelsRejected", "check_dataset", "checked_options"]


def checked_options(options: dict[str, Any], where: str, *, own: tuple[str, ...] = ()) -> None:
    """Refuse a callback's option that neither ``labelgate.validate`` nor the callback takes,
    naming the closest (when it is built, not when training starts).

    Raises:
        OptionError: the first unknown option, with the closest known one.
    """
    refuse_unknown(options, (*CONTRACT_OPTIONS, *VALIDATE_KEYWORDS, *own), where=where)


class LabelsRejected(LabelError):
    """A dataset's labels fail validation: training stops before its first step.

    Attributes:
        report: the failing report (``report.save("labels.html")`` keeps it).
        split: which dataset (``train``, ``val``, ``eval``).
    """

    def __init__(self, message: str, *, report: ValidationReport, split: str) -> None:
        super().__init__(message)
        self.report = report
        self.split = split


def check_dataset(dataset: Any, split: str, **options: Any) -> ValidationReport:
    """Validate one dataset in memory; raise ``LabelsRejected`` when it fails.

    Raises:
        LabelsRejected: naming the split and the first findings.
    """
    report = validate(dataset, **options)
    try:
        report.raise_for_errors()
    except LabelError as exc:
        raise LabelsRejected(
            f"{split} dataset: {exc} (training stopped before its first step)",
            report=report,
            split=split,
        ) from None
    return report
