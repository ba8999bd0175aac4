"""labelgate fix --predictions: the remaps a model's predictions prove (LG049), applied to their
sources whole, and the remap table written beside the fixed file; and the class map written
beside it where no file the user holds gives it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from labelgate.commands.fixtypes import SourceFix
from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.report import Report
from labelgate.errors import LabelgateError
from labelgate.io.atomic import write_text_atomic

__all__ = [
    "class_map_path",
    "own_class_map",
    "proven_remaps",
    "remap_table_path",
    "witness_plan",
    "write_class_map",
    "write_remap_table",
]


def proven_remaps(report: Report) -> dict[str, tuple[str, dict[int, int]]]:
    """Source name -> (kind, given class -> class) for every remap LG049 proved whole and
    attributes to the source (not to the model's own class order)."""
    found: dict[str, tuple[str, dict[int, int]]] = {}
    for f in report.findings:
        d = f.details
        if f.code == "LG049" and f.severity == "error" and d.get("applies"):
            found[str(d["source"])] = (
                str(d["kind"]),
                {int(g): int(t) for g, t in d["remap"].items()},
            )
    return found


def remap_table_path(out: str) -> Path:
    """``fixed.parquet`` -> ``fixed.remap.csv``, beside it."""
    target = Path(out)
    return target.with_name(target.stem + ".remap.csv")


def write_remap_table(out: str, plans: list[SourceFix], names: dict[int, str]) -> str | None:
    """Write the remap table beside ``out``: per remapped source, each given class, the class it
    becomes, their names and the remap's kind; ``None`` (nothing written) when no source was
    remapped."""
    remapped = [p for p in plans if p.index_remap]
    if not remapped:
        return None
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(["source", "given", "given_name", "fixed", "fixed_name", "kind"])
    for p in remapped:
        assert p.index_remap is not None
        for given, fixed in sorted(p.index_remap.items()):
            w.writerow([p.name, given, names.get(given, ""), fixed, names.get(fixed, ""), p.kind])
    target = remap_table_path(out)
    write_text_atomic(target, text.getvalue())
    return str(target)


def witness_plan(name: str, rows: int, kind: str, remap: dict[int, int]) -> SourceFix:
    """The fix of a source the predictions prove remapped."""
    shown = ", ".join(f"{g} -> {t}" for g, t in sorted(remap.items()))
    return SourceFix(
        name,
        f"remap proven by the predictions ({kind}: {shown})",
        rows,
        index_remap=remap,
        kind=kind,
    )


def class_map_path(out: str) -> Path:
    """``fixed.parquet`` -> ``fixed.classes.json``, beside it."""
    target = Path(out)
    return target.with_name(target.stem + ".classes.json")


def own_class_map(class_map: ClassMap | None) -> bool:
    """Whether the fixed file needs its class map written beside it: the map came from the input
    itself (COCO's categories, CVAT's labels, a folder's names) or from a file that
    ``--class-names`` reads otherwise (labelme's labels.txt, whose ``__ignore__`` line is no
    class), so a command naming its origin would not give the same map."""
    if class_map is None or class_map.origin == "inline":
        return False
    try:
        as_given = load_class_map(class_map.origin)
    except LabelgateError:
        return True
    return as_given.entries != class_map.entries


def write_class_map(out: str, class_map: ClassMap) -> str:
    """Write ``class_map`` beside ``out`` as JSON (index -> name), read by ``--class-names``."""
    target = class_map_path(out)
    names = {str(i): n for i, n in sorted(class_map.entries)}
    write_text_atomic(target, json.dumps(names, indent=1, ensure_ascii=False) + "\n")
    return str(target)
