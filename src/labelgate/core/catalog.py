"""The check catalog: every check code, its title, default severity, scope and engines, as data.

Everything that names a check reads it from here: the check registry, the contract's accepted codes
and the JSON Schema's pattern (a test holds them equal), the row-level engines' lists, ``diff``'s
codes, the renderers' titles, and the README and docs/checks.md tables (a test holds them too).
Adding a check is one ``Entry`` here, one function registered with ``@check(code)``, its test
and its line in docs/checks.md.
"""

from __future__ import annotations

from labelgate.core.catalog_detection import DETECTION_ENTRIES, KEYPOINT_BOX_ENTRIES
from labelgate.core.codes import Code
from labelgate.core.entry import COMPONENTS, SCOPES, SEVERITIES, Entry

__all__ = [
    "CATALOG",
    "CODES",
    "COMPONENTS",
    "SCOPES",
    "SEVERITIES",
    "Entry",
    "codes_in",
    "codes_module",
    "codes_raised_by",
    "engine_codes",
    "entry",
    "known",
]

_BOTH = ("pandera", "gx")

CATALOG: tuple[Entry, ...] = (
    Entry(
        "LG001",
        "label column missing or not detected",
        "label column missing, or none could be detected (lists candidates)",
        "error",
        "input",
        shown_severity="usage error, exit 2",
        raised_by="input",
    ),
    Entry(
        "LG002",
        "label dtype unusable",
        "label dtype unusable: text, bools, floats with a fractional part, decimals, past int64",
        "error",
        "row",
        _BOTH,
    ),
    Entry("LG003", "null or NaN labels", "null / NaN labels", "error", "row", _BOTH),
    Entry("LG004", "labels >= K", "labels >= K", "error", "row", _BOTH),
    Entry(
        "LG005",
        "negative labels other than ignore_index",
        "negative labels other than ignore_index",
        "error",
        "row",
        _BOTH,
    ),
    Entry(
        "LG006",
        "ignore_index inside [0, K)",
        "ignore_index inside [0, K): it silently drops a real class",
        "error",
        "dataset",
    ),
    Entry(
        "LG007",
        "batch with no usable target (NaN loss)",
        "batch with no usable target (NaN mean loss); also zero total class weight",
        "error",
        "batch",
    ),
    Entry(
        "LG008",
        "no usable target in the whole input",
        "no usable target in the whole input, or an empty input",
        "error",
        "dataset",
    ),
    Entry(
        "LG009",
        "class map is not a bijection",
        "class map is not a bijection (duplicate names after normalising case/space, duplicate or "
        "missing indices, count != K, trailing blank lines)",
        "error",
        "class map",
    ),
    Entry(
        "LG010",
        "label and name columns disagree",
        "label and name columns disagree with the class map, or with each other",
        "error",
        "row",
        _BOTH,
    ),
    Entry(
        "LG011",
        "shifted (1-based) encoding in a source",
        "shifted (1-based) encoding in a source: error when its name column proves it, warning "
        "when only the pattern shows",
        "error",
        "dataset",
        shown_severity="error / warning",
    ),
    Entry(
        "LG012",
        "class never used or far rarer than the others",
        "class never used / class far rarer than the others",
        "warning",
        "dataset",
        shown_severity="warning / info",
    ),
    Entry(
        "LG013",
        "last batch incomplete or of size 1",
        "last batch incomplete / of size 1 (BatchNorm fails on it)",
        "info",
        "batch",
        shown_severity="info / warning",
    ),
    Entry("LG014", "duplicate ids", "duplicate ids", "warning", "row", _BOTH),
    Entry(
        "LG015",
        "soft-label rows that are not probability vectors",
        "soft (probability) label rows: wrong length, negative or non-finite values, not summing "
        "to 1",
        "error",
        "row",
    ),
    Entry(
        "LG016",
        "sparse ids that need a remap table",
        "sparse ids (COCO category ids 1..90 for 80 classes): a remap table is needed",
        "error",
        "dataset",
        shown_severity="error when the ids reach K, else warning",
    ),
    Entry(
        "LG017",
        "row count differs from expected_rows",
        "row count differs from the contract's `expected_rows`",
        "error",
        "dataset",
    ),
    Entry(
        "LG018",
        "class map differs from the pinned fingerprint",
        "class map differs from the fingerprint `labelgate pin` wrote into the contract",
        "error",
        "class map",
        raised_by="contract",
    ),
    Entry(
        "LG019",
        "other columns fail the contract's pandera section",
        "the file's other columns fail the contract's `pandera:` section",
        "error",
        "row",
        ("pandera",),
        raised_by="section",
    ),
    Entry(
        "LG020",
        "class map changed (renamed, reordered, added, dropped)",
        "`labelgate diff`: class map renamed, reordered, added or dropped",
        "error",
        "diff",
        shown_severity="error / warning / info (docs/ci-gate.md)",
        raised_by="diff",
    ),
    Entry(
        "LG021",
        "label values new in head",
        "`labelgate diff`: label values new in head",
        "error",
        "diff",
        raised_by="diff",
    ),
    Entry(
        "LG022",
        "classes gone from head",
        "`labelgate diff`: classes gone from head",
        "warning",
        "diff",
        raised_by="diff",
    ),
    Entry(
        "LG023",
        "class or source share shifted",
        "`labelgate diff`: class or source share shifted past the threshold",
        "warning",
        "diff",
        raised_by="diff",
    ),
    Entry(
        "LG024",
        "rows added or removed (by id)",
        "`labelgate diff`: rows added or removed, by id",
        "info",
        "diff",
        raised_by="diff",
    ),
    Entry(
        "LG025",
        "label changed for the same id",
        "`labelgate diff`: label changed for the same id",
        "warning",
        "diff",
        raised_by="diff",
    ),
    Entry(
        "LG026",
        "whole-number labels stored as floats or text",
        'labels stored as floats holding whole numbers (`3.0`) or as text holding digits (`"3"`, '
        "Parquet or JSONL): PyTorch refuses such a class-index target",
        "warning",
        "row",
    ),
    Entry(
        "LG027",
        "box without area",
        "detection boxes whose width or height is zero or negative: torchvision's detection models "
        "raise 'All bounding boxes should have positive height and width'",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG028",
        "box outside its image",
        "boxes reaching past their image's edges, or YOLO coordinates outside [0, 1]",
        "warning",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG029",
        "non-finite box coordinate",
        "box coordinates that are NaN or infinite: the box loss is NaN from the first batch",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG030",
        "class not in the format's table",
        "annotations naming a category or class absent from the format's own class table (COCO "
        "categories, YOLO names, the class map of VOC files)",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG031",
        "malformed annotation",
        "annotation records that cannot be read as their format says (a YOLO line of the wrong "
        "length, a non-numeric field, an annotation of an image that is not listed), by file and "
        "line or by annotation id",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG032",
        "background index as a label",
        "detection targets labelled with the background index (`--background 0`): torchvision's "
        "detection heads train them as background, silently",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG033",
        "class folders",
        "ImageFolder trees whose class folders shift the indices (a stray `.ipynb_checkpoints` or "
        "`__MACOSX`), are empty (ImageFolder raises), or differ between splits given together",
        "error",
        "class map",
        raised_by="reader",
    ),
    Entry(
        "LG034",
        "multi-hot target outside [0, 1]",
        "multi-label rows (`task: multilabel`) that are not K finite values in [0, 1]: "
        "`BCEWithLogitsLoss` takes a -1 ('uncertain'), a 2 or a blank without a word",
        "error",
        "row",
    ),
    Entry(
        "LG035",
        "rows without a positive label",
        "multi-label rows with no positive class (valid for BCE, worth knowing)",
        "info",
        "row",
    ),
    Entry(
        "LG036",
        "0/255 binary masks",
        "segmentation masks whose values are exactly 0 and 255 for a 2-class problem: the "
        "foreground saved as white, not as class 1",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG037",
        "lossy (JPEG) masks",
        "masks saved lossily: stray values along every class edge (rare values, nearly all on "
        "edges) or a JPEG file",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG038",
        "colour (RGB) masks",
        "three-channel colour masks read without a colour-to-index table (`color_map`), or "
        "holding colours the table lacks",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG039",
        "Cityscapes labelIds for trainIds",
        "masks holding Cityscapes labelIds (up to 33) where the 19 trainIds are expected; the "
        "labelId -> trainId table is named",
        "error",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG040",
        "model's class map disagrees with the data's",
        "the model's own class map (`--model`: a Hugging Face config's `id2label`, `label2id`, "
        "`num_labels`, `problem_type`) against the data's, by name: swapped, renamed, missing, "
        "extra, a count that differs, a problem type for another task; `LABEL_0` placeholders "
        "never named are a warning",
        "error",
        "class map",
        raised_by="contract",
    ),
    *DETECTION_ENTRIES,
    Entry(
        "LG048",
        "annotation without a label",
        'annotations whose label is empty (CVAT\'s `label=""`, what Datumaro writes for an '
        "annotation without one): no training target, a rejected row named by id",
        "warning",
        "row",
        raised_by="reader",
    ),
    Entry(
        "LG049",
        "source's labels permuted against the model",
        "a source whose labels a model's out-of-sample predictions (`--predictions`) explain "
        "far better under a remap than as they are: permuted, a swapped pair, shifted by one "
        "within [0, K), two given classes the model sees as one (a warning); one class the "
        "model splits in two, or too few rows to judge, is info; with `labelgate[cleanlab]`, "
        "the rows the model contradicts most, after the remap (a warning)",
        "error",
        "dataset",
        shown_severity="error; a merge: warning; a split, too few rows: info",
    ),
    *KEYPOINT_BOX_ENTRIES,
)

