"""labelgate fix: rewrite a label file with the fixes its own data proves; quarantine the rest."""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.commands.fixlabels import fix_labels, label_column, plan_fixes
from labelgate.commands.fixtypes import I64, IGNORE, REASON, ROW, FixOptions, FixResult, SourceFix
from labelgate.commands.fixwitness import (
    class_map_path,
    own_class_map,
    write_class_map,
    write_remap_table,
)
from labelgate.contract import Contract
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.arrow import from_numpy
from labelgate.core.labels import list_rows
from labelgate.core.report import Report
from labelgate.errors import UsageError
from labelgate.io.atomic import atomic_path, scratch_path
from labelgate.run.validation import report_of, run

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FixOptions", "FixResult", "SourceFix", "fix"]


def fix(paths: list[str], contract: Contract, options: FixOptions) -> FixResult:
    """Write the fixed file (and the quarantine), then validate the fixed file.

    Only what the data proves is fixed: a source whose name column proves a shift is remapped from
    its names; a shift without that proof only with ``options.shifts``; sentinels only with
    ``options.value_maps``. Rows still invalid afterwards are quarantined unchanged.

    Raises:
        UsageError: an output path would overwrite the input (without ``in_place``), rows need a
            quarantine and none is named, a shift names an unknown source, or the label column's
            type cannot hold a fixed value.
    """
    _check_paths(paths, options)
    done = run(paths, contract, max_examples=1)
    with done:  # the rows an annotation reader wrote live until fix is done
        report, ctx, data = done.report, done.context, done.dataset
        contract = data.contract
        if data.task == "soft" and (options.shifts or options.value_maps):
            raise UsageError("--shift and --map-value rewrite class indices; soft labels have none")
        if data.task == "multilabel":
            if options.shifts or contract.label_encoding == "indices":
                raise UsageError(
                    "fix rewrites multi-hot values (--map-value=-1=0, -1=1, -1=ignore, blank=0); "
                    "index lists and --shift are not rewritten"
                )
            return _fix_multi_hot(data, options)
        plans = plan_fixes(ctx, report, options)
        by_name = {p.name: p for p in plans}
        label = data.columns.label
        tokens = data.task == "tokens"
        counts: Counter[str] = Counter()
        maps_used: Counter[str] = Counter()
        rows_in = fixed = 0
        schema = _output_schema(data)
        import pyarrow as pa
        import pyarrow.parquet as pq

        quarantine_schema = schema.append(pa.field(REASON, pa.string())).append(
            pa.field(ROW, pa.int64())
        )
        with atomic_path(options.out) as out_tmp, _quarantine_path(options) as q_tmp:
            with (
                pq.ParquetWriter(out_tmp, schema, compression="zstd") as out_w,
                pq.ParquetWriter(q_tmp, quarantine_schema, compression="zstd") as q_w,
            ):
                rejected = _rejected_by(ctx.annotations)
                for _, first, chunk in data.chunks(every=True):
                    table = pa.Table.from_batches([chunk]).cast(schema)
                    n = table.num_rows
                    new, changed, reason, sources = fix_labels(
                        table.column(label), table, data, by_name, options, maps_used
                    )
                    _name_rejected(reason, first, rejected)
                    keep = reason == ""
                    counts.update(reason[~keep].tolist())
                    for plan in plans:
                        plan.changed += int(
                            np.count_nonzero((sources == plan.name) & keep & changed)
                        )
                    rows_in += n
                    kept = table.filter(from_numpy(keep))
                    if kept.num_rows:
                        if data.task != "soft":  # soft rows are kept as they are
                            column = label_column(
                                new, keep, table.column(label), tokens, schema.field(label).type
                            )
                            kept = kept.set_column(
                                kept.schema.get_field_index(label), schema.field(label), column
                            )
                        out_w.write_table(kept)
                        fixed += kept.num_rows
                    if (~keep).any():
                        q = table.filter(from_numpy(~keep))
                        q = q.append_column(REASON, pa.array(reason[~keep].tolist(), pa.string()))
                        q = q.append_column(ROW, from_numpy(np.flatnonzero(~keep) + first))
                        q_w.write_table(q)
            quarantined = rows_in - fixed
            if quarantined and options.quarantine is None:
                listed = ", ".join(f"{c}: {n}" for c, n in sorted(counts.items()))
                flags = [p.pending for p in plans if p.pending]
                hint = (
                    f"if the 1-based pattern is real, pass {' '.join(flags)}; then "
                    if flags
                    else ""
                )
                raise UsageError(
                    f"{quarantined} rows cannot be fixed ({listed}): {hint}name a --quarantine file "
                    "for the rows left"
                )
            written = pq.read_metadata(out_tmp).num_rows + pq.read_metadata(q_tmp).num_rows
            if written != rows_in:  # the accounting identity; never expected to fail
                raise RuntimeError(f"wrote {written} rows for {rows_in} read: nothing was replaced")
            # The file just written is validated before it is renamed into place: another run
            # writing the same --out cannot swap it underneath. The fixed file lacks the quarantined
            # rows by design: expected_rows was the input's count.
            judged = _after_contract(contract, ctx, quarantined, options.out)
            after = report_of([str(out_tmp)], judged)
        result = _result(
            options, after, rows_in, fixed, plans, dict(maps_used), dict(sorted(counts.items()))
        )
        names = {i: n for i in range(data.k) if (n := ctx.class_name(i))}
        result.remap_table = write_remap_table(options.out, plans, names)
        if judged.class_map is not None and judged.class_map is not contract.class_map:
            result.class_map = write_class_map(options.out, judged.class_map)
        return result


