"""``labelgate explain LG0xx``: a check's catalog entry, its paragraph of docs/checks.md (packaged
as ``paragraphs.json`` by ``docs/explanations.py``) and, for the checks a table of labels shows, a
minimal input that fails it and one that passes (``examples``); the text is built in ``text``."""

from labelgate.explain.text import explain

__all__ = ["explain"]
