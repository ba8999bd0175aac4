"""labelgate fix on class-index labels: each source's fix planned from what its data proves, then
applied row by row (shifts, value maps, names looked up in the class map), rejected rows named."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.checks.classes import analyse_shifts
from labelgate.commands.fixtypes import I64, IGNORE, FixOptions, SourceFix
from labelgate.commands.fixwitness import proven_remaps, witness_plan
from labelgate.contract.classmap import normalise_name
from labelgate.core.arrow import from_numpy, numbers
from labelgate.core.labels import Status, classify, classify_soft
from labelgate.core.report import Report
from labelgate.errors import UsageError
from labelgate.scan import NO_SOURCE

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["fix_labels", "label_column", "plan_fixes"]


def plan_fixes(ctx: Any, report: Report, options: FixOptions) -> list[SourceFix]:
    scan = ctx.scan
    shifts = analyse_shifts(ctx)
    live = [(s, name) for s, name in enumerate(scan.source_names) if scan.source_rows[s] > 0]
    names = {name for _, name in live}
    explicit = dict(options.shifts)
    if "*" in explicit:
        if names != {NO_SOURCE}:
            raise UsageError("--shift without a source name needs an input with no source column")
        explicit[NO_SOURCE] = explicit.pop("*")
    unknown = sorted(set(explicit) - names)
    if unknown:
        raise UsageError(
            f"--shift names unknown source(s) {', '.join(unknown)}; sources: {', '.join(sorted(names))}"
        )
    pattern_sources: set[str] = set()
    lg011 = next((f for f in report.findings if f.code == "LG011"), None)
    if lg011 is not None:
        pattern_sources = {
            n for n, d in lg011.details["sources"].items() if d["proof"] == "pattern"
        }
    plans = []
    witnessed = proven_remaps(report)
    for s, name in live:
        rows = int(scan.source_rows[s])
        if name in witnessed and name not in explicit:
            plans.append(witness_plan(name, rows, *witnessed[name]))
        elif name in explicit:
            d = explicit[name]
            plans.append(SourceFix(name, f"shift {d:+d} (given with --shift)", rows, shift=d))
        elif shifts is not None and s in shifts.proven:
            plans.append(
                SourceFix(
                    name,
                    f"remap from names (proven shift {shifts.proven[s]:+d})",
                    rows,
                    remap=dict(shifts.reference),
                )
            )
        elif name in pattern_sources:
            flag = f"--shift {'' if name == NO_SOURCE else name + '='}-1"
            plans.append(
                SourceFix(
                    name,
                    f"1-based pattern, not proven: unchanged (pass {flag} if its documentation "
                    "says so)",
                    rows,
                    pending=flag,
                )
            )
        else:
            plans.append(SourceFix(name, "unchanged", rows))
    return plans


def _codes(table: pa.Table, column: str | None, n: int) -> tuple[I64, list[str | None]]:
    """A text column as integer codes into its distinct values (``-1`` for null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column is None:
        return np.full(n, -1, np.int64), []
    col = table.column(column).combine_chunks()
    encoded = pc.dictionary_encode(
        col.cast(pa.string()) if not pa.types.is_string(col.type) else col
    )
    return numbers(encoded.indices, -1).astype(np.int64), encoded.dictionary.to_pylist()


def _lookup(codes: I64, dictionary: list[str | None], table: dict[str, int]) -> I64:
    """Each row's index under ``table`` (normalised name -> index); -1 for null or unknown names."""
    per_name = np.array(
        [table.get(normalise_name(n), -1) if n is not None else -1 for n in dictionary] + [-1],
        dtype=np.int64,
    )
    return per_name[codes]  # code -1 picks the trailing -1


def fix_labels(
    column: Any,
    table: pa.Table,
    data: Any,
    plans: dict[str, SourceFix],
    options: FixOptions,
    maps_used: Counter[str],
) -> tuple[I64, npt.NDArray[np.bool_], npt.NDArray[np.str_], npt.NDArray[np.object_]]:
    """Fixed label values, the rows a source fix changed, each row's quarantine reason ("" for
    kept rows), and each row's source name."""
    n = table.num_rows
    k, ignore = data.k, data.contract.ignore_index
    src_codes, src_names = _codes(table, data.columns.source, n)
    sources = np.array(
        [*(NO_SOURCE if v is None else v for v in src_names), NO_SOURCE], dtype=object
    )[src_codes]  # code -1 (null) picks the trailing NO_SOURCE
    if data.task == "soft":  # nothing in a probability row to remap: keep it, or quarantine it
        rows, _ = classify_soft(column, num_classes=k, tolerance=data.contract.soft_tolerance)
        reasons = np.where(
            rows.row_status == Status.USABLE,
            "",
            np.where(rows.row_status == Status.NULL, "LG003", "LG015"),
        )
        return np.zeros(0, np.int64), np.zeros(n, dtype=bool), reasons.astype(str), sources
    c = classify(column, num_classes=k, ignore_index=ignore)
    values = c.values.copy()
    integer = c.status <= Status.NEGATIVE
    row_of = c.row_of if c.row_of is not None else np.arange(n)
    elem_source = sources[row_of]
    done = np.zeros(len(values), dtype=bool)
    for raw, new in options.value_maps.items():
        hit = integer & (c.values == raw)
        values[hit] = ignore if new is IGNORE else new
        done |= hit
        maps_used[f"{raw} -> {'ignore_index' if new is IGNORE else new}"] += int(hit.sum())
    changed = np.zeros(n, dtype=bool)
    reasons = np.full(n, "", dtype=object)
    movable = integer & ~done & (c.values != ignore)
    name_codes, name_dict = _codes(table, data.columns.name if c.row_of is None else None, n)
    for name, plan in plans.items():
        in_source = movable & (elem_source == name)
        if plan.shift is not None:
            values[in_source] += plan.shift
            changed[row_of[in_source]] = True
        elif plan.index_remap is not None:
            table = np.arange(k, dtype=np.int64)
            for given, to in plan.index_remap.items():
                table[given] = to
            moved = in_source & (c.values >= 0) & (c.values < k)
            values[moved] = table[c.values[moved]]
            changed[row_of[moved & (values != c.values)]] = True
        elif plan.remap is not None and data.columns.name is not None and c.row_of is None:
            target = _lookup(name_codes, name_dict, plan.remap)
            unknown = in_source & (target < 0)
            reasons[unknown] = "LG010"  # a name the map does not know: which column is right?
            moved = in_source & (target >= 0)
            values[moved] = target[moved]
            changed |= moved & (values != c.values)
    judged = classify(from_numpy(values), num_classes=k, ignore_index=ignore).status
    judged = np.where(integer, judged, c.status).astype(np.uint8)
    worst = np.zeros(n, dtype=np.uint8)
    np.maximum.at(worst, row_of, judged)
    worst[c.row_status == Status.NULL] = Status.NULL
    for st, code in Status.CODES.items():
        reasons[(worst == st) & (reasons == "")] = code
    if options.drop_ignored:
        usable = np.zeros(n, dtype=bool)
        usable[row_of[judged == Status.USABLE]] = True
        reasons[~usable & (reasons == "")] = "LG007"
    if data.columns.name is not None and c.row_of is None:
        reference = _reference(data, plans)
        if reference is not None:
            expected = _lookup(name_codes, name_dict, reference)
            # a source remapped whole: its name column was written by the same mistaken mapping
            remapped = np.isin(
                sources,
                [p.name for p in plans.values() if p.remap is not None or p.index_remap],
            )
            wrong = (judged == Status.USABLE) & (name_codes >= 0) & (expected != values) & ~remapped
            reasons[wrong & (reasons == "")] = "LG010"
    return values, changed, reasons.astype(str), sources


def _reference(data: Any, plans: dict[str, SourceFix]) -> dict[str, int] | None:
    """Normalised name -> index: the class map, else what the unshifted sources agree on."""
    if data.contract.class_map is not None:
        return dict(data.contract.class_map.index_of())
    return next((p.remap for p in plans.values() if p.remap), None)


def label_column(
    values: I64, keep: npt.NDArray[np.bool_], original: Any, tokens: bool, typ: pa.DataType
) -> pa.Array:
    """The kept rows' fixed labels, in the column's own type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not tokens:
        fixed = from_numpy(values)
        try:
            return pc.cast(fixed, typ).filter(from_numpy(keep))
        except pa.ArrowInvalid as exc:
            raise UsageError(
                f"the label column's type {typ} cannot hold a fixed value ({exc})"
            ) from None
    col = original.combine_chunks() if isinstance(original, pa.ChunkedArray) else original
    offsets = numbers(col.offsets).astype(np.int64)
    rebuilt = pa.ListArray.from_arrays(
        from_numpy((offsets - offsets[0]).astype(np.int32)),
        pc.cast(from_numpy(values), typ.value_type),
    )
    return rebuilt.filter(from_numpy(keep)).cast(typ)
