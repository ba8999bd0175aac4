"""The built-in readers as data: where each lives, and which paths it may claim, so that detection
imports only the readers a path could be (a Parquet file asks the table and Hugging Face readers,
never the COCO one).

An entry is a promise its reader keeps: for a regular file, ``detect`` answers ``None`` unless the
file's suffix (lower case) or whole name is listed; for a folder, unless ``folders`` is set and
the folder holds one of ``marks`` directly (no marks: any folder, the reader looks deeper itself).
A path that is neither (a FIFO, a device, a dangling link) is asked of every reader.
``tests/test_readers.py`` holds each entry to its reader over every sample and real dataset.

A packed input is unpacked before any reader is asked (``readers/unpacked.py``): a compressed
suffix (``COMPRESSED``) is stripped to find the inner format, and the file decompressed when that
format is one of ``UNPACKED`` (``labels.csv.gz``; a ``.tar.gz`` stays the WebDataset reader's);
a ``.zip`` is read as the folder its members make; ``-`` is standard input, its format told by
its content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ARCHIVES",
    "COMPRESSED",
    "INPUT_FORMATS",
    "MANIFEST",
    "STDIN",
    "UNPACKED",
    "Entry",
    "packing",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One built-in reader: its class (``"module:class"``) and the paths it may claim.

    Attributes:
        target: the reader's class, imported when the reader is first asked.
        suffixes: the suffixes of the files it may claim (lower case, with the dot).
        names: whole file names it may claim whatever their suffix.
        folders: whether it may claim a folder.
        marks: names of which a folder it claims holds one directly (empty: any folder).
        shard_names: whether it may also claim a file without a suffix, or whose suffix is one
            listed followed by a shard number (TFRecord shards are named
            ``train-00000-of-01024`` and ``coco_train.record-00000-of-00100``).
    """

    target: str
    suffixes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    folders: bool = False
    marks: tuple[str, ...] = ()
    shard_names: bool = False

    def may_claim(self, path: Path) -> bool:
        """Whether the reader could claim ``path``: when not, it is not imported to be asked."""
        if path.is_dir():
            return self.folders and (not self.marks or any((path / m).exists() for m in self.marks))
        if path.is_file():
            suffix = path.suffix.lower()
            if suffix in self.suffixes or path.name in self.names:
                return True
            numbered = suffix.startswith(tuple(f"{s}-" for s in self.suffixes))
            return self.shard_names and (suffix == "" or numbered)
        return True


# name -> entry; the order breaks no tie (ties are errors), it only orders listings.
MANIFEST: dict[str, Entry] = {
    "table": Entry(
        "labelgate.readers.table:TableReader",
        suffixes=(".parquet", ".pq", ".csv", ".tsv", ".jsonl", ".ndjson"),
        folders=True,
    ),
    "coco": Entry("labelgate.readers.coco.cocofiles:CocoReader", suffixes=(".json",), folders=True),
    "yolo": Entry(
        "labelgate.readers.yolo.yolo:YoloReader", suffixes=(".yaml", ".yml"), folders=True
    ),
    "voc": Entry("labelgate.readers.voc:VocReader", suffixes=(".xml",), folders=True),
    "imagefolder": Entry("labelgate.readers.imagefolder:ImageFolderReader", folders=True),
    "hf": Entry(
        "labelgate.readers.hf:HfReader",
        suffixes=(".parquet", ".pq"),
        folders=True,
        marks=("dataset_info.json",),
    ),
    "masks": Entry(
        "labelgate.readers.masks.masks:MasksReader",
        suffixes=(".png", ".tif", ".tiff", ".bmp", ".npy", ".jpg", ".jpeg"),
        folders=True,
    ),
    "cvat": Entry(
        "labelgate.readers.cvat:CvatReader",
        suffixes=(".xml",),
        folders=True,
        marks=("annotations.xml",),
    ),
    "labelme": Entry(
        "labelgate.readers.labelme:LabelMeReader", suffixes=(".json", ".xml"), folders=True
    ),
    "labelstudio": Entry(
        "labelgate.readers.labelstudio.labelstudio:LabelStudioReader",
        suffixes=(".json",),
        folders=True,  # the folder the export dialog saved: one export among its JSON files
    ),
    "detcsv": Entry("labelgate.readers.detcsv.detcsv:DetectionCsvReader", suffixes=(".csv",)),
    "webdataset": Entry(
        "labelgate.readers.shards.webdataset:WebDatasetReader",
        suffixes=(".tar", ".tgz", ".gz", ".txt", ".shards", ".list"),  # .tar.gz: .gz; list files
        folders=True,
    ),
    "mds": Entry(
        "labelgate.readers.shards.mds:MdsReader",
        names=("index.json",),
        folders=True,
        marks=("index.json",),
    ),
    "litdata": Entry(
        "labelgate.readers.shards.litdata:LitDataReader",
        names=("index.json",),
        folders=True,
        marks=("index.json",),
    ),
    "tfrecord": Entry(
        "labelgate.readers.shards.tfrecord:TfRecordReader",
        suffixes=(".tfrecord", ".tfrecords", ".record", ".tfrec", ".gz"),
        folders=True,
        shard_names=True,
    ),
    "unsupported": Entry(
        "labelgate.readers.unsupported:UnsupportedReader",
        suffixes=(".csv",),
        names=("tracklet_labels.xml",),
        folders=True,
    ),
}
# the formats a user may name: "unsupported" refuses the layouts labelgate does not read
INPUT_FORMATS = tuple(name for name in MANIFEST if name != "unsupported")

COMPRESSED = {".gz": "gzip", ".zst": "zstd"}  # suffix -> codec (pyarrow's CompressedInputStream)
UNPACKED = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".xml")  # inner suffixes decompressed
ARCHIVES = (".zip",)  # read as the folder of their members
STDIN = "-"


def packing(path: str) -> str | None:
    """How ``path`` is packed: ``"stdin"``, a codec (``"gzip"``, ``"zstd"``) whose inner format
    is one the readers read once decompressed, ``"zip"``, or ``None`` (read as it is)."""
    if path == STDIN:
        return "stdin"
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in ARCHIVES:
        return "zip"
    codec = COMPRESSED.get(suffix)
    if codec is not None and Path(p.stem).suffix.lower() in UNPACKED:
        return codec
    return None
