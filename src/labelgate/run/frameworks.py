"""A framework's conventions applied to a run (``contract.frameworks`` holds them, cited): the
background it implies, the category ids mapped to the indices it trains (detectron2: contiguous by
sorted id; mmdet: by name against ``metainfo.classes``), and each finding worded with what the
framework does with such a target (raises, drops the box, drops the image).

Applied after the reader, never inside it: the rows it wrote are rewritten with the framework's
indices, and the findings' severity and words follow the framework.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.contract import Contract
from labelgate.contract.bounds import LIMITS
from labelgate.contract.classmap import ClassMap
from labelgate.contract.frameworks import (
    ULTRALYTICS_CONVERT,
    Framework,
    cite,
    coco80_mapping,
    framework_of,
)
from labelgate.core.findings import plural
from labelgate.core.report import Finding, Report
from labelgate.errors import InputError
from labelgate.readers.common.arrowcols import bools, ints
from labelgate.run.fwapplies import minival, repeated_ids, unique_ids
from labelgate.run.rowfiles import read_rows, rewrite_labelled, with_label

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.opened import Opened

__all__ = [
    "BACKGROUND_NAMES",
    "framework_background",
    "framework_report",
    "framework_rows",
    "rewrite",
]


def framework_background(contract: Contract, background: int | None) -> tuple[int | None, str]:
    """The background index: the one given, else the framework's (torchvision: 0), with where it
    came from (empty when given or none)."""
    fw = framework_of(contract.framework)
    if background is not None or fw is None or fw.background is None:
        return background, ""
    return fw.background, f"{fw.name}'s convention ({fw.sources['background'].split(' (')[0]})"


def framework_rows(opened: Opened, contract: Contract) -> Opened:
    """The opened input with its rows' labels as the framework's indices (detectron2:
    contiguous by sorted category id; mmdet: by name against the class names given, the other
    categories' annotations dropped and counted, LG030) and the format's class map with them;
    masks under mmseg's ``reduce_zero_label`` (0 -> 255, every other label minus 1)."""
    fw = framework_of(contract.framework)
    facts, own = opened.facts, opened.read.class_map
    if fw is None or facts is None:
        return opened
    if fw.name == "mmseg" and contract.reduce_zero_label:
        from labelgate.run.reducezero import reduce_zero_label

        reduce_zero_label(opened.paths, facts)
        return opened
    if fw.name == "ultralytics" and opened.format == "yolo" and Path(opened.inputs[0]).is_dir():
        from labelgate.run.ultralytics import flag_dropped
        from labelgate.run.unusable import reject_files

        files = flag_dropped(facts, Path(opened.inputs[0]))  # for boxes past [0, 1]: LG028
        reject_files(opened.paths, facts, files, "LG028")
    if fw.task != "detection" or facts.task != "detection" or own is None:
        return opened
    if fw.ids == "contiguous":
        ids = sorted({i for i, _ in own.entries})
        mapping = {cid: i for i, cid in enumerate(ids)}
        names = own.name_of()
        cmap = ClassMap(
            tuple((i, names[cid]) for cid, i in mapping.items()),
            origin=own.origin,
            placeholders=own.placeholders_at(mapping),
        )
        why = (
            f"the categories made contiguous by sorted id, as detectron2 does "
            f"({fw.sources['ids'].split(' (')[0]})"
        )
    elif fw.ids == "by-name":
        classes = contract.class_map
        table = [(cid, name) for cid, name in own.entries]
        wanted = set() if classes is None else {n for _, n in classes.entries}
        # mmdet: cat_ids = get_cat_ids(cat_names=classes), in the categories' own order;
        # cat2label = {cat_id: i for i, cat_id in enumerate(cat_ids)} (coco.py:70-72)
        kept = [(cid, n) for cid, n in table if classes is None or n in wanted]
        mapping = {cid: i for i, (cid, _) in enumerate(kept)}
        cmap = ClassMap(
            tuple((i, n) for i, (_, n) in enumerate(kept)),
            origin=own.origin,
            placeholders=own.placeholders_at(mapping),
        )
        why = (
            "the categories named in metainfo.classes, in the categories' order, as mmdet "
            f"does ({cite(fw.sources['ids'])})"
        )
        _unnamed(facts, classes, table, kept)
    elif fw.name == "ultralytics" and opened.format == "coco":
        # ultralytics trains YOLO files: a COCO file reaches it through convert_coco
        mapping, official = coco80_mapping(sorted({i for i, _ in own.entries}))
        names = own.name_of()
        # id 0 becomes class -1, no class: its annotations, if any, are LG005's
        ultra = tuple((i, names[cid]) for cid, i in mapping.items() if i >= 0)
        cmap = ClassMap(ultra or ((0, "N/A"),), origin=own.origin, placeholders=frozenset({0}))
        if ultra:
            cmap = ClassMap(ultra, origin=own.origin, placeholders=own.placeholders_at(mapping))
        if official:
            cmap = _filled(cmap)
        why = (
            "the category ids as convert_coco numbers them "
            + ("through COCO's 80 (cls91to80=True, " if official else "(cls91to80=False: id - 1, ")
            + f"{ULTRALYTICS_CONVERT})"
        )
    elif fw.background == 0 and opened.format == "coco":
        return _coco_as_is(opened, own, fw)
    elif fw.background == 0 and _unreserved(own):
        facts.hits.pop("LG032", None)  # judged on the file's 0-based indices, shifted here
        _shift(opened.paths, facts)
        mapping = {}
        entries = ((0, "__background__"), *((i + 1, n) for i, n in own.entries))
        cmap = ClassMap(entries, origin=own.origin)
        why = (
            f"the {opened.format} classes as 1..K, 0 the background, as {fw.name}'s detection "
            f"models take them ({cite(fw.sources['background'])}; '__background__' at 0 as "
            f"in {_TV_COCO})"
        )
    else:
        return opened
    refused: dict[int, int] = {}
    if mapping:
        # a COCO category the table does not declare keeps no index (LG030 names it):
        # detectron2 raises on it, mmdet skips it; another format's class past its list is
        # LG004's, judged as written
        listed = {cid for cid, _ in own.entries}
        if opened.format == "coco":
            refused = rewrite(opened.paths, mapping, unknown="null")
        elif fw.ids == "by-name":  # the listed classes mmdet does not name are skipped
            refused = rewrite(opened.paths, mapping, unknown="null", only=listed)
        else:
            refused = rewrite(opened.paths, mapping, unknown="keep")
    # the others are the reader's LG030 already
    skipped = {row: c for row, c in refused.items() if c in listed}
    facts.refuse(refused, "LG030")
    if skipped:
        lost = Counter(skipped.values())
        dropped = sorted(lost)
        h = facts.hit(
            "LG030",
            message=f"annotations of categories absent from metainfo.classes "
            f"({', '.join(str(c) for c in dropped[:10])}): mmdet skips them without a "
            "word (mmdet/datasets/coco.py:155-156, mmdet#9611)",
            fix="add their names to metainfo.classes (--class-names), spelt as the categories "
            "spell them, or remove the annotations on purpose",
            count=len(skipped),
        )
        h.examples.extend(_examples(opened.paths, skipped, facts.limit, len(h.examples)))
    return replace(opened, read=replace(opened.read, class_map=cmap, class_map_why=why))


_TV_COCO = "torchvision/models/_meta.py:1011-1024@torchvision 0.23.0"


BACKGROUND_NAMES = {"background", "_background_", "__background__"}


def _filled(cmap: ClassMap) -> ClassMap:
    """The map with the indices between its entries named 'N/A', as placeholders."""
    names = cmap.name_of()
    gaps = [i for i in range(max(names) + 1) if i not in names]
    entries = tuple(sorted((*cmap.entries, *((i, "N/A") for i in gaps))))
    return ClassMap(entries, origin=cmap.origin, placeholders=cmap.placeholders | frozenset(gaps))


def _unreserved(cmap: ClassMap) -> bool:
    """Whether a 0-based class map holds an object class at 0 (not a background entry such as
    labelme's '_background_' or datumaro's 'background')."""
    names = cmap.name_of()
    return 0 in names and names[0].strip().lower() not in BACKGROUND_NAMES


def _coco_as_is(opened: Opened, own: ClassMap, fw: Framework) -> Opened:
    """COCO under torchvision: category ids are the labels as they are, so K is the largest
    id + 1 and the ids between carry no class; torchvision's own COCO categories name them
    'N/A' (``_COCO_CATEGORIES``: 91 entries for 80 classes)."""
    names = own.name_of()
    top = max(names)
    most = LIMITS["num_classes"][1]
    if top + 1 > most:  # checked before the gaps are listed: they would be top - len(names)
        raise InputError(
            f"the category id {top} makes K = {top + 1:,} as {fw.name} reads COCO (the largest "
            f"id + 1), past the {most:,} classes a model may have: category ids this large are "
            "not class indices; renumber the categories, or validate without --framework",
            path=own.origin,
        )
    gaps = [i for i in range(1, top) if i not in names]
    if not gaps:
        return opened
    entries = tuple(sorted(own.entries) + [(i, "N/A") for i in gaps])
    held = own.placeholders | frozenset(gaps)
    cmap = ClassMap(tuple(sorted(entries)), origin=own.origin, placeholders=held)
    why = (
        f"the category ids as they are, as {fw.name} takes them, the ids between ({len(gaps)}) "
        f"named 'N/A' as in {_TV_COCO}"
    )
    return replace(opened, read=replace(opened.read, class_map=cmap, class_map_why=why))


def _unnamed(
    facts: AnnotationFacts,
    classes: ClassMap | None,
    table: list[tuple[int, str]],
    kept: list[tuple[int, str]],
) -> None:
    """Names of metainfo.classes that no category carries (LG030, with their positions), and
    classes listed in another order than the categories (mmdet numbers them in the categories'
    order, so each index would be shown under another name)."""
    if classes is None:
        return
    have = {n for _, n in table}
    absent = [(i, n) for i, n in classes.entries if n not in have]
    if absent:
        shown = ", ".join(f"{n!r} at {i}" for i, n in absent[:10])
        facts.hit(
            "LG030",
            message=f"names of metainfo.classes that no category carries ({shown}): mmdet "
            "trains no box under them",
            fix="spell them as the categories table does (mmdet matches names exactly)",
            unit="classes",
            count=len(absent),
        )
    order = [n for _, n in sorted(classes.entries) if n in have]
    if order != [n for _, n in kept]:
        facts.hit(
            "LG030",
            message="metainfo.classes lists the categories in another order than the "
            "categories table: mmdet numbers them in the table's order (coco.py:70-72), so "
            "its class names would name other classes",
            fix="list metainfo.classes in the categories table's order",
            unit="classes",
            count=len(order),
        )


def rewrite(
    paths: Sequence[str],
    mapping: dict[int, int],
    *,
    unknown: str,
    only: set[int] | None = None,
) -> dict[int, int]:
    """Rewrite each rows file's label column through ``mapping``. A label it lacks is kept as
    it is (``unknown="keep"``) or written as null (``"null"``: the annotation no framework
    trains on, counted rejected; a null label stays LG003's), with ``only`` those of its labels.
    Returns the rows written null, by their position in reading order, with the label as
    written."""
    import pyarrow.compute as pc

    keys, values = ints(list(mapping)), ints(list(mapping.values()))
    false = bools(np.zeros(1, bool))[0]
    refused: dict[int, int] = {}

    def change(table: Any, first: int) -> Any:
        label = table.column("label")
        where = pc.index_in(label, value_set=keys)
        known = pc.is_valid(where)
        mapped = pc.take(values, where)
        if unknown == "null":
            lost = pc.and_(pc.invert(known), pc.is_valid(label))
            if only is not None:
                lost = pc.and_(
                    lost, pc.is_in(label, value_set=ints(np.array(sorted(only), np.int64)))
                )
            for at in pc.indices_nonzero(pc.fill_null(lost, false)).to_pylist():
                refused[first + at] = label[at].as_py()
            label = pc.if_else(pc.or_(known, lost), mapped, label)
        else:
            label = pc.if_else(known, mapped, label)
        return with_label(table, label)

    rewrite_labelled(paths, change)
    return refused


def _examples(
    paths: Sequence[str], rows: dict[int, int], limit: int | None, have: int
) -> list[Any]:
    """The first rows of ``rows`` (positions in reading order, each with its label as written)
    as examples, by id and source, their value that label."""
    import pyarrow.parquet as pq

    from labelgate.core.report import Example

    room = len(rows) if limit is None else max(0, limit - have)
    wanted, out, start = sorted(rows)[:room], [], 0
    for path in paths:
        if not wanted:
            break
        n = pq.read_metadata(path).num_rows
        mine = [r for r in wanted if start <= r < start + n]
        if mine:
            table = read_rows(path, ["id", "source"])
            for r in mine:
                ident = table.column("id")[r - start].as_py()
                source = table.column("source")[r - start].as_py()
                out.append(Example(row=r, id=ident, source=source, value=rows[r]))
        start += n
    return out


def _shift(paths: Sequence[str], facts: AnnotationFacts) -> None:
    """Every label plus one (the 0-based classes as torchvision's 1..K); an object whose label
    becomes 0, the background (a -1 in the file), is LG032, by its id."""
    import pyarrow.compute as pc

    from labelgate.core.report import Example
    from labelgate.readers.common.boxes import check_background

    def change(table: Any, first: int) -> Any:
        label = pc.add(table.column("label"), 1)
        for at in pc.indices_nonzero(pc.fill_null(pc.equal(label, 0), False)).to_pylist():
            ident, source = table.column("id")[at].as_py(), table.column("source")[at].as_py()
            example = Example(row=first + at, id=ident, source=source, value=0)
            check_background(facts, 0, 0, example)
        return with_label(table, label)

    rewrite_labelled(paths, change)


_CONSEQUENCE = {
    "raise": "{fw} raises on the first batch holding one ({where})",
    "drop": "training would lose {n}: {fw} drops boxes without area ({where})",
    "drop-image": "{fw} drops each image holding one as corrupt ({where})",
}


def framework_report(report: Report, framework: str, facts: AnnotationFacts | None) -> Report:
    """The report with its findings worded as the framework's consequences, and a note of what
    it does with the images without boxes."""
    fw = framework_of(framework)
    assert fw is not None
    notes = report.notes
    note = None if facts is None else empty_images_note(facts, fw)
    if note is not None:
        notes = (*notes, note)
    findings = tuple(_worded(f, fw) for f in report.findings)
    asserted = "unique_ids" in fw.sources and not (fw.name == "detectron2" and minival(report))
    if facts is not None and asserted and repeated_ids(report, facts):
        findings = tuple(unique_ids(f, fw) for f in findings)
    return replace(report, findings=findings, notes=notes)


def _worded(f: Finding, fw: Framework) -> Finding:
    src = fw.sources
    if f.code == "LG027" and fw.task == "detection":
        said = _CONSEQUENCE[fw.bad_box].format(
            fw=fw.name, n=plural(f.count, "box", "boxes"), where=cite(src["bad_box"])
        )
        if fw.bad_box == "drop":
            return replace(
                f,
                message=f"{said}; {f.message}",
                fix="redraw them if they are objects to learn; left as they are, they are "
                "never trained on",
            )
        return replace(f, message=f"{f.message}: {said}")
    if f.code == "LG030" and fw.out_of_range == "dropped" and "mmdet skips" not in f.message:
        return replace(f, message=f"{f.message}; {_out_of_range(fw)}")
    if f.code == "LG030" and fw.out_of_range == "raise":
        return replace(f, message=f"{f.message}; {_out_of_range(fw)}")
    if f.code == "LG004" and fw.name == "mmseg":
        return replace(
            f,
            message=f"{f.message}; mmseg's decode head takes them as cross-entropy targets: a "
            "device-side assert on CUDA (mmsegmentation#1180, after reduce_zero_label)",
        )
    if f.code == "LG004" and fw.task == "detection":
        return replace(f, message=f"{f.message}; {_out_of_range(fw)}")
    if f.code == "LG050" and "keypoint_box" in src:
        said = (
            f"{fw.name}'s keypoint head leaves them out of the loss ({cite(src['keypoint_box'])})"
        )
        return replace(f, message=f"{f.message}; {said}")
    return f


def _out_of_range(fw: Framework) -> str:
    where = cite(fw.sources["out_of_range"])
    if fw.out_of_range == "device-assert":
        return (
            f"{fw.name} takes these labels as F.cross_entropy targets: IndexError on the CPU, "
            f"a device-side assert on CUDA ({where})"
        )
    if fw.out_of_range == "drop-image":
        return f"{fw.name} drops each image holding one as corrupt ({where})"
    if fw.out_of_range == "raise":
        return f"{fw.name} raises while loading them ({where})"
    return f"{fw.name} drops these annotations silently ({where})"


def empty_images_note(facts: AnnotationFacts, fw: Framework) -> str | None:
    """What the framework does with the images without boxes the reader counted."""
    if fw.task != "detection":
        return None
    counts = facts.counts
    n = counts.get("images_without_boxes", counts.get("images_without_objects"))
    if not n:
        return None
    where = cite(fw.sources["empty_images"])
    if fw.empty_images == "kept":
        return f"{plural(n, 'image')} without boxes: {fw.name} keeps them as negatives ({where})"
    return (
        f"{plural(n, 'image')} without boxes: {fw.name} drops them by default ({where}); a model "
        "that "
        "should learn negatives needs them kept (detectron2: "
        "DATALOADER.FILTER_EMPTY_ANNOTATIONS=False; mmdet: filter_cfg.filter_empty_gt=False)"
    )
