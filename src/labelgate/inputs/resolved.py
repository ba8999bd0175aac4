"""What a run resolved, apart from what the user asked for: each value with where it came from.

The contract a user writes (or the flags and options that stand for it) is never rewritten. A run
collects what it finds (K from a format's class table, the task from the label column's type, the
columns it detected, the class map a reader carried) as settings with their origin, and builds
the contract it applies from the one it was given in one place (``Resolution.applied``). The
report prints the provenance: "K = 81 from the COCO categories".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from labelgate.contract import Contract
from labelgate.contract.contract import DEFAULT_IGNORE_INDEX
from labelgate.contract.frameworks import framework_of
from labelgate.core.findings import plural

__all__ = ["Resolution", "Resolved", "Setting"]

GIVEN = "what was given"
LABEL_TYPE = "the label column's type"
MMSEG_IGNORE = "mmseg's decode heads (mmseg/models/decode_heads/decode_head.py:101@1.2.2)"
_NOTED = ("num_classes", "class_map", "task", "background_index")
# Fields a run may resolve, in the order the report lists them, with the words it uses.
_SHOWN = {
    "num_classes": "K",
    "task": "task",
    "class_map": "class map",
    "label_column": "label column",
    "id_column": "id column",
    "source_column": "source column",
    "name_column": "name column",
    "ignore_index": "ignore index",
    "background_index": "background index",
    "framework": "framework",
}


@dataclass(frozen=True, slots=True)
class Setting:
    """One resolved value and where it came from ("the COCO categories", "--classes")."""

    field: str
    value: Any
    origin: str

    def shown(self) -> str:
        """The setting as the report prints it: ``K = 81 from the COCO categories``."""
        value = self.value
        if self.field == "class_map":
            value = plural(len(value.entries), "name")
        return f"{_SHOWN.get(self.field, self.field)} = {value} from {self.origin}"


class Resolution:
    """The settings a run collects on its way, the first for each field standing."""

    def __init__(self, asked: Contract) -> None:
        self.asked = asked
        self._settings: dict[str, Setting] = {}
        for name in _SHOWN:
            value = getattr(asked, name)
            if value is not None:
                self._settings[name] = Setting(name, value, GIVEN)
        fw = framework_of(asked.framework)
        if fw is not None and fw.name == "mmseg" and asked.ignore_index == DEFAULT_IGNORE_INDEX:
            # mmseg's decode heads ignore 255 (decode_head.py:101), not PyTorch's -100
            self._settings["ignore_index"] = Setting("ignore_index", 255, MMSEG_IGNORE)

    def found(self, field: str, value: Any, origin: str) -> None:
        """Record ``value`` for ``field``, found at ``origin``, unless the field is settled."""
        if value is None or field in self._settings:
            return
        if field not in _SHOWN:
            raise ValueError(f"a run does not resolve {field!r}")
        self._settings[field] = Setting(field, value, origin)

    def value(self, field: str) -> Any:
        """The value settled for ``field`` so far (``None``: not settled)."""
        setting = self._settings.get(field)
        return None if setting is None else setting.value

    def applied(self) -> Contract:
        """The contract the run applies: the one asked for, completed by what was found."""
        found = {
            s.field: s.value
            for s in self._settings.values()
            if getattr(self.asked, s.field) is None or s.origin == MMSEG_IGNORE
        }
        applied = self.asked.replace(**found)
        fw = framework_of(applied.framework)
        if fw is None or not fw.severity:
            return applied
        # the framework decides what a bad target costs; the contract's own severities stand
        severity = MappingProxyType({**fw.severity, **applied.severity})
        return dataclasses.replace(applied, severity=severity)

    def freeze(self) -> Resolved:
        """The settings, in the report's order."""
        ordered = tuple(self._settings[f] for f in _SHOWN if f in self._settings)
        return Resolved(self.asked, self.applied(), ordered)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A run's resolution.

    Attributes:
        asked: the contract as the user gave it (file, flags, options), never rewritten.
        applied: the contract the checks applied.
        settings: each resolved value with its origin.
    """

    asked: Contract
    applied: Contract
    settings: tuple[Setting, ...]

    def provenance(self) -> dict[str, dict[str, Any]]:
        """Plain data for the report: field -> ``{"value", "from"}`` (class maps by size)."""
        out: dict[str, dict[str, Any]] = {}
        for s in self.settings:
            value = len(s.value.entries) if s.field == "class_map" else s.value
            out[s.field] = {"value": value, "from": s.origin}
        return out

    def found(self) -> list[str]:
        """The lines the report prints for what the run found of K, the class map and the
        task (the columns detected have notes of their own; a task read from the label column's
        type is the ordinary case)."""
        return [
            s.shown()
            for s in self.settings
            if s.field in _NOTED and s.origin not in (GIVEN, LABEL_TYPE)
        ]
