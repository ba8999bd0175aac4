"""Label Studio exports: the JSON export (a list of tasks) and the JSON-MIN export.

A task's ``annotations`` (older exports: ``completions``) are read, one row per label of each
result: ``rectanglelabels``, ``polygonlabels``, ``keypointlabels``, ``ellipselabels`` and
``brushlabels`` (regions, in percent of ``original_width`` / ``original_height``), ``choices``
(classification) and ``labels`` (NER spans, ``start`` / ``end`` offsets into the task's text).
``predictions`` are a model's guesses, not labels: counted, never rows. An annotation the
annotator cancelled (``was_cancelled``) is skipped and counted, named in a note. Every
annotator's annotation of a task is read: a task labelled by three people gives three sets of
rows.

The class map is ``--class-names``, else the labelling config beside the export (an ``.xml``
file whose root is ``<View>``: the ``value`` of every ``<Label>`` and ``<Choice>``, in document
order), else the names found, sorted. Rows: id = ``task T annotation A result R``, source = the
export file's name, name = the label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap, normalise_name
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.errors import InputError, one_line
from labelgate.io.bounded import READ_SIZE, guarded_stream
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.boxes import (
    check_background,
    check_box,
    check_points,
    class_index,
    tally,
)
from labelgate.readers.common.boxsizes import BoxSizes
from labelgate.readers.common.imageindex import ImageRecord
from labelgate.readers.common.sink import RowSink, RowWriter, reject, reject_unplaced
from labelgate.readers.labelstudio.labelstudioconfig import (
    beside,
    export_in,
    export_kind,
    labelling_config,
)

__all__ = ["LabelStudioReader"]

_REGIONS = {"rectanglelabels", "polygonlabels", "keypointlabels", "ellipselabels", "brushlabels"}
_PERCENT = (100.0, 100.0)  # region coordinates are percent of the image


def _items(path: Path) -> Iterator[dict[str, Any]]:
    import ijson

    try:
        with path.open("rb") as f:
            for item in ijson.items(
                guarded_stream(f, str(path)), "item", use_float=True, buf_size=READ_SIZE
            ):
                if isinstance(item, dict):
                    yield item
    except ijson.JSONError as exc:
        raise InputError(f"not valid JSON ({one_line(exc)})", path=str(path)) from None


def _list(value: Any) -> list[Any]:
    """A field that should be a list, or nothing (an export edited by hand may hold anything)."""
    return value if isinstance(value, list) else []


def _ident(value: Any) -> str:
    """An id as written where it is a string or an integer, else ``?`` (never a structure)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return "?"
    return str(value)[:100]


