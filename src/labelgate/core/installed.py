"""What is installed: a distribution's version and the entry points of one group, read from the
``*.dist-info`` and ``*.egg-info`` folders of ``sys.path`` as importlib.metadata's path finder
finds them, without importing importlib.metadata (with email, zipfile and csv it costs a start
as much as a third of labelgate's own imports, for two answers).

The folders are searched in ``sys.path`` order, the first distribution of a name winning, as
importlib.metadata does (``Distribution.discover``, ``FastPath``, ``_unique``: CPython 3.11
``Lib/importlib/metadata/__init__.py``). Where anything but plain folders could hold a
distribution (a zip or an egg on ``sys.path``, a finder of another package's that finds
distributions), importlib.metadata itself answers.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from importlib.machinery import PathFinder

__all__ = ["entry_points", "version"]

_INFO = (".dist-info", ".egg-info")


def _normalized(name: str) -> str:
    """A distribution's name as importlib.metadata compares them (``Prepared.normalize``)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _name_of(folder: str) -> str:
    """The distribution a metadata folder is of: ``torch-2.13.0.dist-info`` -> ``torch``."""
    return _normalized(os.path.basename(folder).rsplit(".", 1)[0].split("-", 1)[0])


@cache
def _folders() -> dict[str, str] | None:
    """Every distribution's metadata folder by its name, the first of each name, in
    ``sys.path`` order; or ``None`` where importlib.metadata could find one that a folder listing does not show.

    Paths are plain strings and folders are listed by ``os.scandir``: a site-packages of several
    hundred entries made as many ``Path`` objects, most of a run's cost here."""
    finders = [f for f in sys.meta_path if hasattr(f, "find_distributions")]
    if any(f is not PathFinder for f in finders):
        return None
    found: dict[str, str] = {}
    for entry in sys.path:
        root = entry or "."
        if entry.lower().endswith(".egg") or (os.path.exists(root) and not os.path.isdir(root)):
            return None  # a zip or an egg: importlib.metadata reads inside it
        try:
            with os.scandir(root) as children:
                names = [c.name for c in children]
        except OSError:
            continue
        for name in names:
            if name.lower().endswith(_INFO):
                folder = os.path.join(root, name)
                found.setdefault(_name_of(folder), folder)
    return found


def _read(folder: str, name: str) -> str | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def version(dist: str) -> str | None:
    """The installed version of ``dist``, or ``None`` where it is not installed."""
    folders = _folders()
    if folders is None:
        from importlib import metadata

        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None
    folder = folders.get(_normalized(dist))
    if folder is None:
        return None
    for meta in ("METADATA", "PKG-INFO"):
        text = _read(folder, meta)
        if text is not None:
            found = re.search(r"^Version:[ \t]*(\S+)", text, flags=re.MULTILINE)
            return found.group(1) if found else None
    return None


def entry_points(group: str) -> list[tuple[str, str]]:
    """The ``(name, value)`` of every entry point in ``group``, distribution by distribution."""
    folders = _folders()
    if folders is None:
        from importlib import metadata

        return [(ep.name, ep.value) for ep in metadata.entry_points(group=group)]
    found: list[tuple[str, str]] = []
    for folder in folders.values():
        text = _read(folder, "entry_points.txt")
        if text is None or group not in text:
            continue
        section = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif section == group and "=" in line:
                name, _, value = line.partition("=")
                found.append((name.strip(), value.strip()))
    return found
