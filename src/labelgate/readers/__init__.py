"""Every input format behind one interface (``labelgate.readers.base.Reader``), found in a
lazy manifest and through the ``labelgate.readers`` entry-point group (``readers/registry.py``);
``readers/opened.py`` opens an input through the reader chosen.

A format of several modules is a package (``coco/``, ``masks/``, ``yolo/``, ``detcsv/``,
``labelstudio/``; ``images/`` checks a detection input's images), its ``__init__`` naming its
entry; a one-module format is a module here (``table``, ``voc``, ``cvat``, ``labelme``, ``hf``,
``imagefolder``, ``unsupported``); ``common/`` holds what no one format owns.

A team adds its in-house format in its own package (``docs/plugins.md``)::

    [project.entry-points."labelgate.readers"]
    myformat = "mypackage.reader:MyReader"
"""

from labelgate.readers.registry import (
    ENTRY_POINTS,
    MANIFEST,
    Detected,
    choose,
    detect,
    names,
    reader,
)

__all__ = ["ENTRY_POINTS", "MANIFEST", "Detected", "choose", "detect", "names", "reader"]