def _num(value: Any) -> float:
    """A coordinate: a JSON number. ``float()`` takes ``"10"`` and ``true``; a loader's tensor
    does not, so neither is a coordinate here.

    Raises:
        TypeError: the value is not a number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: a {type(value).__name__}")
    return float(value)


def _results(
    path: Path, kind: str, controls: dict[str, str], counts: Counter[str], cancelled: list[str]
) -> Iterator[tuple[str, str, dict[str, Any], str | None, str]]:
    """(id, result type, value, the task's text, the control's name) for each result."""
    for item in _items(path):
        tid = _ident(item.get("id", "?"))
        if kind == "min":
            counts["annotations"] += 1
            aid = _ident(item.get("annotation_id", "?"))
            for key, v in item.items():
                for n, (rtype, value) in enumerate(_min_values(key, v, controls)):
                    yield f"task {tid} annotation {aid} {key}#{n}", rtype, value, None, key
            continue
        counts["tasks"] += 1
        counts["predictions"] += len(_list(item.get("predictions")))
        data = item["data"] if isinstance(item.get("data"), dict) else {}
        annotations = [
            a
            for a in _list(item.get("annotations")) or _list(item.get("completions"))
            if isinstance(a, dict)
        ]
        if len(annotations) > 1:
            counts["tasks_with_several_annotations"] += 1
        for ann in annotations:
            aid = _ident(ann.get("id", "?"))
            if ann.get("was_cancelled"):
                counts["cancelled"] += 1
                cancelled.append(f"task {tid} annotation {aid}")
                continue
            counts["annotations"] += 1
            for n, r in enumerate(_list(ann.get("result"))):
                if not isinstance(r, dict) or not isinstance(r.get("value"), dict):
                    continue
                text = data.get(str(r.get("to_name", "")))
                rid = _ident(r.get("id", n))
                ident = f"task {tid} annotation {aid} result {rid}"
                yield (
                    ident,
                    str(r.get("type", "")),
                    r["value"],
                    text if isinstance(text, str) else None,
                    str(r.get("from_name", "")),
                )


def _min_values(key: str, v: Any, controls: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """JSON-MIN's flattened results: regions as dicts holding a ``...labels`` key, choices as a
    string or ``{"choices": [...]}`` under a control the config names."""
    if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
        for r in v:
            rtype = next((k for k in r if k in _REGIONS or k == "labels"), None)
            if rtype is not None:
                yield rtype, r
    elif controls.get(key) == "choices":
        if isinstance(v, str):
            yield "choices", {"choices": [v]}
        elif isinstance(v, dict) and isinstance(v.get("choices"), list):
            yield "choices", v


def _names(value: dict[str, Any], rtype: str) -> list[str]:
    names = value.get(rtype)
    if isinstance(names, str):
        return [names]
    return [str(n) for n in names] if isinstance(names, list) else []


def _read_result(
    ident: str,
    rtype: str,
    value: dict[str, Any],
    text: str | None,
    control: tuple[str, set[str] | None],
    source: str,
    writer: RowWriter,
    facts: AnnotationFacts,
    found: ClassMap,
    background: int | None,
    counts: Counter[str],
) -> None:
    if rtype not in _REGIONS and rtype not in ("choices", "labels"):
        counts["other_results"] += 1  # text areas, ratings, relations: no class label
        return
    counts[rtype] += 1
    index = found.index_of()
    task = (source, ident.split(" annotation ", 1)[0])  # the task is the image
    writer.images.add(ImageRecord(task, task[1]))
    names = _names(value, rtype)
    if not names:  # label-studio-converter takes value[rtype][0]: an IndexError
        facts.hit(
            "LG031",
            Example(row=writer.rows, id=ident, source=source, value=value.get(rtype)),
            message=f"{rtype} results without a label",
            fix="label these regions in Label Studio, or delete them: label-studio-converter "
            "reads each result's first label and raises on an empty list",
        )
        reject(writer, counts, ident, source, task, "LG031")
        return
    try:
        region, unread = _region(rtype, value), False
    except (KeyError, TypeError, ValueError):
        region, unread = None, True  # no box or points to train: each of its rows is rejected
    for name in names:
        named = Example(row=writer.rows, id=ident, source=source, value=name)
        label = class_index(facts, name, index, found.origin, named, what="results")
        if label is not None and not _declared(facts, name, control, named):
            label = None
        if label is None:
            reject(writer, counts, ident, source, task, "LG030")
            continue
        example = Example(row=writer.rows, id=ident, source=source, value=label)
        if unread:
            fix = "re-export these tasks from Label Studio, or redraw the regions"
            message = "regions whose coordinates are missing or not numbers"
            reject_unplaced(writer, facts, counts, example, task, message=message, fix=fix)
            continue
        writer.add(ident, label, source, name, group=task)
        if rtype == "labels":
            _span(facts, value, text, example)
        elif rtype != "choices":
            check_background(facts, label, background, example)
            if region is not None:
                _place(facts, region, example, writer.sizes)


def _declared(
    facts: AnnotationFacts, name: str, control: tuple[str, set[str] | None], example: Example
) -> bool:
    """Whether the result's own control declares ``name`` (a config's ``<Choice>`` of another
    control is LG030: the model's head for this control has no such class)."""
    tag, allowed = control
    if allowed is None or normalise_name(name) in allowed:
        return True
    h = facts.hit(
        "LG030",
        example,
        message=f"results labelled {name!r}, which their own control {tag!r} in the labelling "
        "config does not declare (a <Choice> or <Label> of another control)",
        fix="relabel them with one of their control's values, or add the value to that "
        "control in the labelling config",
    )
    tally(h.details, "labels", name)
    return False


