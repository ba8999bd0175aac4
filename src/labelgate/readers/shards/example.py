"""``tf.train.Example`` read from protobuf's wire format, only the features asked for.

``Example`` holds ``Features features = 1``; ``Features`` a ``map<string, Feature> feature = 1``
(each entry a message of ``key = 1`` and ``value = 2``); ``Feature`` a ``oneof`` of
``BytesList bytes_list = 1``, ``FloatList float_list = 2``, ``Int64List int64_list = 3``, each
a ``repeated ... value = 1`` (tensorflow/core/example/feature.proto@0dd22230,
example.proto). Every other field, the encoded image first, is skipped by its length without a
copy. As protobuf parses: a map key seen twice keeps its last value, a packed and an unpacked
int64 list are the same list, an int64 is a varint read as two's complement.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["ProtoError", "features", "names"]

Value = list[int] | list[bytes] | list[float]


class ProtoError(ValueError):
    """A record that is not a ``tf.train.Example`` in protobuf's wire format."""


def _varint(buf: memoryview, at: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if at >= len(buf):
            raise ProtoError("a varint runs past the end of its message")
        b = buf[at]
        at += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, at
        shift += 7
        if shift >= 70:
            raise ProtoError("a varint longer than 10 bytes")


def _fields(buf: memoryview) -> list[tuple[int, int, int | memoryview]]:
    """(field number, wire type, value) of each field of a message: a varint's integer, or the
    bytes of a length-delimited field (a view, not a copy); fixed-width fields are skipped."""
    out: list[tuple[int, int, int | memoryview]] = []
    at = 0
    while at < len(buf):
        tag, at = _varint(buf, at)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ProtoError("field number 0")
        if wire == 0:
            value, at = _varint(buf, at)
            out.append((number, wire, value))
        elif wire == 2:
            size, at = _varint(buf, at)
            if at + size > len(buf):
                raise ProtoError("a field runs past the end of its message")
            out.append((number, wire, buf[at : at + size]))
            at += size
        elif wire in (1, 5):  # fixed64 / fixed32 (FloatList's unpacked floats)
            width = 8 if wire == 1 else 4
            if at + width > len(buf):
                raise ProtoError("a fixed-width field runs past the end of its message")
            out.append((number, wire, buf[at : at + width]))
            at += width
        else:
            raise ProtoError(f"wire type {wire}")
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _feature(buf: memoryview) -> tuple[str, Value]:
    """A ``Feature``'s kind (``int64``, ``bytes``, ``float`` or ``empty``) and values."""
    import struct

    size = len(buf)
    if (
        4 < size < 0x80
        and buf[0] == 0x1A
        and buf[1] == size - 2
        and buf[2] == 0x0A
        and buf[3] == size - 4
    ):
        ints: list[int] = []  # one packed Int64List, as every writer writes a label
        at = 4
        while at < size:
            raw, at = _varint(buf, at)
            ints.append(_signed(raw))
        return "int64", ints

    kind, values = "empty", []  # type: tuple[str, Value]
    for number, _, inner in _fields(buf):
        if not isinstance(inner, memoryview) or number not in (1, 2, 3):
            continue
        if number == 3:
            ints = []
            for n, wire, v in _fields(inner):
                if n != 1:
                    continue
                if wire == 0:
                    assert isinstance(v, int)
                    ints.append(_signed(v))
                elif wire == 2:
                    assert isinstance(v, memoryview)
                    at = 0
                    while at < len(v):
                        raw, at = _varint(v, at)
                        ints.append(_signed(raw))
            kind, values = "int64", ints
        elif number == 1:
            kind = "bytes"
            values = [
                bytes(v) for n, w, v in _fields(inner) if n == 1 and isinstance(v, memoryview)
            ]
        else:
            floats: list[float] = []
            for n, wire, v in _fields(inner):
                if n == 1 and isinstance(v, memoryview):
                    if wire == 5:
                        floats.append(struct.unpack("<f", v)[0])
                    elif wire == 2 and len(v) % 4 == 0:
                        floats.extend(x[0] for x in struct.iter_unpack("<f", v))
            kind, values = "float", floats
    return kind, values


def features(record: memoryview, wanted: Collection[str]) -> dict[str, tuple[str, Value]]:
    """The features named in ``wanted`` that an ``Example`` holds: name -> (kind, values).

    Only the map entries are walked: an entry's key is compared with the names wanted before
    its value is looked at, and the value of any other feature (the encoded image) is skipped
    by its length, neither decoded nor copied.

    Raises:
        ProtoError: the record is not an Example in protobuf's wire format.
    """
    keys = {name.encode("utf-8"): name for name in wanted}
    found: dict[str, tuple[str, Value]] = {}
    for start, stop in _spans(record, 0, len(record)):  # Example.features (merged, as protobuf)
        for first, last in _spans(record, start, stop):  # Features.feature: the map's entries
            key, value = _entry(record, first, last)
            name = keys.get(key)
            if name is None:
                try:
                    key.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ProtoError("a feature name that is not UTF-8") from exc
                continue
            found[name] = _feature(value) if value is not None else ("empty", [])
    return found


def _spans(buf: memoryview, at: int, end: int) -> list[tuple[int, int]]:
    """The (start, stop) of each field 1 of wire type 2 of the message at ``buf[at:end]``;
    every other field checked and skipped."""
    out: list[tuple[int, int]] = []
    while at < end:
        tag = buf[at]
        if tag < 0x80:
            at += 1
        else:
            tag, at = _varint(buf, at)
        wire = tag & 7
        if tag >> 3 == 0:
            raise ProtoError("field number 0")
        if wire == 2:
            size = buf[at] if at < end else 0x80
            if size < 0x80:
                at += 1
            else:
                size, at = _varint(buf, at)
            if at + size > end:
                raise ProtoError("a field runs past the end of its message")
            if tag == 0x0A:
                out.append((at, at + size))
            at += size
        elif wire == 0:
            _, at = _varint(buf, at)
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
            if at > end:
                raise ProtoError("a fixed-width field runs past the end of its message")
        else:
            raise ProtoError(f"wire type {wire}")
        if at > end:
            raise ProtoError("a varint runs past the end of its message")
    return out


def _entry(buf: memoryview, at: int, end: int) -> tuple[bytes, memoryview | None]:
    """A map entry's key (its last, as protobuf keeps it) and value message (a view)."""
    n = buf[at + 1] if end - at > 2 and buf[at] == 0x0A else 0x80
    if n < 0x80 and at + 2 + n < end and buf[at + 2 + n] == 0x12:  # key, then value: as written
        size, begin = _varint(buf, at + 3 + n)
        if begin + size == end:
            return bytes(buf[at + 2 : at + 2 + n]), buf[begin:end]
    key, value = b"", None
    for number, wire, part in _fields(buf[at:end]):
        if wire == 2 and isinstance(part, memoryview):
            if number == 1:
                key = bytes(part)
            elif number == 2:
                value = part
    return key, value


def names(record: memoryview) -> list[str]:
    """Every feature name an ``Example`` holds (for a message naming the candidates)."""
    out: list[str] = []
    for number, wire, part in _fields(record):
        if number == 1 and wire == 2 and isinstance(part, memoryview):
            for n, w, entry in _fields(part):
                if n == 1 and w == 2 and isinstance(entry, memoryview):
                    for en, ew, ev in _fields(entry):
                        if en == 1 and ew == 2 and isinstance(ev, memoryview):
                            out.append(bytes(ev).decode("utf-8", errors="replace"))
    return out
