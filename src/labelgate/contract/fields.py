"""How the contract's fields that name files, folders or columns are read from its YAML: paths
relative to the contract's folder, class maps in their three shapes, column names as text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.errors import ContractError, InputError, UsageError

if TYPE_CHECKING:
    from labelgate.contract.modelmap import ModelMap

__all__ = ["class_map_field", "column_field", "columns_field", "images_field", "model_field"]


def images_field(value: str | None, base: Path) -> str | None:
    """A path the contract names (the images folder of a detection input, the predictions
    file), relative to the contract's folder."""
    return None if value is None else str(base / value)


def model_field(value: str | None, base: Path) -> ModelMap | None:
    """The contract's ``model``: a Hugging Face model folder or config.json, relative to the
    contract's folder."""
    if value is None:
        return None
    from labelgate.contract.modelmap import load_model_map  # its head search: only with a model

    target = Path(value)
    try:
        return load_model_map(target if target.is_absolute() else base / target)
    except (InputError, UsageError) as exc:
        raise ContractError(str(exc), key="model") from None


def columns_field(value: list[Any] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not value:
        raise ContractError("list at least one column", key="label_columns")
    return tuple(str(v) for v in value)


def column_field(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def class_map_field(value: list[Any] | dict[Any, Any] | str | None, base: Path) -> ClassMap | None:
    if value is None:
        return None
    if isinstance(value, str):
        target = Path(value)
        return load_class_map(target if target.is_absolute() else base / target)
    if isinstance(value, list):
        for i, name in enumerate(value):
            if not isinstance(name, str):
                raise ContractError(f"must be a string, got {name!r}", key=f"class_names[{i}]")
        return ClassMap.from_names(value)
    entries: list[tuple[int, str]] = []
    for key, name in value.items():
        if isinstance(key, bool) or not isinstance(key, int) or not isinstance(name, str):
            raise ContractError(
                f"a mapping must be index -> name, got {key!r}: {name!r}", key="class_names"
            )
        entries.append((key, name))
    return ClassMap(tuple(entries))
