"""What MDS shards and LitData chunks share: an ``index.json`` naming the files, each file a
``uint32`` count of samples and ``uint32`` offsets of each sample, and one field found at an offset
inside every sample, gathered for all samples at once without decoding the other fields. The
driver reads the index and settles the label field; each shard is then read on its own
(``read_parts``: one task per shard on a cluster, one cache entry per shard), as TFRecord and
WebDataset shards are."""

from __future__ import annotations

import bz2
import json
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar

from labelgate.errors import InputError, one_line
from labelgate.io.bounded import load_json
from labelgate.io.files import read_small_text
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.shards.listing import Shard as Listed
from labelgate.readers.shards.parts import add_parts
from labelgate.readers.shards.rows import LabelRows

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.common.sink import RowSink

__all__ = [
    "LABEL_NAMES",
    "MAX_SHARD",
    "IndexedReader",
    "Shard",
    "choose_field",
    "count",
    "decompress",
    "entries",
    "finish",
    "gather",
    "listed",
    "load_index",
    "read_parts",
    "read_shard",
    "shard_file",
    "write_labels",
]

# Both formats write offsets as uint32 (MDS writer.py:141, LitData writer.py:259): no shard is
# larger than 4 GiB, and no index may claim one.
MAX_SHARD = 1 << 32
LABEL_NAMES = ("label", "labels", "cls", "class", "target")


def load_index(folder: Path, what: str) -> tuple[Path, dict[str, Any]]:
    """``folder/index.json`` parsed (bounded), as a JSON object.

    Raises:
        InputError: missing, not JSON, or not an object.
    """
    path = folder / "index.json"
    text = read_small_text(path, f"{what} index.json")
    try:
        doc = load_json(text, str(path))
    except ValueError as exc:
        raise InputError(
            f"the {what} index.json is not JSON ({one_line(exc)})", path=str(path)
        ) from None
    if not isinstance(doc, dict):
        raise InputError(f"the {what} index.json is not a JSON object", path=str(path))
    return path, doc


def choose_field(names: list[str], given: str | None, what: str, origin: str) -> str:
    """The label field: the one given, else the one whose (last) name is conventional.

    Raises:
        InputError: the field given is absent, or none (or several) of the conventional names is
            present.
    """
    if given is not None:
        if given not in names:
            raise InputError(
                f"LG001 label field {given!r} not found; the {what} holds {', '.join(names)}",
                path=origin,
            )
        return given
    found = [n for n in names if n.rsplit(".", 1)[-1].lower() in LABEL_NAMES]
    if len(found) != 1:
        listed = ", ".join(found) if found else "none of " + ", ".join(names)
        raise InputError(
            f"LG001 no label field detected in the {what} (conventional names: {listed}); "
            "name it with --label-column",
            path=origin,
        )
    return found[0]


def shard_file(folder: Path, basename: Any, index: Path) -> Path:
    """The file an index entry names, inside ``folder``.

    Raises:
        InputError: the name is not a relative path inside the folder, or the file is missing
            (the shard named).
    """
    if not isinstance(basename, str) or not basename:
        raise InputError(f"a shard entry names no file ({basename!r})", path=str(index))
    parts = PurePosixPath(basename).parts
    if PurePosixPath(basename).is_absolute() or ".." in parts or "\\" in basename:
        raise InputError(f"shard {basename!r} is not a file inside the dataset", path=str(index))
    path = folder.joinpath(*parts)
    if not path.is_file():
        raise InputError(f"the index names shard {basename!r}, which is missing", path=str(path))
    return path


