"""LG007 across ranks and accumulated steps: the batches each ``DistributedSampler`` rank reads,
and the optimizer steps, with no usable target (``labelgate.training.ranks``)."""

from __future__ import annotations

from labelgate.checks.context import Context, join_values, plural
from labelgate.core.findings import finding
from labelgate.core.report import Example, Finding
from labelgate.training.ranks import RankBatch, RankVerdict

__all__ = ["rank_findings"]

SHOWN = 5
LISTED = 1000  # entries of a list in ``details``; its full length is given beside it


def _named(b: RankBatch) -> str:
    rows = ", ".join(str(r) for r in b.rows) + (", ..." if b.size > len(b.rows) else "")
    return f"rank {b.rank} batch {b.batch} (rows {rows})"


def _examples(ctx: Context, batches: tuple[RankBatch, ...]) -> tuple[Example, ...]:
    limit = len(batches) if ctx.scan.max_examples == 0 else ctx.scan.max_examples
    return tuple(Example(row=b.rows[0], batch=b.batch) for b in batches[:limit] if b.rows)


def _details(v: RankVerdict, batches: tuple[RankBatch, ...]) -> dict[str, object]:
    """The failing per-rank batches as data (the first ``LISTED``, and their count), with the
    loader replayed."""
    s = v.spec
    return {
        "world_size": s.world_size,
        "grad_accum": s.grad_accum,
        "batches_per_rank": v.batches,
        "padded_rows": v.padded,
        "cut_rows": v.cut,
        "per_rank": [
            {"rank": b.rank, "batch": b.batch, "step": b.step, "rows": list(b.rows), "size": b.size}
            for b in batches[:LISTED]
        ],
        "per_rank_count": len(batches),
    }


def _setup(v: RankVerdict) -> str:
    s = v.spec
    parts = [f"world size {s.world_size}"] if s.world_size > 1 else []
    if s.grad_accum > 1:
        parts.append(f"{s.grad_accum} batches per step")
    if v.padded:
        parts.append(f"{plural(v.padded, 'row')} repeated to pad the ranks")
    if v.cut:
        parts.append(f"{plural(v.cut, 'row')} cut by the sampler's drop_last")
    return ", ".join(parts)


def rank_findings(ctx: Context, v: RankVerdict) -> list[Finding]:
    """LG007 for every rank's batches (``normalize: batch``), or for the optimizer steps with
    the empty micro-batches as info (``normalize: step``)."""
    s = v.spec
    total = v.batches * s.world_size
    shown = "; ".join(_named(b) for b in v.empty[:SHOWN])
    more = f"; and {len(v.empty) - SHOWN} more" if len(v.empty) > SHOWN else ""
    where = f"{plural(total, 'batch', 'batches')} of {s.batch_size} per epoch ({_setup(v)})"
    found: list[Finding] = []
    if ctx.contract.batching.normalize == "step":
        if v.empty_steps:
            stepped = tuple(b for b in v.empty if b.step in set(v.empty_steps))
            found.append(
                finding(
                    "LG007",
                    count=len(v.empty_steps),
                    unit="steps",
                    message=(
                        f"{plural(len(v.empty_steps), 'optimizer step')} with no usable target in "
                        f"any micro-batch on any rank (steps {join_values(list(v.empty_steps))}): "
                        f"the loss normalised over the step is 0/0, NaN; {where}"
                    ),
                    fix="Spread the rows whose targets are all ignored across steps, or drop them.",
                    examples=_examples(ctx, stepped),
                    details=_details(v, stepped)
                    | {
                        "steps": list(v.empty_steps[:LISTED]),
                        "step_count": len(v.empty_steps),
                    },
                )
            )
        if v.empty:
            found.append(
                finding(
                    "LG007",
                    count=len(v.empty),
                    unit="batches",
                    severity="info",
                    message=(
                        f"{len(v.empty)} micro-batches with no usable target: harmless where the "
                        "loss is normalised over the step (transformers' num_items_in_batch), "
                        f"NaN where each micro-batch takes its own mean: {shown}{more}"
                    ),
                    fix="Nothing to do under the Trainer's default loss; check a custom loss.",
                    examples=_examples(ctx, v.empty),
                    details=_details(v, v.empty),
                )
            )
        return found
    if not v.empty:
        return []
    return [
        finding(
            "LG007",
            count=len(v.empty),
            unit="batches",
            message=(
                f"{len(v.empty)} of {where} with no usable target: CrossEntropyLoss"
                f"(reduction='mean') returns NaN on that rank, and the all-reduce spreads it to "
                f"every rank: {shown}{more}"
            ),
            fix=(
                "Drop rows whose targets are all ignored or spread them across ranks; a "
                "DistributedSampler gives each rank every W-th row, so one process's batches "
                "passing says nothing of a rank's."
            ),
            examples=_examples(ctx, v.empty),
            details=_details(v, v.empty),
        )
    ]
