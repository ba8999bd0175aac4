"""The checks, registered by the code users see; each turns a finished scan into findings.

A check is a function ``(Context) -> list[Finding]`` registered with ``check``
(``checks/registry.py``) under a code of ``labelgate.core.catalog``, which holds its title and
default severity. The registry is a plain dict keyed by code; ``run_checks``
(``checks/runner.py``) runs them in code order and applies the contract's severity overrides.
"""

from labelgate.checks.context import Context
from labelgate.checks.registry import REGISTRY, CheckSpec, check
from labelgate.checks.runner import all_checks, run_checks

__all__ = ["REGISTRY", "CheckSpec", "Context", "all_checks", "check", "run_checks"]
