"""TFRecord shards of ``tf.train.Example``: the label feature alone read, no TensorFlow.

Every record's framing and both masked CRC-32Cs are checked (``records``), then only the label
feature is decoded from the Example's wire format (``example``): the image bytes are skipped by
their length. The feature is ``--label-column``, else the first of ``image/class/label``
(ImageNet's, stored 1..1000 with 0 unused: tensorflow/models
research/slim/datasets/build_imagenet_data.py, module docstring, lines 61-62@6ddfb3f9) and
``label``; else, for the TF Object Detection API's records, ``image/object/class/label`` with
``image/object/class/text`` (``create_pascal_tf_record.py`` ``dict_to_tf_example``@ebafe289) as
detection rows, one per box, and the one ``.pbtxt`` label map beside the shards as the class map
(its ids start at 1, 0 being the background: label_map_util.py:37-39).

Rows: id = ``shard:index`` (``shard:index:box`` for boxes), label, source = the shard; the class
text, where there is one, as the name.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import ClassMapError, InputError, UsageError
from labelgate.inputs.columns import LabelColumnError
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.layout import first_files
from labelgate.readers.common.sink import RowSink, in_int64
from labelgate.readers.shards.example import ProtoError, features, names
from labelgate.readers.shards.listing import Shard, shards_of
from labelgate.readers.shards.parts import add_parts
from labelgate.readers.shards.records import fast_crc, framed, head, records
from labelgate.readers.shards.rows import LabelRows

__all__ = [
    "BOX_FEATURE",
    "CLASS_FEATURES",
    "TFRECORD_SUFFIXES",
    "TfRecordReader",
    "is_tfrecord",
    "is_tfrecord_name",
    "read_boxes",
    "read_classes",
]

CLASS_FEATURES = ("image/class/label", "label")
BOX_FEATURE = "image/object/class/label"
BOX_TEXT = "image/object/class/text"
CLASS_TEXT = "image/class/text"
_FIX = "write one integer class index in the label feature of every record"
TFRECORD_SUFFIXES = (".tfrecord", ".tfrecords", ".record", ".tfrec", ".tfrecord.gz")
_SHARDED = re.compile(r"-\d+-of-\d+$")  # TensorFlow's own shard names: train-00000-of-01024


def is_tfrecord_name(name: str) -> bool:
    """Whether an object's name is a TFRecord shard's: a TFRecord suffix, or TensorFlow's
    ``NAME-00000-of-01024`` (an object is not opened to tell, below a prefix)."""
    lower = name.lower()
    return lower.endswith(TFRECORD_SUFFIXES) or _SHARDED.search(lower) is not None


def is_tfrecord(path: Path) -> bool:
    """Whether a file opens with a TFRecord header (its length's masked CRC matches), gzip
    or not."""
    return framed(head(path))


def _feature_of(shards: list[Shard], given: str | None) -> str:
    """The label feature: the one given, else the first the first record holds.

    Raises:
        LabelColumnError: the first Example holds neither the feature given nor, none given, a
            known label feature (LG001, listing the features it holds).
    """
    known = (given,) if given is not None else (*CLASS_FEATURES, BOX_FEATURE)
    for shard in shards:
        for record in records(shard.path, shard.name, shard.uri):
            try:
                held = features(record, known)
                listed = ", ".join(sorted(names(record))[:20])
            except ProtoError:
                continue
            found = next((f for f in known if f in held), None)
            if found is not None:
                return found
            what = f"label feature {given!r}" if given else "label feature (" + ", ".join(known)
            raise LabelColumnError(
                f"LG001 no {what}{'' if given else ')'} in the first record of {shard.name}; "
                f"its features: {listed}" + ("" if given else "; --label-column names one")
            )
    raise LabelColumnError("LG001 no Example to find the label feature in")


def read_classes(
    shards: list[Shard],
    sink: RowSink,
    facts: AnnotationFacts,
    feature: str,
    options: ReadOptions | None = None,
) -> None:
    """One row per record: its label feature's one integer; each shard on its own (``parts``:
    on the cluster, or from the cache, where ``options`` gives one)."""
    options = options or ReadOptions()
    texts = _texts_of(shards[0], feature)
    rows = LabelRows(sink, facts, feature, names=None if texts is None else "label_name")
    job = partial(_classes, feature=feature, texts=texts)
    rules = {"reader": "tfrecord", "feature": feature, "texts": texts, "limit": facts.limit}
    add_parts(shards, job, rows, rules=rules, options=options)
    rows.counts["records"] = rows.rows
    rows.close()
    if not rows.rows:
        facts.empty = f"no record in {len(shards)} shards"


def _classes(shard: Shard, rows: LabelRows, *, feature: str, texts: str | None) -> None:
    """One shard's rows (runs on a worker, for a cluster)."""
    wanted = (feature,) if texts is None else (feature, texts)
    for index, record in enumerate(records(shard.path, shard.name, shard.uri)):
        ident = f"{shard.name}:{index}"
        try:
            held = features(record, wanted)
            found = held.get(feature)
        except ProtoError as exc:
            rows.reject(ident, shard.name, None, f"records that are not an Example ({exc})", _FIX)
            continue
        if found is None:
            rows.reject(ident, shard.name, None, f"records without the {feature!r} feature", _FIX)
            continue
        kind, values = found
        if kind != "int64" or len(values) != 1:
            what = f"{len(values)} values" if kind == "int64" else f"a {kind} list"
            rows.reject(
                ident,
                shard.name,
                what,
                f"records whose {feature!r} is not one int64 (TensorFlow's "
                "FixedLenFeature([], tf.int64) refuses them)",
                _FIX,
            )
            continue
        text = held.get(texts or "", ("", []))[1]
        name = text[0].decode("utf-8", "replace") if text and isinstance(text[0], bytes) else None
        rows.add(ident, int(values[0]), shard.name, name)  # int64 by the wire format
    rows.counts["shards"] += 1