_BY_CODE: dict[str, Entry] = {e.code: e for e in CATALOG}
CODES: tuple[Code, ...] = tuple(e.code for e in CATALOG)


def entry(code: str) -> Entry:
    """The catalog entry of ``code``.

    Raises:
        KeyError: the code is not in the catalog.
    """
    return _BY_CODE[code]


def known(code: str) -> bool:
    """Whether ``code`` is a check code of the catalog."""
    return code in _BY_CODE


def codes_in(*scopes: str) -> tuple[Code, ...]:
    """The codes of the given scopes, in code order."""
    return tuple(e.code for e in CATALOG if e.scope in scopes)


def codes_raised_by(component: str) -> tuple[Code, ...]:
    """The codes ``component`` raises (see ``COMPONENTS``), in code order."""
    if component not in COMPONENTS:
        raise ValueError(f"no component {component!r}; one of {', '.join(COMPONENTS)}")
    return tuple(e.code for e in CATALOG if e.raised_by == component)


def codes_module() -> str:
    """The source of ``labelgate.core.codes``, generated from the catalog (a test holds the file
    to it; ``LABELGATE_REGOLD=1 python -m pytest tests/test_catalog.py`` rewrites it)."""
    listed = "".join(f'    "{e.code}",\n' for e in CATALOG)
    reader = "".join(f'    "{c}",\n' for c in codes_raised_by("reader"))
    return (
        '"""The check codes as a type, generated from ``labelgate.core.catalog`` (do not edit: a '
        "test\nholds this file to the catalog).\n\nA code spelled wrong, or missing from the "
        "catalog, is a type error wherever a\n``Code`` is expected, and a reader's codes are "
        'the ones ``READER_CODES`` lists.\n"""\n\n'
        "from __future__ import annotations\n\nfrom typing import Literal, get_args\n\n"
        '__all__ = ["CODES", "READER_CODES", "Code"]\n\n'
        f"Code = Literal[\n{listed}]\n\n"
        "CODES: tuple[Code, ...] = get_args(Code)\n\n"
        f"READER_CODES: frozenset[Code] = frozenset(\n    (\n{reader.replace('    ', '        ')}    )\n)\n"
    )


def engine_codes(engine: str) -> tuple[Code, ...]:
    """The codes a row-level engine (``pandera``, ``gx``) expresses itself."""
    return tuple(e.code for e in CATALOG if engine in e.engines)
