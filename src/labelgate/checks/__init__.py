"""The checks, registered by the code users see; each turns a finished scan into findings.

A check is a function ``(Context) -> list[Finding]`` registered with :func:`check` under a code
of :mod:`labelgate.catalog`, which holds its title and default severity. The registry is a plain
dict keyed by code; :func:`run_checks` runs them in code order and applies the contract's severity
overrides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labelgate.catalog import apply_severity, entry
from labelgate.checks.context import Context
from labelgate.report import Finding

__all__ = ["REGISTRY", "CheckSpec", "Context", "all_checks", "check", "run_checks"]

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
            raise ValueError(f"{code!r} is a diff check: labelgate.diff computes it")
        REGISTRY[code] = _spec(code, fn)
        return fn

    return register


def all_checks() -> dict[str, CheckSpec]:
    """The registry, every check module imported (importing a module registers its checks)."""
    from labelgate.checks import batches, classes, rows, values  # noqa: F401

    return REGISTRY


def run_checks(ctx: Context) -> list[Finding]:
    """Run every registered check; errors first, then warnings, then info, each in code order."""
    all_checks()
    found: list[Finding] = []
    for code in sorted(REGISTRY):
        run = REGISTRY[code].run
        if run is not None:
            found += run(ctx)
    return apply_severity(found, ctx.contract.severity)
