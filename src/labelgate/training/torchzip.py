"""A torch checkpoint's zip archive checked before ``torch.load`` reads it.

``torch.save`` writes a zip of stored (uncompressed) members: ``<name>/data.pkl``, the pickle of
the containers, and ``<name>/data/<key>``, one member per storage, that the pickle names by a
persistent id ``("storage", <Type>Storage, key, location, numel)`` and rebuilds into tensors with
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` (torch/serialization.py,
``_save`` and ``persistent_load`` in ``_load``, torch 2.13.0). ``torch.load(mmap=True)`` maps the
file and takes each storage at its member's offset, and miniz inflates any compressed member into
memory at the size the central directory claims. So, before torch reads anything:

- every member's local header is where the central directory says, its data inside the file and
  before the directory, no two members' bytes overlap, and where the local header carries sizes
  (no data descriptor), they are the directory's;
- a stored member's sizes agree; a compressed one (deflate) inflates to at most
  ``MAX_INFLATED`` bytes, all of them together too: a deflate bomb is refused unread;
- the pickle is at most ``MAX_PICKLE`` bytes and is scanned by an unpickler that builds no object
  of any class (every global is an inert stand-in): its nesting is bounded as JSON's is
  (``bounded.MAX_DEPTH``), and every storage it names is a member at least as long as the storage
  claims, and every tensor built on a storage lies inside it. A pickle the stand-ins cannot
  follow (one that calls what a global returned as a class) is left to torch's weights-only
  unpickler, which refuses any global outside its list; every tensor torch builds is then held
  to its storage again (``checkpoints``).
"""

from __future__ import annotations

import io
import itertools
import math
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

from labelgate.io.bounded import MAX_DEPTH

__all__ = ["MAX_INFLATED", "MAX_PICKLE", "check_archive"]

MAX_INFLATED = 64 << 20  # bytes all compressed members may inflate to (torch.save stores them)
MAX_PICKLE = 16 << 20  # bytes of data.pkl: a state dict's pickle holds ~150 bytes a tensor
MAX_NODES = 4_000_000  # containers and values the pickle may build
MAX_GLOBALS = 10_000  # distinct globals it may name (torch's weights-only list holds ~100)
_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # a zip local file header (APPNOTE 4.3.7)
_ITEMSIZE = {
    "DoubleStorage": 8,
    "FloatStorage": 4,
    "HalfStorage": 2,
    "BFloat16Storage": 2,
    "LongStorage": 8,
    "IntStorage": 4,
    "ShortStorage": 2,
    "CharStorage": 1,
    "ByteStorage": 1,
    "BoolStorage": 1,
    "ComplexFloatStorage": 8,
    "ComplexDoubleStorage": 16,
    "UntypedStorage": 1,
}


# what zipfile raises on a damaged archive (NotImplementedError: a version or a method it lacks)
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError)


class Refused(ValueError):
    """Why a checkpoint's archive is not read (one line, naming no byte of the file)."""


class _Built:
    """What a global named by the pickle built: the arguments it was called (or ``NEWOBJ``-ed)
    with, the state set on it and the items put in it. Each global is a subclass of its own
    (``_Scanner.find_class``), never the class the pickle names."""

    global_name = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Built:
        built = super().__new__(cls)
        built.args, built.state, built.items = args, None, []
        return built

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args: tuple[Any, ...]
        self.state: Any
        self.items: list[Any]

    def __call__(self, *args: Any, **kwargs: Any) -> _Built:  # REDUCE on what was built
        return _Built(self, *args)

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def append(self, value: Any) -> None:  # APPEND onto what a global built (a list subclass)
        self.items.append(value)

    def extend(self, values: Any) -> None:
        self.items.extend(values)

    def __setitem__(self, key: Any, value: Any) -> None:  # SETITEM(S): an OrderedDict
        self.items.append((key, value))


class _Storage:
    def __init__(self, key: str, nbytes: int, itemsize: int) -> None:
        self.key, self.nbytes, self.itemsize = key, nbytes, itemsize


class _Scanner(pickle._Unpickler):
    """The pickle walked by Python's own unpickler, whose memo is a dict: the C one sizes its
    memo array by the largest index a ``LONG_BINPUT`` names, so four bytes of a damaged pickle
    ask for gigabytes."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.storages: dict[str, _Storage] = {}
        self.globals: dict[str, type[_Built]] = {}

    def find_class(self, module: str, name: str) -> Any:
        key = f"{module}.{name}"[:200]
        made = self.globals.get(key)
        if made is None:
            if len(self.globals) >= MAX_GLOBALS:
                raise Refused(f"its pickle names more than {MAX_GLOBALS:,} globals")
            made = type("Global", (_Built,), {"global_name": key})
            self.globals[key] = made
        return made

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise Refused("a persistent id that is not a torch storage")
        _, kind, key, _, numel = pid
        named = isinstance(kind, type) and issubclass(kind, _Built)
        type_name = kind.global_name.rsplit(".", 1)[-1] if named else ""
        if not isinstance(key, str) or isinstance(numel, bool) or not isinstance(numel, int):
            raise Refused("a storage whose key or size is of the wrong type")
        if numel < 0:
            raise Refused(f"storage {key[:40]!r} claims a negative size")
        itemsize = _ITEMSIZE.get(type_name, 1)  # a type not listed: at least a byte an element
        storage = _Storage(key, numel * itemsize, itemsize)
        self.storages[key] = storage
        return storage


def _members(path: Path, archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members, each checked against the zip's own records."""
    size = path.stat().st_size
    directory = archive.start_dir
    spans: list[tuple[int, int, str]] = []
    inflated = 0
    with path.open("rb") as f:
        for info in archive.infolist():
            name = info.filename[:80]
            f.seek(info.header_offset)
            raw = f.read(_LOCAL.size)
            if len(raw) < _LOCAL.size:
                raise Refused(f"member {name!r}: its local header lies past the end of the file")
            sig, _, flags, method, _, _, _, csize, usize, nlen, elen = _LOCAL.unpack(raw)
            if sig != b"PK\x03\x04":
                raise Refused(f"member {name!r}: no local header where the directory says")
            start = info.header_offset + _LOCAL.size + nlen + elen
            end = start + info.compress_size
            if end > min(directory, size):
                raise Refused(f"member {name!r}: its bytes run past the archive's data")
            if method != info.compress_type:
                raise Refused(f"member {name!r}: its header and the directory disagree")
            described = not flags & 0x08 and 0xFFFFFFFF not in (csize, usize)
            if described and (csize, usize) != (info.compress_size, info.file_size):
                raise Refused(f"member {name!r}: its sizes and the directory's disagree")
            if info.compress_type == zipfile.ZIP_STORED:
                if info.compress_size != info.file_size:
                    raise Refused(f"member {name!r}: stored, yet of two sizes")
            elif info.compress_type == zipfile.ZIP_DEFLATED:
                inflated += info.file_size
                if inflated > MAX_INFLATED:
                    raise Refused(
                        f"compressed members that inflate to over {MAX_INFLATED >> 20} MB "
                        "(torch.save stores its members): refused unread"
                    )
            else:
                raise Refused(f"member {name!r}: compressed by a method torch does not read")
            spans.append((info.header_offset, end, name))
    spans.sort()
    for (_, end, name), (start, _, other) in itertools.pairwise(spans):
        if start < end:
            raise Refused(f"members {name!r} and {other!r} share bytes")
    return archive.infolist()


