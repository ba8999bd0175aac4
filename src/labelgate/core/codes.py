"""The check codes as a type, generated from ``labelgate.core.catalog`` (do not edit: a test
holds this file to the catalog).

A code spelled wrong, or missing from the catalog, is a type error wherever a
``Code`` is expected, and a reader's codes are the ones ``READER_CODES`` lists.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["CODES", "READER_CODES", "Code"]

Code = Literal[
    "LG001",
    "LG002",
    "LG003",
    "LG004",
    "LG005",
    "LG006",
    "LG007",
    "LG008",
    "LG009",
    "LG010",
    "LG011",
    "LG012",
    "LG013",
    "LG014",
    "LG015",
    "LG016",
    "LG017",
    "LG018",
    "LG019",
    "LG020",
    "LG021",
    "LG022",
    "LG023",
    "LG024",
    "LG025",
    "LG026",
    "LG027",
    "LG028",
    "LG029",
    "LG030",
    "LG031",
    "LG032",
    "LG033",
    "LG034",
    "LG035",
    "LG036",
    "LG037",
    "LG038",
    "LG039",
    "LG040",
    "LG041",
    "LG042",
    "LG043",
    "LG044",
    "LG045",
    "LG046",
    "LG047",
    "LG048",
    "LG049",
    "LG050",
]

CODES: tuple[Code, ...] = get_args(Code)

READER_CODES: frozenset[Code] = frozenset(
    (
        "LG027",
        "LG028",
        "LG029",
        "LG030",
        "LG031",
        "LG032",
        "LG033",
        "LG036",
        "LG037",
        "LG038",
        "LG039",
        "LG041",
        "LG042",
        "LG043",
        "LG044",
        "LG045",
        "LG046",
        "LG047",
        "LG048",
        "LG050",
    )
)
