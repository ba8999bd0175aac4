"""The dataset contract: what a label file must satisfy, read from YAML or built from CLI flags.

``Contract`` and its YAML reading are ``contract/contract.py``; the parts it is made of each have
their module (``batching``, ``classmap``, ``modelmap``, ``values``, ``section``, ``bounds``,
``fields``, ``frameworks``).
"""

from labelgate.contract.batching import Batching
from labelgate.contract.bounds import INT64, LIMITS, bounded
from labelgate.contract.contract import BOX_TASKS, SEVERITIES, TASKS, Contract
from labelgate.contract.values import CITYSCAPES_TRAIN_IDS, cityscapes_value_map

__all__ = [
    "BOX_TASKS",
    "CITYSCAPES_TRAIN_IDS",
    "INT64",
    "LIMITS",
    "SEVERITIES",
    "TASKS",
    "Batching",
    "Contract",
    "bounded",
    "cityscapes_value_map",
]
