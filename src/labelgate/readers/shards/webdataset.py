"""WebDataset tar shards: samples grouped by key, the label from a ``.cls`` member or a field of
a ``.json`` member, only those members read.

Grouping is webdataset's own (src/webdataset/tariterators.py@e0953f9b): a member's key is its
path up to the first dot of its file name and its suffix the rest, lower-cased (``base_plus_ext``,
lines 25-37; ``group_by_keys``, lines 207-268); consecutive members of one key are one sample, a
new key (or a new shard) starts the next, and a suffix seen twice in a sample raises
``ValueError`` (line 255). The label is the first of the ``cls``, ``cls2``, ``index`` and ``txt``
members the first labelled sample holds (webdataset decodes the first three with ``int(data)``:
src/webdataset/autodecode.py:181-183; a ``txt`` only where it holds an integer), else a field
of its ``json`` member: ``--label-column``, or the first of ``label``, ``cls``, ``class``.
``--label-column`` may name a member's suffix instead (``cls2``).

Rows: id = ``shard:key``, label, source = the shard.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from labelgate.core.annotations import AnnotationFacts
from labelgate.errors import InputError
from labelgate.io.bounded import load_json
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.layout import first_files
from labelgate.readers.common.sink import RowSink, in_int64
from labelgate.readers.shards.listing import Shard, list_file_names, shards_of
from labelgate.readers.shards.parts import add_parts
from labelgate.readers.shards.rows import LabelRows
from labelgate.readers.shards.tarwalk import members

__all__ = ["MEMBERS", "WebDatasetReader", "is_tar_name", "key_and_suffix", "read_webdataset"]

MEMBERS = ("cls", "cls2", "index", "txt")  # label members, in the order one is chosen
FIELDS = ("label", "cls", "class")  # a .json member's label field, detected in this order
_SUFFIXES = (".tar", ".tgz", ".tar.gz")
_KEY = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")  # webdataset's base_plus_ext
_FIX = "write one integer class index in every sample's label member (or --label-column names it)"


def is_tar_name(name: str) -> bool:
    """Whether a file name ends like a tar shard."""
    return name.lower().endswith(_SUFFIXES)


def key_and_suffix(fname: str) -> tuple[str | None, str]:
    """A member's sample key and suffix, as webdataset's ``base_plus_ext`` splits them
    (``None``: a name without a dot, which webdataset skips)."""
    m = _KEY.match(fname)
    return (None, "") if m is None else (m.group(1), m.group(2).lower())


def _is_shard(path: Path) -> bool:
    return is_tar_name(path.name)


def _names_shard(line: str) -> bool:
    """Whether a list file's line names a tar shard (a URI's query left aside)."""
    return is_tar_name(line.split("?", 1)[0])


class _Label:
    """Where the input's labels are: a member's suffix, or a field of the ``json`` member."""

    def __init__(self, given: str | None) -> None:
        self.given = given
        self.member: str | None = None
        self.field: str | None = None

    def wanted(self, suffix: str) -> bool:
        if self.member is not None:
            return suffix == self.member
        if self.field is not None:
            return suffix == "json"
        return suffix in MEMBERS or suffix == "json" or suffix == (self.given or "").lower()

    def choose(self, sample: dict[str, bytes | None]) -> bool:
        """Settle the label's place from the first sample holding one; whether it is settled."""
        given = self.given
        if given is not None:
            if given.lower() in sample:
                self.member = given.lower()
            elif "json" in sample:
                self.field = given
            return self.member is not None or self.field is not None
        for suffix in MEMBERS:
            data = sample.get(suffix)
            if data is not None and (suffix != "txt" or _integer(data) is not None):
                self.member = suffix
                return True
        doc = _json(sample.get("json"))
        if isinstance(doc, dict):
            self.field = next((f for f in FIELDS if f in doc), None)
        return self.field is not None

    @property
    def where(self) -> str:
        return f"the .{self.member} member" if self.member else f"the .json field {self.field!r}"


def _integer(data: bytes) -> int | None:
    """A member's integer as webdataset's ``int(data)`` reads it (``None``: not one)."""
    try:
        return int(data)
    except ValueError:
        return None


def _json(data: bytes | None) -> object:
    if data is None:
        return None
    try:
        return load_json(data, "a .json member")
    except (ValueError, InputError):
        return None


def read_webdataset(
    shards: list[Shard],
    sink: RowSink,
    facts: AnnotationFacts,
    label: str | None,
    options: ReadOptions | None = None,
) -> None:
    """Every sample of every shard as a row in ``sink``; the label's place settled first, from
    the first sample holding one, then each shard on its own (``parts``: on the cluster, or from
    the cache, where ``options`` gives one)."""
    options = options or ReadOptions()
    rows = LabelRows(sink, facts, label)
    place = _settled(shards, label)
    rules = {"reader": "webdataset", "label": label, "member": place.member, "field": place.field}
    rules |= {"limit": str(facts.limit)}
    job = partial(_shard_rows, place=place)
    add_parts(shards, job, rows, rules=rules, options=options)
    samples = rows.rows
    rows.counts["samples"] = samples
    rows.close()
    if samples:
        facts.notes.append(f"labels read from {place.where} of each sample")
    else:
        facts.empty = f"no sample in {len(shards)} shards"


