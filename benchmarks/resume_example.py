"""Write the worked example of docs/resume.md: a 4-class run's checkpoints and the log of its crash.

    python benchmarks/resume_example.py OUT_DIR

Writes OUT_DIR/train.log (four steps, then ``IndexError: Target 4 is out of bounds.`` at the
fifth) and OUT_DIR/ckpt/step-1.pt .. step-6.pt, each ``torch.save`` of the model's and Adam's
state dicts after one step: step 1 sound, step 2 with a NaN weight, step 3 with an infinite Adam
moment, step 4 cut in half, step 5 from a 5-class model, step 6 sound but written after the
failure. Needs torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.checkpoints import spoiled_run  # noqa: E402

LOG = """step 0 loss 0.9
step 1 loss 0.8
step 2 loss 0.7
step 3 loss 0.6
Traceback (most recent call last):
  File "train.py", line 41, in <module>
    loss = criterion(model(x), y)
IndexError: Target 4 is out of bounds.
"""


def main() -> None:
    out = Path(sys.argv[1])
    ckpt = out / "ckpt"
    ckpt.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text(LOG)
    spoiled_run(ckpt, (1, 2, 3, 4, 5, 6))


if __name__ == "__main__":
    main()
