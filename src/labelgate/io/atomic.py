"""Writing files so that a reader never sees half of one: a temporary file beside it, then a rename.

Every file labelgate writes goes through ``atomic_path`` (or ``scratch_path`` for a file
it removes again). A target that exists and is neither a regular file nor a folder (a character
device such as ``/dev/null``, a FIFO, a socket) is written in place, never replaced: the bytes
are staged in a private temporary folder, then copied into it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from labelgate.errors import UsageError

__all__ = ["atomic_path", "folder_lock", "is_special", "scratch_path", "write_text_atomic"]


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success fsync it and rename it over ``target``.

    On any exception the temporary file is removed and ``target`` is left as it was. A process
    killed mid-write leaves ``target`` untouched too (and a ``.NAME.tmp-*`` file beside it).

    Raises:
        UsageError: the target's folder does not exist or cannot be written.
    """
    path = Path(target)
    if is_special(path):
        with _in_place(path) as staged:
            yield staged
        return
    folder = path.parent if str(path.parent) else Path()
    try:
        # The suffix is kept, so that a reader that goes by it can check the file before rename.
        import tempfile  # loaded where a file is written, not at every start

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


def is_special(path: str | Path) -> bool:
    """Whether ``path`` exists (after links) and is neither a regular file nor a folder: a
    device, a FIFO or a socket, which a rename would replace by a plain file."""
    try:
        mode = Path(path).stat().st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def _in_place(target: Path) -> Iterator[Path]:
    """Yield a private temporary path; on success copy its bytes into ``target`` (opened for
    writing, never renamed over, so a device stays a device and a FIFO a FIFO)."""
    import shutil  # loaded where a file is written, not at every start
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="labelgate-"))
    try:
        staged = folder / f"staged{target.suffix}"
        yield staged
        with staged.open("rb") as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def folder_lock(folder: Path, what: str) -> Iterator[None]:
    """Hold ``folder`` (created where missing) for one writer: each file written into it is whole
    (``atomic_path``), but a second run writing the same folder at once would read the first's
    temporary files, or leave the folder a mix of both. A run that finds the folder held refuses
    at once, before it writes anything (an advisory ``flock`` on the folder, released when the
    process ends, however it ends; where the platform has none, the folder is not held).

    Raises:
        UsageError: the folder cannot be made, or another process holds it.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise UsageError(f"{str(folder)!r}: cannot write there ({exc.strerror})") from None
    try:
        try:
            import fcntl
        except ImportError:  # Windows: no flock
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UsageError(
                f"{what} {str(folder)!r} is being written by another labelgate run: run again "
                "when it ends, or name another folder"
            ) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextlib.contextmanager
def scratch_path(folder: str | Path, suffix: str) -> Iterator[Path]:
    """Yield a new, uniquely named file in ``folder`` (created exclusively, so it can be no
    input's name) and remove it afterwards, whatever happens.

    Raises:
        UsageError: the folder does not exist or cannot be written.
    """
    try:
        import tempfile  # loaded where a file is written, not at every start

        fd, name = tempfile.mkstemp(prefix=".labelgate-scratch-", suffix=suffix, dir=folder)
    except OSError as exc:
        raise UsageError(f"{str(folder)!r}: cannot write there ({exc.strerror})") from None
    os.close(fd)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


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