def _settled(shards: list[Shard], label: str | None) -> _Label:
    """Where the labels are, from the first sample (in the shards' order) that holds one.

    Raises:
        InputError: samples, none of which holds a label (or the one ``label`` names).
    """
    place = _Label(label)
    seen = False
    for shard in shards:
        for _, sample, twice in _samples(shard, place):
            seen = True
            if not twice and place.choose(sample):
                return place
    if seen and label is not None:
        raise InputError(
            f"no sample holds a {label!r} member or a .json member with that field",
            path=shards[0].name,
        )
    if seen:
        raise InputError(
            "no sample holds a label member (.cls, .cls2, .index, a .txt holding an integer) or "
            "a .json member with a label, cls or class field; --label-column names one",
            path=shards[0].name,
        )
    return place


def _shard_rows(shard: Shard, rows: LabelRows, *, place: _Label) -> None:
    """One shard's rows, the label's place settled (runs on a worker, for a cluster)."""
    for key, sample, twice in _samples(shard, place):
        _row(rows, place, shard, f"{shard.name}:{key}", sample, twice)
    rows.counts["shards"] += 1


def _samples(shard: Shard, place: _Label) -> list[tuple[str, dict[str, bytes | None], str]]:
    """(key, suffix -> bytes of label members, a suffix seen twice) of each sample of a shard,
    grouped as webdataset groups them."""
    out: list[tuple[str, dict[str, bytes | None], str]] = []
    key: str | None = None
    sample: dict[str, bytes | None] = {}
    twice = ""

    def wanted(fname: str) -> bool:
        return place.wanted(key_and_suffix(fname)[1])

    for fname, data, _ in members(shard.path, shard.name, wanted, uri=shard.uri, size=shard.size):
        prefix, suffix = key_and_suffix(fname)
        if prefix is None:
            continue
        if prefix != key:
            if key is not None:
                out.append((key, sample, twice))
            key, sample, twice = prefix, {}, ""
        if suffix in sample:
            twice = twice or suffix
        sample[suffix] = data
    if key is not None:
        out.append((key, sample, twice))
    return out


def _row(
    rows: LabelRows,
    place: _Label,
    shard: Shard,
    ident: str,
    sample: dict[str, bytes | None],
    twice: str,
) -> None:
    """One sample's row: its label, or a rejected row named by LG031."""
    src = shard.name
    if twice:
        rows.reject(
            ident,
            src,
            None,
            f"samples holding a member suffix twice ({twice}): webdataset raises "
            "'duplicate file name in tar file' (tariterators.py:255)",
            "give each member of a sample its own suffix",
        )
        return
    if place.member is not None:
        if place.member not in sample:
            rows.reject(ident, src, None, f"samples without a .{place.member} member", _FIX)
            return
        data = sample[place.member]
        value = None if data is None else _integer(data)
        if value is None or not in_int64(value):
            shown = None if data is None else data[:40].decode("utf-8", errors="replace")
            rows.reject(
                ident,
                src,
                shown,
                f".{place.member} members that do not hold an integer (webdataset's int() raises)",
                _FIX,
            )
            return
        rows.add(ident, value, src)
        return
    field = place.field or ""
    doc = _json(sample.get("json"))
    if not isinstance(doc, dict) or field not in doc:
        what = "no .json member" if "json" not in sample else f"no {field!r} field in it"
        rows.reject(ident, src, None, f"samples with {what}", _FIX)
        return
    value = doc[field]
    if value is None:
        rows.add(ident, None, src)  # a null label: LG003's
    elif isinstance(value, int) and not isinstance(value, bool) and in_int64(value):
        rows.add(ident, value, src)
    else:
        rows.reject(
            ident,
            src,
            str(value)[:40],
            f".json field {field!r} values that are not an integer class index",
            _FIX,
        )


class WebDatasetReader(Reader):
    """WebDataset tar shards: a shard, a folder, a glob, a brace pattern, a list file."""

    name = "webdataset"
    title = "WebDataset tar shards (.cls / .json labels, grouped by key)"
    suffixes = _SUFFIXES
    capabilities = frozenset({"many", "dask", "cache"})
    task = "classification"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if task not in (None, "multiclass", "classification"):
            return None
        try:
            if path.is_dir():
                if any(first_files(path, "*" + suffix, 1) for suffix in _SUFFIXES):
                    return Claim(0.55, "a folder of .tar shards (WebDataset)")
                return None
            if path.is_file() and is_tar_name(path.name):
                return Claim(0.9, f"a {path.suffix} shard (WebDataset)")
            listed = path.is_file() and path.suffix.lower() in (".txt", ".shards", ".list")
            if listed and list_file_names(path, _names_shard) is not None:
                return Claim(0.85, "a list of .tar shards, one a line (WebDataset)")
        except OSError:
            return None
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        shards = shards_of(paths, _is_shard, "WebDataset", remote=True)
        facts.notes.append(f"{len(shards)} shards, each a source")
        read_webdataset(shards, sink, facts, options.label_column, options)
        return Read()
