"""From a crashed run's step back to its data: the batch the DataLoader gave, its rows, a verdict.

The step comes from the log (``labelgate.commands.logs.logstep``) or the user; the batch from replaying the
DataLoader's order (``labelgate.training.loaderorder``) over the dataset's rows; the verdict from the one
judge of targets (``labelgate.core.rules``, through ``labelgate.core.labels.classify``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from labelgate.commands.logs.families import FAMILIES
from labelgate.commands.logs.logstep import FailStep
from labelgate.contract import Contract
from labelgate.core.labels import classify
from labelgate.core.rules import Status
from labelgate.errors import UsageError
from labelgate.inputs.dataset import Dataset, open_dataset
from labelgate.training.loaderorder import LoaderSpec

__all__ = ["CrashBatch", "failing_batch", "loader_spec"]

SHOWN = 20  # bad rows named in the verdict's detail
BACK = 8  # steps judged of an asynchronous failure whose log prints no loss before it
LABEL_CAUSED = ("index_out_of_range", "other", None)  # families a bad target can produce
NOT_FROM_VALUES = ("batch_size_mismatch",)  # named cases of those a value cannot raise


@dataclass(frozen=True, slots=True)
class CrashBatch:
    """The batch (or micro-batches, or per-rank batches) running at the failing step.

    Attributes:
        step: the failing step as read, and as resolved (epoch, batch indices per rank).
        batches: one entry per (rank, batch): its rows (``row``, ``id``, ``label``, ``status``).
        explained: whether the batch's labels explain the failure.
        verdict: one sentence for the user.
        bad: the rows whose targets the loss rejects (or that leave a batch without a usable
            target), by row and id.
    """

    step: dict[str, Any]
    batches: list[dict[str, Any]]
    explained: bool
    verdict: str
    bad: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As JSON."""
        return {
            "step": self.step,
            "batches": self.batches,
            "explained": self.explained,
            "verdict": self.verdict,
            "bad": self.bad,
        }


def loader_spec(
    contract: Contract, *, world_size: int, grad_accum: int, sampler_drop_last: bool
) -> LoaderSpec:
    """The DataLoader the contract's batching describes, on ``world_size`` processes."""
    b = contract.batching
    return LoaderSpec(
        batch_size=b.size,
        drop_last=b.drop_last,
        shuffle_seed=b.shuffle_seed,
        world_size=world_size,
        sampler_drop_last=sampler_drop_last,
        grad_accum=grad_accum,
    )


def _rows(data: Dataset) -> int:
    if data.known_rows is not None:
        return data.known_rows
    total = 0
    for _, _, chunk in data.chunks([data.columns.label]):
        total += chunk.num_rows
    return total


def _resolve(where: FailStep, spec: LoaderSpec, rows: int) -> tuple[int, list[int]]:
    """The epoch and the batch indices (within it, per rank) of the failing step."""
    per_epoch_batches = spec.batches_per_epoch(rows)
    if per_epoch_batches == 0:
        raise UsageError(f"{rows} rows give no batch of {spec.batch_size}: nothing to replay")
    step, unit = where.step, where.unit
    if where.epoch_fraction is not None and step is None:  # the HF Trainer's logged epoch
        # epoch + (micro-batches done) / (micro-batches per epoch): the next optimizer step
        # takes the following grad_accum micro-batches
        done = round(where.epoch_fraction * per_epoch_batches)
        epoch, first = divmod(done, per_epoch_batches)
        last = min(first + spec.grad_accum, per_epoch_batches)
        return epoch, list(range(first, last))
    if step is None:
        raise UsageError("the log shows no step before the failure: give --step N (and --epoch E)")
    size = spec.grad_accum if unit == "optimizer step" else 1
    per_epoch = spec.steps_per_epoch(rows) if size > 1 else per_epoch_batches
    if where.within_epoch and where.epoch is not None:
        epoch, index = where.epoch, step
    else:
        epoch, index = divmod(step, per_epoch)
    first = index * size
    batches = [b for b in range(first, first + size) if b < per_epoch_batches]
    if not batches:
        raise UsageError(
            f"step {step} is past the {per_epoch} steps of an epoch ({rows} rows, batch size "
            f"{spec.batch_size}, world size {spec.world_size}, grad-accum {spec.grad_accum})"
        )
    return epoch, batches


