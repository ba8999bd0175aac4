"""Detection labels judged with no framework named: COCO's category ids taken as ids, not class
indices, and one reading per framework of what it would need (``num_classes``, how the ids become
indices) and do (raise, drop) with this input.

The verdict counts what fails under every framework: the records, the categories declared, the
boxes, masks and keypoints. What depends on the framework (a box without area raises in
torchvision and is dropped by the others; torchvision trains category 0 as its background) is said
in that framework's reading, and fails the run only with ``--framework``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from labelgate.contract import Contract
from labelgate.contract.classmap import ClassMap
from labelgate.contract.frameworks import (
    COCO80_IDS,
    FRAMEWORKS,
    ULTRALYTICS_CONVERT,
    cite,
    coco80_mapping,
)
from labelgate.core.findings import plural
from labelgate.core.report import Finding, Report
from labelgate.readers.common.arrowcols import ints
from labelgate.run.frameworks import BACKGROUND_NAMES, rewrite
from labelgate.run.rowfiles import read_rows

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.opened import Opened

__all__ = ["Reading", "named_ids", "neutral_report", "neutral_rows", "readings", "refused_report"]

# Findings whose cost is the framework's: without one named, the least any framework makes of it.
_NEUTRAL_SEVERITY = {"LG027": "warning"}  # torchvision raises; detectron2, mmdet, ultralytics drop

_ULTRA_VERIFY = "ultralytics/data/utils.py:481-482@ultralytics 8.4.190"


@dataclass(frozen=True, slots=True)
class Reading:
    """What one framework would make of a detection input.

    Attributes:
        framework: its ``--framework`` name.
        num_classes: the ``num_classes`` it would need for these categories.
        ids: how it turns the category ids or class names into indices, with the citation.
        raises: what in this input it would raise on, each with its count.
        drops: what it would leave out of training without raising.
        wrong: what it would train on silently as something else.
        fits: whether ``--classes`` fits this reading (``None``: no K given).
    """

    framework: str
    num_classes: int
    ids: str
    raises: tuple[str, ...] = ()
    drops: tuple[str, ...] = ()
    fits: bool | None = None
    wrong: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """``fails`` (it raises), ``drops`` (it trains on less) or ``runs``."""
        if self.raises or self.wrong or self.fits is False:
            return "fails"
        return "drops" if self.drops else "runs"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report's ``frameworks`` list."""
        return {
            "framework": self.framework,
            "verdict": self.verdict,
            "num_classes": self.num_classes,
            "ids": self.ids,
            "raises": list(self.raises),
            "drops": list(self.drops),
            "wrong": list(self.wrong),
            "fits_classes": self.fits,
        }


def neutral_rows(opened: Opened, contract: Contract) -> Opened:
    """A COCO input's rows with its category ids made contiguous by sorted id (the reading that
    needs no background and no gap: the categories table's own order), the class map with them;
    an annotation of a category the table does not declare is written without a label (it is
    LG030's, named by the reader) and so counted rejected. With ``--classes`` equal to the
    largest id + 1 (torchvision's reading), the ids are judged as they are, the gaps filled.

    Other formats number their classes 0..K-1 already and are returned as they are, but for a
    background entry of their class map (labelme2voc's ``class_names.txt`` opens with
    ``_background_``) marked a placeholder, as COCO's is."""
    facts, own = opened.facts, opened.read.class_map
    if facts is None or own is None or facts.task != "detection":
        return opened
    if opened.format != "coco":
        cmap = _placeholders(own)
        if 0 in cmap.placeholders and 0 in cmap.name_of():  # a background entry: objects of it?
            facts.counts["annotations_of_category_0"] = _zeros(opened.paths)
        return replace(opened, read=replace(opened.read, class_map=cmap))
    ids = sorted({i for i, _ in own.entries})
    if not ids or ids[0] < 0:
        return opened
    facts.counts["annotations_of_category_0"] = _zeros(opened.paths)
    if ids == list(range(len(ids))) or facts.background is not None:
        # indices already, or a background index given (torchvision's convention: the ids as
        # they are): only the undeclared lose their label
        facts.refuse(rewrite(opened.paths, {i: i for i in ids}, unknown="null"), "LG030")
        return replace(opened, read=replace(opened.read, class_map=_placeholders(own)))
    names = own.name_of()
    as_is = ids[-1] + 1
    if contract.num_classes == as_is != len(ids):
        gaps = [i for i in range(as_is) if i not in names]
        entries = tuple(sorted((*own.entries, *((i, "N/A") for i in gaps))))
        cmap = ClassMap(entries, origin=own.origin, placeholders=own.placeholders | frozenset(gaps))
        why = (
            f"the category ids as they are: --classes {as_is} is the largest id + 1, "
            f"torchvision's reading; the {len(gaps)} ids between hold no category"
        )
    else:
        mapping = {cid: i for i, cid in enumerate(ids)}
        cmap = ClassMap(
            tuple((i, names[cid]) for cid, i in mapping.items()),
            origin=own.origin,
            declared=own.declared,
            placeholders=own.placeholders_at(mapping),
        )
        cmap = _placeholders(cmap)
        refused = rewrite(opened.paths, mapping, unknown="null")
        facts.refuse(refused, "LG030")
        facts.written.update((i, cid) for cid, i in mapping.items())
        why = (
            "the COCO categories made contiguous by sorted id: category ids are ids, not class "
            "indices, and each framework maps them its own way (its reading below)"
        )
    return replace(opened, read=replace(opened.read, class_map=cmap, class_map_why=why))


