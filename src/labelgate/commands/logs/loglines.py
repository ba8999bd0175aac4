"""A log's bytes as text lines: its encoding found from its first bytes, each line cut at
``MAX_LINE`` characters, a run of NULs one line break, read in bounded memory at the disk's speed."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import BinaryIO

from labelgate.commands.logs.logpatterns import MAX_LINE, NULS

__all__ = ["log_encoding", "read_lines"]


def log_encoding(head: bytes) -> str:
    """The encoding of a log from its first bytes: UTF-16 with a BOM (PowerShell's ``>``), or
    without one (every other byte NUL), UTF-8 with or without a BOM."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    pairs = len(head) // 2
    if pairs >= 8:
        odd, even = head[1::2].count(0), head[0::2].count(0)
        if odd > 0.4 * pairs and even < 0.1 * pairs:
            return "utf-16-le"
        if even > 0.4 * pairs and odd < 0.1 * pairs:
            return "utf-16-be"
    return "utf-8"


def read_lines(stream: BinaryIO) -> Iterator[str]:
    """Decode a byte stream line by line in its own encoding (``log_encoding``), invalid
    bytes replaced, a run of NULs taken as one line break, each line cut at ``MAX_LINE`` characters.

    Each block is decoded and split once, on its own: the start of a line still open is held
    as pieces, never joined or searched again, and a line past ``MAX_LINE`` is given cut and its
    rest read past without being held, so a log of one multi-gigabyte line is read at the
    speed of the disk in bounded memory.
    """
    head = stream.read(4096)
    decoder = codecs.getincrementaldecoder(log_encoding(head))(errors="replace")
    parts: list[str] = []  # the open line's text, while it is under MAX_LINE
    held, skipping, after_nul, block = 0, False, False, head
    while True:
        final = not block
        text = decoder.decode(block, final=final)
        if "\x00" in text:
            if after_nul:  # the run of NULs that ended the last block goes on: one break
                text = text.lstrip("\x00")
            after_nul = text.endswith("\x00") or (after_nul and not text)
            text = NULS.sub("\n", text)
        elif text:
            after_nul = False
        *done, rest = text.split("\n")
        for piece in done:
            if not skipping:
                parts.append(piece)
                line = "".join(parts)
                yield line.rstrip("\r") if len(line) <= MAX_LINE else line[:MAX_LINE]
            parts, held, skipping = [], 0, False
        if rest and not skipping:
            parts.append(rest)
            held += len(rest)
            if held > MAX_LINE:  # an over-long line: keep its start, skip the rest
                yield "".join(parts)[:MAX_LINE]
                parts, held, skipping = [], 0, True
        if final:
            if held and not skipping:
                yield "".join(parts).rstrip("\r")
            return
        block = stream.read(1 << 18)