def _after_contract(contract: Contract, ctx: Any, quarantined: int, out: str) -> Contract:
    """The contract the fixed file is judged by: the input's count no longer expected (the
    quarantined rows left), the predictions kept where they join by id (by position, a
    quarantined row would shift every prediction after it), and a class map no file of the
    user's gives as ``--class-names`` reads it named by the file written beside the output."""
    # the fixed rows are a table of class indices: no framework reads it and no background
    # index applies to it, as the validate line printed for it says (K, resolved, counts it)
    judged = dataclasses.replace(
        contract, expected_rows=None, framework=None, background_index=None
    )
    if own_class_map(contract.class_map):
        assert contract.class_map is not None
        own = dataclasses.replace(contract.class_map, origin=str(class_map_path(out)))
        judged = dataclasses.replace(judged, class_map=own)
    w = ctx.witness
    if w is not None and w.joined_by == "position" and quarantined:
        judged = dataclasses.replace(judged, predictions=None)
    return judged


def _rejected_by(facts: AnnotationFacts | None) -> tuple[I64, npt.NDArray[np.str_]]:
    """The rows a reader or a framework's reading rejected (sorted positions) and the code of
    the finding naming each."""
    by = {} if facts is None else facts.rejected_by
    rows = np.fromiter(sorted(by), dtype=np.int64, count=len(by))
    return rows, np.array([by[r] for r in rows.tolist()], dtype=str)


def _name_rejected(reason: npt.NDArray[np.str_], first: int, rejected: Any) -> None:
    """Quarantine a rejected row under its own finding's code, not LG003's null label."""
    rows, codes = rejected
    lo, hi = np.searchsorted(rows, [first, first + len(reason)])
    at = rows[lo:hi] - first
    null = reason[at] == "LG003"
    reason[at[null]] = codes[lo:hi][null]


