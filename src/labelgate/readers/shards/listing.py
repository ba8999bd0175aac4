"""The shards an input names: a file, a folder of them, a glob, a brace pattern, a list file.

Each shard is a source of its own: examples are named ``shard:key`` (WebDataset) or
``shard:index`` (TFRecord), the shard named by its path as given (its file name for a folder's
shards). A name that expands to no file is refused with the shard named.
"""

from __future__ import annotations

import fnmatch
import glob
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from labelgate.errors import InputError, UsageError
from labelgate.io.files import read_small_text
from labelgate.io.uri import display_uri
from labelgate.readers.shards.braces import MAX_SHARDS, expand_urls, is_brace_pattern

__all__ = ["Shard", "list_file_names", "remote_shards", "shards_of"]

_GLOB = set("*?[")


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard: the file and the name its examples carry (its source).

    Attributes:
        path: the local file (for a remote shard, its path inside the URI, never opened).
        name: the name its examples carry: its file name where the names are unique.
        uri: the URI of a shard on object storage (with its query: endpoint, scheme...).
        size: a remote shard's size in bytes, as listed.
        entry: what the dataset's index says of the shard, as JSON (MDS, LitData: its sample
            count, size, compression, columns): its part depends on it as on its bytes.
    """

    path: Path
    name: str
    uri: str | None = None
    size: int = 0
    entry: str = ""


def list_file_names(path: Path, keep: Callable[[str], bool]) -> list[str] | None:
    """The lines of a list file when its first lines all name shards (``keep``), else ``None``;
    blank lines and ``#`` comments are skipped."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    lines = [s.strip() for s in head.decode("utf-8", errors="replace").splitlines()]
    if len(head) == 4096 and lines:
        lines.pop()  # cut short by the read
    named = [s for s in lines if s and not s.startswith("#")]
    return named if named and all(keep(s) for s in named) else None


def shards_of(
    given: list[Path],
    is_shard: Callable[[Path], bool],
    kind: str,
    *,
    lists: bool = True,
    remote: bool = False,
    names: Callable[[str], bool] | None = None,
) -> list[Shard]:
    """The shards of the paths given, in order (a pattern expanded as webdataset expands it, a
    folder's shards sorted, a list file's lines in order).

    Raises:
        InputError: a name matches no file, a folder holds no shard, or one shard is named twice.
        UsageError: a URI, where the reader reads no remote shard (``remote``).

    ``names``: which objects below a remote prefix are shards (default: tar names).
    """
    found: list[Shard] = []
    for path in given:
        text = str(path)
        if "://" in text or re.match(r"^[A-Za-z][\w+.-]*:/(?!/)", text):
            uri = re.sub(r"^(\w+):/(?!/)", r"\1://", text)  # Path folds the // of a URI
            if not remote:
                raise UsageError(
                    f"{kind} shards on object storage or HTTP are not read yet "
                    f"({display_uri(uri)}): copy them to a local folder first"
                )
            found.extend(remote_shards(uri, kind, names or _tar))
            continue
        found.extend(_one(path, text, is_shard, kind, lists))
    seen: set[str] = set()
    for shard in found:
        key = shard.uri or str(shard.path.resolve())
        if key in seen:
            raise InputError(f"this {kind} shard is named twice", path=shard.name)
        seen.add(key)
    if len(found) > MAX_SHARDS:
        raise InputError(f"more than {MAX_SHARDS:,} shards", path=str(given[0]))
    if len({s.path.name for s in found}) == len(found):  # short names where they are unique
        return [Shard(s.path, s.path.name, s.uri, s.size) for s in found]
    return found


def remote_shards(uri: str, kind: str, names: Callable[[str], bool] | None = None) -> list[Shard]:
    """The shards a URI names: a brace pattern of objects, one object, a glob of the objects
    of one prefix (``train-*.tfrecord``, sorted), or every shard below a prefix (sorted; its
    object names kept by ``names``, by default tar names), listed through pyarrow's filesystem
    for the URI (credentials from the usual environment).

    Raises:
        InputError: an object does not exist, or the prefix (or glob) holds no shard.
    """
    import pyarrow as pa
    import pyarrow.fs as pafs

    from labelgate.io.sources import filesystem

    keep = names or _tar
    base, _, query = uri.partition("?")
    suffix = f"?{query}" if query else ""
    scheme = base.partition("://")[0]
    named = expand_urls(base) if is_brace_pattern(base) else [base]
    found: list[Shard] = []
    for one in named:
        parent, _, leaf = one.rpartition("/")
        globbed = bool(_GLOB & set(leaf)) and "/" in one.partition("://")[2]
        fs, inner = filesystem((parent if globbed else one) + suffix)
        try:
            info = fs.get_file_info(inner)
            if info.type == pafs.FileType.Directory:
                listed = fs.get_file_info(pafs.FileSelector(inner, recursive=False))
                wanted = partial(_matches, leaf) if globbed else keep
                inside = sorted(
                    (i for i in listed if i.type == pafs.FileType.File and wanted(i.base_name)),
                    key=lambda i: i.path,
                )
                if not inside:
                    raise InputError(f"no {kind} shard below this prefix", path=display_uri(one))
            elif info.type == pafs.FileType.File:
                inside = [info]
            else:
                raise InputError(f"this {kind} shard does not exist", path=display_uri(one))
        except (pa.ArrowException, OSError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"cannot list ({exc})", path=display_uri(one)) from None
        for i in inside:
            full = f"{scheme}://{i.path}"
            found.append(Shard(Path(i.path), display_uri(full), full + suffix, int(i.size or 0)))
    return found


def _matches(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern)


def _tar(name: str) -> bool:
    return name.lower().endswith((".tar", ".tgz", ".tar.gz"))


def _one(
    path: Path, text: str, is_shard: Callable[[Path], bool], kind: str, lists: bool
) -> list[Shard]:
    if is_brace_pattern(text) and not path.exists():
        return [_existing(Path(n), n, kind) for n in expand_urls(text)]
    if _GLOB & set(text) and not path.exists():
        matched = sorted(glob.glob(text))  # noqa: PTH207 (the pattern may be absolute)
        if not matched:
            raise InputError(f"no {kind} shard matches this pattern", path=text)
        return [_existing(Path(n), n, kind) for n in matched]
    if path.is_dir():
        inside = sorted(p for p in path.iterdir() if p.is_file() and is_shard(p))
        if not inside:
            raise InputError(f"no {kind} shard in this folder", path=text)
        return [Shard(p, p.name) for p in inside]
    if lists and path.is_file() and not is_shard(path):
        names = list_file_names(path, lambda s: True)
        if names is None:
            raise InputError(f"neither a {kind} shard nor a list of them", path=text)
        body = read_small_text(path, f"the {kind} shard list")
        listed = [s.strip() for s in body.splitlines()]
        found: list[Shard] = []
        for name in (s for s in listed if s and not s.startswith("#")):
            if "://" in name:  # a list of objects (only the WebDataset reader reads lists)
                found.extend(remote_shards(name, kind))
                continue
            p = Path(name) if Path(name).is_absolute() else path.parent / name
            found.extend(_one(p, str(p), is_shard, kind, lists=False))
        return found
    return [_existing(path, text, kind)]


def _existing(path: Path, name: str, kind: str) -> Shard:
    if not path.is_file():
        raise InputError(f"this {kind} shard does not exist", path=name)
    return Shard(path, name)
