"""Looking into a folder for what a format's detection needs, a bounded number of entries at a time."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from pathlib import Path

__all__ = [
    "HEAD",
    "SCANNED",
    "any_file",
    "first_files",
    "head_lines",
    "is_voc_xml",
    "looks_like_coco",
    "subfolders",
]

SCANNED = 10_000  # entries a detection looks at before it answers
HEAD = 4096  # bytes of a file a detection reads


def any_file(root: Path, pattern: str, keep: Callable[[Path], bool], *, past: bool = False) -> bool:
    """Whether a regular file matching ``pattern`` under ``root`` passes ``keep``; after
    ``SCANNED`` entries the answer is ``past`` (a huge folder is not walked to its end)."""
    for seen, path in enumerate(root.rglob(pattern)):
        if seen > SCANNED:
            return past
        if keep(path) and path.is_file():
            return True
    return False


def first_files(folder: Path, pattern: str, most: int = 5) -> list[Path]:
    """Up to ``most`` regular files directly in ``folder`` matching ``pattern``, among the first
    ``SCANNED`` entries (in the order the folder lists them: a huge folder is not sorted)."""
    try:
        found = islice((p for p in islice(folder.glob(pattern), SCANNED) if p.is_file()), most)
        return sorted(found)
    except OSError:
        return []


def head_lines(path: Path, most: int = 5) -> list[str]:
    """The first ``most`` non-empty lines of a regular file, stripped, from its first ``HEAD``
    bytes (``[]`` where it cannot be read: a detection never raises)."""
    try:
        if not path.is_file():  # a FIFO named like a label file is never opened
            return []
        with path.open("rb") as f:
            head = f.read(HEAD)
    except OSError:
        return []
    text = head.decode("utf-8-sig", errors="replace")
    lines = text.splitlines()
    if len(head) == HEAD and lines:
        lines.pop()  # cut short by the read
    return [s for s in (line.strip() for line in lines) if s][:most]


def subfolders(root: Path, most: int = 50) -> list[Path]:
    """The first ``most`` folders directly in ``root`` (sorted, hidden ones left out)."""
    try:
        found = [p for p in islice(root.iterdir(), SCANNED) if p.is_dir()]
    except OSError:
        return []
    return sorted(p for p in found if not p.name.startswith((".", "__")))[:most]


def is_voc_xml(path: Path) -> bool:
    """Whether an XML file's root element is VOC's ``<annotation>`` (the first 4 KB are read)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    prolog = rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>"
    text = re.sub(prolog, b"", head, flags=re.S)
    return re.match(rb"\s*<annotation[\s>]", text.lstrip(b"\xef\xbb\xbf")) is not None


_COCO_KEYS = (b'"images"', b'"annotations"', b'"categories"')


def looks_like_coco(path: Path) -> bool:
    """Whether the file is a JSON object naming one of COCO's arrays in its first 64 KB (the file
    is not parsed: its images alone may fill many megabytes before the annotations)."""
    with path.open("rb") as f:
        head = f.read(1 << 16)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"{") and any(re.search(k + rb"\s*:\s*\[", head) for k in _COCO_KEYS)