def decompress(codec: str, data: bytes, size: int, path: str) -> bytes:
    """``data`` decompressed by the codec the index names (``zstd``, ``zstd:7``, ``gz``,
    ``bz2``, ``br``, ``snappy``), which must give ``size`` bytes.

    Raises:
        InputError: an unknown codec, or data that does not decompress to ``size`` bytes.
    """
    import pyarrow as pa

    family = codec.partition(":")[0]
    arrow = {"zstd": "zstd", "br": "brotli", "snappy": "snappy"}
    try:
        if family in arrow:
            out = pa.decompress(data, decompressed_size=size, codec=arrow[family], asbytes=True)
        elif family == "gz":
            out = zlib.decompressobj(wbits=31).decompress(data, size + 1)
        elif family == "bz2":
            out = bz2.BZ2Decompressor().decompress(data, max_length=size + 1)
        else:
            raise InputError(
                f"shard compressed with {codec!r}, which labelgate cannot read", path=path
            )
    except (pa.ArrowException, OSError, zlib.error, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(
            f"the shard does not decompress as {codec} ({one_line(exc)})", path=path
        ) from None
    if len(out) != size:
        raise InputError(
            f"the shard decompresses to {len(out):,} bytes; the index says {size:,}", path=path
        )
    return bytes(out)


class Shard:
    """One shard's bytes and the span of each of its samples.

    Attributes:
        name: the shard's file name as the index gives it (the rows' source).
        data: the shard's (decompressed) bytes.
        begins, ends: each sample's first byte and the byte past its last.
    """

    def __init__(self, name: str, data: npt.NDArray[np.uint8], samples: int, path: str) -> None:
        import numpy as np

        self.name, self.data, self.path = name, data, path
        if len(data) < 4:
            raise InputError("the shard is shorter than its sample count", path=path)
        n = int(data[:4].view("<u4")[0])
        if n != samples:
            raise InputError(
                f"the shard holds {n:,} samples; the index says {samples:,}", path=path
            )
        head = 4 + 4 * (n + 1)
        if len(data) < head:
            raise InputError("the shard is shorter than its table of offsets", path=path)
        offsets = data[4:head].view("<u4").astype(np.int64)
        if n and (offsets[0] < head or (np.diff(offsets) < 0).any() or offsets[-1] > len(data)):
            raise InputError("the shard's offsets are not inside the shard, in order", path=path)
        self.begins, self.ends = offsets[:-1], offsets[1:]
        self.header = data[head : int(offsets[0])] if n else data[head:]

    @classmethod
    def spans(
        cls, name: str, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], path: str
    ) -> Shard:
        """A shard whose samples' spans are known already (``offsets``: each begin, then the
        last end), its bytes the samples alone."""
        shard = cls.__new__(cls)
        shard.name, shard.data, shard.path = name, data, path
        shard.begins, shard.ends = offsets[:-1], offsets[1:]
        shard.header = data[:0]
        return shard

    def u32(self, at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The ``uint32`` at ``at`` within each sample (a sample's own table of field sizes)."""
        return gather(self, at, 4, "<u4").astype("int64")


def gather(shard: Shard, at: npt.NDArray[np.int64], width: int, dtype: str) -> npt.NDArray[Any]:
    """The value of ``width`` bytes at offset ``at`` inside each sample, as ``dtype``.

    Raises:
        InputError: a sample is too short to hold it (the shard and sample named).
    """
    import numpy as np

    start = shard.begins + at
    short = np.flatnonzero((at < 0) | (start + width > shard.ends))
    if len(short):
        raise InputError(
            f"sample {shard.name}:{int(short[0])} is too short for its label field "
            f"({len(short):,} samples so)",
            path=shard.path,
        )
    if width == 0 or not len(start):
        return np.zeros(len(start), dtype=dtype)
    index = start[:, None] + np.arange(width, dtype=np.int64)
    values: npt.NDArray[Any] = shard.data[index].reshape(-1).view(dtype)
    return values


def read_shard(path: Path, name: str, samples: int, size: int | None, codec: str | None) -> Shard:
    """A shard file mapped (plain) or read and decompressed, checked against its index entry.

    Raises:
        InputError: the file cannot be read, is not the size the index gives, or is corrupt.
    """
    import numpy as np

    origin = str(path)
    try:
        actual = path.stat().st_size
        if codec is None:
            if size is not None and actual != size:
                raise InputError(
                    f"shard {name!r} is {actual:,} bytes; the index says {size:,} (truncated?)",
                    path=origin,
                )
            # mapped, not read: only the pages holding offsets and labels are touched
            data = np.memmap(path, dtype=np.uint8, mode="r") if actual else np.zeros(0, np.uint8)
        else:
            if size is None or not 0 <= size < MAX_SHARD:
                raise InputError(f"the index gives shard {name!r} no usable size", path=origin)
            raw = path.read_bytes()
            data = np.frombuffer(decompress(codec, raw, size, origin), dtype=np.uint8)
    except OSError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(
            f"cannot read shard {name!r} ({exc.strerror or one_line(exc)})", path=origin
        ) from None
    return Shard(name, data, samples, origin)


def write_labels(
    rows: LabelRows,
    shard: Shard,
    labels: npt.NDArray[Any],
    *,
    bad: npt.NDArray[np.bool_] | None = None,
    why: str = "",
) -> None:
    """One row per sample: id ``shard:index``, the label, the shard as source. A shard's rows
    follow the rows before (``parts`` adds the shards in the index's order), so a row's
    position is the sample's global index. A label no int64 holds (a ``uint64`` past 2**63), or
    one ``bad`` marks (``why`` says what it is), is written null and named under LG031."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n, first = len(labels), rows.rows
    bad = np.zeros(n, dtype=bool) if bad is None else bad
    if labels.dtype == np.uint64:
        wide = labels >= np.uint64(1 << 63)
        if wide.any():
            bad, why = bad | wide, why or "a uint64 label past the largest int64"
    values = np.where(bad, 0, labels).astype(np.int64)
    index = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
    ids = pc.binary_join_element_wise(pa.scalar(shard.name), index, ":")
    source = pa.repeat(pa.scalar(shard.name, pa.string()), n)
    rows.add_table(pa.table([ids, pa.array(values, mask=bad), source], schema=rows.schema))
    for i in np.flatnonzero(bad).tolist():
        rows.rejected(
            first + i,
            f"{shard.name}:{i}",
            shard.name,
            None,
            f"samples whose label field holds no class index ({why})",
            "rewrite these samples' labels as integers in [0, K)",
        )
    rows.counts["samples"] += n
    rows.counts["shards"] += 1


def read_parts(
    shards: list[Listed],
    job: Callable[[Listed, LabelRows], None],
    sink: RowSink,
    facts: AnnotationFacts,
    options: ReadOptions,
    rules: dict[str, Any],
) -> None:
    """Each shard's rows (``job``) added in the index's order: on the cluster, or from the
    cache, where ``options`` gives one (``parts``)."""
    rows = LabelRows(sink, facts, None)
    rules = rules | {"limit": facts.limit}
    add_parts(shards, job, rows, rules=rules, options=options)
    rows.close()


def listed(path: Path, name: str, entry: dict[str, Any]) -> Listed:
    """A shard as ``parts`` reads it: its file, its name, and its index entry (which keys its
    part in the cache with its bytes)."""
    return Listed(path, name, entry=json.dumps(entry, sort_keys=True, default=str))


def finish(facts: AnnotationFacts, label: str, empty: str | None) -> None:
    """The label field named in the report, and an index of no shard said (``empty``: in
    words, or ``None`` where there were shards)."""
    facts.counts.setdefault("shards", 0)
    facts.why += f"; label {label}"
    if empty is not None:
        facts.empty = empty


def entries(doc: Mapping[str, Any], key: str, path: Path) -> list[dict[str, Any]]:
    """The list of objects under ``key`` of an index.

    Raises:
        InputError: absent, not a list of objects, or empty.
    """
    found = doc.get(key)
    if not isinstance(found, list) or not all(isinstance(e, dict) for e in found):
        raise InputError(f"index.json has no list of {key}", path=str(path))
    return found


def count(entry: Mapping[str, Any], key: str, path: Path) -> int:
    """A non-negative integer field of an index entry.

    Raises:
        InputError: absent or not a non-negative integer below 2**32.
    """
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_SHARD:
        raise InputError(f"an index entry's {key!r} is not a count ({value!r})", path=str(path))
    return value


class IndexedReader(Reader):
    """A dataset that is a folder holding an ``index.json`` (the folder or the index given).
    Subclasses say which indexes are theirs (``holds``) and read the folder (``read_folder``)."""

    capabilities = frozenset({"column", "dask", "cache"})
    task = "classification"
    signature: ClassVar[str] = ""  # what detection saw, for the report

    def holds(self, doc: dict[str, Any]) -> bool:
        """Whether a parsed ``index.json`` is this format's."""
        raise NotImplementedError

    def read_folder(
        self, folder: Path, sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> None:
        """Read the dataset in ``folder`` into ``sink``."""
        raise NotImplementedError

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        folder = path.parent if path.name == "index.json" else path
        if task == "segmentation" or not folder.is_dir():
            return None
        try:
            _, doc = load_index(folder, self.name)
        except InputError:
            return None
        return Claim(0.95, self.signature) if self.holds(doc) else None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        path = paths[0]
        self.read_folder(path.parent if path.name == "index.json" else path, sink, facts, options)
        return Read()
