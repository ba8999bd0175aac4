"""A tiny model's checkpoints as a crashed run leaves them, for the resume tests and the worked
example of docs/resume.md (``benchmarks/resume_example.py``). torch is imported by the functions,
so a module importing these skips its tests without torch as it chooses."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def net(k: int = 4) -> Any:
    """A seeded 6 -> 8 -> ``k`` classifier."""
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, k))


def trained(k: int = 4) -> tuple[Any, Any]:
    """``net(k)`` and its Adam optimizer after one step."""
    import torch

    model = net(k)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    loss = torch.nn.functional.cross_entropy(
        model(torch.randn(5, 6)), torch.tensor([0, 1, 2, 3, 0]) % k
    )
    loss.backward()
    opt.step()
    return model, opt


def save(path: Path, model: Any, opt: Any) -> None:
    """The model's and the optimizer's state dicts, as a training loop saves them."""
    import torch

    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 0}, path)


def spoiled_run(folder: Path, steps: tuple[int, int, int, int, int, int]) -> None:
    """Six checkpoints ``step-N.pt`` in ``folder``, at ``steps`` in order: sound, a NaN weight,
    an infinite Adam moment, cut in half, a head of 5 classes, and sound again (the caller's
    log puts the failure between the fifth and the sixth)."""
    import torch

    sound, nan, inf, cut, five, after = (folder / f"step-{s}.pt" for s in steps)
    model, opt = trained()
    save(sound, model, opt)
    m, o = trained()
    with torch.no_grad():
        m[0].weight[2, 3] = float("nan")
    save(nan, m, o)
    m, o = trained()
    o.state[next(iter(o.state))]["exp_avg_sq"][0] = float("inf")
    save(inf, m, o)
    save(cut, model, opt)
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    save(five, *trained(k=5))
    save(after, model, opt)