def check_archive(path: Path) -> None:
    """Check a torch zip checkpoint before ``torch.load`` reads it (the module's list).

    Raises:
        Refused: the first thing wrong, in one line.
    """
    try:
        archive = zipfile.ZipFile(path)
    except _ZIP_ERRORS as exc:
        raise Refused(f"not a readable zip archive ({type(exc).__name__})") from None
    with archive:
        members = {info.filename: info for info in _members(path, archive)}
        pickles = [name for name in members if name.endswith("data.pkl")]
        if len(pickles) != 1:
            raise Refused(f"{len(pickles)} data.pkl members, torch.save writes one")
        info = members[pickles[0]]
        if info.file_size > MAX_PICKLE:
            raise Refused(f"a pickle of {info.file_size:,} bytes (at most {MAX_PICKLE >> 20} MB)")
        try:
            data = archive.read(info)
        except _ZIP_ERRORS as exc:
            raise Refused(f"its pickle cannot be read ({type(exc).__name__})") from None
        prefix = pickles[0][: -len("data.pkl")]
        scanner = _Scanner(data)
        try:
            root = scanner.load()
        except Refused:
            raise
        except (pickle.UnpicklingError, EOFError, MemoryError, RecursionError):
            raise Refused("its pickle is not readable") from None
        except Exception:  # noqa: BLE001 - a stand-in used as what it stands for
            return  # torch's weights-only unpickler judges it, and refuses what it cannot build
        _walk(root)
        for key, storage in scanner.storages.items():
            record = members.get(f"{prefix}data/{key}")
            if record is None:
                raise Refused(f"storage {key[:40]!r} has no member in the archive")
            if record.file_size < storage.nbytes:
                raise Refused(
                    f"storage {key[:40]!r} claims {storage.nbytes:,} bytes, its member holds "
                    f"{record.file_size:,}"
                )


def _walk(root: Any) -> None:
    """Refuse a pickle nested deeper than ``MAX_DEPTH`` or of more than ``MAX_NODES`` values, and
    a tensor that reaches outside its storage. Iterative, each object visited once (a pickle
    can make a list hold itself)."""
    seen: set[int] = set()
    stack = [(root, 0)]
    while stack:
        obj, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Refused(f"its pickle is nested deeper than {MAX_DEPTH} levels")
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if len(seen) > MAX_NODES:
            raise Refused(f"its pickle builds more than {MAX_NODES:,} values")
        if isinstance(obj, dict):
            children = [*obj.keys(), *obj.values()]
        elif isinstance(obj, list | tuple | set | frozenset):
            children = list(obj)
        elif isinstance(obj, _Built):
            _check_tensor(obj)
            children = [*obj.args, obj.state, *obj.items]
        else:
            continue
        stack.extend((child, depth + 1) for child in children)


def _check_tensor(built: _Built) -> None:
    """A tensor rebuilt on a storage (``_rebuild_tensor_v2(storage, offset, size, stride,
    ...)``) must lie inside it: its last element at ``offset + sum((size-1) * stride)``."""
    if not built.global_name.startswith("torch._utils._rebuild_tensor"):
        return
    args = built.args
    if len(args) < 4 or not isinstance(args[0], _Storage):
        return
    storage, offset, size, stride = args[:4]
    ints = (offset, *size, *stride) if isinstance(size, tuple) and isinstance(stride, tuple) else ()
    if not ints or any(isinstance(v, bool) or not isinstance(v, int) for v in ints):
        raise Refused(f"a tensor on storage {storage.key[:40]!r} of malformed size or stride")
    if len(size) != len(stride) or offset < 0 or any(v < 0 for v in (*size, *stride)):
        raise Refused(f"a tensor on storage {storage.key[:40]!r} of malformed size or stride")
    if math.prod(size) == 0:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if (last + 1) * storage.itemsize > storage.nbytes:
        raise Refused(
            f"a tensor reaches past its storage {storage.key[:40]!r} "
            f"({(last + 1) * storage.itemsize:,} bytes of {storage.nbytes:,})"
        )
