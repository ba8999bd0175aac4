"""The check registry: a plain dict, keyed by catalog code, filled by the ``@check`` decorator."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labelgate.checks.context import Context
from labelgate.core.catalog import entry
from labelgate.core.report import Finding

__all__ = ["REGISTRY", "CheckFn", "CheckSpec", "check"]

CheckFn = Callable[[Context], list[Finding]]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check.

    Attributes:
        code: the stable code, such as ``LG004``.
        title: what it finds, in a few words (from the catalog).
        severity: its default severity (from the catalog; a finding may carry another where
            PRODUCT.md says so).
        run: the function, or ``None`` for LG001, which stops the run before any scan.
    """

    code: str
    title: str
    severity: str
    run: CheckFn | None


def _spec(code: str, run: CheckFn | None) -> CheckSpec:
    e = entry(code)
    return CheckSpec(code, e.title, e.severity, run)


REGISTRY: dict[str, CheckSpec] = {"LG001": _spec("LG001", None)}


def check(code: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the check for ``code`` (a catalog code of a validation scope).

    Raises:
        ValueError: the code is registered twice, or is a ``diff`` code.
        KeyError: the code is not in the catalog.
    """

    def register(fn: CheckFn) -> CheckFn:
        if code in REGISTRY:
            raise ValueError(f"check code {code!r} registered twice")
        if entry(code).scope == "diff":
            raise ValueError(f"{code!r} is a diff check: labelgate.commands.diff computes it")
        REGISTRY[code] = _spec(code, fn)
        return fn

    return register
