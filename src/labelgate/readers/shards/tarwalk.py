"""A tar shard walked header to header: every member's name, the bytes of the few asked for.

Python's ``tarfile`` opened for random access reads a member's 512-byte header and seeks past
its data to the next one, so a shard of images costs one header read per member, not its size;
it reads the byte before each header to prove the data before it is all there, so a shard cut
inside a member is an error, not a shorter shard. Members are filtered as webdataset's
``tar_file_iterator`` filters them (src/webdataset/tariterators.py:128-147@e0953f9b): only
regular files, no top-level ``__name__`` member, none matching ``__[^/]*__($|/)``.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from labelgate.errors import InputError, one_line

__all__ = ["MAX_MEMBER", "members"]

MAX_MEMBER = 1 << 20  # bytes of a label member read: a longer one is no label
_META = re.compile(r"__[^/]*__($|/)")


def members(
    path: Path, name: str, wanted: Callable[[str], bool]
) -> Iterator[tuple[str, bytes | None, int]]:
    """(member name, its bytes where ``wanted(name)`` and it is at most ``MAX_MEMBER`` bytes,
    else ``None``, its size) of every member webdataset would read, in the shard's order.

    Raises:
        InputError: the shard is not a tar, or is cut short (``name`` is named).
    """
    try:
        with tarfile.open(path, mode="r:*") as tar:
            for info in _walk(tar):
                fname = info.name
                if not info.isreg():
                    continue
                if "/" not in fname and fname.startswith("__") and fname.endswith("__"):
                    continue
                if _META.match(fname):
                    continue
                data = None
                if wanted(fname) and info.size <= MAX_MEMBER:
                    f = tar.extractfile(info)
                    data = f.read() if f is not None else None
                    if data is not None and len(data) < info.size:
                        raise tarfile.ReadError("unexpected end of data")
                yield fname, data, info.size
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise InputError(
            f"unreadable tar shard ({one_line(exc)}): truncated, or not a tar", path=name
        ) from None


def _walk(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one after the other, none kept (a shard of 100,000 members holds no list of
    them: webdataset empties ``members`` the same way)."""
    while True:
        info = tar.next()
        if info is None:
            return
        yield info
        tar.members = []  # type: ignore[attr-defined]
