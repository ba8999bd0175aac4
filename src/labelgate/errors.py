"""The exceptions labelgate raises.

Failed checks are not exceptions: they are ``labelgate.core.report.Finding`` values. Exceptions
are kept for what stops a run before a verdict can be reached::

    LabelgateError (Exception)
     +-- UsageError (LabelgateError, ValueError)    a flag or argument that cannot be used
     |    +-- ContractError                          a contract file that is not valid (carries its key path)
     |    +-- OptionError (UsageError, TypeError)    an option name that is not known ("did you mean")
     +-- InputError (LabelgateError, OSError)        an input that cannot be read (carries its path)
     |    +-- ClassMapError                          a class-name map that cannot be read
     +-- LabelError (LabelgateError, ValueError)     bad targets met in training code (labelgate.torch)

The command line turns UsageError and InputError into one line on stderr and exit status 2.
"""

from __future__ import annotations

import re

__all__ = [
    "INSTALL_TORCH",
    "ClassMapError",
    "ContractError",
    "InputError",
    "LabelError",
    "LabelgateError",
    "OptionError",
    "UsageError",
    "one_line",
]


# how to get torch, for the features that need it: a release's extra, or a clone's (no package
# index serves labelgate before a release)
INSTALL_TORCH = (
    "pip install 'labelgate[torch]' (in a clone of the repository: pip install -e '.[torch]')"
)


class LabelgateError(Exception):
    """Base class of every exception labelgate raises on purpose."""


class UsageError(LabelgateError, ValueError):
    """An argument, flag or option value that cannot be used."""


class OptionError(UsageError, TypeError):
    """An option (keyword argument, callback option) whose name is not known: a ``TypeError``
    too, as Python raises for an unexpected keyword."""


class ContractError(UsageError):
    """A dataset contract that is not valid.

    Attributes:
        path: where the contract came from (a file path, or ``None`` for one built in code).
        key: the dotted key path inside the contract, such as ``batching.size``.
    """

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None) -> None:
        self.path = path
        self.key = key
        where = ": ".join(part for part in (path, key) if part)
        super().__init__(f"{where}: {message}" if where else message)


class InputError(LabelgateError, OSError):
    """An input file or directory that cannot be read.

    Attributes:
        path: the file or directory concerned.
    """

    def __init__(self, message: str, *, path: str) -> None:
        self.path = path
        self.reason = message
        super().__init__(f"{path}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        # Survives pickling (worker processes): OSError's default would call __init__ wrongly.
        return (_rebuild, (type(self), self.reason, self.path))


def _rebuild(cls: type[InputError], message: str, path: str) -> InputError:
    return cls(message, path=path)


class ClassMapError(InputError):
    """A class-name map file that cannot be read or parsed."""


class LabelError(LabelgateError, ValueError):
    """Targets that PyTorch would reject or that would poison training, found in training code."""


# Where pyarrow quotes the data in its messages: the row of a CSV parse error, the cell of a
# conversion error. A message names the file and the position, never its bytes (a credentials
# file given as data would have its secret shown).
_QUOTED_DATA = (
    (re.compile(r"(Expected \d+ columns?, got \d+):.*"), r"\1"),
    (re.compile(r"(invalid value) '.*'"), r"\1 (not shown)"),
)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (pyarrow's span several), or its type's name, without
    the data pyarrow quotes in it."""
    raw = str(exc)
    if "(right here)" in raw:  # yajl's (ijson's) errors quote the text around the error
        raw = raw.splitlines()[0]
    text = " ".join(raw.split())
    for pattern, kept in _QUOTED_DATA:
        text = pattern.sub(kept, text)
    return text or type(exc).__name__
