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
from typing import Any

LOG = """step 0 loss 0.9
step 1 loss 0.8
step 2 loss 0.7
step 3 loss 0.6
Traceback (most recent call last):
  File "train.py", line 41, in <module>
    loss = criterion(model(x), y)
IndexError: Target 4 is out of bounds.
"""


def trained(k: int = 4) -> tuple[Any, Any]:
    """A small model of ``k`` classes and its Adam optimizer after one step (seeded)."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, k))
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    target = torch.tensor([0, 1, 2, 3, 0]) % k
    torch.nn.functional.cross_entropy(model(torch.randn(5, 6)), target).backward()
    opt.step()
    return model, opt


def save(path: Path, model: Any, opt: Any) -> None:
    import torch

    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 0}, path)


def main() -> None:
    import torch

    out = Path(sys.argv[1])
    ckpt = out / "ckpt"
    ckpt.mkdir(parents=True, exist_ok=True)
    (out / "train.log").write_text(LOG)
    model, opt = trained()
    save(ckpt / "step-1.pt", model, opt)
    m, o = trained()
    with torch.no_grad():
        m[0].weight[2, 3] = float("nan")
    save(ckpt / "step-2.pt", m, o)
    m, o = trained()
    o.state[next(iter(o.state))]["exp_avg_sq"][0] = float("inf")
    save(ckpt / "step-3.pt", m, o)
    save(ckpt / "step-4.pt", model, opt)
    whole = (ckpt / "step-4.pt").read_bytes()
    (ckpt / "step-4.pt").write_bytes(whole[: len(whole) // 2])
    save(ckpt / "step-5.pt", *trained(k=5))
    save(ckpt / "step-6.pt", model, opt)


if __name__ == "__main__":
    main()
