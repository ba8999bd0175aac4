"""The reader interface: what every input format implements, and the values it exchanges.

A reader claims paths (``Reader.detect`` returns a ``Claim`` with a confidence, or
``None``) and reads them (``Reader.read``) into one ``labelgate.readers.common.sink.RowSink``,
with one ``ReadOptions`` whatever the format. What it found besides the rows goes into the
``labelgate.core.annotations.AnnotationFacts`` it is handed, and its ``Read`` result says
which class map the format carries and where that map came from. What a format can do beyond rows
(``fix`` rewriting its files, ``smoke`` stacking them) is a capability the reader declares.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from labelgate.contract.classmap import ClassMap
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.common.sink import RowSink

__all__ = ["CAPABILITIES", "Claim", "Read", "ReadOptions", "Reader", "ShardCache"]

# What a reader may declare beyond rows:
#   files  fix rewrites the input's own files (masks: new mask files through a value table)
#   stack  smoke stacks the input's own arrays into batches (masks), not the label rows
#   many   several paths given together are one input (each its own source)
#   dask   the reader decodes on a Dask cluster (masks)
#   table  the scan reads the user's files as they are (no rows written)
#   column the reader picks the label field by ``--label-column`` (shards); its rows' is "label"
#   cache  the reader keeps each file's rows in ``--cache DIR`` and reads only new files (shards)
CAPABILITIES = frozenset({"files", "stack", "many", "dask", "table", "column", "cache"})


class ShardCache(Protocol):
    """The run's ``--cache`` folder as a reader sees it: where entries live, and what the reader
    did with it (each file: its path, content key and ``"from"``: ``"read"`` or ``"cache"``;
    entries ignored; parts not stored)."""

    folder: Path
    files: list[dict[str, str]]
    ignored: int
    unstored: int


@dataclass(frozen=True, slots=True)
class Claim:
    """A reader's answer to "is this yours?".

    Attributes:
        confidence: how sure, from 0 (a guess) to 1 (the format's own signature seen).
        why: what was seen, for the report ("a JSON file with COCO's images/annotations keys").
    """

    confidence: float
    why: str

    def __post_init__(self) -> None:
        if not 0.0 < self.confidence <= 1.0:
            raise ValueError(f"a claim's confidence is in (0, 1], got {self.confidence!r}")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Everything a reader may be told, one object for every format.

    Attributes:
        background: the detection background index, which no object should carry (LG032).
        source_field: COCO: the field of each annotation's image used as its source.
        class_map: the class map the user gave (a reader whose names need one looks them up in
            it; the run compares it with the format's own).
        num_classes: K, where the user gave it.
        task: the task the user named, if any.
        colour_map: packed RGB -> class index, for colour masks.
        limit: examples kept per finding (``None``: all).
        cluster: a map over a Dask cluster (``fn, items -> results``), for readers that can
            decode there.
        label_column: the label column the user named, for readers whose records carry their
            label by name (a WebDataset member or ``.json`` field, a TFRecord feature, an MDS column, a LitData
            field; readers that can ``column`` read it into ``label``); their
            rows then hold the label under that name.
        progress: called with (bytes read, bytes in all) as a large file is parsed (COCO), for
            a sign of life before the scan's own progress begins.
        cache: the ``--cache`` folder, for readers that can ``cache`` (shards).
    """

    background: int | None = None
    source_field: str | None = None
    class_map: ClassMap | None = None
    num_classes: int | None = None
    task: str | None = None
    colour_map: Mapping[int, int] | None = None
    limit: int | None = 20
    cluster: Callable[..., Any] | None = None
    label_column: str | None = None
    progress: Callable[[int, int | None], None] | None = None
    cache: ShardCache | None = None


@dataclass(frozen=True, slots=True)
class Read:
    """What a read gave besides its rows.

    Attributes:
        class_map: the class map the format carries (COCO categories, YOLO names, ``ClassLabel``
            names, the class folders...), or ``None``; its ``origin`` says where it came from.
        class_map_why: how that map was found, for the report ("labelmap.txt one folder up",
            "the sorted object names: indices depend on the names present").
        colour_map: a colour table the format carries (Datumaro's ``dataset_meta.json``).
        ids_per_file: whether ids are unique within each file the reader wrote, not across the
            input (COCO: annotation ids are per file, and Roboflow restarts them in each split's).
    """

    class_map: ClassMap | None = None
    class_map_why: str = ""
    colour_map: Mapping[int, int] | None = None
    ids_per_file: bool = False


class Reader:
    """The base of every reader. Subclasses set the class attributes and implement
    ``detect`` and ``read``; a reader holds no state between reads.

    Attributes:
        name: the format's name, as ``--input-format`` takes it.
        title: what it reads, in a few words (error messages, ``docs/plugins.md``).
        suffixes: the file suffixes it claims (informative; ``detect`` decides).
        capabilities: what it can do beyond rows (see ``CAPABILITIES``).
        task: the task its rows are for (``classification``, ``detection``, ``segmentation``),
            or ``None`` where the rows say (tables).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    suffixes: ClassVar[tuple[str, ...]] = ()
    capabilities: ClassVar[frozenset[str]] = frozenset()
    task: ClassVar[str | None] = None

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        """How sure this reader is that ``path`` is its format (``None``: not its format).
        Never raises on a path it cannot read: that is ``None``."""
        raise NotImplementedError

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        """Read ``paths`` into ``sink``, counting the format's own faults in ``facts``.

        Raises:
            InputError: the input cannot be read as this format.
        """
        raise NotImplementedError

    def can(self, capability: str) -> bool:
        """Whether this reader declares ``capability``."""
        return capability in self.capabilities
