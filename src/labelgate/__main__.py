"""``python -m labelgate``: the command line."""

from labelgate.cli import main

raise SystemExit(main())
