"""What a COCO file's first bytes say (what a file that is not JSON is), where its
top-level arrays lie in its bytes, and those arrays cut into blocks of whole
elements that a fast parser reads on its own (``readers/coco/cocoblocks.py``).

No byte is trusted on its face: an array found by its key (the first mention before the
annotations, the last after them: a file's categories are found from its end, not after a scan
of every annotation) is taken only when the rest of the file (the arrays emptied) parses as one
object whose keys, each written once, hold those empty arrays, and a block is cut
only between ``}`` and ``{`` with a comma between them. A cut that fell inside a string or a
nested array leaves the block before it unbalanced, so its parse fails and the caller reads the
file the sequential way: a layout this module does not know is never read wrongly, only slowly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelgate.errors import InputError
from labelgate.io.bounded import MAX_DEPTH, DepthGuard

__all__ = ["Layout", "blocks", "find_layout", "not_json", "release"]

KEYS = ("images", "annotations", "categories")
_KEY = re.compile(rb'"(images|annotations|categories)"\s*:\s*\[')
_GAP = re.compile(rb"\}\s*,\s*\{")  # between two objects of an array


@dataclass(frozen=True, slots=True)
class Layout:
    """The top-level arrays of one COCO file.

    Attributes:
        arrays: key -> (offset of the first byte after ``[``, offset of the closing ``]``),
            in file order.
    """

    arrays: dict[str, tuple[int, int]]

    def before(self, first: str, second: str) -> bool:
        """Whether the array ``first`` comes before ``second`` (both present)."""
        return self.arrays[first][0] < self.arrays[second][0]


def find_layout(view: Any) -> Layout | None:
    """The arrays of ``view`` (bytes or an mmap of the file), or ``None`` where the file is not
    one object holding each of them once, directly, with nothing but other keys around them."""
    import orjson

    found: dict[str, tuple[int, int]] = {}
    head = _find(view, b'"annotations"')
    for key in KEYS:
        needle = b'"' + key.encode() + b'"'
        at = head if key == "annotations" else _find(view, needle, head)
        if at < 0 <= head and key != "annotations":  # after the annotations: searched from the
            at = _rfind(view, needle, head)  # end (its last mention; the skeleton tells)
        match = None if at < 0 else _KEY.match(view, at)
        if match is not None:
            found[key] = (match.end(), -1)
        elif at >= 0:
            return None  # the key's first mention is not the array: not a layout to trust
    if "annotations" not in found:
        return None
    starts = sorted(found.items(), key=lambda kv: kv[1][0])
    arrays: dict[str, tuple[int, int]] = {}
    for n, (key, (start, _)) in enumerate(starts):
        if n + 1 < len(starts):  # ends where `], "next": [` begins
            nxt = _key_quote(view, starts[n + 1][1][0])
            end = _back(view, nxt, b",")
        else:  # the last one ends where `]}` closes the file
            end = _back(view, len(view), b"}")
        end = -1 if end < 0 else _back(view, end, b"]")
        if end < start:
            return None
        arrays[key] = (start, end)
    skeleton = b""
    at = 0
    for start, end in arrays.values():
        skeleton += bytes(view[at:start])
        at = end
    skeleton += bytes(view[at:])
    try:
        DepthGuard(MAX_DEPTH, "skeleton").feed(skeleton)
        orjson.loads(skeleton)  # valid JSON (the stdlib parser below reads a little more)
        doc = json.loads(skeleton, object_pairs_hook=_once)
    except (InputError, orjson.JSONDecodeError, ValueError):
        return None
    if not isinstance(doc, dict) or any(doc.get(k) != [] for k in arrays):
        return None
    return Layout(arrays)


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each written once (a key twice: which of its arrays counts
    depends on the parser; the sequential read reads both)."""
    made = dict(pairs)
    if len(made) != len(pairs):
        raise ValueError("a key written twice")
    return made


def release(view: Any, start: int, end: int) -> None:
    """Give back the pages of ``[start, end)`` of a mapped file once read: the kernel maps whole
    read-ahead windows into the process, and a pass through a 1 GB file must not become this
    process's memory. Bytes in memory (tests) have nothing to give back."""
    import mmap

    if isinstance(view, mmap.mmap) and end > start:
        low = start - start % mmap.PAGESIZE
        view.madvise(mmap.MADV_DONTNEED, low, end - low)


def _find(view: Any, needle: bytes, stop: int = -1, window: int = 16 << 20) -> int:
    """``view.find(needle)`` before ``stop`` (-1: the end) a window at a time, each window
    released once searched."""
    at, size = 0, len(view) if stop < 0 else stop
    while at < size:
        hit = int(view.find(needle, at, min(size, at + window + len(needle))))
        release(view, at, min(size, at + window))
        if hit >= 0:
            return hit
        at += window
    return -1


def _rfind(view: Any, needle: bytes, start: int, window: int = 16 << 20) -> int:
    """``view.rfind(needle)`` after ``start``, from the end a window at a time, each window
    released once searched."""
    end, window = len(view), max(window, 2 * len(needle))  # each step moves on
    while end > start:
        low = max(start, end - window)
        hit = int(view.rfind(needle, low, end))
        release(view, low, end)
        if hit >= 0:
            return hit
        if low == start:
            break
        end = low + len(needle) - 1  # a needle across the window's edge is found in the next
    return -1


def _key_quote(view: Any, array_start: int) -> int:
    """The offset of the opening quote of the key whose array starts at ``array_start``."""
    colon = view.rfind(b":", 0, array_start)
    close = view.rfind(b'"', 0, colon)
    return int(view.rfind(b'"', 0, close))


def _back(view: Any, end: int, mark: bytes) -> int:
    """The offset of ``mark`` just before ``end`` with only white space between, else -1."""
    at = end - 1
    while at >= 0 and view[at : at + 1] in (b" ", b"\t", b"\r", b"\n"):
        at -= 1
    return at if at >= 0 and view[at : at + 1] == mark else -1


def blocks(
    view: Any, start: int, end: int, size: int, most: int | None = None
) -> list[tuple[int, int]]:
    """``[start, end)`` (an array's elements) cut into ranges of about ``size`` bytes, each of
    whole elements if the cuts are right (the parse of each range tells); the first ``most``
    ranges only, when given."""
    while start < end and view[start : start + 1] in (b" ", b"\t", b"\r", b"\n"):
        start += 1
    out: list[tuple[int, int]] = []
    while start < end and (most is None or len(out) < most):
        match = _GAP.search(view, min(start + size, end), end)
        release(view, start, end if match is None else match.end())
        if match is None:
            out.append((start, end))
            break
        out.append((start, match.start() + 1))
        start = match.end() - 1
    return out


_MAGIC = {b"PAR1": "a Parquet file", b"\x89PNG": "a PNG image", b"PK\x03\x04": "a zip archive"}


def not_json(path: Path, exc: Exception) -> str:
    """Why a file is not JSON, in words: what it is when its first bytes say so, else the
    parser's reason without the bytes it quotes (a binary file's would reach the terminal)."""
    with path.open("rb") as f:
        head = f.read(4)
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            return f"not valid JSON: {what} (for a label table, --input-format table or auto)"
    if isinstance(exc, UnicodeDecodeError):
        return "not valid JSON (a string holds bytes that are not UTF-8)"
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    first = "".join(c for c in text.split("\n", 1)[0] if c.isprintable()).strip()
    return f"not valid JSON ({first[:80] or type(exc).__name__})"
