"""The checks, registered by the code users see; each turns a finished scan into findings.

A check is a function ``(Context) -> list[Finding]`` registered with :func:`check`. The registry is
a plain dict keyed by code; :func:`run_checks` runs them in code order and applies the contract's
severity overrides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from labelgate.checks.context import Context
from labelgate.report import SEVERITY_ORDER, Finding

__all__ = ["REGISTRY", "CheckSpec", "Context", "all_checks", "check", "run_checks"]

CheckFn = Callable[[Context], list[Finding]]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check.

    Attributes:
        code: the stable code, such as ``LG004``.
        title: what it finds, in a few words.
        severity: its default severity (a finding may carry another where PRODUCT.md says so).
        run: the function, or ``None`` for LG001, which stops the run before any scan.
    """

    code: str
    title: str
    severity: str
    run: CheckFn | None


REGISTRY: dict[str, CheckSpec] = {
    "LG001": CheckSpec("LG001", "label column missing or not detected", "error", None),
}


def check(code: str, title: str, severity: str) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the check for ``code``."""

    def register(fn: CheckFn) -> CheckFn:
        if code in REGISTRY:
            raise ValueError(f"check code {code!r} registered twice")
        REGISTRY[code] = CheckSpec(code, title, severity, fn)
        return fn

    return register


def all_checks() -> dict[str, CheckSpec]:
    """The registry, every check module imported (importing a module registers its checks)."""
    from labelgate.checks import batches, classes, rows, values  # noqa: F401

    return REGISTRY


def run_checks(ctx: Context) -> list[Finding]:
    """Run every registered check; errors first, then warnings, then info, each in code order."""
    all_checks()
    overrides = ctx.contract.severity
    findings: list[Finding] = []
    for code in sorted(REGISTRY):
        spec = REGISTRY[code]
        if spec.run is None:
            continue
        for finding in spec.run(ctx):
            level = overrides.get(code, finding.severity)
            if level == "off":
                continue
            findings.append(
                finding if level == finding.severity else replace(finding, severity=level)
            )
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code))
    return findings
