"""Checks on each target value: type, nulls, range, sign, ignore_index, and sparse ids."""

from __future__ import annotations

from labelgate.checks.context import Context, join_values, plural, tally_finding
from labelgate.checks.detection import background_cause, background_fix, detection_ids_cause
from labelgate.checks.registry import check
from labelgate.core.findings import finding
from labelgate.core.labels import Status
from labelgate.core.report import Finding

NEVER_WIDEN = (
    "Do not widen the model head to K+1 logits: that hides the bad label instead of fixing it."
)
SEGMENTATION_IGNORE = {254, 255, 256}


def _past_int64(value: object) -> bool:
    """Whether a value as written is a whole number outside int64."""
    try:
        number = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        number = None
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    return number is not None and not -(2**63) <= number < 2**63


@check("LG002")
def unusable_type(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG002")
    if t is None:
        return []
    kind = ctx.label_type
    if kind.startswith("dictionary<values="):  # a pandas Categorical: its categories are read
        values = kind.removeprefix("dictionary<values=").partition(",")[0]
        names = " of category names" if "string" in values else ""
        kind = f"{values} (a categorical column{names})"
    past = [e.value for e in t.examples if _past_int64(e.value)]
    if past and len(past) == len(t.examples):
        fix = (
            f"These are integers past int64 (e.g. {past[0]}): no class index is that large, and a "
            "cast to int64 would overflow. Find where the labels were written: ids or hashes may "
            "have been stored in the label column."
        )
    elif "string" in kind or "utf8" in kind:
        fix = (
            "Labels written as text that is not an integer (class names?) cannot be targets: map "
            "names to indices with a class-name map before training."
        )
    elif "double" in kind or "float" in kind or "halffloat" in kind:
        fix = (
            "A float label with a fractional part is corrupted data, not a dtype issue: trace these "
            "rows back to where the labels were produced."
        )
    else:
        fix = (
            "Class-index targets must be integers that fit int64 (PyTorch refuses float, int32 and "
            "bool targets): store the label as an integer column."
        )
    return tally_finding(
        ctx,
        "LG002",
        f"{plural(t.count, 'label value')} of type {kind} not integer class indices"
        + (f", some integers past int64 (e.g. {past[0]})" if past else ""),
        fix,
    )


@check("LG003")
def null_labels(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG003")
    if t is None:
        return []
    facts = ctx.annotations
    if facts is not None and 0 < t.count <= facts.rejected:
        return []  # the rows a reader rejected (label undeclared, empty): its findings name them
    ignore = ctx.contract.ignore_index
    return tally_finding(
        ctx,
        "LG003",
        f"{ctx.labels(t)} null or NaN",
        (
            f"If these rows are unlabelled on purpose, set them to ignore_index ({ignore}); "
            "otherwise find why the label was lost and drop or relabel the rows."
        ),
    )


@check("LG004")
def too_high(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG004")
    if t is None:
        return []
    k = ctx.k
    scan = ctx.scan
    values = sorted(v for v in scan.other_values if v >= k)
    causes: list[str] = []
    sparse = _sparse(ctx) is not None
    named = ctx.names_known()
    small = named > k
    if small:
        causes.append(
            f"K={k} may be too small: the {ctx.names_origin()} holds {named} names; if "
            f"the data really has {named} classes, num_classes is the mistake"
        )
    counted = background_cause(ctx, values)
    if counted is not None:
        causes.append(counted)
    if values == [k] and not sparse and not small and counted is None:
        # 1..K with class 0 unused in the sources holding K: a 1-based source (unless the
        # values are sparse ids, which start at 1 too: LG016 says so). A value past K, or a
        # class 0 in use there, is another story.
        holders = [src for src, n in t.by_source.items() if n]
        zero = sum(scan.source_hist[src].count(0) for src in holders)
        if zero == 0 and ctx.detection:
            causes.append(detection_ids_cause(k))
        elif zero == 0:
            causes.append(
                f"the values are K={k} and class 0 is unused where they occur: a 1-based source "
                "(AG News stores 1..4; its Hugging Face loader subtracts 1). Fix that source's "
                "mapping at the source (see LG011), not 'subtract 1 everywhere'"
            )
    seg = SEGMENTATION_IGNORE & set(values)
    if seg:
        causes.append(
            f"{join_values(sorted(seg))} is a segmentation ignore value (Pascal VOC, Cityscapes "
            "trainId) or a mask saved as grey levels 0..255: declare --ignore-index 255 if it "
            "marks 'ignore'"
        )
    if sparse or (
        len(values) > 1 and values[-1] >= 2 * k and len(values) < values[-1] - values[0] + 1
    ):
        causes.append("the values look like sparse category ids with gaps (see LG016)")
    shown = join_values(values) + (" (and more)" if scan.other_values_overflow else "")
    message = f"{ctx.labels(t)} >= K={k} (values {shown})"
    cause = "Likely cause: " + "; ".join(causes) + ". " if causes else ""
    return tally_finding(
        ctx,
        "LG004",
        message,
        (
            f"{cause}CPU PyTorch raises 'IndexError: Target {values[0] if values else k} is out "
            "of bounds'; CUDA asserts 't >= 0 && t < n_classes' asynchronously, later. Map each "
            f"value to a class in 0..{k - 1} or to ignore_index. "
            + (
                background_fix(ctx, values)
                if counted is not None
                else f"If K is the mistake, set num_classes to {named} to match the names "
                "(the head then has one output per named class)."
                if small
                else NEVER_WIDEN
            )
        ),
        details={"values": {str(v): scan.other_values[v] for v in values[:50]}},
    )


@check("LG005")
def negative(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG005")
    if t is None:
        return []
    scan = ctx.scan
    ignore = ctx.contract.ignore_index
    values = sorted((v for v in scan.other_values if v < 0), reverse=True)
    causes: list[str] = []
    if -1 in values and ctx.annotations is not None and ctx.annotations.format == "hf":
        causes.append(
            "-1 is Hugging Face datasets' 'no label' (ClassLabel), written for every example of "
            "an unlabelled split such as test: drop that split from training, or declare "
            "--ignore-index -1"
        )
    elif -1 in values:
        causes.append(
            f"-1 is an 'unlabelled' sentinel from another convention: declare --ignore-index -1, "
            f"or map -1 to {ignore} (`labelgate fix --map-value=-1=ignore`)"
        )
    if any(v in (-255, -254) for v in values):
        causes.append("-255 suggests a segmentation ignore value with the wrong sign")
    cause = "Likely cause: " + "; ".join(causes) + ". " if causes else ""
    return tally_finding(
        ctx,
        "LG005",
        f"{ctx.labels(t)} negative but not ignore_index={ignore} (values {join_values(values)})",
        (
            f"{cause}PyTorch skips only ignore_index ({ignore}); any other negative target "
            f"raises 'IndexError: Target {values[0] if values else -1} is out of bounds' on the "
            "CPU and a device-side assert on CUDA."
        ),
        details={"values": {str(v): scan.other_values[v] for v in values[:50]}},
    )


@check("LG006")
def ignore_inside(ctx: Context) -> list[Finding]:
    ignore = ctx.contract.ignore_index
    k = ctx.k
    if not 0 <= ignore < k:
        return []
    t = ctx.scan.tallies.get("LG006")
    hits = 0 if t is None else t.count
    name = ctx.class_name(ignore)
    label = f"class {ignore}" + (f" ({name!r})" if name else "")
    return [
        finding(
            "LG006",
            count=hits,
            unit=ctx.unit,
            message=(
                f"ignore_index={ignore} lies inside [0, {k}): PyTorch skips it before the range "
                f"check, so {label} is silently never learned ({hits} {ctx.unit} hold it)"
            ),
            fix=(
                "Use an ignore_index outside the class range (PyTorch's default is -100) and mark "
                "unlabelled targets with it."
            ),
            examples=() if t is None else tuple(t.examples),
        )
    ]


@check("LG008")
def nothing_usable(ctx: Context) -> list[Finding]:
    scan = ctx.scan
    if scan.rows == 0:
        empty = ctx.annotations.empty if ctx.annotations is not None else ""
        return [
            finding(
                "LG008",
                count=0,
                unit="rows",
                message=f"the input holds no rows: {empty}" if empty else "the input holds no rows",
                fix="Check the export that wrote this file: an empty label file trains nothing.",
            )
        ]
    if ctx.unit != "rows":  # a mask with one bad pixel is a rejected row, yet the rest trains
        if int(scan.value_status[Status.USABLE]) > 0:
            return []
        row, value = ("mask", "pixel") if ctx.unit == "pixels" else ("row", "token")
        message = f"none of the {plural(scan.rows, row)} has a usable {value}"
    elif int(scan.row_status[Status.USABLE]) > 0:
        return []
    else:
        message = f"none of the {scan.rows} rows has a usable target"
    return [
        finding(
            "LG008",
            count=scan.rows,
            unit="rows",
            message=message + ": every loss would be NaN or fail",
            fix="Check the ignore_index and the label column: nothing here can be trained on.",
        )
    ]


def _sparse(ctx: Context) -> tuple[list[int], list[int], str] | None:
    """The ids and their gaps when they are sparse category ids (COCO's 1..90 for 80 classes).

    With a class map, the map's own indices decide: ids with a gap between them are sparse; a
    dense table whose rows use a few of its classes is not (unused classes are LG012), unless
    the values run past the table, which are judged as without one. Without a class map, the
    used values: at least three starting at 1 or above with two gaps or more, and no more
    distinct values than classes once they reach K.
    """
    scan, k = ctx.scan, ctx.k
    cmap = ctx.contract.class_map
    if cmap is not None and cmap.name_of():
        ids = sorted(cmap.name_of())
        table = set(ids)
        holes = [v for v in range(ids[0], min(ids[-1], ids[0] + 100_000)) if v not in table]
        if holes:
            return ids, holes, f"ids of the class table ({cmap.origin})"
        if not any(v >= k for v in scan.other_values):
            return None
    used = [i for i, _ in scan.class_counts.items()]
    used += sorted(v for v in scan.other_values if v >= k)
    if len(used) < 3:
        return None
    lo, hi = used[0], used[-1]
    present = set(used)
    gaps = [v for v in range(lo, min(hi, lo + 100_000)) if v not in present]
    if len(gaps) < 2 or lo < 1:
        return None  # category ids start at 1; a set that uses 0 is a class range with holes
    if hi >= k and len(used) > k:
        return None  # more distinct values than classes: not a remappable id set
    return used, gaps, "distinct label values"


@check("LG016")
def sparse_ids(ctx: Context) -> list[Finding]:
    k = ctx.k
    found = _sparse(ctx)
    if found is None:
        return []
    used, gaps, what = found
    lo, hi = used[0], used[-1]
    reaches = hi >= k
    severity = "error" if reaches else "warning"
    message = (
        f"{len(used)} {what} span {lo}..{hi} with {len(gaps)} gaps "
        f"({join_values(gaps)}): these look like sparse category ids (COCO uses 1..90 for 80 classes)"
    )
    if reaches:
        message += f", and they reach K={k}"
    return [
        finding(
            "LG016",
            severity=severity,
            count=len(used),
            unit="values",
            message=message,
            fix=(
                "Build an explicit remap table from the sorted ids to 0..n-1 (and keep it with the "
                "dataset); do not size the head to the largest id."
            ),
            details={"distinct": len(used), "min": lo, "max": hi, "gaps": gaps[:100]},
        )
    ]


@check("LG015")
def soft_rows(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG015")
    if t is None:
        return []
    k, tol = ctx.k, ctx.contract.soft_tolerance
    reasons = ctx.scan.soft_reasons
    said = {
        "length": f"length other than K={k}",
        "not finite": "NaN or infinite values",
        "negative": "negative values",
        "sum": f"sums further than {tol:g} from 1",
    }
    listed = "; ".join(
        f"{n} with {said[r]}" for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])
    )
    return tally_finding(
        ctx,
        "LG015",
        f"{plural(t.count, 'soft-label row')} not a probability vector ({listed})",
        (
            "PyTorch accepts any float targets without a check (a negative 'probability' gives "
            "a finite loss): renormalise or drop these rows where the soft labels are made."
        ),
        unit="rows",
        details={"reasons": dict(reasons)},
    )


@check("LG034")
def multi_hot_rows(ctx: Context) -> list[Finding]:
    t = ctx.scan.tallies.get("LG034")
    if t is None:
        return []
    k = ctx.k
    reasons = ctx.scan.soft_reasons
    said = {
        "length": f"length other than K={k}",
        "not finite": "NaN, infinite or blank values",
        "below 0": "values below 0 (-1 is the usual 'uncertain')",
        "above 1": "values above 1",
        "not an index": "elements that are not class indices (a blank, NaN or a fraction)",
        "negative index": "negative indices",
        "index >= K": f"indices >= K={k}",
    }
    indices = ctx.contract.label_encoding == "indices"
    listed = "; ".join(f"{reasons[r]} with {said[r]}" for r in said if reasons.get(r))
    per_class = {int(key.split()[1]): n for key, n in reasons.items() if key.startswith("class ")}
    worst = sorted(per_class.items(), key=lambda kv: -kv[1])[:10]
    named = ", ".join(
        f"{c} ({ctx.class_name(c)!r}): {n}" if ctx.class_name(c) else f"{c}: {n}" for c, n in worst
    )
    return tally_finding(
        ctx,
        "LG034",
        f"{plural(t.count, 'multi-label row')} "
        + (f"not lists of class indices in 0..{k - 1}" if indices else "not K values in [0, 1]")
        + f" ({listed})"
        + (f"; bad values by class: {named}" if named else ""),
        (
            f"Turning index lists into multi-hot rows (F.one_hot, scatter_) raises on an index "
            f"outside 0..{k - 1}, and a fraction is no class: fix these rows where the labels "
            "are made, or check K."
        )
        if indices
        else (
            "BCEWithLogitsLoss and MultiLabelSoftMarginLoss take any float target without a "
            "check: a 2 or a -1 gives a wrong, sometimes negative, loss. Decide each class's "
            "policy where the labels are made: 'uncertain' (-1) as 0, as 1, or masked out of the "
            "loss (-1=0, -1=1 or -1=ignore); blanks ('not mentioned') as 0 (blank=0). With the "
            "first of each: `labelgate fix --map-value=-1=0 --map-value blank=0 --quarantine "
            "rejected.parquet` (rows still invalid go to the quarantine)."
        ),
        unit="rows",
        details={"reasons": {r: reasons[r] for r in said if reasons.get(r)}, "classes": per_class},
    )


@check("LG035")
def no_positive(ctx: Context) -> list[Finding]:
    if ctx.task != "multilabel":
        return []
    n = ctx.scan.soft_reasons.get("no positive", 0)
    if not n:
        return []
    return [
        finding(
            "LG035",
            count=n,
            message=f"{plural(n, 'multi-label row')} with no positive class",
            fix="Nothing to fix if 'none of the classes' is a real answer; if not, these rows "
            "lost their labels on the way (a join, a blank column read as 0).",
        )
    ]
