"""The COCO reader: the files an input names (COCO files, or dataset roots holding them), each its
own source named so that they are told apart, read one after another and their category tables
compared.

COCO's ids are unique per file: pycocotools builds one ``COCO`` object per annotation file and
indexes that file's annotations by id (``anns[ann['id']] = ann``: a repeat within the file
overwrites the annotation before it; files never meet), ``pycocotools/coco.py:78-86,96``
@pycocotools 2.0.11; Roboflow restarts the ids in each split's ``_annotations.coco.json``. The
read says so (``Read.ids_per_file``), and the duplicate-id check runs file by file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from labelgate.contract.classmap import ClassMap
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.codes import Code
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.errors import InputError, UsageError
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.coco.coco import read_coco
from labelgate.readers.common.boxes import check_tables
from labelgate.readers.common.layout import looks_like_coco
from labelgate.readers.common.roots import Mixed, Root, dataset_root, source_names
from labelgate.readers.common.sink import RowSink

__all__ = ["CocoReader", "coco_inputs"]


def _root(path: Path) -> Root:
    """The COCO dataset root ``path`` is.

    Raises:
        InputError: it holds datasets of several formats, or no COCO file where a root keeps one.
    """
    root = dataset_root(path)
    if isinstance(root, Mixed):
        raise InputError(f"{root}: validate each with its own path", path=str(path))
    if root is None or root.format != "coco":
        raise InputError(
            "no COCO annotation file in this folder, its annotations/ or its split folders "
            + (f"(it holds {root.format.upper()} splits)" if root is not None else ""),
            path=str(path),
        )
    return root


def coco_inputs(paths: list[Path]) -> tuple[list[tuple[Path, str]], list[str]]:
    """Each COCO file of ``paths`` (a folder: its root's splits) with its source name, and the
    notes to report (the splits read, the files left out).

    Raises:
        InputError: a folder is no COCO root.
    """
    files = [p for p in paths if not p.is_dir()]
    named = dict(zip(files, source_names(files), strict=True))
    out: list[tuple[Path, str]] = []
    notes: list[str] = []
    for p in paths:
        if not p.is_dir():
            out.append((p, named[p]))
            continue
        root = _root(p)
        prefix = f"{p.name}/" if len(paths) > 1 else ""
        out.extend((s.path, prefix + s.name) for s in root.splits)
        each = "; ".join(
            f"{prefix}{s.name}: {s.path.relative_to(p).as_posix()}"
            + ("" if s.images is None else f", images {s.images.relative_to(p).as_posix()}/")
            for s in root.splits
        )
        notes.append(f"{p} read as {plural(len(root.splits), 'split')}, each a source ({each})")
        if root.left_out:
            notes.append(f"COCO files of {p} not read: {', '.join(root.left_out)}")
    return out, notes


def _in_order(facts: AnnotationFacts, kept: dict[Code, list[Example]], base: int) -> None:
    """The examples a file's read added, placed after the rows of the files before it (a read
    numbers its rows from 0), after the examples those files gave (which it may have replaced)."""
    for code, h in facts.hits.items():
        before = kept.get(code, [])
        known = {id(e) for e in before}
        new = [e if e.row < 0 else replace(e, row=e.row + base) for e in h.examples]
        new = [e for e, was in zip(new, h.examples, strict=True) if id(was) not in known]
        h.examples = (before + new)[: facts.limit]


def _grouping_note(facts: AnnotationFacts, found: ClassMap) -> None:
    """Say once which categories only group the others (no class of their own to learn)."""
    if not found.placeholders:
        return
    names = found.name_of()
    held = sorted(found.placeholders)
    shown = ", ".join(f"{i} ({names[i]!r})" for i in held[:10])
    it, group = ("them", "categories {} group") if len(held) > 1 else ("it", "category {} groups")
    facts.notes.append(
        f"{group.format(shown)} the others (their supercategory, as the first category of a "
        f"Roboflow export does) and no annotation uses {it}: no class that never occurs (LG012); "
        f"K counts {it}, the table trained as it is, but rf-detr drops {it}: its head has "
        f"{plural(len(held), 'class', 'classes')} fewer (filter_parent_categories, "
        "rfdetr/datasets/coco.py:155-167, rf-detr#1303)"
    )


class CocoReader(Reader):
    """COCO JSON files (instances, keypoints, panoptic), or dataset roots holding them; each file
    its own source."""

    name = "coco"
    title = "COCO JSON (instances, keypoints, panoptic), or a dataset root of them"
    suffixes = (".json",)
    capabilities = frozenset({"many", "dask"})
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_dir():
            root = dataset_root(path)
            if isinstance(root, Root) and root.format == "coco":
                # A root's signature (its annotation files where the layout keeps them) is less
                # sure than a file's own keys (0.95), surer than VOC's folders (0.8).
                return Claim(0.9, root.why)
            return None
        if path.suffix.lower() != ".json" or not path.is_file():
            return None
        try:
            if looks_like_coco(path):
                return Claim(0.95, "a JSON file with COCO's images/annotations/categories keys")
        except OSError:
            return None
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        files, notes = coco_inputs(paths)
        facts.notes.extend(notes)
        found: ClassMap | None = None
        tables: dict[str, Mapping[int, str]] = {}
        totals: Counter[str] = Counter()
        held: frozenset[int] | None = None  # grouping categories of every file read
        for path, source in files:
            written = len(sink.paths)
            kept = {code: list(h.examples) for code, h in facts.hits.items()}
            own = read_coco(
                path,
                sink,
                facts,
                options.background,
                options.source_field,
                options.task,
                cluster=options.cluster,
                source_name=source,
                progress=options.progress,
            )
            sink.origins.update(dict.fromkeys(sink.paths[written:], str(path)))
            _in_order(facts, kept, totals["annotations"])
            table = totals["categories"] or facts.counts.get("categories", 0)  # the first's
            if own is not None or facts.counts.get("annotations"):  # a table, or ids used
                mine = frozenset() if own is None else own.placeholders
                held = mine if held is None else held & mine
            totals.update(facts.counts)  # a file's read sets its own counts: summed here
            totals["categories"] = table
            facts.counts.clear()
            found = found or own
            if own is not None:
                tables[source] = own.name_of()  # by index: its gaps are not spelled out
        facts.counts.update(totals)
        if (
            options.source_field is not None
            and totals["images"]
            and not totals.get("images_with_source_field")
        ):
            raise UsageError(
                f"--source-field {options.source_field!r}: no image of the COCO file has that "
                "field, so every annotation would be of one unnamed source"
            )
        check_tables(facts, tables)
        if found is not None:
            found = replace(found, placeholders=held or frozenset())
            _grouping_note(facts, found)
        why = "the COCO categories (index = category id)"
        first = files[0][1] if files else ""
        return Read(found, why + (f" of {first}" if len(files) > 1 else ""), ids_per_file=True)