def _check_paths(paths: list[str], options: FixOptions) -> None:
    out = Path(options.out).resolve()
    if Path(options.out).suffix.lower() not in (".parquet", ".pq"):
        raise UsageError(
            f"--out {options.out!r}: the fixed file is written as Parquet; name it .parquet"
        )
    inputs = [Path(p).resolve() for p in paths]
    if out in inputs and not options.in_place:
        raise UsageError(
            f"--out {options.out!r} is the input: pass --in-place to replace it (atomically)"
        )
    if options.in_place and (len(paths) != 1 or out != inputs[0] or not Path(paths[0]).is_file()):
        raise UsageError("--in-place rewrites one Parquet input file: give it as --out too")
    if options.quarantine is not None:
        q = Path(options.quarantine).resolve()
        if q in inputs or q == out:
            raise UsageError(
                f"--quarantine {options.quarantine!r} would overwrite the input or the output"
            )


def _quarantine_path(options: FixOptions) -> contextlib.AbstractContextManager[Path]:
    """Where the quarantined rows go: ``--quarantine`` (atomically), or without it a scratch file
    beside ``--out``, created exclusively under a new name (so no input can be it) and removed."""
    if options.quarantine is not None:
        return atomic_path(options.quarantine)
    return scratch_path(Path(options.out).parent, ".parquet")


MASK = "_mask"  # suffix of the mask column(s) a V=ignore policy writes beside the targets


def _fix_multi_hot(data: Any, options: FixOptions) -> FixResult:
    """Multi-hot targets through the value policies: each mapped value (and blank) becomes 0, 1,
    or 0 with a 0 in a mask column beside it (``V=ignore``: multiply the BCE loss by the mask,
    ``reduction='none'``). Rows still outside [0, 1] are quarantined unchanged."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from labelgate.inputs.dataset import MEMBERS

    policies: dict[float, int | None] = {float(v): n for v, n in options.value_maps.items()}
    for value, new in policies.items():
        if new not in (0, 1, IGNORE):
            raise UsageError(
                f"--map-value {value:g}={new}: a multi-hot value becomes 0, 1 or ignore"
            )
    if options.blank not in (None, 0, 1, "ignore"):
        raise UsageError(f"--map-value blank={options.blank}: a blank becomes 0, 1 or ignore")
    masked = IGNORE in policies.values() or options.blank == "ignore"
    members = list(data.columns.members)
    label = data.columns.label
    targets = members or [label]
    given = _output_schema(data)
    schema = given
    mask_type = pa.float32() if members else pa.list_(pa.float32())
    for name in targets if masked else []:
        schema = schema.append(pa.field(name + MASK, mask_type))
    q_schema = given.append(pa.field(REASON, pa.string())).append(pa.field(ROW, pa.int64()))
    k = data.k
    used: Counter[str] = Counter()
    rows_in = fixed = 0
    with atomic_path(options.out) as out_tmp, _quarantine_path(options) as q_tmp:
        with (
            pq.ParquetWriter(out_tmp, schema, compression="zstd") as out_w,
            pq.ParquetWriter(q_tmp, q_schema, compression="zstd") as q_w,
        ):
            for _, first, chunk in data.chunks(every=True):
                if MEMBERS in chunk.schema.names:
                    stacked = chunk.column(MEMBERS)
                    chunk = chunk.drop_columns([MEMBERS])
                else:
                    stacked = chunk.column(label)
                table = pa.Table.from_batches([chunk])
                n = table.num_rows
                _, _, lengths, flat, parents = list_rows(stacked)
                mask = np.ones(len(flat), dtype=np.float64)
                blank = np.isnan(flat)
                for value, new in policies.items():
                    hit = flat == value
                    used[f"{value:g} -> {'ignore (mask 0)' if new is IGNORE else new}"] += int(
                        hit.sum()
                    )
                    flat[hit] = 0.0 if new is IGNORE else float(new)
                    mask[hit & (new is IGNORE)] = 0.0
                if options.blank is not None:
                    used[f"blank -> {options.blank}"] += int(blank.sum())
                    flat[blank] = 0.0 if options.blank == "ignore" else float(options.blank)
                    mask[blank & (options.blank == "ignore")] = 0.0
                bad_value = ~np.isfinite(flat) | (flat < 0) | (flat > 1)
                bad = np.zeros(n, dtype=bool)
                bad[parents[bad_value]] = True
                bad |= lengths != k
                keep = ~bad
                rows_in += n
                out = _with_targets(table, targets, members, flat, mask, lengths, k, masked)
                kept = out.filter(from_numpy(keep))
                if kept.num_rows:
                    out_w.write_table(kept.cast(schema))
                    fixed += kept.num_rows
                if bad.any():
                    q = table.filter(from_numpy(bad))
                    q = q.append_column(REASON, pa.array(["LG034"] * int(bad.sum()), pa.string()))
                    q = q.append_column(ROW, from_numpy(np.flatnonzero(bad) + first))
                    q_w.write_table(q.cast(q_schema))
        quarantined = rows_in - fixed
        if quarantined and options.quarantine is None:
            raise UsageError(
                f"{quarantined} rows are still not K values in [0, 1] (LG034): add a policy "
                "(--map-value=-1=0, -1=1, -1=ignore, blank=0) or name a --quarantine file"
            )
        after = report_of(
            [str(out_tmp)], dataclasses.replace(data.contract, expected_rows=None, framework=None)
        )
    return _result(
        options,
        after,
        rows_in,
        fixed,
        [],
        dict(used),
        {"LG034": quarantined} if quarantined else {},
    )


def _result(
    options: FixOptions,
    after: Report,
    rows_in: int,
    fixed: int,
    plans: list[SourceFix],
    maps_used: dict[str, int],
    quarantined: dict[str, int],
) -> FixResult:
    """The fix log, the fixed file's report naming the output."""
    result = FixResult(
        rows_in=rows_in,
        rows_fixed=fixed,
        rows_quarantined=rows_in - fixed,
        sources=plans,
        value_maps=maps_used,
        quarantined=quarantined,
        output=options.out,
        quarantine=options.quarantine,
    )
    files = [dict(f) | {"path": options.out} for f in after.input["files"]]
    result.after = dataclasses.replace(after, input=after.input | {"files": files})
    return result


