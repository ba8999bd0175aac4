"""A run's input read through its reader: the rows in a folder the validation owns, the format's
task and class map found (with their origin), and the report naming the user's input."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.contract import BOX_TASKS, Contract
from labelgate.core.findings import plural
from labelgate.errors import InputError, UsageError
from labelgate.inputs.resolved import Resolution
from labelgate.io import InputFile

if TYPE_CHECKING:
    from labelgate.contract.classmap import ClassMap
    from labelgate.core.report import Example, Finding, Report
    from labelgate.readers.base import ShardCache
    from labelgate.readers.opened import Opened
    from labelgate.readers.unpacked import Unpacked

__all__ = [
    "DETECTION_BATCHES",
    "as_given",
    "as_unpacked",
    "counting_background",
    "image_batches",
    "image_rows",
    "read_input",
    "unpacked_inputs",
    "with_format",
]

DETECTION_BATCHES = (
    "batches here are batches of annotations, not the batches a detection DataLoader forms (an "
    "image with all its boxes each): no finding about the last batch or BatchNorm (LG013)"
)


def image_batches(opened: Opened, *, framework: bool = False) -> str:
    """What the batches of a detection input are, in words; the images without a box counted
    (with a framework named, its own note says what it does with them)."""
    assert opened.facts is not None
    rows = None if opened.images is None else opened.images[1]
    if rows is None:
        return DETECTION_BATCHES
    opened.facts.counts["images_without_boxes"] = rows.without_boxes
    note = (
        f"batches here are batches of images ({plural(rows.images, 'image')}, each with all its boxes, "
        "as a detection DataLoader with a collate_fn yields them), in the dataset's image order"
    )
    if rows.without_boxes and not framework:
        note += (
            f"; {rows.without_boxes} of them {'holds' if rows.without_boxes == 1 else 'hold'} "
            "no box: legal negatives for torchvision, which "
            "trains on them; detectron2 (DATALOADER.FILTER_EMPTY_ANNOTATIONS, True by default) "
            "and mmdet's COCO configs (filter_empty_gt=True) drop them before batching"
        )
    return note


def counting_background(cmap: ClassMap, background: int | None, origin: str) -> tuple[int, str]:
    """K from a class map, counting the background index where the map does not name it:
    torchvision's detection models take ``num_classes`` including the background
    (``faster_rcnn.py``: "number of output classes of the model (including the background)"),
    so categories 1..N with background 0 are N + 1 classes."""
    k = len(cmap.entries)
    if background is None or background in cmap.name_of() or not 0 <= background <= k:
        return k, origin
    return k + 1, f"{origin} and the background index {background}"


def unpacked_inputs(paths: Sequence[str | InputFile], stack: ExitStack) -> Unpacked:
    """The inputs with standard input, compressed files and zips unpacked into a folder the
    validation owns (removed when it is closed: fix reads the rows again through it)."""
    from labelgate.readers.unpacked import unpack

    def folder() -> Path:
        made = tempfile.TemporaryDirectory(prefix="labelgate-unpacked-")
        return Path(stack.enter_context(made))

    return unpack(paths, folder)


def as_unpacked(report: Report, unpacked: Unpacked) -> Report:
    """The report naming each unpacked input as the user gave it, with what was unpacked."""
    if not unpacked.given:
        return report
    shown = unpacked.shown

    def example(e: Example) -> Example:
        return e if e.file is None else replace(e, file=shown(e.file))

    findings = tuple(
        replace(f, message=shown(f.message), examples=tuple(example(e) for e in f.examples))
        for f in report.findings
    )
    files = [f | {"path": shown(str(f.get("path", "")))} for f in report.input.get("files", [])]
    return replace(
        report,
        findings=findings,
        input=report.input | {"files": files},
        notes=(*unpacked.notes, *(shown(n) for n in report.notes)),
    )


def image_rows(opened: Opened | None) -> tuple[Any, int] | None:
    """The image of each row and the image count, for batches of images (detection)."""
    if opened is None or opened.images is None or opened.images[1] is None:
        return None
    return opened.images[1].pair


def read_input(
    paths: Sequence[str | InputFile],
    input_format: str,
    contract: Contract,
    background: int | None,
    limit: int | None,
    source_field: str | None,
    client: Any,
    stack: ExitStack,
    progress: Any = None,
    *,
    cache: ShardCache | None = None,
) -> Opened | None:
    """The input read through its reader, or ``None`` for a label table, which the scan reads as
    it is. The rows a reader writes live in a folder the validation owns and removes when it is
    closed: fix, diff and repro read them again through it; ``cache``: the ``--cache`` folder,
    where a reader keeps its files' rows (shards)."""
    from labelgate.readers.base import ReadOptions
    from labelgate.readers.opened import open_input

    listed = [p for p in paths if isinstance(p, str)]
    if len(listed) != len(paths):  # data in memory: a table
        if input_format not in ("auto", "table"):
            raise UsageError(f"data in memory is a table, not {input_format}")
        return None
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="labelgate-input-")))
    options = ReadOptions(
        background=background,
        source_field=source_field,
        class_map=contract.class_map,
        num_classes=contract.num_classes,
        task=contract.task,
        colour_map=contract.color_map,
        limit=limit,
        cluster=None if client is None else _cluster(client),
        label_column=contract.label_column,
        progress=getattr(progress, "reading", None),  # the command line's bar: bytes parsed
        cache=cache,
    )
    opened = open_input(listed, input_format, folder, options)
    if opened.facts is not None and opened.images is not None:
        from labelgate.readers.images.imagecheck import check_images

        fmt = opened.format
        if fmt != "masks" or contract.images is not None:  # masks: only with --images
            check_images(
                opened.images[0],
                fmt,
                contract.images,
                opened.facts,
                progress=progress,
                cluster=options.cluster,
            )
    elif contract.images is not None:
        raise UsageError(
            f"--images checks the images of a detection input (COCO, YOLO, VOC...); this "
            f"{opened.format} input names none"
        )
    return None if opened.facts is None else opened


