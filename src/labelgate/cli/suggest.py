"""A flag the command does not know, named with the closest one it does."""

from __future__ import annotations

import argparse

from labelgate.core.options import closest

__all__ = ["unknown_flag"]


def unknown_flag(parser: argparse.ArgumentParser, extras: list[str]) -> str | None:
    """The usage error for the first unknown flag among ``extras`` (``--clases``: did you mean
    ``--classes``?), or ``None`` when there is none (a negative number is a value, not a flag)."""
    unknown = [a for a in extras if a.startswith("-") and len(a) > 1 and not _number(a)]
    if not unknown:
        return None
    flags = [s for action in parser._actions for s in action.option_strings]
    flag = unknown[0].split("=", 1)[0]
    near = closest(flag, flags)
    return f"unknown flag {flag}" + (f" (did you mean {near}?)" if near else "")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