def _with_targets(
    table: pa.Table,
    targets: list[str],
    members: list[str],
    flat: npt.NDArray[np.float64],
    mask: npt.NDArray[np.float64],
    lengths: I64,
    k: int,
    masked: bool,
) -> pa.Table:
    """The table with its targets rewritten (and their masks beside them)."""
    import pyarrow as pa

    if members:  # K columns: the rows are all of length K
        values = flat.reshape(-1, k) if len(flat) else np.zeros((0, k))
        masks = mask.reshape(-1, k) if len(mask) else np.zeros((0, k))
        for i, name in enumerate(members):
            at = table.schema.get_field_index(name)
            table = table.set_column(at, name, from_numpy(values[:, i]))
            if masked:
                table = table.append_column(name + MASK, pa.array(masks[:, i], pa.float32()))
        return table
    name = targets[0]
    offsets = pa.array(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32))
    at = table.schema.get_field_index(name)
    table = table.set_column(at, name, pa.ListArray.from_arrays(offsets, from_numpy(flat)))
    if masked:
        column = pa.ListArray.from_arrays(offsets, pa.array(mask, pa.float32()))
        table = table.append_column(name + MASK, column)
    return table


def _output_schema(data: Any) -> pa.Schema:
    """The first input's schema, with its metadata (the output keeps both)."""
    import pyarrow.parquet as pq

    first = data.files[0]
    if first.kind == "parquet":
        return pq.read_schema(first.open())  # a URI through its own filesystem and endpoint
    from labelgate.inputs.dataset import MEMBERS

    _, _, chunk = next(iter(data.chunks(every=True)))
    names = chunk.schema.names
    return chunk.schema.remove(names.index(MEMBERS)) if MEMBERS in names else chunk.schema
