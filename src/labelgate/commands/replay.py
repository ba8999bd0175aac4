"""The child process of the smoke step: replay batches through CrossEntropyLoss on a device.

Run as a file, ``python replay.py SPEC.json`` (the smoke step runs it so, through runpy); it prints
one JSON object per line (``env``, then ``begin`` and ``batch`` or ``error`` per batch, then
``done``). On a GPU it stops with exit status 3 at the first batch that raises: a device-side
assert loses the whole CUDA context, so the parent starts a fresh process at the next batch. On the
CPU an exception leaves the process sound, and it goes on. It needs torch, numpy and pyarrow only
(and, to read masks, Pillow and labelgate's mask loader), and no other part of labelgate: a repro
bundle carries a copy of this file. Most of its time is ``import torch``; it imports nothing else
it can do without.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

EXIT_BATCH_FAILED = 3


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout, flushed: if the process dies next, the parent still has it."""
    print(json.dumps({"event": event, **fields}, default=str), flush=True)


def pick_device(torch: Any, wanted: str) -> tuple[Any, str]:
    """The torch device for ``wanted`` (auto, cpu, cuda, cuda:N, mps) and its backend name."""
    if wanted == "auto":
        if torch.cuda.is_available():
            wanted = "cuda"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            wanted = "mps"
        else:
            wanted = "cpu"
    device = torch.device(wanted)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"device {wanted!r} asked for, but torch sees no CUDA or ROCm GPU")
        return device, "rocm" if torch.version.hip else "cuda"
    return device, device.type


def environment(torch: Any, device: Any, backend: str) -> dict[str, Any]:
    """What ran where: versions, device name, and whether launches were blocking."""
    import platform

    name = platform.processor() or platform.machine()
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    return {
        "device": str(device),
        "device_name": name,
        "backend": backend,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "cuda_launch_blocking": device.type == "cuda"
        and not torch.version.hip
        and os.environ.get("CUDA_LAUNCH_BLOCKING") == "1",
        "python": platform.python_version(),
    }


def targets(torch: Any, labels: list[Any], ignore_index: int, task: str) -> Any:
    """The target tensor a collate function would build: int64 class indices (token rows padded
    with ignore_index), or float32 probability rows for soft targets."""
    if task == "soft":
        if any(r is None for r in labels):
            raise TypeError("a soft-label row is null: no tensor can hold it")
        return torch.tensor([[float(v) for v in r] for r in labels], dtype=torch.float32)
    if task == "tokens":
        width = max((len(r) for r in labels if r is not None), default=0)
        rows = []
        for r in labels:
            if r is None:
                raise TypeError("a token row is null")
            rows.append(list(r) + [ignore_index] * (width - len(r)))
        labels = [v for r in rows for v in r]
    for v in labels:
        if v is None:
            raise TypeError("a label is null: no tensor can hold it")
        if isinstance(v, float) and not v.is_integer():
            raise ValueError(f"label {v!r} is not a class index")
        if isinstance(v, str):
            raise TypeError(f"label {v!r} is text, not a class index")
    return torch.tensor([int(v) for v in labels], dtype=torch.int64)


def read_mask(path: Path, colours: dict[str, int] | None) -> Any:
    """A mask file as an array of class indices (a P-mode PNG: its palette indices; a colour
    mask through ``colours``, ``0xRRGGBB`` as text -> index, else as read, three channels)."""
    import numpy as np

    from labelgate.readers.common.maskfile import load_npy, require_regular

    if path.suffix.lower() == ".npy":
        return load_npy(path, mmap=False)  # its header's pixel count checked before allocating
    from PIL import Image

    require_regular(path)  # a FIFO named like a mask would block the replay
    with Image.open(path) as im:
        array = np.asarray(im)
    if array.ndim == 3 and colours is not None:
        packed = (array[..., 0].astype(np.int64) << 16) | (array[..., 1].astype(np.int64) << 8)
        packed |= array[..., 2]
        index = np.full(packed.shape, -1, dtype=np.int64)
        for colour, i in colours.items():
            index[packed == int(colour)] = i
        return index
    return array


def mask_targets(torch: Any, root: str, ids: list[str], colours: dict[str, int] | None) -> Any:
    """The batch a DataLoader's default collate builds from the masks: stacked int64 (N, H, W);
    masks of different sizes make it raise, as collate does."""
    import numpy as np

    arrays = [np.asarray(read_mask(Path(root) / i, colours)).astype(np.int64) for i in ids]
    return torch.stack([torch.from_numpy(a) for a in arrays])


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    import pyarrow.parquet as pq
    import torch

    if spec.get("blocking") and not torch.version.hip:
        # Set before any CUDA call (device discovery included): CUDA reads it when it starts.
        # It has no effect on the CPU, and ROCm gets no NVIDIA-specific setting.
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    start = time.perf_counter()
    device, backend = pick_device(torch, spec["device"])
    k, ignore_index = spec["num_classes"], spec["ignore_index"]
    torch.manual_seed(0)
    masks = spec.get("masks")
    model = (torch.nn.Conv2d(3, k, 1) if masks else torch.nn.Linear(16, k)).to(device)
    weight = None
    if spec.get("weights") is not None:
        weight = torch.tensor(spec["weights"], dtype=torch.float32, device=device)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight, ignore_index=ignore_index)
    # not pq.read_table: it goes through pyarrow.dataset, which imports pandas, for a file that
    # is read whole
    table = pq.ParquetFile(spec["batches"]).read()
    batch_ids = table.column("batch").to_pylist()
    labels = table.column("label").to_pylist()
    ids = table.column("id").to_pylist() if masks else []
    emit("env", **environment(torch, device, backend), init_seconds=time.perf_counter() - start)
    bounds: dict[int, list[int]] = {}
    for i, b in enumerate(batch_ids):
        bounds.setdefault(b, [i, i])[1] = i + 1
    only = spec.get("only")
    for b in sorted(bounds):
        if b < spec.get("start", 0) or (only is not None and b not in only):
            continue
        lo, hi = bounds[b]
        emit("begin", batch=b)
        try:
            if masks:  # real mask batches: (N, 3, H, W) -> 1x1 conv -> (N, K, H, W)
                t = mask_targets(torch, masks, ids[lo:hi], spec.get("color_map")).to(device)
                x = torch.randn(t.shape[0], 3, *t.shape[1:3], device=device)
            else:
                t = targets(torch, labels[lo:hi], ignore_index, spec["task"]).to(device)
                x = torch.randn(t.shape[0], 16, device=device)
            logits = model(x)
            loss = loss_fn(logits, t)
            loss.backward()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            value = loss.item()
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
            lines = str(exc).strip().splitlines()
            emit("error", batch=b, type=type(exc).__name__, message=lines[0] if lines else "")
            if device.type != "cpu" or spec.get("stop_on_error"):
                return EXIT_BATCH_FAILED  # a device error may have lost the context: stop here
            model.zero_grad(set_to_none=True)
            continue  # on the CPU an exception leaves the process sound
        model.zero_grad(set_to_none=True)
        finite = math.isfinite(value)
        emit(
            "batch",
            batch=b,
            rows=hi - lo,
            loss=value if finite else str(value),
            finite=finite,
            logits_shape=list(logits.shape),
            target_shape=list(t.shape),
            dtype=str(t.dtype),
        )
    emit("done", seconds=time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
