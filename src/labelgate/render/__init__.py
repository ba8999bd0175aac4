"""Renderers: pure functions from a Report to text, one module per format; ``render``
(``render/formats.py``) picks the format's."""

from labelgate.render.formats import FORMATS, render

__all__ = ["FORMATS", "render"]
