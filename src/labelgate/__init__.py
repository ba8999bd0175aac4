"""labelgate: stop bad class labels before they reach the GPU.

``import labelgate`` stays light: pyarrow, pandas, pandera and torch are imported only by the
functions that need them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labelgate.classmap import ClassMap, load_class_map
from labelgate.contract import Batching, Contract
from labelgate.errors import (
    ClassMapError,
    ContractError,
    InputError,
    LabelError,
    LabelgateError,
    UsageError,
)

if TYPE_CHECKING:
    from labelgate.report import Report

__version__ = "0.1.0"

__all__ = [
    "Batching",
    "ClassMap",
    "ClassMapError",
    "Contract",
    "ContractError",
    "InputError",
    "LabelError",
    "LabelgateError",
    "UsageError",
    "__version__",
    "load_class_map",
    "validate",
]


def validate(paths: list[str] | str, contract: Contract, **options: Any) -> Report:
    """Validate label files against a contract; see :func:`labelgate.validation.validate`."""
    from labelgate.validation import validate as run

    return run([paths] if isinstance(paths, str) else list(paths), contract, **options)