def _columns_of_rows(opened: Opened, contract: Contract) -> None:
    """A column named for a format's rows is one of them (its annotations' id, label, source):
    else the table's message would name the temporary file the reader wrote."""
    import pyarrow.parquet as pq

    named = {
        "--label-column": contract.label_column,
        "--id-column": contract.id_column,
        "--source-column": contract.source_column,
        "--name-column": contract.name_column,
    }
    given = [(flag, c) for flag, c in named.items() if c is not None]
    given += [("--label-columns", c) for c in contract.label_columns or ()]
    if not given or not opened.paths:
        return
    names = pq.read_schema(opened.paths[0]).names
    for flag, column in given:
        if column not in names:
            raise UsageError(
                f"{flag} {column!r} is none of the columns of the rows this {opened.format} "
                f"input is read into ({', '.join(names)}): name one of them, or drop {flag}"
            )


def with_format(resolution: Resolution, opened: Opened) -> None:
    """The format's task and class map (and K from it, when not given) found; a class map given
    as well is compared with the format's own (LG030 where they differ)."""
    assert opened.facts is not None
    contract = resolution.asked
    _columns_of_rows(opened, contract)
    if opened.facts.task == "segmentation":
        if contract.task not in (None, "segmentation"):
            raise UsageError(f"masks are read for the segmentation task, not {contract.task!r}")
        resolution.found("task", "segmentation", f"the {opened.format} reader")
    if contract.task in BOX_TASKS and opened.facts.task != "detection":
        raise UsageError(
            f"--task {contract.task} reads boxes (COCO, YOLO, VOC, CVAT, Label Studio, LabelMe); "
            f"this {opened.format} input holds {opened.facts.task} labels"
        )
    if opened.facts.task == "detection":
        opened.facts.notes.append(image_batches(opened, framework=contract.framework is not None))
    own, given = opened.read.class_map, contract.class_map
    if own is not None:
        resolution.found("class_map", own, opened.read.class_map_why or own.origin)
    chosen = given if given is not None else own
    if chosen is not None:
        origin = "the class map given" if given is not None else opened.read.class_map_why
        k, origin = counting_background(chosen, opened.facts.background, origin or chosen.origin)
        resolution.found("num_classes", k, origin)
    if resolution.value("num_classes") is None:
        facts = opened.facts
        if facts.empty:  # nothing read: say what the input holds instead
            raise InputError(
                f"{facts.empty}: nothing to train on, and no class map to read K from "
                "(--classes K reports it as LG008)",
                path=opened.inputs[0],
            )
        raise UsageError(
            f"--classes K is required: K cannot be read from this {facts.format} input, which "
            f"has no class map ({facts.why})"
        )
    if own is None or given is None:
        return
    a, b = given.name_of(), own.name_of()
    differ = sorted(i for i in set(a) | set(b) if a.get(i) != b.get(i))
    if differ:

        def named(m: Mapping[int, str], i: int) -> str:
            return repr(m[i]) if i in m else "no class"

        shown = "; ".join(f"{i}: {named(a, i)} vs {named(b, i)}" for i in differ[:5])
        opened.facts.hit(
            "LG030",
            message=f"the class map given ({given.origin}) and the format's own "
            f"({own.origin}) differ at {len(differ)} indices ({shown})",
            fix="make one the source of truth: a model trained with one map and evaluated "
            "with the other names every differing class wrongly",
            unit="classes",
            count=len(differ),
        )


