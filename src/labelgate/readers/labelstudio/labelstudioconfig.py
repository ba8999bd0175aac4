"""A Label Studio project's labelling config: the ``<View>`` XML beside an export, read as the
``value`` of its ``<Label>`` and ``<Choice>`` tags and each control tag's own values (Label
Studio does not put the config in the export)."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from labelgate.contract.classmap import normalise_name
from labelgate.errors import InputError, one_line
from labelgate.io.files import read_small_text

__all__ = ["beside", "export_in", "export_kind", "labelling_config"]


def labelling_config(path: Path) -> tuple[list[str], dict[str, str], dict[str, set[str]]]:
    """The ``<Label>`` and ``<Choice>`` values of a labelling config, in document order (each
    once), each control tag's name -> its kind (``rectanglelabels``, ``choices``...), and each
    control's own values (normalised).

    Raises:
        InputError: the file is not a labelling config.
    """
    try:
        root = ET.fromstring(read_small_text(path, "labelling config"))
    except (ET.ParseError, LookupError) as exc:  # LookupError: an unknown declared encoding
        raise InputError(
            f"not a readable labelling config ({one_line(exc)})", path=str(path)
        ) from None
    if root.tag != "View":
        raise InputError("not a Label Studio labelling config (root is not <View>)", path=str(path))
    values: list[str] = []
    controls: dict[str, str] = {}
    own: dict[str, set[str]] = {}
    for elem in root.iter():
        if elem.get("name") and (elem.tag.endswith("Labels") or elem.tag == "Choices"):
            name = elem.get("name", "")
            controls[name] = elem.tag.lower()
            own[name] = set()
            for child in elem.iter():
                if child.tag in ("Label", "Choice"):
                    value = child.get("value", child.get("alias", "")).strip()
                    own[name].add(normalise_name(value))
                    if value and value not in values:
                        values.append(value)
    return values, controls, own


def beside(export: Path) -> Path | None:
    """The labelling config beside an export: the ``<View>`` XML file there whose name shares
    the longest prefix with the export's (none when two share it equally)."""
    found = []
    for p in export.parent.glob("*.xml"):
        try:
            with p.open("rb") as f:
                head = f.read(512)
        except OSError:
            continue
        if re.match(rb"(\xef\xbb\xbf)?\s*(<\?.*?\?>\s*)?<View[\s>]", head, flags=re.S):
            found.append((_shared(p.stem, export.stem), p))
    found.sort(key=lambda lp: -lp[0])
    if not found or (len(found) > 1 and found[0][0] == found[1][0]):
        return None
    return found[0][1]


def _shared(a: str, b: str) -> int:
    """How many leading characters two names share."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def export_kind(path: Path) -> str | None:
    """``"json"`` (the full export: tasks with ``data`` and ``annotations``), ``"min"`` (JSON-MIN:
    one flat object per annotation) or ``None``, from the first 64 KB."""
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None
    if not head.startswith(b"["):
        return None
    if b'"data"' in head and (b'"annotations"' in head or b'"completions"' in head):
        return "json"
    if b'"annotation_id"' in head or b'"annotator"' in head:
        return "min"
    return None


def export_in(folder: Path, most: int = 64) -> Path | None:
    """The one Label Studio export among a folder's JSON files (its own ``export.json`` beside
    ``label_config.xml``, as the project's export dialog saves them); ``None`` when the folder
    holds none, several, or more than ``most`` entries (no dataset root of this format)."""
    import itertools

    try:
        with os.scandir(folder) as entries:
            listed = list(itertools.islice(entries, most + 1))
    except OSError:
        return None
    if len(listed) > most:
        return None
    found = [
        Path(e.path)
        for e in listed
        if e.name.lower().endswith(".json") and e.is_file() and export_kind(Path(e.path))
    ]
    return found[0] if len(found) == 1 else None
