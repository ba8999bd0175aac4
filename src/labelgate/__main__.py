"""``python -m labelgate``: the command line."""

from labelgate.cli.entry import run

run()