def _span(
    facts: AnnotationFacts, value: dict[str, Any], text: str | None, example: Example
) -> None:
    start, end = value.get("start"), value.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return  # spans of HTML or rich text carry offsets of their own kind
    if not 0 <= start < end or (text is not None and end > len(text)):
        facts.hit(
            "LG031",
            example,
            message="NER spans whose start/end offsets are empty, reversed or past the text",
            fix="redraw these spans: a tokenizer aligning them to tokens finds no token",
        )
    elif (
        text is not None and isinstance(value.get("text"), str) and text[start:end] != value["text"]
    ):
        facts.hit(
            "LG031",
            example,
            message="NER spans whose offsets do not cover their text",
            fix="the task's text changed after it was labelled: relabel these tasks",
        )


def _region(rtype: str, value: dict[str, Any]) -> tuple[Any, ...] | None:
    """A region's geometry: ``("box", (x0, y0, x1, y1), frame)`` or ``("points", points, kind,
    least)``; ``None`` for a choice or a span (raises KeyError, TypeError or ValueError on
    coordinates missing or not numbers)."""
    if rtype == "rectanglelabels":
        x, y = _num(value["x"]), _num(value["y"])
        w, h = _num(value["width"]), _num(value["height"])
        turned = _num(value.get("rotation") or 0) != 0  # its corners are elsewhere
        return ("box", (x, y, x + w, y + h), None if turned else _PERCENT)
    if rtype == "ellipselabels":
        x, y = _num(value["x"]), _num(value["y"])
        rx, ry = _num(value["radiusX"]), _num(value["radiusY"])
        return ("box", (x - rx, y - ry, x + rx, y + ry), _PERCENT)
    if rtype == "polygonlabels":
        return ("points", [(_num(px), _num(py)) for px, py in value["points"]], "polygon", 3)
    if rtype == "keypointlabels":
        return ("points", [(_num(value["x"]), _num(value["y"]))], "keypoint", 1)
    return None


def _place(
    facts: AnnotationFacts, region: tuple[Any, ...], example: Example, sizes: BoxSizes
) -> None:
    """Judge a region's geometry (``_region``) within 0..100 percent of its image."""
    if region[0] == "box":
        check_box(facts, region[1], region[2], example, sizes=sizes)
    else:
        check_points(facts, region[1], _PERCENT, example, shape=region[2], least=region[3])


