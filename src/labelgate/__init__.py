"""labelgate: stop bad class labels before they reach the GPU.

``import labelgate`` stays light: pyarrow, pandas, pandera and torch are imported only by the
functions that need them.
"""

from __future__ import annotations

from labelgate._version import __version__
from labelgate.api import build_contract, validate
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
from labelgate.report import Example, Finding, Report

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
