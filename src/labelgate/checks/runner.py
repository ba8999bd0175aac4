"""Every check run on a finished scan: the check modules imported (importing one registers its
checks), then each run in code order, the contract's severity overrides applied."""

from __future__ import annotations

from labelgate.checks.context import Context
from labelgate.checks.registry import REGISTRY, CheckSpec
from labelgate.core.findings import apply_severity
from labelgate.core.report import Finding

__all__ = ["all_checks", "run_checks"]


def all_checks() -> dict[str, CheckSpec]:
    """The registry, every check module imported (importing a module registers its checks)."""
    from labelgate.checks import (  # noqa: F401
        batches,
        classes,
        formats,
        model,
        rows,
        stored,
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
