"""TF Object Detection label maps (``.pbtxt``, a ``StringIntLabelMap`` in protobuf text format):
each ``item``'s ``id`` and ``name``, read without protobuf.

The TF Object Detection API reads the map with ``text_format.Merge`` and looks a class's text up
by its ``name`` (``get_label_map_dict``, ``use_display_name=False`` by default:
research/object_detection/utils/label_map_util.py:142-159@02c04f49); it refuses a negative id
and an id 0 not named ``background``, 0 being reserved for the background (``_validate_label_map``,
lines 25-39). Errors name a line or an item by its number, never its content.
"""

from __future__ import annotations

import re

from labelgate.errors import ClassMapError
from labelgate.io.classnames import MAX_CLASS_NAMES

__all__ = ["parse_label_map"]

_TOKEN = re.compile(
    r"""(?P<space>\s+|\#[^\n]*)
    |(?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
    |(?P<num>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[fFuUlL]*)
    |(?P<word>[A-Za-z_][\w.]*)
    |(?P<mark>[:{}<>\[\],;])""",
    re.X,
)
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)")
_SIMPLE = {
    b"n": b"\n",
    b"t": b"\t",
    b"r": b"\r",
    b"a": b"\a",
    b"b": b"\b",
    b"f": b"\f",
    b"v": b"\v",
}
_DEPTH = 16  # nested messages: an item's keypoints are two levels down
_CLOSE = {"{": "}", "<": ">"}

Value = str | int | float | list[tuple[str, "Value"]]


def parse_label_map(text: str, origin: str) -> list[tuple[int, str]]:
    """The ``(id, name)`` of every ``item`` of a label map, in file order.

    Raises:
        ClassMapError: the text is no protobuf text, an item has no integer id, or an id is one
            the TF Object Detection API refuses (negative; 0 for a class other than
            ``background``).
    """
    tokens = _tokens(text, origin)
    fields, _ = _message(tokens, 0, None, origin, 0)
    entries: list[tuple[int, str]] = []
    for key, value in fields:
        if key != "item":
            continue
        number = len(entries) + 1
        if number > MAX_CLASS_NAMES:
            raise ClassMapError(
                f"more than {MAX_CLASS_NAMES:,} items: not a label map", path=origin
            )
        if not isinstance(value, list):
            raise ClassMapError(f"item {number} is not a message", path=origin)
        found = dict(value)
        index, name = found.get("id"), found.get("name", "")
        if not isinstance(index, int) or isinstance(index, bool):
            raise ClassMapError(f"item {number} has no integer id", path=origin)
        if not isinstance(name, str):
            raise ClassMapError(f"item {number}'s name is not a string", path=origin)
        if index < 0:
            raise ClassMapError(
                f"item {number} has a negative id: the TF Object Detection API refuses it "
                "('Label map ids should be >= 0.', label_map_util.py:35-36)",
                path=origin,
            )
        if index == 0 and "background" not in (name, found.get("display_name")):
            raise ClassMapError(
                f"item {number} has id 0, which the TF Object Detection API reserves for the "
                "background (label_map_util.py:37-39): number the classes from 1",
                path=origin,
            )
        entries.append((index, name))
    if not entries:
        raise ClassMapError("a label map with no item", path=origin)
    return entries


def _tokens(text: str, origin: str) -> list[tuple[str, str, int]]:
    """(kind, text, line) of each token, comments and spaces dropped."""
    out: list[tuple[str, str, int]] = []
    at, line = 0, 1
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None:
            raise ClassMapError(f"not protobuf text at line {line}", path=origin)
        kind = m.lastgroup or ""
        if kind != "space":
            out.append((kind, m.group(), line))
        line += m.group().count("\n")
        at = m.end()
    return out


def _message(
    tokens: list[tuple[str, str, int]], at: int, close: str | None, origin: str, depth: int
) -> tuple[list[tuple[str, Value]], int]:
    """The fields of a message from ``tokens[at]`` up to its ``close`` mark (``None``: the end),
    and the position after it."""
    if depth > _DEPTH:
        raise ClassMapError(f"messages nested deeper than {_DEPTH}", path=origin)
    fields: list[tuple[str, Value]] = []
    while at < len(tokens):
        kind, text, line = tokens[at]
        if close is not None and text == close and kind == "mark":
            return fields, at + 1
        if kind == "mark" and text in ",;":
            at += 1
            continue
        if kind != "word":
            raise ClassMapError(f"a field name expected at line {line}", path=origin)
        at += 1
        if at < len(tokens) and tokens[at][1] == ":":
            at += 1
        if at >= len(tokens):
            raise ClassMapError(f"the field at line {line} has no value", path=origin)
        if tokens[at][1] == "[":  # a repeated field written as a list
            at += 1
            while at < len(tokens) and tokens[at][1] != "]":
                if tokens[at][1] == ",":
                    at += 1
                    continue
                value, at = _value(tokens, at, origin, depth)
                fields.append((text, value))
            at += 1
            continue
        value, at = _value(tokens, at, origin, depth)
        fields.append((text, value))
    if close is not None:
        raise ClassMapError(f"a message is not closed by {close!r}", path=origin)
    return fields, at


def _value(
    tokens: list[tuple[str, str, int]], at: int, origin: str, depth: int
) -> tuple[Value, int]:
    kind, text, line = tokens[at]
    if kind == "mark" and text in _CLOSE:
        return _message(tokens, at + 1, _CLOSE[text], origin, depth + 1)
    if kind == "str":
        parts = [_unquote(text)]
        at += 1
        while at < len(tokens) and tokens[at][0] == "str":  # adjacent strings concatenate
            parts.append(_unquote(tokens[at][1]))
            at += 1
        return "".join(parts), at
    if kind == "num":
        return _number(text), at + 1
    if kind == "word":
        return text, at + 1
    raise ClassMapError(f"a value expected at line {line}", path=origin)


def _number(text: str) -> int | float:
    """A number as protobuf text writes it: decimal, ``0x`` hex or ``0`` octal integers, or a
    float (``1.5``, ``2e3``, ``1f``)."""
    if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", text):
        return int(text, 16)
    if re.fullmatch(r"[-+]?0[0-7]+", text):
        return int(text, 8)
    if re.fullmatch(r"[-+]?\d+[uUlL]*", text):
        return int(text.rstrip("uUlL"))
    return float(text.rstrip("fF"))


def _unquote(token: str) -> str:
    """A quoted string's text: C escapes decoded as bytes, the bytes as UTF-8."""
    raw = token[1:-1].encode("utf-8")

    def one(m: re.Match[bytes]) -> bytes:
        body = m.group(1)
        if body[:1] == b"x":
            return bytes([int(body[1:], 16)])
        if body[:1].isdigit():
            return bytes([int(body, 8) & 0xFF])
        return _SIMPLE.get(body, body)

    return _ESCAPE.sub(one, raw).decode("utf-8", errors="replace")
