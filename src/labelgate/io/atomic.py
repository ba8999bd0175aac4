"""Writing files so that a reader never sees half of one: a temporary file beside it, then a rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from labelgate.errors import UsageError

__all__ = ["atomic_path", "write_text_atomic"]


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success fsync it and rename it over ``target``.

    On any exception the temporary file is removed and ``target`` is left as it was. A process
    killed mid-write leaves ``target`` untouched too (and a ``.NAME.tmp-*`` file beside it).

    Raises:
        UsageError: the target's folder does not exist or cannot be written.
    """
    path = Path(target)
    folder = path.parent if str(path.parent) else Path()
    try:
        # The suffix is kept, so that a reader that goes by it can check the file before rename.
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", suffix=path.suffix, dir=folder)
    except OSError as exc:
        raise UsageError(f"{str(path)!r}: cannot write there ({exc.strerror})") from None
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp makes the file private (0600); give it the mode the target has, or a new file's.
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    tmp_path.chmod(mode)
    try:
        yield tmp_path
        with tmp_path.open("rb+") as f:
            os.fsync(f.fileno())
        tmp_path.replace(path)
        _fsync_dir(folder)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (where the platform allows opening a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        # Some filesystems refuse fsync on a directory; the rename has happened either way.
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(target: str | Path, text: str) -> None:
    """Write ``text`` to ``target`` atomically."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
