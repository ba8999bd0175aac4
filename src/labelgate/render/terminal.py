"""The one sink for text that reaches a terminal or a CI log from data: the text report and
triage's verdict (docs/security.md, "What reports hold").

Data (a log line, an id, a class name) may hold escape sequences (CSI clear-screen, OSC-8 links,
an OSC-0 window title, BEL, CR) and, on a CI runner, GitHub workflow commands (a line starting
with ``::``). ``terminal_text`` writes control characters as visible escapes;
``no_commands`` keeps any line of the output from starting with ``::``, wherever a wrap put
it. Rich renders the text report with ``emoji=False`` and escaped markup, so ``:fire:`` and
``[bold]`` from data stay text.
"""

from __future__ import annotations

import re

from labelgate.io.files import escape_controls

__all__ = ["no_commands", "terminal_text"]

_COMMAND = re.compile(r"^([ \t]*):(?=:)", re.MULTILINE)


def no_commands(text: str) -> str:
    """``text`` with the first colon of every line that starts with ``::`` (after blanks) written
    as ``\\x3a``: the line can no longer be read as a GitHub workflow command."""
    return _COMMAND.sub(r"\1\\x3a", text)


def terminal_text(value: object) -> str:
    """A value from data as one safe piece of a terminal line: control characters escaped."""
    return escape_controls(str(value))
