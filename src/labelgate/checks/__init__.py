"""The checks, registered by the code users see; each turns a finished scan into findings.

A check is a function ``(Context) -> list[Finding]`` registered with ``check`` under a code
of ``labelgate.core.catalog``, which holds its title and default severity. The registry is a plain
dict keyed by code; ``run_checks`` runs them in code order and applies the contract's severity
overrides.
"""

from __future__ import annotations

from labelgate.checks.context import Context
from labelgate.checks.registry import REGISTRY, CheckSpec, check
from labelgate.core.findings import apply_severity
from labelgate.core.report import Finding

__all__ = ["REGISTRY", "CheckSpec", "Context", "all_checks", "check", "run_checks"]


def all_checks() -> dict[str, CheckSpec]:
    """The registry, every check module imported (importing a module registers its checks)."""
    from labelgate.checks import (  # noqa: F401
        batches,
        classes,
        formats,
        model,
        rows,
        values,
        witness,
    )

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