def failing_batch(
    paths: list[str],
    contract: Contract,
    spec: LoaderSpec,
    where: FailStep,
    *,
    family: str | None = None,
    kind: str | None = None,
    asynchronous: bool = False,
) -> CrashBatch:
    """The rows the DataLoader gave at the failing step, and the judge's verdict on them.

    Args:
        paths: the training data.
        contract: K, ignore_index, columns, the batching (size, drop_last, shuffle seed).
        spec: the DataLoader, with world size and gradient accumulation.
        where: the failing step (from the log, or given).
        family: triage's family of the failure, to say whether labels can explain it.
        kind: triage's named case within the family (a batch-size mismatch is not the labels').
        asynchronous: CUDA reported the failure asynchronously: the steps since the last one
            known to have run are judged too (``_window``).

    Raises:
        UsageError: the step cannot be placed (no step, past the epoch), or a bad rank.
        InputError: the data cannot be read.
    """
    if where.rank is not None and where.rank >= spec.world_size:
        raise UsageError(
            f"the failure is on rank {where.rank}: give the run's --world-size (above "
            f"{where.rank}), or --rank to judge another"
        )
    data = open_dataset(paths, contract)
    rows = _rows(data)
    steps = _placed(_window(where, asynchronous), where, spec, rows)
    epoch, indices = steps[-1][1], steps[-1][2]
    ranks = (
        [where.rank]
        if where.rank is not None and spec.world_size > 1
        else list(range(spec.world_size))
    )
    wanted: list[tuple[int, int, int, np.ndarray[Any, Any]]] = []
    for _, in_epoch, batches_of in steps:  # the earliest step first: its bad rows come first
        for rank in ranks:
            for b in batches_of:
                members = spec.batch_rows(rows, epoch=in_epoch, rank=rank, batch=b)
                wanted.append((rank, in_epoch, b, members))
    positions = np.unique(np.concatenate([w[3] for w in wanted]))
    found = _read_rows(data, positions)
    batches, bad = [], []
    for rank, in_epoch, b, members in wanted:
        entries = [found[int(p)] for p in members]
        usable = sum(1 for e in entries if e["usable"])
        weights = data.contract.class_weights
        if weights is not None and usable:
            usable_weight = sum(
                weights[v] for e in entries for v in e["usable_values"] if 0 <= v < len(weights)
            )
            usable = usable if usable_weight > 0 else 0
        rejected = [e for e in entries if e["status"] not in ("usable", "ignored")]
        batches.append(
            {
                "rank": rank,
                "epoch": in_epoch,
                "batch": b,
                "rows": [_public(e) for e in entries],
                "usable": usable,
                "rejected": len(rejected),
            }
        )
        for e in rejected:
            bad.append({"rank": rank, "batch": b} | _public(e) | {"values": e["bad_values"]})
        if not rejected and usable == 0:
            bad.append({"rank": rank, "batch": b, "row": None, "id": None, "status": "no usable"})
    step: dict[str, Any] = {
        "read": where.to_dict(),
        "epoch": epoch,
        "batches": indices,
        "ranks": ranks,
        "rows_per_epoch": rows,
    }
    if len(steps) > 1:
        step["asynchronous_window"] = [{"step": s, "epoch": e, "batches": i} for s, e, i in steps]
    explained, verdict = _verdict(batches, bad, data, family, kind, spec)
    if len(steps) > 1:
        verdict += _window_note(where, steps)
    return CrashBatch(step, batches, explained, verdict, bad[:SHOWN])


def _window(where: FailStep, asynchronous: bool) -> list[FailStep]:
    """The steps to judge, earliest first: the failing one, or, where CUDA reported the error
    asynchronously (it surfaces at a later call than the kernel that failed), every step since
    the last one whose loss the log printed (``FailStep.since``), at most ``BACK``."""
    if not asynchronous or where.step is None or where.style == "given":
        return [where]
    first = where.step - (BACK - 1) if where.since is None else where.since
    first = max(first, where.step - (BACK - 1), 0)
    return [replace(where, step=s) for s in range(first, where.step + 1)]


def _placed(
    steps: list[FailStep], where: FailStep, spec: LoaderSpec, rows: int
) -> list[tuple[int | None, int, list[int]]]:
    """Each step with its epoch and batches; steps of a window past the epoch's end are left
    (the step in progress may never have begun), the failing step alone must be placed."""
    placed = []
    for s in steps:
        try:
            placed.append((s.step, *_resolve(s, spec, rows)))
        except UsageError:
            if len(steps) == 1:
                raise
    if not placed:
        _resolve(where, spec, rows)  # raises the failing step's own error
    return placed


def _window_note(where: FailStep, steps: list[tuple[int | None, int, list[int]]]) -> str:
    """What an asynchronous failure's verdict judged, and why."""
    why = (
        f"every step after the last one whose loss the log printed (step {where.since - 1})"
        if where.since is not None
        else f"the {len(steps)} steps up to the failing one, as the log prints no loss before it"
    )
    return (
        f"; CUDA reported the error asynchronously, at a later call than the kernel that failed, "
        f"so steps {steps[0][0]} to {steps[-1][0]} were judged: {why}"
    )


