"""What labelgate reads and writes, and the rules it keeps doing so (docs/security.md).

- Every file is opened through ``open_regular``: a regular file, never a FIFO (opened without
  waiting for a writer), a device or a folder, and where a folder is named, never a link that
  leads out of it.
- Small files (contracts, class maps, model configs) are read only when they are regular files of
  at most ``MAX_SMALL_FILE`` bytes, as UTF-8 with or without a byte-order mark.
- YAML is read without aliases: a kilobyte of ``&a [*a, *a, ...]`` cannot expand to gigabytes;
  and nested at most ``bounded.MAX_DEPTH`` levels, counted as nodes are composed.
- Every output path is checked, after resolving links, against every input (data files, contract,
  class map) and against the other outputs, and its folder must be writable, before anything is
  written. A regular file (or a new path) is written to a temporary file, then renamed; a device
  or a FIFO (``/dev/null``, ``/dev/stdout``) is written in place, never replaced (atomic.py).
  A file inside an output folder is written only where, links resolved, it stays inside it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from labelgate.errors import InputError, UsageError, one_line
from labelgate.io.atomic import is_special, write_text_atomic
from labelgate.io.bounded import yaml_limits
from labelgate.io.classnames import CLASS_MAP_SUFFIXES

__all__ = [
    "CLASS_MAP_SUFFIXES",
    "MAX_SMALL_FILE",
    "append_output",
    "check_inside",
    "check_outputs",
    "escape_controls",
    "load_yaml",
    "open_regular",
    "read_small_bytes",
    "read_small_text",
    "write_output",
]

MAX_SMALL_FILE = 32 << 20  # bytes: a 1,000,000-name class map of 20-byte names is 21 MB


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | {
    c: f"\\u{c:04x}" for c in range(0x80, 0xA0)
}
_CONTROLS |= {
    c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def escape_controls(text: str) -> str:
    """``text`` with every control character (ANSI escapes, NUL, newlines, bidi marks) written as
    a visible escape, so that data cannot steer a terminal, a CI log or a Markdown renderer."""
    return text.translate(_CONTROLS)


def open_regular(
    path: str | Path,
    what: str,
    *,
    within: str | Path | None = None,
    error: type[InputError] = InputError,
    pipes: bool = False,
) -> BinaryIO:
    """``path`` opened for reading, once it is known to be a regular file.

    The file is opened without blocking (a FIFO with no writer returns at once) and judged by
    ``fstat`` on what was opened, so a FIFO, a device (``/dev/zero``) or a folder is refused and
    never read, whatever its name says.

    Args:
        path: the file.
        what: what it is, for the error (``model config``, ``log``).
        within: a folder the file must stay inside once links are resolved (a checkpoint in a
            run's folder): a link that leads out of it is refused.
        error: the error raised.
        pipes: accept a FIFO or a pipe too (``triage <(zcat train.log.gz)``, read once as it
            streams): opened without blocking, one with no writer reads as empty, no hang.

    Raises:
        ``error``: the path is missing, not a regular file, a link leaving ``within``, or cannot
            be opened; the message names the path, never the file's bytes.
    """
    origin = str(path)
    if within is not None:
        root = Path(within).resolve()
        target = Path(path).resolve()
        if target != root and root not in target.parents:
            raise error(f"the {what} is a link that leads outside {str(within)!r}", path=origin)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise error(f"{what} not found (no such file)", path=origin) from None
    except IsADirectoryError:
        raise error(f"the {what} is a directory, not a file", path=origin) from None
    except OSError as exc:
        raise error(
            f"cannot read the {what} ({exc.strerror or one_line(exc)})", path=origin
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode) and not (pipes and stat.S_ISFIFO(mode)):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else None
        shown = kind or "a device or another special file"
        raise error(f"the {what} is {shown}, not a regular file", path=origin)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_small_bytes(
    path: str | Path,
    what: str,
    *,
    limit: int = MAX_SMALL_FILE,
    within: str | Path | None = None,
    error: type[InputError] = InputError,
) -> bytes:
    """The bytes of a small regular file (``open_regular``), at most ``limit`` of them.

    Raises:
        ``error``: what ``open_regular`` refuses, or the file is over ``limit`` bytes.
    """
    with open_regular(path, what, within=within, error=error) as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise error(
                f"cannot read the {what} ({exc.strerror or one_line(exc)})", path=str(path)
            ) from None
    if len(data) > limit:
        raise error(f"the {what} is over {limit >> 20} MB", path=str(path))
    return data


def read_small_text(
    path: str | Path,
    what: str,
    error: type[InputError] = InputError,
    *,
    within: str | Path | None = None,
) -> str:
    """The text of a small regular file (a contract, a class map), BOM removed.

    Raises:
        ``error``: the path is missing, not a regular file (or a link leaving ``within``), over
            ``MAX_SMALL_FILE`` bytes, or not UTF-8 text.
    """
    data = read_small_bytes(path, what, within=within, error=error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"the {what} is not UTF-8 text (byte {exc.start})", path=str(path)) from None


def load_yaml(text: str) -> Any:
    """Parse YAML safely, without aliases, nested at most ``bounded.MAX_DEPTH`` levels.

    Raises:
        yaml.YAMLError: the text is not YAML, uses an alias (``*name``) or is nested too deep.
    """
    import yaml

    class NoAliases(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.events.AliasEvent):
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, "YAML aliases (*name) are not accepted", mark
                )
            self.depth += 1  # checked as nodes are composed, before Python recursion runs out
            yaml_limits(self)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return yaml.load(text, Loader=NoAliases)


def _resolved(path: str) -> Path:
    return Path(path).expanduser().resolve()


def check_outputs(outputs: Mapping[str, str | None], inputs: Iterable[str | None]) -> None:
    """Refuse, before anything is written, an output that would overwrite or sit inside an input,
    that two outputs share, that is a directory, or whose folder cannot be written.

    Args:
        outputs: flag -> path (``None``: not asked for). A flag ending in ``/`` names a folder
            that the command creates (``repro --out``).
        inputs: every path read: data files and folders, the contract, the class map.

    Raises:
        UsageError: the first such output, naming its flag and the input.
    """
    read = [(raw, _resolved(raw)) for raw in inputs if raw and "://" not in raw]
    seen: dict[Path, str] = {}
    for flag, raw in outputs.items():
        if raw is None:
            continue
        name = flag.rstrip("/")
        out = _resolved(raw)
        if is_special(out):
            continue  # /dev/null, a FIFO: written directly, never replaced
        for given, path in read:
            if out == path or path in out.parents or (flag.endswith("/") and out in path.parents):
                raise UsageError(
                    f"{name} {raw!r} would overwrite or sit inside the input {given!r}"
                )
        if out in seen:
            raise UsageError(f"{name} {raw!r} is also {seen[out]}: give each output its own path")
        seen[out] = name
        if not flag.endswith("/") and out.is_dir():
            raise UsageError(f"{name} {raw!r} is a directory: name a file")
        folder = out.parent
        if not folder.is_dir():
            raise UsageError(f"{name} {raw!r}: the folder {str(folder)!r} does not exist")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"{name} {raw!r}: the folder {str(folder)!r} cannot be written")


def write_output(path: str, text: str) -> None:
    """Write ``text`` to ``path``: atomically for a regular file or a new path, directly for a
    device or a FIFO.

    Raises:
        InputError: the write fails (a full disk, a permission), naming the path.
    """
    try:
        write_text_atomic(path, text)  # a device or a FIFO: written in place (atomic.py)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or one_line(exc)})", path=path) from None


def check_inside(root: str | Path, target: str | Path, inputs: Iterable[str | None]) -> None:
    """Refuse to write ``target`` unless, links resolved, it lies inside the output folder
    ``root`` and in no input: a subfolder of the output that is a link into the input folder
    would otherwise lead a write onto the input.

    Raises:
        UsageError: ``target`` resolves outside ``root`` or into an input.
    """
    out = _resolved(str(root))
    where = _resolved(str(Path(target).parent)) / Path(target).name
    if out != where and out not in where.parents:
        raise UsageError(f"{str(target)!r} resolves outside the output folder {str(root)!r}")
    for raw in inputs:
        if raw and "://" not in raw:
            given = _resolved(raw)
            if where == given or given in where.parents:
                raise UsageError(f"{str(target)!r} would overwrite or sit inside the input {raw!r}")


def append_output(path: str, text: str) -> None:
    """Append ``text`` to ``path`` (a file the environment names, such as GitHub's step summary,
    which is appended to by design; checked with ``check_outputs`` beforehand).

    Raises:
        InputError: the write fails, naming the path.
    """
    try:
        with Path(path).open("a", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or one_line(exc)})", path=path) from None
