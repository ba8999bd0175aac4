"""The command line: the only package that prints or exits. Exit status 0 pass, 1 fail, 2
usage or input, 3 a defect of labelgate's.

``main`` (``cli/main.py``) parses and dispatches; ``handlers`` runs each command; ``parser``
holds the flags.
"""

from labelgate.cli.main import main
from labelgate.cli.parser import FORMATS, build_parser

__all__ = ["FORMATS", "build_parser", "main"]