def _zeros(paths: list[str]) -> int:
    """Annotations whose category id is 0 (torchvision's background), before any remap."""
    import pyarrow.compute as pc

    n = 0
    for path in paths:
        label = read_rows(path, ["label"]).column("label")
        n += int(pc.sum(pc.equal(label, ints([0])[0])).as_py() or 0)
    return n


def readings(
    table: ClassMap,
    fmt: str,
    facts: AnnotationFacts,
    num_classes: int | None,
    duplicates: int = 0,
    unasserted: tuple[str, ...] = (),
    used: set[int] | None = None,
) -> tuple[Reading, ...]:
    """Each detection framework's reading of an input whose own class table is ``table`` (COCO
    categories keyed by id; the other formats' classes 0..K-1); ``duplicates``: the annotations
    repeating an id of their file, which a loader asserting unique ids raises on (but the
    frameworks ``unasserted``, which let these files pass); ``used``: the ids annotations name
    (``None``: not known), since a converter raises on an annotation, not on a table entry."""
    ids = sorted({i for i, _ in table.entries})
    if not ids:
        return ()
    names = table.name_of()
    hits = facts.hits
    boxes = hits["LG027"].count if "LG027" in hits else 0
    undeclared = hits["LG030"].count if "LG030" in hits and fmt == "coco" else 0
    empty = facts.counts.get("images_without_boxes", facts.counts.get("images_without_objects", 0))
    n = len(ids)
    fws = FRAMEWORKS
    out = []

    def fits(k: int) -> bool | None:
        return None if num_classes is None else num_classes == k

    # torchvision: labels as they are, 0 the background, num_classes counting it
    tv = fws["torchvision"]
    tv_raises, tv_wrong = [], []
    if fmt == "coco":
        k_tv = max(ids[-1], 0) + 1
        how = f"category ids as they are, 0 the background ({cite(tv.sources['ids'])})"
        zeros = facts.counts.get("annotations_of_category_0", 0)
        if zeros and 0 in names and names[0].strip().lower() not in BACKGROUND_NAMES:
            k_tv += 1
            tv_wrong.append(
                f"category 0 ({names[0]!r}, {zeros} annotations) {_AS_BACKGROUND} "
                f"({cite(tv.sources['background'])}): shift the ids by one"
            )
        gaps = ids[-1] - (n - (0 in names))  # ids 1..max that name no category
        if gaps > 0:
            how += f"; {gaps} ids between hold no category"
    else:
        reserved = 0 in names and names[0].strip().lower() in BACKGROUND_NAMES
        k_tv = n if reserved else n + 1
        how = (
            "the class list as it is, its entry 0 the background"
            if reserved
            else "the classes shifted to 1..K, 0 the background"
        ) + f" ({cite(tv.sources['background'])})"
        zeros = facts.counts.get("annotations_of_category_0", 0)
        if reserved and zeros:  # objects labelled with the background entry itself
            tv_wrong.append(
                f"{plural(zeros, 'object')} labelled {names[0]!r} (0) {_AS_BACKGROUND} "
                f"({cite(tv.sources['background'])})"
            )
    if boxes:
        tv_raises.append(
            f"{plural(boxes, 'box', 'boxes')} without area ({cite(tv.sources['bad_box'])})"
        )
    if undeclared:
        per_id = hits["LG030"].details.get("categories", {})
        past = sum(n for c, n in per_id.items() if int(c) >= k_tv or int(c) < 0)
        if past or not per_id:
            tv_raises.append(
                f"{plural(past or undeclared, 'annotation')} of undeclared categories past "
                "num_classes "
                f"({cite(tv.sources['out_of_range'])})"
            )
        if per_id and undeclared - past:
            tv_wrong.append(
                f"{plural(undeclared - past, 'annotation')} of undeclared categories below "
                "num_classes "
                "as the id they name, silently"
            )
    out.append(Reading("torchvision", k_tv, how, tuple(tv_raises), (), fits(k_tv), tuple(tv_wrong)))

    for name in ("detectron2", "mmdet"):
        fw = fws[name]
        if name == "detectron2":
            how = (
                f"contiguous by sorted category id ({cite(fw.sources['ids'])})"
                if fmt == "coco"
                else "the class list's order"
            )
        else:
            how = (
                "by name: metainfo.classes must list these categories' names, numbered in the "
                f"table's order ({cite(fw.sources['ids'])})"
            )
        raises, drops = [], []
        if duplicates and "unique_ids" in fw.sources and name not in unasserted:
            raises.append(
                f"{plural(duplicates, 'annotation')} {_REPEATED}: AssertionError ({cite(fw.sources['unique_ids'])})"
            )
        if undeclared and name == "detectron2":
            raises.append(
                f"{plural(undeclared, 'annotation')} of undeclared categories: KeyError "
                f"({cite(fw.sources['out_of_range'])})"
            )
        elif undeclared:
            drops.append(
                f"{plural(undeclared, 'annotation')} of undeclared categories, silently "
                f"({cite(fw.sources['out_of_range'])})"
            )
        if boxes:
            drops.append(
                f"{plural(boxes, 'box', 'boxes')} without area ({cite(fw.sources['bad_box'])})"
            )
        if empty:
            drops.append(
                f"{plural(empty, 'image')} without boxes by default ({cite(fw.sources['empty_images'])})"
            )
        out.append(Reading(name, n, how, tuple(raises), tuple(drops), fits(n)))

    zeros = facts.counts.get("annotations_of_category_0", 0)
    out.append(_ultralytics(ids, names, fmt, boxes, zeros, fits, used))
    return tuple(out)