def _texts_of(shard: Shard, feature: str) -> str | None:
    """The class-text feature beside ``image/class/label`` (ImageNet's ``image/class/text``),
    where the first record holds it: the rows' names, so that a class map given proves a
    shifted shard (LG011) and names that disagree with their label are LG010."""
    if feature != "image/class/label":
        return None
    for record in records(shard.path, shard.name, shard.uri):
        try:
            return CLASS_TEXT if CLASS_TEXT in features(record, (CLASS_TEXT,)) else None
        except ProtoError:
            return None
    return None


def read_boxes(
    shards: list[Shard], sink: RowSink, facts: AnnotationFacts, options: ReadOptions | None = None
) -> None:
    """One row per box: the Detection API's class label, its class text as the name; each
    shard on its own (``parts``: on the cluster, or from the cache, where ``options`` gives
    one)."""
    options = options or ReadOptions()
    facts.task = "detection"
    rows = LabelRows(sink, facts, None, names="name")
    rules = {"reader": "tfrecord", "feature": BOX_FEATURE, "texts": BOX_TEXT, "limit": facts.limit}
    add_parts(shards, _boxes, rows, rules=rules, options=options)
    rows.close()
    if not rows.rows:
        counts = facts.counts
        facts.empty = f"no box in {counts['records']} records of {counts['shards']} shards"


def _boxes(shard: Shard, rows: LabelRows) -> None:
    """One shard's box rows; a record whose boxes cannot be read is one row, rejected and named
    by LG031 (runs on a worker, for a cluster)."""
    rows.counts.update(shards=0, records=0, objects=0)  # in this order in the report
    for index, record in enumerate(records(shard.path, shard.name, shard.uri)):
        image = f"{shard.name}:{index}"
        rows.counts["records"] += 1
        try:
            held = features(record, (BOX_FEATURE, BOX_TEXT))
            problem = None
        except ProtoError as exc:
            held, problem = {}, f"records that are not an Example ({exc})"
        kind, labels = held.get(BOX_FEATURE, ("int64", []))
        texts = held.get(BOX_TEXT, ("bytes", []))[1]
        if problem is None and kind != "int64":
            problem = f"records whose {BOX_FEATURE!r} is a {kind} list"
        if problem is not None:
            rows.reject(image, shard.name, None, problem, _FIX)
            continue
        named = len(texts) == len(labels)
        for j, label in enumerate(labels):
            assert isinstance(label, int)
            text = texts[j] if named else None
            name = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else None
            rows.add(f"{image}:{j}", label if in_int64(label) else None, shard.name, name)
        rows.counts["objects"] += len(labels)
    rows.counts["shards"] += 1


def _label_map(shards: list[Shard], facts: AnnotationFacts) -> tuple[ClassMap | None, str]:
    """The one ``.pbtxt`` beside the first shard (or one folder up), and how it was found
    (none for shards on object storage: ``--class-names`` names it)."""
    if shards[0].uri is not None:
        return None, ""
    for where in (shards[0].path.parent, shards[0].path.parent.parent):
        maps = [p for p in first_files(where, "*.pbtxt", 3)]
        if len(maps) > 1:
            facts.notes.append(
                f"{len(maps)} .pbtxt label maps in {where}: none taken (--class-names names one)"
            )
            return None, ""
        if maps:
            try:
                return load_class_map(maps[0]), f"{maps[0].name} beside the shards ({maps[0]})"
            except ClassMapError as exc:
                raise InputError(exc.reason, path=str(maps[0])) from None
    return None, ""


class TfRecordReader(Reader):
    """TFRecord shards of ``tf.train.Example``: class labels, or the Detection API's boxes."""

    name = "tfrecord"
    title = "TFRecord shards of tf.train.Example (image/class/label, the Detection API's boxes)"
    suffixes = TFRECORD_SUFFIXES
    capabilities = frozenset({"many", "dask", "cache"})

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_file() and is_tfrecord(path):
            return Claim(0.95, "a TFRecord file (its first record's length CRC matches)")
        if path.is_dir() and any(is_tfrecord(p) for p in first_files(path, "*", 5)):
            return Claim(0.55, "a folder of TFRecord files")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        shards = shards_of(
            paths, is_tfrecord, "TFRecord", lists=False, remote=True, names=is_tfrecord_name
        )
        facts.notes.append(f"{len(shards)} shards, each a source")
        if not fast_crc():
            facts.notes.append("CRCs checked in pure Python (slow): pip install crc32c")
        feature = _feature_of(shards, options.label_column)
        if feature == BOX_FEATURE:
            if options.label_column is not None:
                raise UsageError(
                    f"--label-column {BOX_FEATURE}: the Detection API's boxes are read from it "
                    "without naming it (leave --label-column out)"
                )
            read_boxes(shards, sink, facts, options)
            given = options.class_map
            cmap, why = (given, "the class map given") if given else _label_map(shards, facts)
            if cmap is not None and options.background is None and cmap.origin.endswith(".pbtxt"):
                facts.background = 0
                facts.notes.append(
                    "background index 0: a TF Object Detection label map reserves id 0 for the "
                    "background (research/object_detection/utils/label_map_util.py:37-39@02c04f49)"
                )
            return Read(cmap, why)
        facts.notes.append(f"labels read from the {feature!r} feature of each record")
        read_classes(shards, sink, facts, feature, options)
        return Read()
