"""Checks on the simulated batches: batches with no usable target, and the last batch."""

from __future__ import annotations

from labelgate.checks.context import Context, join_values, plural
from labelgate.checks.registry import check
from labelgate.core.findings import finding
from labelgate.core.report import Example, Finding


def failing_nan_batches(ctx: Context) -> list[int]:
    """Kept batches where ``CrossEntropyLoss(reduction='mean')`` returns NaN.

    A batch is NaN when it has no usable target (0/0), or, with class weights, when its usable
    targets weigh 0 in total. A batch that also holds an out-of-range target raises instead
    (LG004/LG005), so it is not counted here.
    """
    return ctx.scan.nan_batches(weighted=ctx.contract.class_weights is not None)


@check("LG007")
def nan_batches(ctx: Context) -> list[Finding]:
    if (
        ctx.ranks is not None
    ):  # several ranks or accumulated steps: their batches, not one process's
        from labelgate.checks.ranks import rank_findings

        return rank_findings(ctx, ctx.ranks)
    scan = ctx.scan
    if scan.rows == 0 or scan.plan.image is not None:
        return []  # images without a box are negatives: their detection loss is finite
    failing = failing_nan_batches(ctx)
    if not failing:
        return []
    size = scan.plan.size
    weighted = ctx.contract.class_weights is not None
    what = "no usable target" + (" or only targets of weight 0" if weighted else "")
    examples: tuple[Example, ...] = ()
    if not scan.plan.shuffled:
        limit = len(failing) if ctx.scan.max_examples == 0 else ctx.scan.max_examples
        examples = tuple(Example(row=b * size, batch=b) for b in failing[:limit])
    total = scan.plan.kept_batches(scan.rows)
    where = ""
    if failing == [total - 1] and total > 1:
        where = "; it is the last batch"
    tokens = {
        "tokens": " (every token of every row is ignored)",
        "segmentation": " (every pixel of every mask is ignored)",
    }.get(ctx.task, "")
    return [
        finding(
            "LG007",
            count=len(failing),
            unit="batches",
            message=(
                f"{len(failing)} of {plural(total, 'batch', 'batches')} of {size} "
                f"with {what}{tokens}: "
                f"CrossEntropyLoss(reduction='mean') returns NaN there (batches "
                f"{join_values(failing)}){where}"
            ),
            fix=(
                "A NaN loss poisons every weight at the next step. Drop rows whose targets are all "
                "ignored, spread them across batches, or check why so many targets are ignored."
            ),
            examples=examples,
            batches=tuple(failing),
        )
    ]


@check("LG013")
def last_batch(ctx: Context) -> list[Finding]:
    scan = ctx.scan
    plan = scan.plan
    if scan.rows == 0 or (ctx.detection and (plan.image is None or not plan.drop_last)):
        # boxes are not what a detection DataLoader batches (a note says so); of batches of
        # images only drop_last's loss is worth a word: detection backbones freeze BatchNorm
        # (FrozenBatchNorm2d in torchvision and detectron2: docs/checks.md), so an incomplete
        # or one-image last batch breaks nothing
        return []
    last = plan.last_size(scan.rows)
    if last == plan.size:
        return []
    total = -(-plan.items(scan.rows) // plan.size)
    unit = plan.unit

    def found(severity: str, count: int, message: str, fix: str) -> list[Finding]:
        return [
            finding(
                "LG013",
                count=count,
                message=message,
                fix=fix,
                severity=severity,
                batches=(total - 1,),
            )
        ]

    if plan.drop_last:
        left_out = (
            "a different set of rows is left out each epoch"
            if plan.shuffled
            else "these rows are never trained in file order"
        )
        return found(
            "info",
            last,
            f"drop_last drops the last batch of {plural(last, unit.removesuffix('s'), unit)}: {left_out}",
            "Nothing to do if intended.",
        )
    # BatchNorm2d also spans H x W: one mask is enough; detection backbones freeze their
    # BatchNorm (torchvision and detectron2 build them with FrozenBatchNorm2d: docs/checks.md)
    if last == 1 and ctx.task != "segmentation" and unit == "rows":
        return found(
            "warning",
            1,
            f"the last batch (#{total - 1}) holds a single row: BatchNorm raises 'Expected "
            "more than 1 value per channel when training' on it",
            "Use drop_last=True, or a batch size that does not leave one row over.",
        )
    return found(
        "info",
        last,
        f"the last batch (#{total - 1}) is incomplete: {last} of {plan.size} {unit}",
        "Nothing to do unless the model needs full batches (then use drop_last=True).",
    )
