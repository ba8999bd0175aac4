"""The dataset contract (``Contract``, frozen) and its reading from YAML, every key checked and a
bad one named by its path."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from labelgate.contract.batching import Batching
from labelgate.contract.bounds import bounded
from labelgate.contract.classmap import ClassMap
from labelgate.contract.fields import (
    class_map_field,
    column_field,
    columns_field,
    images_field,
    model_field,
)
from labelgate.contract.frameworks import check_framework
from labelgate.contract.values import color_map, value_map
from labelgate.core.catalog import CODES, SEVERITIES
from labelgate.errors import ClassMapError, ContractError, InputError
from labelgate.io.bounded import yaml_problem
from labelgate.io.files import load_yaml, read_small_text

if TYPE_CHECKING:  # a model map is read only where one is given
    from labelgate.contract.modelmap import ModelMap

__all__ = [
    "BOX_TASKS",
    "CHECK_CODES",
    "DEFAULT_IGNORE_INDEX",
    "LABEL_ENCODINGS",
    "SEVERITIES",
    "TASKS",
    "Contract",
]

TASKS = (
    "multiclass",
    "tokens",
    "soft",
    "multilabel",
    "segmentation",
    "detection",
    "instance",
    "keypoints",
)
# The tasks whose rows are boxes (one class index each): instance and keypoints add the masks
# and keypoints an annotation format carries, judged by the reader.
BOX_TASKS = ("detection", "instance", "keypoints")
LABEL_ENCODINGS = ("multi-hot", "indices")
CHECK_CODES = CODES
DEFAULT_IGNORE_INDEX = -100


@dataclass(frozen=True, slots=True)
class Contract:
    """A dataset contract. Every field is optional; ``None`` means "detect" or "not given".

    Attributes:
        num_classes: K, the number of logits of the model head.
        task: ``"multiclass"`` (one integer per row) or ``"tokens"`` (a list per row).
        label_column, id_column, source_column, name_column: column names (or positions, for
            CSV without a header).
        class_map: the class-name map, if any.
        ignore_index: the target value the loss skips (PyTorch's default is -100).
        background_index: the detection background index (torchvision: 0), which no object
            of an annotation format should carry (LG032).
        batching: the batches to simulate.
        class_weights: one weight per class, as passed to ``CrossEntropyLoss(weight=...)``.
        severity: check code -> severity, overriding the defaults.
        expected_rows: the row count the dataset must have.
        version: the contract's own version string.
        class_map_fingerprint: the pinned fingerprint of the class map (``labelgate pin``).
        soft_tolerance: for the soft task, how far from 1 a row's probabilities may sum.
        pandera: pandera column definitions (and frame checks) for the file's other columns,
            as in pandera's YAML: ``{"columns": {...}, "checks": {...}}`` (LG019).
        color_map: for colour (RGB) segmentation masks, colour (``0xRRGGBB``) -> class index.
        value_map: value -> new value (``None``: the ignore_index), applied by ``labelgate
            fix`` (label files and mask files alike).
        label_columns: for multi-label targets held one class per column (CheXpert's CSV):
            the K columns, in class order (the task is then ``multilabel``, K their count, and
            their names the class map where none is given).
        label_encoding: for the multilabel task, ``multi-hot`` (K values per row, the default)
            or ``indices`` (a list of the positive classes' indices per row).
        model: the class map of the model the data trains (a Hugging Face config's
            ``id2label``...), compared by name with the data's (LG040).
        images: the folder holding a detection input's images (LG041-LG043), relative to the
            contract; without it, the format's conventional place when present.
        framework: the framework that trains on the data (``contract.frameworks``): its
            conventions (background, id mapping, what a bad target does) apply.
        reduce_zero_label: with ``framework: mmseg``, masks' labels as mmseg's
            ``reduce_zero_label`` makes them (0 -> 255, every other label minus 1).
        name: the dataset's name.
        origin: the file the contract was read from.
        predictions: a model's predictions on the same rows (Parquet, CSV, JSONL, .npy),
            relative to the contract: each source judged against them (LG049).
    """

    num_classes: int | None = None
    task: str | None = None
    label_column: str | None = None
    id_column: str | None = None
    source_column: str | None = None
    name_column: str | None = None
    class_map: ClassMap | None = None
    ignore_index: int = DEFAULT_IGNORE_INDEX
    background_index: int | None = None
    batching: Batching = field(default_factory=Batching)
    class_weights: tuple[float, ...] | None = None
    severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    expected_rows: int | None = None
    version: str | None = None
    name: str | None = None
    origin: str | None = None
    class_map_fingerprint: str | None = None
    soft_tolerance: float = 1e-3
    pandera: Mapping[str, Any] | None = None
    color_map: Mapping[int, int] | None = None
    value_map: Mapping[int, int | None] | None = None
    label_columns: tuple[str, ...] | None = None
    label_encoding: str | None = None
    model: ModelMap | None = None
    images: str | None = None
    framework: str | None = None
    reduce_zero_label: bool | None = None
    predictions: str | None = None

    def __post_init__(self) -> None:
        bounded(self.num_classes, "num_classes")
        bounded(self.ignore_index, "ignore_index", optional=False)
        bounded(self.background_index, "background_index")
        bounded(self.expected_rows, "expected_rows")
        if self.task is not None and self.task not in TASKS:
            raise ContractError(f"must be one of {', '.join(TASKS)}, got {self.task!r}", key="task")
        for code, level in self.severity.items():
            if code not in CHECK_CODES:
                raise ContractError(f"unknown check code {code!r}", key="severity")
            if level not in SEVERITIES:
                raise ContractError(
                    f"must be one of {', '.join(SEVERITIES)}, got {level!r}", key=f"severity.{code}"
                )
        if self.class_weights is not None:
            if not all(
                isinstance(w, (int, float)) and math.isfinite(w) for w in self.class_weights
            ):
                raise ContractError(
                    "class weights must be finite numbers (PyTorch returns NaN for a NaN or inf "
                    "weight)",
                    key="class_weights",
                )
            if any(w < 0 for w in self.class_weights):
                raise ContractError("class weights must not be negative", key="class_weights")
            if self.num_classes is not None and len(self.class_weights) != self.num_classes:
                raise ContractError(
                    f"{len(self.class_weights)} weights for {self.num_classes} classes "
                    "(PyTorch raises: weight tensor should be defined for all classes)",
                    key="class_weights",
                )
        if self.label_encoding not in (None, *LABEL_ENCODINGS):
            raise ContractError(
                f"must be one of {', '.join(LABEL_ENCODINGS)}, got {self.label_encoding!r}",
                key="label_encoding",
            )
        if self.label_columns is not None and len(set(self.label_columns)) != len(
            self.label_columns
        ):
            raise ContractError("a column is listed twice", key="label_columns")
        check_framework(self.framework, self.reduce_zero_label)
        if not 0 <= self.soft_tolerance < 1:
            raise ContractError(
                f"must be in [0, 1), got {self.soft_tolerance!r}", key="soft_tolerance"
            )

    def replace(self, **changes: Any) -> Contract:
        """Return a copy with ``changes`` applied (``None`` values leave a field as it is)."""
        kept = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(self, **kept)

    def to_dict(self) -> dict[str, Any]:
        """The contract as plain data, for reports."""
        return {
            "name": self.name,
            "version": self.version,
            "origin": self.origin,
            "task": self.task,
            "num_classes": self.num_classes,
            "label_column": self.label_column,
            "id_column": self.id_column,
            "source_column": self.source_column,
            "name_column": self.name_column,
            "class_names": None
            if self.class_map is None
            else {"origin": self.class_map.origin, "entries": len(self.class_map.entries)},
            "ignore_index": self.ignore_index,
            "background_index": self.background_index,
            "batching": self.batching.to_dict(),
            "class_weights": None if self.class_weights is None else list(self.class_weights),
            "severity": dict(self.severity),
            "expected_rows": self.expected_rows,
            "class_map_fingerprint": self.class_map_fingerprint,
            "soft_tolerance": self.soft_tolerance,
            "pandera": None if self.pandera is None else dict(self.pandera),
            "color_map": None
            if self.color_map is None
            else {
                str(i): f"#{c:06x}" for c, i in sorted(self.color_map.items(), key=lambda kv: kv[1])
            },
            "label_columns": None if self.label_columns is None else list(self.label_columns),
            "label_encoding": self.label_encoding,
            "model": None
            if self.model is None
            else {
                "origin": self.model.origin,
                "num_labels": self.model.num_labels,
                "problem_type": self.model.problem_type,
            },
            "framework": self.framework,
            "reduce_zero_label": self.reduce_zero_label,
            "value_map": None
            if self.value_map is None
            else {str(k): "ignore" if v is None else v for k, v in self.value_map.items()},
        } | (
            ({"images": self.images} if self.images is not None else {})
            | ({"predictions": self.predictions} if self.predictions is not None else {})
        )

    @classmethod
    def from_yaml(cls, path: str | Path) -> Contract:
        """Read a contract file.

        Args:
            path: a YAML file following ``schemas/contract.schema.json``.

        Returns:
            The contract, with its class-name map loaded (a relative map path is taken from the
            contract's folder).

        Raises:
            ContractError: the file is missing, not YAML, or a key is unknown or of the wrong type;
                the message names the key's path.
        """
        import yaml

        origin = str(path)
        try:
            text = read_small_text(path, "contract file")
        except InputError as exc:
            raise ContractError(exc.reason, path=origin) from None
        try:
            data = load_yaml(text)
        except yaml.YAMLError as exc:
            raise ContractError(f"not valid YAML: {yaml_problem(exc)}", path=origin) from None
        if not isinstance(data, dict):
            raise ContractError("a contract is a mapping of keys to values", path=origin)
        try:
            return _parse(data, base=Path(path).parent, origin=origin)
        except ContractError as exc:
            if exc.path is None:
                raise ContractError(str(exc).split(": ", 1)[-1], path=origin, key=exc.key) from None
            raise
        except ClassMapError as exc:
            raise ContractError(str(exc), path=origin, key="class_names") from None


_TOP_KEYS = {
    "version": (str, int, float),
    "name": str,
    "description": str,
    "task": str,
    "num_classes": int,
    "label_column": (str, int),
    "id_column": (str, int),
    "source_column": (str, int),
    "name_column": (str, int),
    "class_names": (list, dict, str),
    "ignore_index": int,
    "background_index": int,
    "batching": dict,
    "class_weights": list,
    "severity": dict,
    "expected_rows": int,
    "class_map_fingerprint": str,
    "soft_tolerance": (int, float),
    "pandera": dict,
    "color_map": (dict, list),
    "value_map": (dict, str),
    "label_columns": list,
    "label_encoding": str,
    "model": str,
    "images": str,
    "framework": str,
    "reduce_zero_label": bool,
    "predictions": str,
}
_BATCH_KEYS = {
    "size": int,
    "drop_last": bool,
    "shuffle_seed": int,
    "world_size": int,
    "grad_accum": int,
    "sampler_drop_last": bool,
    "normalize": str,
}
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "a mapping",
}


def _check_keys(data: dict[str, Any], allowed: dict[str, Any], prefix: str) -> None:
    import difflib

    for key, value in data.items():
        where = f"{prefix}{key}"
        if key not in allowed:
            close = difflib.get_close_matches(str(key), list(allowed), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ContractError(f"unknown key{hint}", key=where)
        types = allowed[key] if isinstance(allowed[key], tuple) else (allowed[key],)
        ok = any(_is_type(value, t) for t in types)
        if value is not None and not ok:
            wanted = " or ".join(_TYPE_NAMES[t] for t in types)
            raise ContractError(f"must be {wanted}, got {value!r}", key=where)


def _is_type(value: Any, wanted: type) -> bool:
    if wanted is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, wanted)


def _parse(data: dict[str, Any], *, base: Path, origin: str) -> Contract:
    _check_keys(data, _TOP_KEYS, "")
    batching_raw = data.get("batching") or {}
    _check_keys(batching_raw, _BATCH_KEYS, "batching.")
    weights_raw = data.get("class_weights")
    weights: tuple[float, ...] | None = None
    if weights_raw is not None:
        for i, w in enumerate(weights_raw):
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise ContractError(f"must be a number, got {w!r}", key=f"class_weights[{i}]")
        weights = tuple(float(w) for w in weights_raw)
    severity_raw = data.get("severity") or {}
    for code, level in severity_raw.items():
        if not isinstance(level, str):
            raise ContractError(f"must be a string, got {level!r}", key=f"severity.{code}")
    version = data.get("version")
    return Contract(
        num_classes=data.get("num_classes"),
        task=data.get("task"),
        label_column=column_field(data.get("label_column")),
        id_column=column_field(data.get("id_column")),
        source_column=column_field(data.get("source_column")),
        name_column=column_field(data.get("name_column")),
        class_map=class_map_field(data.get("class_names"), base),
        ignore_index=data.get("ignore_index", DEFAULT_IGNORE_INDEX),
        background_index=data.get("background_index"),
        batching=Batching(
            size=batching_raw.get("size", 32),
            drop_last=batching_raw.get("drop_last", False),
            shuffle_seed=batching_raw.get("shuffle_seed"),
            world_size=batching_raw.get("world_size", 1),
            grad_accum=batching_raw.get("grad_accum", 1),
            sampler_drop_last=batching_raw.get("sampler_drop_last", False),
            normalize=batching_raw.get("normalize", "batch"),
        ),
        class_weights=weights,
        severity=MappingProxyType(dict(severity_raw)),
        expected_rows=data.get("expected_rows"),
        version=None if version is None else str(version),
        name=data.get("name"),
        origin=origin,
        class_map_fingerprint=data.get("class_map_fingerprint"),
        soft_tolerance=float(data.get("soft_tolerance", 1e-3)),
        pandera=_pandera_section(data.get("pandera")),
        color_map=color_map(data.get("color_map")),
        value_map=value_map(data.get("value_map")),
        label_columns=columns_field(data.get("label_columns")),
        label_encoding=data.get("label_encoding"),
        model=model_field(data.get("model"), base),
        images=images_field(data.get("images"), base),
        framework=data.get("framework"),
        reduce_zero_label=data.get("reduce_zero_label"),
        predictions=images_field(data.get("predictions"), base),
    )


def _pandera_section(value: dict[str, Any] | None) -> Mapping[str, Any] | None:
    """The pandera section, its shape checked here and its content by pandera itself."""
    if value is None:
        return None
    _check_keys(value, {"columns": dict, "checks": dict}, "pandera.")
    for column, spec in (value.get("columns") or {}).items():
        if not isinstance(spec, dict):
            raise ContractError(
                f"must be a mapping (pandera's column definition), got {spec!r}",
                key=f"pandera.columns.{column}",
            )
    try:
        from labelgate.contract.section import section_schema

        section_schema(value)
    except ContractError:
        raise
    except Exception as exc:  # noqa: BLE001 - pandera's own error, reported with the key
        raise ContractError(
            f"pandera cannot read it: {' '.join(str(exc).split())[:300]}", key="pandera"
        ) from None
    return MappingProxyType(dict(value))
