"""Finding the label, id, source and name columns when the user did not name them."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labelgate.core.labels import is_list_type
from labelgate.errors import UsageError
from labelgate.io.classnames import safe_to_show

if TYPE_CHECKING:
    import pyarrow as pa

_MULTILABEL_SHOWN = 8  # columns a hint names

__all__ = ["CONVENTIONAL", "Columns", "LabelColumnError", "detect_columns"]

CONVENTIONAL: dict[str, tuple[str, ...]] = {
    "label": (
        "label",
        "labels",
        "target",
        "targets",
        "class",
        "class_id",
        "class_idx",
        "class_index",
        "category_id",
        "label_id",
        "y",
        "ner_tags",
        "tags",
        "tag_ids",
    ),
    "id": ("id", "row_id", "sample_id", "example_id", "annotation_id", "uid", "uuid", "guid"),
    "source": ("source", "data_source", "dataset", "origin", "shard", "split_source", "provider"),
    "name": ("label_name", "class_name", "category_name", "label_text", "class_label"),
}


class LabelColumnError(UsageError):
    """LG001: the label column is missing or could not be detected."""


@dataclass(frozen=True, slots=True)
class Columns:
    """The columns a validation reads, and how each was found.

    Attributes:
        label, id, source, name: column names (``None`` where absent).
        how: role -> ``"given"`` or ``"detected"``.
        pixels: for segmentation masks, the list column giving the pixel count of each value
            of the label column (the mask's histogram); ``None`` otherwise.
        members: for multi-label targets held one class per column, those columns: ``label``
            then names the list column built from them as the rows are read.
    """

    label: str
    id: str | None
    source: str | None
    name: str | None
    how: dict[str, str]
    pixels: str | None = None
    members: tuple[str, ...] = ()

    def needed(self) -> list[str]:
        """The columns to read, each once, label first."""
        out: list[str] = []
        labels = self.members or (self.label,)
        for c in (*labels, self.id, self.source, self.name, self.pixels):
            if c is not None and c not in out:
                out.append(c)
        return out


def _find(schema: pa.Schema, names: tuple[str, ...]) -> str | None:
    by_lower: dict[str, str] = {f.name.lower(): f.name for f in schema}
    for candidate in names:
        if candidate in by_lower:
            return by_lower[candidate]
    return None


def _usable_label_type(t: pa.DataType) -> bool:
    import pyarrow as pa

    if is_list_type(t):
        t = t.value_type
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t))


def detect_columns(
    schema: pa.Schema,
    *,
    label: str | None,
    id: str | None,
    source: str | None,
    name: str | None,
    origin: str,
) -> Columns:
    """Resolve each role to a column: the one given, else a conventional name.

    The label column, when not given and no conventional name exists, is the only integer (or
    list-of-integer) column that is not an id; otherwise LG001 lists the candidates.

    Raises:
        LabelColumnError: the label column given does not exist, or none can be detected.
        UsageError: another column given does not exist.
    """
    present = set(schema.names)
    how: dict[str, str] = {}
    if label is not None:
        if label not in present:
            raise LabelColumnError(
                f"LG001 label column {label!r} not found in {origin}; columns: "
                + _shown(schema.names)
            )
        how["label"] = "given"
        found_label = label
    else:
        found = _find(schema, CONVENTIONAL["label"])
        if found is None:
            id_like = set(CONVENTIONAL["id"])
            candidates = [
                f.name
                for f in schema
                if _usable_label_type(f.type) and f.name.lower() not in id_like
            ]
            if len(candidates) != 1:
                listed = _shown(candidates) if candidates else "none of " + _shown(schema.names)
                raise LabelColumnError(
                    f"LG001 no label column detected in {origin}: name it with --label-column "
                    f"(integer candidates: {listed})"
                    + _delimiter_hint(schema.names)
                    + _multilabel_hint(candidates)
                )
            found = candidates[0]
            how["label"] = "detected (the only integer column)"
        else:
            how["label"] = "detected (conventional name)"
        found_label = found
    roles = {"id": id, "source": source, "name": name}
    resolved: dict[str, str | None] = {}
    for role, given in roles.items():
        if given is not None:
            if given not in present:
                raise UsageError(
                    f"--{role}-column {given!r} not found in {origin}; columns: "
                    + _shown(schema.names)
                )
            resolved[role] = given
            how[role] = "given"
            continue
        found = _find(schema, CONVENTIONAL[role])
        if found is not None and found != found_label:
            resolved[role] = found
            how[role] = "detected (conventional name)"
        else:
            resolved[role] = None
    return Columns(found_label, resolved["id"], resolved["source"], resolved["name"], how)


def _shown(names: list[str]) -> str:
    """Column names for a message, where they read as column names; else only their count (a
    credentials or token file read as CSV has its secret as its header: never quoted)."""
    if safe_to_show(names):
        return ", ".join(names)
    return f"{len(names)} column(s), names not shown (the header does not read as column names)"


def _multilabel_hint(candidates: list[str]) -> str:
    """Several integer columns may be one 0/1 column per class (Kaggle's and CheXpert's
    multi-label CSVs): the option that reads them so, with the columns to name."""
    if len(candidates) < 2:
        return ""
    if not safe_to_show(candidates):  # names never shown: the option alone
        return "; one 0/1 target per class (multi-label) is read with --label-columns A,B,..."
    named = ",".join(candidates[:_MULTILABEL_SHOWN])
    more = ",..." if len(candidates) > _MULTILABEL_SHOWN else ""
    return (
        f"; if they hold one 0/1 target per class (multi-label), name them in class order: "
        f"--label-columns {shlex.quote(named + more)}"
    )


def _delimiter_hint(names: list[str]) -> str:
    """A CSV read as one column whose name holds another delimiter: say so."""
    if len(names) != 1 or not safe_to_show(names):
        return ""
    for mark, word in ((";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
        if mark in names[0]:
            return (
                f"; its header is one column holding {mark!r}: the file looks {word}-separated, "
                "and labelgate reads CSV separated by commas: write it with commas (pandas: "
                f"read_csv(path, sep={mark!r}).to_csv(out, index=False)) or as Parquet"
            )
    return ""
