"""Bounded reading of JSON, YAML and text: nesting, values, line length and size checked as the
bytes arrive, before a parser builds anything from them (docs/security.md, "Limits").

- JSON nesting (and, in a small file, the number of values) is measured on the raw bytes
  (strings and escapes skipped) by ``DepthGuard``, fed chunk by chunk: ``load_json``
  before ``json.loads`` sees a small file, and ``guarded_stream`` under ijson for a large
  one, so a COCO file nested 100,000 deep inside one annotation is refused after reading that
  far, never built.
- YAML nesting and values are counted as PyYAML composes nodes (``yaml_limits``), and a YAML
  error is worded by its position alone (``yaml_problem``): PyYAML's message quotes the line.
- Text lines are read with a bound (``bounded_lines``): a file without newlines is never
  read whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from labelgate.errors import InputError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_LINE",
    "MAX_STRING",
    "READ_SIZE",
    "DepthGuard",
    "bounded_lines",
    "guarded_stream",
    "load_json",
    "yaml_limits",
    "yaml_problem",
]

MAX_DEPTH = 64  # levels of nesting; COCO needs 5 (a polygon), a contract or a class map 4
MAX_LINE = 1 << 20  # bytes of one text line; the rest of a longer line is skipped, never held
MAX_ENTRIES = 2_000_000  # values in one small JSON or YAML file (twice the class-name limit)
MAX_STRING = 16 << 20  # bytes of one string in a streamed JSON file (a COCO RLE is kilobytes)
READ_SIZE = 1 << 20  # ijson's buf_size for a streamed file: a long string spans few reads

_ESCAPES = re.compile(rb"\\.", re.DOTALL)
_DROP = bytes(b for b in range(256) if b not in b'"[]{},')
_DROP_COMMAS = _DROP + b","  # nesting alone: half the marks of a list of numbers
_STEPS = [0] * 256  # +1 opens, -1 closes
_STEPS[ord("[")] = _STEPS[ord("{")] = 1
_STEPS[ord("]")] = _STEPS[ord("}")] = -1
_STEP_BYTES = bytes(step % 256 for step in _STEPS)  # read as int8: -1 is 255


class DepthGuard:
    """Tracks the nesting of a JSON text fed in chunks, outside its strings.

    Args:
        limit: the deepest nesting accepted.
        path: the file, for the error.
        entries: the most values accepted (counted by their separating commas), or ``None`` for
            no bound (a COCO file streamed by ijson holds millions, one at a time).
        strings: the longest string accepted, in bytes, or ``None`` for no bound. A streaming
            parser (yajl, under ijson) lexes a string held over many reads again from its start
            at each read: a 60 MB string read by 64 KB took 45 s.
    """

    def __init__(
        self,
        limit: int = MAX_DEPTH,
        path: str = "the JSON text",
        entries: int | None = None,
        strings: int | None = None,
    ) -> None:
        self.limit, self.path, self.max_entries, self.max_string = limit, path, entries, strings
        self.depth = 0
        self.entries = 0
        self._in_string = 0
        self._string = 0  # bytes of the string open at the end of the text so far
        self._carry = b""

    def feed(self, chunk: bytes) -> None:
        """Account for the next bytes of the text.

        Raises:
            InputError: the nesting passes ``limit``.
        """
        import numpy as np

        data = self._carry + chunk
        if data.find(b"\\") >= 0:  # a memchr: most chunks hold no escape
            data = _ESCAPES.sub(b"", data)
        self._carry = b""
        if data.endswith(b"\\"):  # an escape split between two chunks
            data, self._carry = data[:-1], b"\\"
        if self.max_string is not None:
            self._long_string(data)
        drop = _DROP if self.max_entries is not None else _DROP_COMMAS
        # two quotes side by side (a string of no mark, or a string's end and the next one's
        # start) leave every other mark on the same side of a string: most strings go
        text = data.translate(None, drop).replace(b'""', b"")
        marks = np.frombuffer(text, dtype=np.uint8)
        if not len(marks):
            return
        # 32-bit sums where they fit: numpy sums to 64 bits many times slower
        wide = np.int64 if len(marks) >= 2**31 else np.int32
        steps = np.frombuffer(text.translate(_STEP_BYTES), dtype=np.int8)
        outside: npt.NDArray[np.bool_] | None = None  # None: every mark is outside a string
        if text.find(b'"') >= 0 or self._in_string:
            # a bracket lies outside every string when an even number of quotes comes before it
            quotes = marks == ord('"')
            seen: npt.NDArray[np.signedinteger[Any]] = np.cumsum(quotes, dtype=wide)
            inside = (seen + self._in_string) & 1
            self._in_string = int(inside[-1])
            outside = inside == 0
            steps = steps * outside
        depths = np.cumsum(steps, dtype=wide) + self.depth
        if int(depths.max()) > self.limit:
            raise InputError(f"JSON nested deeper than {self.limit} levels", path=self.path)
        self.depth = int(depths[-1])
        if self.max_entries is not None:
            commas = marks == ord(",")
            self.entries += int(np.count_nonzero(commas if outside is None else commas & outside))
            if self.entries >= self.max_entries:
                raise InputError(f"JSON of more than {self.max_entries:,} values", path=self.path)

    def _long_string(self, data: bytes) -> None:
        """Track the string left open at the end of ``data`` (escapes already removed)."""
        quotes = data.count(b'"')
        open_after = (self._in_string + quotes) & 1
        if not open_after:
            self._string = 0
        elif quotes:
            self._string = len(data) - data.rfind(b'"') - 1
        else:
            self._string += len(data)
        assert self.max_string is not None
        if self._string > self.max_string:
            raise InputError(
                f"a JSON string of more than {self.max_string >> 20} MB", path=self.path
            )


class _Guarded:
    """A binary stream whose bytes pass a ``DepthGuard`` as they are read."""

    def __init__(
        self, raw: IO[bytes], guard: DepthGuard, progress: Callable[[int], None] | None
    ) -> None:
        self._raw, self._guard, self._progress = raw, guard, progress
        self._read = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._raw.read(size)
        self._guard.feed(chunk)
        if self._progress is not None:
            self._read += len(chunk)
            self._progress(self._read)
        return chunk


def guarded_stream(
    raw: IO[bytes],
    path: str,
    limit: int = MAX_DEPTH,
    progress: Callable[[int], None] | None = None,
) -> Any:
    """``raw`` as a stream for ijson that refuses nesting deeper than ``limit`` as it is read;
    ``progress`` is told the bytes read so far after each read.

    Raises (on read):
        InputError: the nesting passes ``limit``.
    """
    return _Guarded(raw, DepthGuard(limit, path, strings=MAX_STRING), progress)


def load_json(text: str | bytes, path: str = "the JSON text", limit: int = MAX_DEPTH) -> Any:
    """Parse a small JSON text after checking its nesting and its number of values.

    Raises:
        InputError: nested deeper than ``limit``, or more than ``MAX_ENTRIES`` values.
        ValueError: not JSON (``json.JSONDecodeError``).
    """
    import json

    DepthGuard(limit, path, entries=MAX_ENTRIES).feed(
        text.encode("utf-8") if isinstance(text, str) else text
    )
    return json.loads(text)


def yaml_limits(loader: Any, limit: int = MAX_DEPTH) -> None:
    """Raise a ``yaml.composer.ComposerError`` when the node PyYAML is composing lies deeper than
    ``limit`` or is past the ``MAX_ENTRIES``-th (called from a loader's ``compose_node``, which
    tracks ``loader.depth``; the count is kept on the loader)."""
    import yaml

    loader.nodes = getattr(loader, "nodes", 0) + 1
    problem = None
    if loader.depth > limit:
        problem = f"nested deeper than {limit} levels"
    elif loader.nodes > MAX_ENTRIES:
        problem = f"more than {MAX_ENTRIES:,} values"
    if problem is not None:
        raise yaml.composer.ComposerError(None, None, problem, loader.peek_event().start_mark)


def yaml_problem(exc: Exception) -> str:
    """A YAML error as its problem and position, without the snippet of the file that PyYAML
    quotes (the file may not be what the user meant to give)."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or "not valid YAML"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return " ".join(str(problem).split())[:200] + where


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE) -> Iterator[tuple[int, bytes, bool]]:
    """``(number, line, cut)`` for each line of ``stream``, at most ``limit`` bytes of each held
    (``cut``: the line was longer and its rest skipped unread into memory)."""
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        cut = len(line) > limit and not line.endswith(b"\n")
        if cut:
            line = line[:limit]
            while True:  # skip the rest of the line, a bounded piece at a time
                rest = stream.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
        yield number, line, cut
