"""LG040: the model's own class map against the data's (``labelgate.contract.modelmap``)."""

from __future__ import annotations

from labelgate.checks.context import Context
from labelgate.checks.registry import check
from labelgate.core.findings import finding
from labelgate.core.report import Finding


@check("LG040")
def model_class_map(ctx: Context) -> list[Finding]:
    model = ctx.contract.model
    if model is None:
        return []
    from labelgate.contract.modelmap import compare  # and the head search: only with a model

    names = None
    if ctx.contract.class_map is not None:
        names = dict(ctx.contract.class_map.name_of())
    elif ctx.names_seen:
        names = dict(ctx.names_seen)
    verdict = compare(model, k=ctx.contract.num_classes, names=names, task=ctx.task)
    found: list[Finding] = []
    details: dict[str, object] = {"model": model.origin, "num_labels": model.num_labels}
    if verdict.remap:
        details["remap"] = {str(i): j for i, j in verdict.remap.items()}
    if verdict.errors:
        remap = ", ".join(f"{i} -> {j}" for i, j in verdict.remap.items() if i != j)
        fix = (
            f"Align the data to the model (data label -> model label: {remap}; datasets' "
            "align_labels_with_mapping(model.config.label2id, column) does it), or, training the "
            "head from scratch, set the config's id2label/label2id from the data's class map."
            if remap
            else "Give the model the data's class map (id2label, label2id, num_labels) or the "
            "data the model's: which one is right, only the names can say."
        )
        found.append(
            finding(
                "LG040",
                count=len(verdict.errors),
                unit="differences",
                message=f"{model.origin}: " + "; ".join(verdict.errors),
                fix=fix,
                details=details,
            )
        )
    if verdict.warnings:
        found.append(
            finding(
                "LG040",
                count=len(verdict.warnings),
                unit="differences",
                severity="warning",
                message=f"{model.origin}: " + "; ".join(verdict.warnings),
                fix=(
                    "Name the head's outputs: config.id2label = dict(enumerate(class_names)) and "
                    "config.label2id its inverse, before training."
                ),
                details=details,
            )
        )
    return found