class LabelStudioReader(Reader):
    """Label Studio's JSON and JSON-MIN exports, with the labelling config beside them."""

    name = "labelstudio"
    title = "Label Studio JSON and JSON-MIN exports"
    suffixes = (".json",)
    capabilities = frozenset({"many"})
    task = "detection"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_dir():
            export = export_in(path)
            if export is None:
                return None
            return Claim(0.9, f"a folder holding one Label Studio export ({export.name})")
        if not path.is_file() or path.suffix.lower() != ".json":
            return None
        kind = export_kind(path)
        if kind == "json":
            return Claim(0.95, "a JSON list of tasks with data and annotations (Label Studio)")
        if kind == "min":
            return Claim(0.9, "a JSON list with annotation_id / annotator (Label Studio JSON-MIN)")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        paths = [export_in(p) or p if p.is_dir() else p for p in paths]
        config = beside(paths[0])
        values, controls, own = labelling_config(config) if config else ([], {}, {})
        kinds = {p: export_kind(p) or "json" for p in paths}
        cancelled: list[str] = []
        if options.class_map is None and config is not None and values:
            used = _foreign(paths, kinds, controls, values)
            if used:  # another project's config: every label undeclared, the input emptied
                facts.notes.append(
                    f"{config.name} beside the export is not its labelling config: it declares "
                    f"{_some(values)}, none of the labels the export uses ({_some(used)}); the "
                    "class map is the export's own labels, sorted (--class-names gives one)"
                )
                values, controls, own = [], {}, {}
        if options.class_map is not None:
            found, why = options.class_map, f"the class map given ({options.class_map.origin})"
        elif values:
            found = ClassMap.from_names(values, origin=f"{config} (<Label>/<Choice> values)")
            why = (
                f"the <Label>/<Choice> values of {config.name if config else ''} beside the export"
            )
        else:
            found = ClassMap.from_names(
                _found(paths, kinds, controls), origin=f"{paths[0]} (the labels found, sorted)"
            )
            why = (
                "the labels found, sorted (no labelling config of the export beside it): "
                "indices depend on the labels present"
            )
        writer = sink.rows(names=True)
        writer.sizes.unit = "percent"
        counts: Counter[str] = Counter()
        for p in paths:
            for ident, rtype, value, text, control in _results(
                p, kinds[p], controls, counts, cancelled
            ):
                _read_result(
                    ident,
                    rtype,
                    value,
                    text,
                    (control, own.get(control)),
                    p.name,
                    writer,
                    facts,
                    found,
                    options.background,
                    counts,
                )
        writer.close()
        counts["rows"] = writer.rows
        facts.counts.update(counts)
        _notes(facts, counts, cancelled)
        if not writer.rows:
            facts.empty = _empty(counts)
        if not any(counts[k] for k in _REGIONS):
            facts.task = "classification"
        return Read(found, why) if found.entries else Read()


def _found(paths: list[Path], kinds: dict[Path, str], controls: dict[str, str]) -> list[str]:
    """The labels the exports use, sorted."""
    seen: set[str] = set()
    for p in paths:
        for _, rtype, value, _, _ in _results(p, kinds[p], controls, Counter(), []):
            seen.update(_names(value, rtype))
    return sorted(seen)


def _foreign(
    paths: list[Path], kinds: dict[Path, str], controls: dict[str, str], values: list[str]
) -> list[str]:
    """The labels the exports use when the config declares none of them (a config beside the
    export that is another project's), else ``[]``; read until one declared label is met."""
    declared = {normalise_name(v) for v in values}
    used: list[str] = []
    for p in paths:
        for _, rtype, value, _, _ in _results(p, kinds[p], controls, Counter(), []):
            for name in _names(value, rtype):
                if normalise_name(name) in declared:
                    return []
                if name not in used:
                    used.append(name)
    return sorted(used)


def _some(names: list[str], most: int = 5) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _empty(counts: Counter[str]) -> str:
    """What an export without a labelled result holds, in words."""
    tasks, annotations = counts["tasks"], counts["annotations"]
    if not annotations:
        held = f"no annotation in {tasks} tasks" if tasks else "no task and no annotation"
    else:
        held = f"no labelled result in {annotations} annotations"
    extra = [
        f"{counts[k]} {what}"
        for k, what in (
            ("cancelled", "cancelled annotations"),
            ("predictions", "predictions (a model's, not labels)"),
            ("other_results", "results without a class label"),
        )
        if counts[k]
    ]
    return held + (f" ({', '.join(extra)})" if extra else "")


def _notes(facts: AnnotationFacts, counts: Counter[str], cancelled: list[str]) -> None:
    if cancelled:
        shown = ", ".join(cancelled[:5]) + (
            f" and {len(cancelled) - 5} more" if len(cancelled) > 5 else ""
        )
        facts.notes.append(f"{len(cancelled)} cancelled annotations skipped ({shown})")
    if counts["predictions"]:
        facts.notes.append(
            f"{counts['predictions']} predictions (a model's, not labels) are not rows"
        )
    if counts["tasks_with_several_annotations"]:
        facts.notes.append(
            f"{plural(counts['tasks_with_several_annotations'], 'task holds', 'tasks hold')} "
            "several annotators' annotations: each annotation's labels are rows"
        )
    if counts["other_results"]:
        facts.notes.append(
            f"{counts['other_results']} results without a class label (text, rating...) "
            "are not rows"
        )
