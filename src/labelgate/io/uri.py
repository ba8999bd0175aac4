"""How a URI is shown in reports and messages: without the credentials it may carry.

``s3://KEY:SECRET@bucket/labels.parquet`` and ``https://user:token@host/x.csv`` hold credentials
in their user-info part, and ``?access_key=...`` in their query: ``display_uri`` drops both
from one URI, ``scrub_uris`` from every URI inside a message (pyarrow's errors quote the URI
they were given).
"""

from __future__ import annotations

import re

__all__ = ["display_uri", "scrub_uris"]

# scheme://user-info@ : the user-info part ends at the first "@" before the path, query or fragment
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]*@")
_QUERY = re.compile(r"(?P<uri>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s?#'\"]*)\?[^\s#'\"]*")


def display_uri(uri: str) -> str:
    """``uri`` as reports show it: without its user-info (``KEY:SECRET@``) and its query string,
    either of which may hold keys."""
    return _USERINFO.sub(r"\g<scheme>", uri, count=1).split("?", 1)[0]


def scrub_uris(text: str) -> str:
    """``text`` with the user-info and query of every URI in it removed."""
    if "://" not in text:
        return text
    return _QUERY.sub(r"\g<uri>", _USERINFO.sub(r"\g<scheme>", text))
