"""Cost of labelgate.torch.check_targets per batch, against CrossEntropyLoss on the same batch.

    python benchmarks/guard.py

For each shape it times (best of 5 rounds of 200 calls, on the CPU, one thread) the guard on a
valid int64 target, and `cross_entropy` forward on logits of K=10 classes with that target: the
ratio says what leaving the guard on costs relative to the loss alone (a model's forward and
backward cost far more than the loss).
"""

from __future__ import annotations

import time

import torch

from labelgate.torch import check_targets

K = 10
SHAPES = {
    "classification (256,)": (256,),
    "tokens (32, 512)": (32, 512),
    "segmentation (8, 256, 256)": (8, 256, 256),
}


def best(fn: object, calls: int = 200, rounds: int = 5) -> float:
    """Best seconds per call."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) / calls)
    return min(times)


def main() -> None:
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread")
    print(f"{'batch':<28} {'guard us':>9} {'loss us':>9} {'guard/loss':>10}")
    for name, shape in SHAPES.items():
        target = torch.randint(0, K, shape)
        target.view(-1)[::7] = -100
        n = target.numel()
        logits = torch.randn(n, K)
        flat = target.reshape(-1)
        guard = best(lambda t=target: check_targets(t, K))
        loss = best(lambda x=logits, t=flat: torch.nn.functional.cross_entropy(x, t))
        print(f"{name:<28} {guard * 1e6:>9.1f} {loss * 1e6:>9.1f} {guard / loss:>10.2f}")


if __name__ == "__main__":
    main()
