"""Strict options: an option name that is not known is refused, with the closest known one.

A misspelt keyword (``batchsize=8``) that is silently ignored lets a run pass with the default
it meant to replace, so the Python API, the callbacks, the training guards and the command line
all refuse it the way the contract parser refuses an unknown key (``difflib``'s closest match).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

from labelgate.errors import OptionError

__all__ = ["closest", "refuse_unknown", "strict_keywords"]

P = ParamSpec("P")
R = TypeVar("R")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (``difflib``'s default cutoff), or ``None``."""
    import difflib  # only when a name is refused

    found = difflib.get_close_matches(name, list(known), n=1)
    return found[0] if found else None


def refuse_unknown(given: Iterable[str], known: Iterable[str], *, where: str) -> None:
    """Raise unless every name in ``given`` is in ``known``.

    Args:
        given: the option names passed.
        known: the names accepted.
        where: what takes them, for the message (``labelgate.validate``).

    Raises:
        OptionError: naming the first unknown option and the closest known one.
    """
    allowed = list(known)
    for name in given:
        if name not in allowed:
            near = closest(name, allowed)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise OptionError(f"{where}: unknown option {name!r}{hint}")


def strict_keywords(fn: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``fn`` so an unknown keyword argument is an ``OptionError`` naming the closest
    parameter, where Python's own ``TypeError`` names none."""
    signature = inspect.signature(fn)
    names = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]

    @functools.wraps(fn)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        refuse_unknown(kwargs, names, where=f"{fn.__name__}()")
        return fn(*args, **kwargs)

    return checked
