"""labelgate fix --predictions: the remaps a model's predictions prove (LG049), applied to their
sources whole, and the remap table written beside the fixed file."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from labelgate.commands.fixtypes import SourceFix
from labelgate.core.report import Report
from labelgate.io.atomic import write_text_atomic

__all__ = ["proven_remaps", "remap_table_path", "witness_plan", "write_remap_table"]


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