def _ultralytics(
    ids: list[int],
    names: Mapping[int, str],
    fmt: str,
    boxes: int,
    zeros: int,
    fits: Any,
    used: set[int] | None,
) -> Reading:
    """ultralytics trains YOLO label files: COCO JSON reaches it through ``convert_coco``, whose
    default ``cls91to80=True`` reads every id as one of COCO's 91 paper ids
    (``coco80[category_id - 1]``, None for the 11 ids COCO left out) and otherwise takes
    ``category_id - 1``; a negative class fails ``verify_image_label`` and the image is dropped."""
    fw = FRAMEWORKS["ultralytics"]
    drops = (
        [f"{plural(boxes, 'box', 'boxes')} without area ({cite(fw.sources['bad_box'])})"]
        if boxes
        else []
    )
    if fmt != "coco":
        how = f"the class list's order, 0..nc-1 ({cite(fw.sources['ids'])})"
        return Reading("ultralytics", len(ids), how, (), tuple(drops), fits(len(ids)))
    raises: list[str] = []
    wrong: list[str] = []
    mapping, official = coco80_mapping(ids)
    if official:
        k = mapping[ids[-1]] + 1
        how = (
            "after convert_coco, whose default cls91to80 numbers COCO's own ids 0..79 "
            f"({ULTRALYTICS_CONVERT})"
        )
    else:
        k = max(ids[-1], 1)
        named = set(ids) if used is None else set(ids) & used  # convert_coco reads annotations
        foreign = sorted(named - set(COCO80_IDS))
        shown = ", ".join(str(i) for i in foreign[:5])
        how = f"after convert_coco with cls91to80=False, class = category_id - 1 ({ULTRALYTICS_CONVERT})"
        if foreign:
            raises.append(
                f"ids {shown} with convert_coco's default cls91to80=True: they are not COCO's "
                "own ids (coco80[category_id - 1] names no class, or is past the table)"
            )
        moved = [i for i in sorted(named) if i in COCO80_IDS and COCO80_IDS.index(i) != i - 1]
        if moved:  # COCO's paper ids skip 12, 26...: the default renumbers the ids past them
            pairs = ", ".join(f"{i} as {COCO80_IDS.index(i)}" for i in moved[:5])
            wrong.append(
                f"ids {pairs} (not id - 1) with convert_coco's default cls91to80=True, which "
                "reads them as COCO's own ids, silently"
            )
        if ids[0] < 1 and zeros:
            drops.append(
                f"the images holding category {ids[0]} ({names[ids[0]]!r}), whose class "
                f"{ids[0] - 1} fails verify_image_label ({_ULTRA_VERIFY})"
            )
    return Reading("ultralytics", k, how, tuple(raises), tuple(drops), fits(k), tuple(wrong))


