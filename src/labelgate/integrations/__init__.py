"""Training frameworks: callbacks that validate the datasets a run is about to train on, and stop
it before its first step when they fail (PyTorch Lightning, Hugging Face Trainer).

Each module imports its framework when it is imported; ``import labelgate`` imports neither.
What both share is ``integrations/gate.py``.
"""

from labelgate.integrations.gate import LabelsRejected, check_dataset, checked_options

__all__ = ["LabelsRejected", "check_dataset", "checked_options"]
