"""Which shard reader a glob or brace pattern calls for, from the first names it matches."""

from __future__ import annotations

from pathlib import Path

__all__ = ["pattern_format"]


def pattern_format(pattern: str) -> str | None:
    """The shard reader of a glob or brace pattern (``webdataset`` or ``tfrecord``) from its
    first name that exists, or ``None``: not a pattern of shards (a table's glob)."""
    import glob

    from labelgate.errors import InputError
    from labelgate.readers.shards.braces import expand_urls, is_brace_pattern
    from labelgate.readers.shards.tfrecord import TFRECORD_SUFFIXES, is_tfrecord
    from labelgate.readers.shards.webdataset import is_tar_name

    if "://" in pattern:  # a prefix of shards is named with --input-format webdataset
        name = pattern.split("?", 1)[0]
        if is_tar_name(name):
            return "webdataset"
        return "tfrecord" if name.lower().endswith(TFRECORD_SUFFIXES) else None
    try:
        named = expand_urls(pattern) if is_brace_pattern(pattern) else []
    except InputError:
        return None
    if not named:
        named = sorted(glob.glob(pattern))[:5]  # noqa: PTH207 (the pattern may be absolute)
    if named and is_tar_name(named[0]):
        return "webdataset"
    first = next((Path(n) for n in named[:5] if Path(n).is_file()), None)
    if first is not None and is_tfrecord(first):
        return "tfrecord"
    return None