def named_ids(report: Report, facts: AnnotationFacts) -> set[int] | None:
    """The class ids the annotations name, as written (a row kept or rejected; a category the
    reading renumbered given back its id), from the report's class table; ``None`` where the
    table leaves classes out."""
    if report.classes_omitted:
        return None
    return {
        facts.written.get(int(c["index"]), int(c["index"]))
        for c in report.classes
        if c.get("count") or c.get("rejected")
    }


def _placeholders(cmap: ClassMap) -> ClassMap:
    """The map with a category named as a background (``_background_``, Roboflow's and labelme's
    entry 0) marked a placeholder: no object class, so never a class that "never occurs"."""
    held = frozenset(i for i, n in cmap.entries if n.strip().lower() in BACKGROUND_NAMES)
    return cmap if not held else replace(cmap, placeholders=cmap.placeholders | held)


def refused_report(report: Report, facts: AnnotationFacts) -> Report:
    """The report without the rows written unlabelled on purpose in LG003 (their own finding,
    LG030, names them; the scan counts them rejected)."""
    if not facts.refused:
        return report
    findings = []
    for f in report.findings:
        if f.code == "LG003":
            left = _without_refused(f, facts.refused)
            if left is None:
                continue
            f = left
        findings.append(f)
    return replace(report, findings=tuple(findings))


def neutral_report(
    report: Report, found: tuple[Reading, ...], contract: Contract, facts: AnnotationFacts
) -> Report:
    """The report of a detection input with no framework named: the findings whose cost is the
    framework's at the severity every framework gives them at least (the contract's own stand),
    and the readings."""
    findings = []
    for f in report.findings:
        f = _as_written(f, facts.written)
        lowered = _NEUTRAL_SEVERITY.get(f.code)
        if lowered and f.severity == "error" and f.code not in contract.severity:
            f = replace(f, severity=lowered, message=f"{f.message} (fails under torchvision)")
        if f.code == "LG014":
            failing = [r.framework for r in found if any(_REPEATED in x for x in r.raises)]
            if failing:
                f = replace(f, message=f"{f.message} (fails under {', '.join(failing)})")
        findings.append(f)
    background = _background(found, facts, [f.code for f in findings])
    if background is not None:
        findings.append(background)
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: order.get(f.severity, 3))
    return replace(report, findings=tuple(findings), frameworks=tuple(r.to_dict() for r in found))


def _background(
    found: tuple[Reading, ...], facts: AnnotationFacts, codes: list[str]
) -> Finding | None:
    """LG032 as a warning where torchvision's reading trains objects of class 0 as its
    background: what fails under one framework is said, as ``--framework torchvision`` says it
    as an error, and the verdict is left to what fails under all."""
    zeros = facts.counts.get("annotations_of_category_0", 0)
    tv = [r for r in found if r.framework == "torchvision"]
    if not zeros or "LG032" in codes or not tv or not any(_AS_BACKGROUND in w for w in tv[0].wrong):
        return None
    return Finding(
        "LG032",
        "warning",
        zeros,
        "objects labelled 0, the background index of torchvision's detection models (fails "
        "under torchvision: trained as the background, silently)",
        fix=(
            "with torchvision, map the object classes to 1..K where the targets are built "
            "(FasterRCNN(num_classes=K+1), 0 the background); --framework torchvision names "
            "each object"
        ),
    )


def _as_written(f: Finding, written: Mapping[int, int]) -> Finding:
    """A scan finding's examples with the category id the user wrote, where the reading
    renumbered the ids (the reader's own findings name the ids as written already)."""
    if not written or f.code not in _SCAN_VALUES or not f.examples:
        return f
    examples = tuple(
        replace(e, value=written.get(e.value, e.value)) if isinstance(e.value, int) else e
        for e in f.examples
    )
    ids = sorted({e.value for e in examples if isinstance(e.value, int)})
    said = f" (category ids as written: {', '.join(str(i) for i in ids[:10])})" if ids else ""
    return replace(f, examples=examples, message=f.message + said)


_REPEATED = "repeating an id"
_AS_BACKGROUND = "as the background"  # torchvision's reading of objects of class 0

# Checks of the scan whose examples carry a label value (the rewritten index, not the id).
_SCAN_VALUES = frozenset({"LG004", "LG005", "LG010", "LG014"})


def _without_refused(f: Finding, refused: Mapping[int, str]) -> Finding | None:
    """LG003 without the rows a reader or a framework wrote without a label on purpose."""
    left = f.count - len(refused)
    if left <= 0:
        return None
    examples = tuple(e for e in f.examples if e.row not in refused)
    return replace(f, count=left, examples=examples)
