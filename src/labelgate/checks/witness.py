"""LG049: each source's labels against a model's predictions (``--predictions``), a witness of
mapping faults that stay inside [0, K) (``labelgate.checks.mapping`` judges; this says it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labelgate.checks.context import Context, join_values, plural
from labelgate.checks.registry import check
from labelgate.contract.classmap import normalise_name
from labelgate.core.findings import finding
from labelgate.core.report import Example, Finding
from labelgate.scan import NO_SOURCE

if TYPE_CHECKING:
    from labelgate.checks.mapping import Move, SourceVerdict

__all__ = ["judged_sources", "witness_findings"]

KIND_WORDS = {
    "permutation": "its labels look permuted against the model",
    "swapped pair": "two of its classes look swapped against the model",
    "shift by one": "its labels look shifted by one (within [0, K)) against the model",
}


def judged_sources(ctx: Context) -> dict[str, SourceVerdict]:
    """Every source of the witness judged, in the order the sources first appear."""
    w = ctx.witness
    if w is None:
        return {}
    from labelgate.checks.mapping import hypotheses_for, judge_source  # only with --predictions

    tests = hypotheses_for(len(w.confusion), ctx.k)
    return {name: judge_source(conf, tests=tests) for name, conf in w.confusion.items()}


@check("LG049")
def witness_findings(ctx: Context) -> list[Finding]:
    verdicts = judged_sources(ctx)
    if not verdicts:
        return []
    found: list[Finding] = []
    remaps = {name: v for name, v in verdicts.items() if v.remap}
    shared = len(verdicts) > 1 and len(remaps) == len(verdicts)
    shared &= len({tuple(sorted(v.remap.items())) for v in remaps.values()}) == 1
    if shared:  # the model against every source alike: its class order, not a source's fault
        first = next(iter(remaps.values()))
        found.append(_remap_finding(ctx, "every source", first, _model_order(ctx, first.remap)))
    else:
        for name, v in remaps.items():
            where = "the data" if name == NO_SOURCE else f"source {name!r}"
            model = _model_order(ctx, v.remap) if len(verdicts) == 1 else None
            found.append(_remap_finding(ctx, where, v, model, source=name))
    for name, v in verdicts.items():
        where = "the data" if name == NO_SOURCE else f"source {name!r}"
        if v.merges:
            found.append(_merge_finding(ctx, where, name, v))
        if v.splits and not v.remap:
            parts = [f"{_cls(ctx, i)} as {_cls(ctx, a)} and {_cls(ctx, b)}" for i, a, b in v.splits]
            found.append(
                finding(
                    "LG049",
                    count=len(v.splits),
                    unit="classes",
                    severity="info",
                    message=f"{where}: the model splits a given class in two, the second one the "
                    f"source hardly gives: {'; '.join(parts)} (the source may have merged it)",
                    fix="A hint, not a proof: read the source's class map for a merged class.",
                    details={
                        "source": name,
                        "kind": "split",
                        "splits": [list(s) for s in v.splits],
                    },
                )
            )
        if v.kind == "too few to judge":
            found.append(_too_few(ctx, where, name, v))
    return found + _label_issues(ctx, verdicts)


def _label_issues(ctx: Context, verdicts: dict[str, SourceVerdict]) -> list[Finding]:
    """The rows whose given label the model contradicts most, by cleanlab's
    ``filter.find_label_issues`` (``labelgate[cleanlab]``), after each source's complete remap is
    applied: a permuted source is one finding above, not hundreds of rows here."""
    w = ctx.witness
    if w is None or w.rows is None or w.predictions.probs is None or not len(w.rows):
        return []
    import numpy as np
    from cleanlab.filter import find_label_issues

    rows = w.rows
    labels = rows[:, 2].copy()
    for s, v in enumerate(verdicts.values()):
        if v.complete:
            table = np.arange(ctx.k)
            for g, t in v.remap.items():
                table[g] = t
            mine = rows[:, 1] == s
            labels[mine] = table[labels[mine]]
    probs = w.predictions.probs[rows[:, 3]]
    usable = np.isfinite(probs).all(axis=1)
    present = np.unique(labels[usable])
    if not usable.any() or len(present) < 2:
        return []
    # cleanlab counts classes from the labels and probabilities it is given: keep K columns,
    # every class present at least once (it refuses a column no label names)
    # n_jobs=1: cleanlab's pool reads a global its workers lack under the spawn start method
    # (macOS's and Windows' default: NameError 'pred_probs_by_class', cleanlab/filter.py:881)
    ranked = find_label_issues(
        labels[usable], probs[usable], return_indices_ranked_by="self_confidence", n_jobs=1
    )
    if len(ranked) == 0:
        return []
    picked = rows[usable][ranked]
    names = list(verdicts)
    plan, kept = ctx.scan.plan, ctx.scan.plan.kept_batches(ctx.scan.rows)

    def batch(row: int) -> int | None:
        b = int(plan.batch_of(row, 1)[0])
        return b if b < kept else None

    examples = tuple(
        Example(
            row=int(r),
            batch=batch(int(r)),
            source=None if names[int(s)] == NO_SOURCE else names[int(s)],
            value=int(g),
        )
        for r, s, g, _ in (picked[: w.limit] if w.limit else picked)
    )
    return [
        finding(
            "LG049",
            count=len(ranked),
            severity="warning",
            message=f"{plural(len(ranked), 'row')} whose given label the model contradicts most "
            "(cleanlab's find_label_issues, ranked by self-confidence, each source's proven "
            "remap applied first)",
            fix="Review these rows' labels; predictions from a model trained on trusted sources "
            "or out of sample make the list worth reading.",
            examples=examples,
            details={"kind": "label issues", "rows": len(ranked), "judged": int(usable.sum())},
        )
    ]


def _cls(ctx: Context, index: int) -> str:
    name = ctx.class_name(index)
    return f"{name} ({index})" if name else str(index)


def _moves(ctx: Context, moves: tuple[Move, ...] | list[Move]) -> str:
    return ", ".join(
        f"{_cls(ctx, m.given)} -> {_cls(ctx, m.to)} ({m.rows} of {m.of})" for m in moves
    )


def _details(name: str, v: SourceVerdict, **more: Any) -> dict[str, Any]:
    from labelgate.checks.mapping import ALPHA

    return {
        "source": name,
        "kind": v.kind,
        "rows": v.rows,
        "remap": {str(g): t for g, t in sorted(v.remap.items())},
        "complete": v.complete,
        "agreement": {"as_is": round(v.as_is, 4), "remapped": round(v.remapped, 4)},
        "moves": [
            {"given": m.given, "to": m.to, "rows": m.rows, "stays": m.stays, "of": m.of, "p": m.p}
            for m in v.moves
        ],
        "alpha": ALPHA,
        "needed_rows": v.needed,
    } | more


def _remap_finding(
    ctx: Context, where: str, v: SourceVerdict, model: str | None, *, source: str | None = None
) -> Finding:
    proven = [m for m in v.moves if m.proven]
    message = (
        f"{where}: {KIND_WORDS[v.kind]}: {_moves(ctx, proven)}; under the remap agreement is "
        f"{v.remapped:.0%}, as is {v.as_is:.0%}"
    )
    unproven = [m for m in v.moves if not m.proven]
    if unproven:
        message += (
            f"; not proven for {plural(len(unproven), 'class', 'classes')} "
            f"({_moves(ctx, unproven)}: too few rows)"
        )
    applies = source is not None and model is None and v.complete
    if model is not None:
        message += f"; {model}"
        fix = (
            "The data's labels agree with their names: align the model to the data (datasets' "
            "align_labels_with_mapping(model.config.label2id, column), or the head's "
            "id2label/label2id), or remap the predictions."
        )
    elif source is None:
        fix = (
            "Every source disagrees with the model the same way: the model's class order (or "
            "the predictions') is not the data's; compare its id2label (--model) with the class "
            "map."
        )
    else:
        fix = (
            "Remap the source as a whole (the mapping is the source's, not the rows'): labelgate "
            "fix DATA --predictions PRED --out FIXED applies it and writes the remap table beside "
            "FIXED."
            if v.complete
            else "Give the source's unproven classes more rows, or remap it by its own class map."
        )
    return finding(
        "LG049",
        count=sum(m.of for m in proven),
        message=message,
        fix=fix,
        details=_details(source or "*", v, applies=applies, model=model),
    )


def _merge_finding(ctx: Context, where: str, name: str, v: SourceVerdict) -> Finding:
    pairs = [f"{_cls(ctx, m.given)} and {_cls(ctx, m.to)}" for m in v.merges]
    return finding(
        "LG049",
        count=sum(m.rows for m in v.merges),
        severity="warning",
        message=f"{where}: the model sees two given classes as one: {join_values(pairs)} "
        f"({_moves(ctx, v.merges)})",
        fix="Read the source's class map for two codes of one class; the model may also never "
        "have learnt the difference (predictions from a model trained on trusted sources say "
        "which).",
        details=_details(name, v, merges={str(m.given): m.to for m in v.merges}),
    )


def _too_few(ctx: Context, where: str, name: str, v: SourceVerdict) -> Finding:
    return finding(
        "LG049",
        count=v.rows,
        severity="info",
        message=f"{where}: too few rows to judge against the model ({_moves(ctx, v.moves)} "
        f"look moved; a class needs {v.needed} rows to prove it)",
        fix="Judge it again with more rows of the source, or with a more accurate model.",
        details=_details(name, v),
    )


def _model_order(ctx: Context, remap: dict[int, int]) -> str | None:
    """What the model's own class map (``--model``) says of the remap, where it names classes
    and the data names them too: that it is the model's class order (MNLI), or that the config
    claims the data's order and the predictions say otherwise."""
    model = ctx.contract.model
    if model is None or not model.id2label or model.placeholders:
        return None
    ids = {i: normalise_name(n) for i, n in model.id2label}
    names = {g: ctx.class_name(g) for g in remap}
    if not all(names.values()):
        return None
    data = {g: normalise_name(str(n)) for g, n in names.items()}
    if all(ids.get(t) == data[g] for g, t in remap.items()):
        return (
            f"the model's id2label ({model.origin}) confirms it: its class order is not the "
            "data's (" + ", ".join(f"{names[g]} is its {t}" for g, t in remap.items()) + ")"
        )
    if all(ids.get(g) == data[g] for g in remap):
        return (
            f"the model's id2label ({model.origin}) claims the data's order, and its predictions "
            "do not follow it: a head trained on permuted labels, or data permuted since"
        )
    return None