def as_given(report: Report, opened: Opened) -> Report:
    """The report naming the user's input and its format, not the converted rows."""
    facts = opened.facts
    assert facts is not None
    files = report.input.get("files", [])
    if opened.converted:  # rows written by the reader: name the source
        from labelgate.io.uri import display_uri  # a URI's query may hold keys

        files = [{"path": display_uri(p), "format": facts.format} for p in opened.inputs]
    note = f"read as {facts.format} ({facts.why})"
    findings = report.findings
    if opened.converted:  # the files the reader wrote are the run's, never named
        findings = tuple(
            replace(
                f,
                message=_user_text(f.message, opened),
                examples=tuple(_user_file(e, opened) for e in f.examples),
            )
            for f in findings
        )
    findings = _placed(findings, opened, report.contract.get("images"))
    annotations = facts.to_dict()
    if facts.task == "detection":
        from labelgate.run.boxcounts import boxes_per_image

        counted = boxes_per_image(opened)
        if counted is not None:
            annotations["boxes_per_image"] = counted
        if opened.sizes is not None:
            from labelgate.readers.common.boxsizes import summary

            measured = summary(opened.sizes)
            if measured is not None:
                annotations["box_sizes"] = measured
    kept = report.notes
    if opened.converted:  # the rows' columns are the reader's own: no note of how they were found
        kept = tuple(n for n in kept if not n.startswith(_ROW_COLUMNS))
    return replace(
        report,
        findings=findings,
        input=report.input | {"files": files, "annotations": annotations},
        notes=(note, *facts.notes, *kept),
    )


_ROW_COLUMNS = tuple(f"{role} column '" for role in ("label", "id", "source", "name"))


def _placed(
    findings: tuple[Finding, ...], opened: Opened, given: str | None
) -> tuple[Finding, ...]:
    """The findings whose examples carry a drawing, each placed on its image (the HTML report's
    pictures: ``readers/images/drawings.py``)."""
    from labelgate.readers.images.drawings import Placer

    placer = Placer(opened.format, opened.images, given, opened.inputs)
    return tuple(replace(f, examples=tuple(placer.place(e) for e in f.examples)) for f in findings)


def _user_text(text: str, opened: Opened) -> str:
    """A message naming a file the reader wrote ("all in file ..."), naming the user's file."""
    for written, origin in opened.origins.items():
        text = text.replace(written, origin)
    return text


def _user_file(e: Example, opened: Opened) -> Example:
    """An example named by a file the reader wrote, named by the user's file it was read from
    (the row within it is then the record's position in that file), or by none."""
    if e.file is None or e.file not in opened.paths:
        return e
    origin = opened.origins.get(e.file)
    return replace(e, file=origin, file_row=None if origin is None else e.file_row)


def _cluster(client: Any) -> Any:
    """The map over a Dask client's workers (its module imported only for a cluster)."""
    from labelgate.run.distributed import cluster_map

    return partial(cluster_map, client)
