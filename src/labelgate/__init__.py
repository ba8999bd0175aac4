"""labelgate: stop bad class labels before they reach the GPU.

``import labelgate`` stays light: pyarrow, pandas, pandera and torch are imported only by the
functions that need them.
"""

from __future__ import annotations

from labelgate._version import __version__
from labelgate.api import build_contract, validate
from labelgate.contract import Batching, Contract
from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.report import Example, Finding, Report
from labelgate.errors import (
    ClassMapError,
    ContractError,
    InputError,
    LabelError,
    LabelgateError,
    UsageError,
)

__all__ = [
    "Batching",
    "ClassMap",
    "ClassMapError",
    "Contract",
    "ContractError",
    "Example",
    "Finding",
    "InputError",
    "LabelError",
    "LabelgateError",
    "Report",
    "UsageError",
    "__version__",
    "build_contract",
    "load_class_map",
    "validate",
]
