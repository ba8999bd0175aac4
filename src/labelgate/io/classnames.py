"""What a class-map file may hold: class names, not settings, credentials or system tables.

A class map is shown (every name, in the per-class table), so a file that is not one must be
refused before any of it reaches an output, and refused without quoting it: the messages here
name a line, an entry or a row by its number, never by its content (docs/security.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from labelgate.errors import ClassMapError

__all__ = [
    "CLASS_MAP_SUFFIXES",
    "MAX_CLASS_NAMES",
    "check_header",
    "check_keys",
    "check_names",
    "check_source",
    "safe_to_show",
]

CLASS_MAP_SUFFIXES = (".txt", ".names", ".json", ".yaml", ".yml", ".csv", ".pbtxt")
MAX_CLASS_NAMES = 1_000_000  # names in one map; a tokenizer's vocabulary is 250,000

# Words that name a credential in a key (``db_password``, ``AWS_SECRET_ACCESS_KEY``, ``auths``).
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "secret", "secrets", "token", "auth", "auths"}
    | {"authorization", "credential", "credentials", "apikey", "privatekey", "passphrase"}
)
_SECRET_KEYS = frozenset(  # keys written as one word (``accessKeyId``, ``SecretAccessKey``)
    {"accesskey", "accesskeyid", "secretaccesskey", "secretkey", "clientsecret", "sessiontoken"}
    | {"accesstoken", "refreshtoken", "apitoken", "awsaccesskeyid", "awssecretaccesskey"}
)
# A whole name that is a credential's key (a lone "token" or "auth" may be a real class).
_SECRET_NAMES = _SECRET_KEYS | {"password", "passwd", "authorization", "apikey", "privatekey"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_KEY_VALUE = re.compile(r"^\s*[A-Za-z_][\w.-]*\s*=\s*\S")  # git config, .env, ini, obj.data
_KEY_COLON = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*:\s+\S")  # an HTTP header, a YAML pair
_PASSWD = re.compile(r"^[^:\s]*:[^:]*:\d+:\d+:")  # name:x:uid:gid: (/etc/passwd, /etc/group)
_SECRET_TEXT = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY|\bAKIA[0-9A-Z]{16}\b|(?i:\bbearer\s+\S)")
_DIGEST = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=]{20,}")  # an API token's body (ghp_..., sk-..., base64)


def safe_to_show(names: Iterable[str]) -> bool:
    """Whether the names read from a file's header may be quoted in a message: each at most 100
    characters, none naming a credential or shaped as a setting, a key or a token. A header
    that is not column names (a credentials file, a token file read as CSV) is not quoted."""
    for name in names:
        if len(name) > 100 or credential_key(name) or _shape(name) is not None:
            return False
        for run in _TOKEN_RUN.findall(name):
            if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
                return False
    return True


def credential_key(key: str) -> bool:
    """Whether ``key`` reads as the name of a credential (``password``, ``aws_secret_access_key``,
    ``accessKeyId``, ``auths``)."""
    words = [w.casefold() for w in _WORD.findall(key)]
    joined = "".join(words)
    return (
        joined in _SECRET_KEYS or joined in _SECRET_WORDS or any(w in _SECRET_WORDS for w in words)
    )


def check_source(path: Path, origin: str) -> None:
    """Refuse a class map whose name, or whose link target, lacks a class-map extension.

    A link's target is checked too: ``labels.txt -> ~/.gitconfig`` and ``passwd.txt -> /etc/passwd``
    are refused by the target's name. A target in a content-addressed cache (a ``blobs`` folder
    of files named by their SHA-1 or SHA-256, as the Hugging Face hub stores downloads) is
    accepted: its link carries the file's real name.

    Raises:
        ClassMapError: the name or the target has another extension.
    """
    wanted = ", ".join(CLASS_MAP_SUFFIXES)
    if path.suffix.lower() not in CLASS_MAP_SUFFIXES:
        raise ClassMapError(f"a class-name map is a {wanted} file", path=origin)
    target = Path(os.path.realpath(path))
    if target.suffix.lower() in CLASS_MAP_SUFFIXES:
        return
    if target.parent.name == "blobs" and _DIGEST.fullmatch(target.name):
        return
    raise ClassMapError(
        f"a class-name map is a {wanted} file, and this one is a link to a file that is not",
        path=origin,
    )


def check_keys(data: Mapping[object, object], origin: str) -> None:
    """Refuse a structured map (JSON, YAML) with an entry whose key names a credential and whose
    value is no class index (``{"password": ...}``; ``{"B-TOKEN": 3}`` is a name -> index entry).

    Raises:
        ClassMapError: naming the entry's position, not its key or value.
    """
    for number, (key, value) in enumerate(data.items(), start=1):
        if isinstance(key, str) and not _index_like(value) and credential_key(key):
            raise ClassMapError(
                f"entry {number} has a key that names a credential: not a class map "
                "(nothing of it is shown)",
                path=origin,
            )


def _index_like(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.strip().isdecimal())


def check_header(cells: list[str], origin: str) -> None:
    """Refuse a CSV map whose header names credentials (a cloud console's key export).

    Raises:
        ClassMapError: without quoting the header.
    """
    if any(credential_key(c) for c in cells):
        raise ClassMapError(
            "the header names a credential: not a class map (nothing of it is shown)", path=origin
        )


def check_names(entries: Iterable[tuple[int, str]], origin: str, *, what: str = "entry") -> None:
    """Refuse names that are not class names: more than ``MAX_CLASS_NAMES``, ``key = value``
    settings, ``key: value`` pairs with a credential's key, ``/etc/passwd``-shaped rows, private
    keys, cloud access keys or bearer tokens.

    Args:
        entries: ``(index, name)`` pairs, in file order.
        origin: the file, for the error.
        what: how a position is named in the error (``line``, ``entry``, ``row``).

    Raises:
        ClassMapError: naming the position and the shape, never the content.
    """
    for number, (_, name) in enumerate(entries, start=1):
        if number > MAX_CLASS_NAMES:
            raise ClassMapError(
                f"more than {MAX_CLASS_NAMES:,} class names: not a class map", path=origin
            )
        shape = _shape(name)
        if shape is not None:
            raise ClassMapError(
                f"{what} {number} {shape}, not a class name: not a class map "
                "(nothing of it is shown)",
                path=origin,
            )


def _shape(name: str) -> str | None:
    if _PASSWD.match(name):
        return "has the shape of an /etc/passwd row"
    if _KEY_VALUE.match(name):
        return "is a 'key = value' setting"
    pair = _KEY_COLON.match(name)
    if pair is not None and credential_key(pair.group(1)):
        return "is a 'key: value' pair naming a credential"
    if "".join(w.casefold() for w in _WORD.findall(name)) in _SECRET_NAMES:
        return "names a credential"
    if _SECRET_TEXT.search(name):
        return "holds a key or a token"
    return None
