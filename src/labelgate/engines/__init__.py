"""The row-level engines (pandera, Great Expectations): each runs the checks it can express on a
pandas frame of the input, translated per code into labelgate's findings, beside labelgate's own
checks for the rest.

The shared part is ``engines/common.py`` (``load_frame``, ``Translator``, ``engine_report``);
each engine is a module (``pandera``, ``gx``; ``gxsection`` the contract's pandera section as
GX expectations).
"""

from labelgate.engines.common import REJECTING, Translator, engine_report, load_frame

__all__ = ["REJECTING", "Translator", "engine_report", "load_frame"]
