"""Brace patterns as webdataset expands a shard URL: ``train-{000000..000999}.tar``.

``webdataset.shardlists.expand_urls`` splits a string on ``::``, substitutes ``${VAR}`` from the
environment variable ``WDS_VAR`` (``envsubst``, up to ten rounds) and hands each part to the
``braceexpand`` package (src/webdataset/shardlists.py:115-141@e0953f9b). This module is that
expansion without the dependency: ``braceexpand`` 0.1.7's grammar (integer and letter ranges with
an optional step, zero-padding when an end starts with ``0``, comma sequences, nesting, ``\\``
escapes; an unbalanced brace is an error), held to the package itself by the tests.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterator
from itertools import product

from labelgate.errors import InputError

__all__ = ["MAX_SHARDS", "expand_urls", "is_brace_pattern"]

MAX_SHARDS = 1_000_000  # names a pattern may expand to: more is a typo, not a dataset
_ALPHABET = string.ascii_uppercase + string.ascii_lowercase  # braceexpand's own, in its order
_INT_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.-?(\d+))?$")
_CHAR_RANGE = re.compile(r"^([A-Za-z])\.\.([A-Za-z])(?:\.\.-?(\d+))?$")
_ESCAPED = re.compile(r"\\(.)")
_ENV = re.compile(r"\$\{(\w+)\}")

Parts = list[list[str]]


def is_brace_pattern(text: str) -> bool:
    """Whether ``text`` holds a brace expression or the ``::`` that joins several URLs."""
    return "::" in text or ("{" in text and "}" in text)


def expand_urls(text: str) -> list[str]:
    """The shard names ``webdataset.WebDataset(text)`` would open, in its order.

    Raises:
        InputError: a brace is unbalanced, or the pattern names more than ``MAX_SHARDS``.
    """
    found: list[str] = []
    for url in text.split("::"):
        for _ in range(10):  # envsubst's rounds, as webdataset runs them
            last, url = url, _ENV.sub(lambda m: os.environ.get("WDS_" + m.group(1), ""), url)
            if url == last:
                break
        for name in _expand(url, text):
            found.append(name)
            if len(found) > MAX_SHARDS:
                raise InputError(f"the pattern names more than {MAX_SHARDS:,} shards", path=text)
    return found


def _expand(pattern: str, origin: str) -> Iterator[str]:
    for combination in product(*_pattern(pattern, origin)):
        yield _ESCAPED.sub(r"\1", "".join(combination))


def _pattern(pattern: str, origin: str) -> Parts:
    """A pattern as the product of its parts: literal runs and brace expressions."""
    start = pos = depth = 0
    items: Parts = []
    while pos < len(pattern):
        c = pattern[pos]
        if c == "\\":
            pos += 2
            continue
        if c == "{":
            if depth == 0 and pos > start:
                items.append([pattern[start:pos]])
                start = pos
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1 : pos]
                item = _expression(inner, origin)
                if item is None:  # neither a range nor a sequence: kept as written
                    items.extend([["{"], _joined(_pattern(inner, origin)), ["}"]])
                else:
                    items.append(item)
                start = pos + 1
        pos += 1
    if depth != 0:
        raise InputError("unbalanced braces in the shard pattern", path=origin)
    if start < pos:
        items.append([pattern[start:]])
    return items


def _joined(parts: Parts) -> list[str]:
    """A nested pattern's strings, escapes removed: braceexpand flattens each nested product
    with its escapes stripped, so a nested ``\\`` is undone once per level (``_flatten``)."""
    return [_ESCAPED.sub(r"\1", "".join(c)) for c in product(*parts)]


def _expression(expr: str, origin: str) -> list[str] | None:
    m = _INT_RANGE.match(expr)
    if m:
        return _int_range(*m.groups())
    m = _CHAR_RANGE.match(expr)
    if m:
        return _char_range(*m.groups())
    return _sequence(expr, origin)


def _sequence(seq: str, origin: str) -> list[str] | None:
    start = pos = depth = 0
    items: list[str] = []
    splits = 0
    while pos < len(seq):
        c = seq[pos]
        if c == "\\":
            pos += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.extend(_joined(_pattern(seq[start:pos], origin)))
            splits += 1
            start = pos + 1
        pos += 1
    if depth != 0 or not splits:
        return None
    items.extend(_joined(_pattern(seq[start:], origin)))
    return items


def _int_range(first: str, last: str, step: str | None) -> list[str]:
    padded = any(s.startswith(("0", "-0")) for s in (first, last) if s not in ("0", "-0"))
    width = max(len(first), len(last)) if padded else 0
    by = (int(step) or 1) if step else 1
    a, b = int(first), int(last)
    values = range(a, b + 1, by) if a < b else range(a, b - 1, -by)
    if len(values) > MAX_SHARDS:
        raise InputError(f"a range of more than {MAX_SHARDS:,} shards", path=f"{{{first}..{last}}}")
    return [f"{v:0{width}d}" for v in values]


def _char_range(first: str, last: str, step: str | None) -> list[str]:
    by = (int(step) or 1) if step else 1
    a, b = _ALPHABET.index(first), _ALPHABET.index(last)
    if a < b:
        return list(_ALPHABET[a : b + 1 : by])
    end = b or -len(_ALPHABET)
    return list(_ALPHABET[a : end - 1 : -by])
