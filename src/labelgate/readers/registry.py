"""The readers by name: the built-in ones from the manifest, the plugins from the
``labelgate.readers`` entry-point group; and detection, which asks the readers how sure each is
that a path is its format and takes the most confident (a tie, or no reader at all, is an error
naming the candidates). A built-in reader is imported only when it is asked, and it is asked
only of a path its manifest entry (``readers/manifest.py``) says it may claim."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.core.installed import entry_points
from labelgate.errors import InputError, UsageError
from labelgate.readers.manifest import INPUT_FORMATS, MANIFEST

if TYPE_CHECKING:
    from labelgate.readers.base import Claim, Reader

__all__ = ["ENTRY_POINTS", "MANIFEST", "Detected", "choose", "detect", "names", "reader"]

ENTRY_POINTS = "labelgate.readers"


@dataclass(frozen=True, slots=True)
class Detected:
    """The reader chosen for an input, and why (the claim, or the option that named it)."""

    reader: Reader
    why: str


@cache
def _plugins() -> dict[str, str]:
    """Readers other packages declare in the ``labelgate.readers`` entry-point group."""
    found: dict[str, str] = {}
    for name, value in entry_points(ENTRY_POINTS):
        if name in MANIFEST:
            raise UsageError(
                f"the reader plugin {name!r} ({value}) takes the name of a built-in reader"
            )
        found[name] = value
    return found


def names() -> tuple[str, ...]:
    """Every reader's name: the built-in ones, then the plugins'."""
    return (*MANIFEST, *sorted(_plugins()))


@cache
def reader(name: str) -> Reader:
    """The reader called ``name``.

    Raises:
        UsageError: no reader has that name, or a plugin cannot be loaded.
    """
    from labelgate.readers.base import Reader

    entry = MANIFEST.get(name)
    target = entry.target if entry is not None else _plugins().get(name)
    if target is None:
        from difflib import get_close_matches

        close = get_close_matches(name, names(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(
            f"--input-format must be auto or one of {', '.join(names())}, got {name!r}{hint}"
        )
    module, _, attr = target.partition(":")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"the reader {name!r} ({target}) cannot be loaded: {exc}") from None
    made = found() if isinstance(found, type) else found
    if not isinstance(made, Reader) or made.name != name:
        raise UsageError(f"the reader {name!r} ({target}) is not a labelgate Reader named {name!r}")
    return made


def _claims(path: str, task: str | None) -> list[tuple[Claim, Reader]]:
    """Every claim on ``path``: of the built-in readers whose manifest entry lets them claim it
    (the others are not imported), and of every plugin."""
    p = Path(path)
    found = []
    for name in names():
        entry = MANIFEST.get(name)
        if entry is not None and not entry.may_claim(p):
            continue
        r = reader(name)
        claim = r.detect(p, task)
        if claim is not None:
            found.append((claim, r))
    return sorted(found, key=lambda cr: -cr[0].confidence)


def detect(path: str, task: str | None = None) -> Detected:
    """The most confident reader of one path.

    Raises:
        InputError: the path does not exist, no reader claims it, or two claim it equally.
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink() and not _pattern(path):
        raise InputError("no such file or directory", path=path)
    claims = _claims(path, task)
    if not claims and p.is_file() and p.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", path=path)  # as a table's reader says
    if not claims and p.is_dir() and next(p.iterdir(), None) is None:
        raise InputError("folder is empty: nothing in it to read", path=path)
    if not claims:
        kind = "folder" if p.is_dir() else f"{p.suffix or 'extensionless'} file"
        contract = p.suffix.lower() in (".yaml", ".yml")
        raise InputError(
            f"unknown format: no reader claims this {kind} (labelgate reads "
            f"{', '.join((*INPUT_FORMATS, *sorted(_plugins())))}; --input-format names one)"
            + ("; a contract is given with --schema" if contract else ""),
            path=path,
        )
    best, runner_up = claims[0], claims[1] if len(claims) > 1 else None
    if runner_up is not None and runner_up[0].confidence == best[0].confidence:
        tied = [f"{r.name} ({c.why})" for c, r in claims if c.confidence == best[0].confidence]
        raise InputError(
            f"ambiguous format: {' and '.join(tied)}; name one with --input-format", path=path
        )
    return Detected(best[1], best[0].why)


def choose(paths: list[str], input_format: str = "auto", task: str | None = None) -> Detected:
    """The reader of an input of one or more paths: the one ``input_format`` names, or the
    detected one (several paths must all be of one format that reads several paths).

    Raises:
        UsageError: the format named is unknown, or does not read several paths.
        InputError: a path is missing, of no known format, or the paths are of different formats.
    """
    if input_format != "auto":
        chosen = Detected(reader(input_format), "--input-format " + input_format)
    elif any(_pattern(p) for p in paths):
        chosen = _patterned(paths)
    else:
        found = [detect(p, task) for p in paths]
        kinds = {d.reader.name for d in found}
        if len(kinds) > 1:
            each = "; ".join(f"{p}: {d.reader.name}" for p, d in zip(paths, found, strict=True))
            raise InputError(
                f"the paths given together are of different formats ({each})", path=paths[0]
            )
        chosen = found[0]
        if len(paths) > 1:
            chosen = Detected(chosen.reader, f"{len(paths)} paths, each {chosen.why}")
    if len(paths) > 1 and not chosen.reader.can("many"):
        raise UsageError(f"{chosen.reader.name} reads one file or folder, got {len(paths)} paths")
    return chosen


def _pattern(path: str) -> bool:
    """A glob, a brace pattern or a URI: read by the table reader, which expands it, unless it
    names shards (``_patterned``)."""
    if any(c in path for c in "*?[") or "://" in path:
        return True
    return ("{" in path or "::" in path) and not Path(path).exists()


def _patterned(paths: list[str]) -> Detected:
    """The reader of patterns: the shard reader their first names call for, else the table's."""
    from labelgate.readers.shards.patterns import pattern_format

    kinds = {pattern_format(p) if _pattern(p) else None for p in paths}
    if len(kinds) == 1 and (kind := kinds.pop()) is not None:
        return Detected(reader(kind), f"a pattern of {kind} shards")
    return Detected(reader("table"), "a glob or URI is read as a table")