def _read_rows(data: Dataset, positions: np.ndarray[Any, Any]) -> dict[int, dict[str, Any]]:
    """Row position -> id, label as stored, status and usable values, for ``positions`` only."""
    import pyarrow as pa

    cols = data.columns
    wanted = [c for c in (cols.label, cols.id) if c is not None]
    out: dict[int, dict[str, Any]] = {}
    k, ignore = data.k, data.contract.ignore_index
    for _, first, chunk in data.chunks(wanted):
        n = chunk.num_rows
        lo, hi = np.searchsorted(positions, [first, first + n])
        if lo == hi:
            continue
        local = positions[lo:hi] - first
        take = pa.array(local)
        labels = chunk.column(cols.label).take(take)
        ids = chunk.column(cols.id).take(take).to_pylist() if cols.id else [None] * len(local)
        judged = classify(labels, num_classes=k, ignore_index=ignore)
        row_of = judged.row_of
        for i, pos in enumerate(local):
            if row_of is None:
                values = judged.values[i : i + 1]
                status = judged.status[i : i + 1]
            else:
                values, status = judged.values[row_of == i], judged.status[row_of == i]
            worst = int(judged.row_status[i])
            shown = [int(v) for v, s in zip(values, status, strict=True) if s >= Status.HIGH]
            out[int(first + pos)] = {
                "row": int(first + pos),
                "id": ids[i],
                "label": labels[i].as_py(),
                "status": _STATUS.get(worst, "rejected"),
                "bad_values": shown,
                "usable": worst == Status.USABLE,
                "usable_values": [
                    int(v) for v, s in zip(values, status, strict=True) if s == Status.USABLE
                ],
            }
        if hi == len(positions):
            break
    return out


_STATUS = {
    Status.USABLE: "usable",
    Status.IGNORED: "ignored",
    Status.HIGH: "above K",
    Status.NEGATIVE: "negative",
    Status.NULL: "null",
    Status.BAD_TYPE: "not a class index",
}


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    """What a report shows of a row: position, id, label, status; nothing else of its content."""
    return {k: entry[k] for k in ("row", "id", "label", "status")}


def _verdict(
    batches: list[dict[str, Any]],
    bad: list[dict[str, Any]],
    data: Dataset,
    family: str | None,
    kind: str | None,
    spec: LoaderSpec,
) -> tuple[bool, str]:
    k, ignore = data.k, data.contract.ignore_index
    where = ", ".join(
        (f"rank {b['rank']} " if spec.world_size > 1 else "") + f"batch {b['batch']}"
        for b in batches
    )
    rejected = [b for b in bad if b["row"] is not None]
    empty = [b for b in bad if b["row"] is None]
    if not bad:
        check = FAMILIES[family]["first_check"] if family in FAMILIES else "the other causes"
        these = "these batches' labels are" if len(batches) > 1 else "this batch's labels are"
        return False, (
            f"{these} valid for this loss ({where} of epoch "
            f"{batches[0]['epoch']}, K={k}, ignore_index={ignore}): look at the other causes "
            f"of this family: {check}"
        )
    if rejected:
        first = rejected[0]
        value = first["label"]
        if isinstance(value, list) and first["values"]:  # tokens: the value the loss refuses
            value = first["values"][0]
        ident = f" (id {first['id']})" if first["id"] is not None else ""
        more = f", and {len(rejected) - 1} more row(s)" if len(rejected) > 1 else ""
        rank = f"rank {first['rank']}, " if spec.world_size > 1 else ""
        what = (
            f"row {first['row']}{ident} holds {value!r} with K={k}"
            + (f" and ignore_index={ignore}" if first["status"] == "negative" else "")
            + f" ({rank}batch {first['batch']}){more}"
        )
    else:
        b = empty[0]
        rank = f"rank {b['rank']} " if spec.world_size > 1 else ""
        what = (
            f"{rank}batch {b['batch']} has no usable target (every one is "
            f"ignore_index={ignore}, or of class weight 0): the mean loss is NaN"
        )
    if kind in NOT_FROM_VALUES:
        return False, (
            f"the batch holds bad labels ({what}), but a {kind.replace('_', ' ')} is raised "
            "before the loss reads a value: fix them, and look at the shapes too"
        )
    if family in LABEL_CAUSED:
        return True, f"the failure is explained by the data: {what}"
    return False, (
        f"the batch holds bad labels ({what}), but a {family} failure does not come from "
        "labels: fix them, and look at this family's own causes too"
    )
