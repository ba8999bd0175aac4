"""labelgate fix's arguments read: SOURCE=D and V=N pairs, the blank policy of multi-hot targets,
and the remap --model aligns the data's class map to."""

from __future__ import annotations

from labelgate.contract import Contract
from labelgate.errors import UsageError

__all__ = ["blank_policy", "model_alignment", "parse_pairs"]


def parse_pairs(items: list[str], flag: str, *, value_ignore: bool) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        if not sep:
            key, value = "*", item
        if not value:
            raise UsageError(
                f"{flag} {item!r}: expected {'V=N or V=ignore' if value_ignore else 'SOURCE=D'}"
            )
        pairs[key] = value
    return pairs


def model_alignment(contract: Contract) -> tuple[Contract, dict[int, int]]:
    """``fix --model``: the remap data label -> model label, and the contract the fixed file is
    judged by (the model's names as its class map)."""
    from labelgate.contract.classmap import ClassMap
    from labelgate.contract.modelmap import alignment

    model = contract.model
    assert model is not None
    if contract.class_map is None:
        raise UsageError("fix --model aligns by name: give the data's --class-names")
    task = contract.task or "multiclass"
    names = contract.class_map.name_of()
    remap = alignment(model, names, k=contract.num_classes, task=task)
    ordered = ClassMap(model.id2label)  # inline: the printed commands name --model instead
    return contract.replace(class_map=ordered), remap


def blank_policy(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"--map-value blank={value}: expected 0, 1 or ignore") from None
