"""Checkpoints read without running their code: found in a folder, read to the end, every tensor
judged finite, the model's parameter shapes handed to the head finder.

- ``.safetensors``: the header (8 bytes of length, then JSON) says every tensor's dtype, shape and
  byte range; each tensor is read on its own from its offsets, so memory holds one tensor at a
  time. torch is not used.
- torch files (``.pt``, ``.pth``, ``.bin``, Lightning's ``.ckpt``): ``torch.load(weights_only=True,
  mmap=True)``: the unpickler accepts tensors and plain containers only and refuses any other
  object without building it (a pickle that would run code is refused, not run); with ``mmap``
  the tensors stay on disk until each is judged. A file cut short lacks the zip's central
  directory at its end and is named truncated.
"""

from __future__ import annotations

import json
import math
import re
import struct
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labelgate.errors import InputError, UsageError

__all__ = ["Checkpoint", "Contents", "find_checkpoints", "read_checkpoint"]

TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")
SAFETENSORS = ".safetensors"
HF_FOLDER = re.compile(r"^checkpoint-(\d+)$")
STEP_IN_NAME = re.compile(r"(?:^|[^a-z])(?:global_step|step|iter|it)[-_=]?(\d+)", re.IGNORECASE)
EPOCH_IN_NAME = re.compile(r"(?:^|[^a-z])epoch[-_=]?(\d+)", re.IGNORECASE)
NUMBER = re.compile(r"(\d+)(?!.*\d)")
SKIPPED = ("rng_state", "training_args")  # HF Trainer's RNG states and arguments: no weights
NESTED = ("state_dict", "model_state_dict", "model", "module")
MAX_HEADER = 100 << 20  # safetensors' own limit on the header's size
FLOATS = {"F64": np.float64, "F32": np.float32, "F16": np.float16}
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1}
SIZES |= {"U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8, "F8_E4M3": 1, "F8_E5M2": 1}

Progress = Callable[[int, int | None], None]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A checkpoint found in a folder.

    Attributes:
        path: the file, or the Hugging Face Trainer's ``checkpoint-N`` folder.
        kind: ``lightning``, ``huggingface``, ``torch`` or ``safetensors``.
        step: the optimizer steps done when it was written (its name, or its contents).
        epoch: its epoch, where its name says it.
        files: the files read to judge it.
    """

    path: str
    kind: str
    step: int | None
    epoch: int | None
    files: tuple[str, ...]


@dataclass(slots=True)
class Contents:
    """What reading a checkpoint found.

    Attributes:
        problems: why it cannot be resumed from (empty: sound).
        shapes: the model's parameter names and shapes, in order (for the head finder).
        tensors: tensors read; ``largest``: bytes of the largest.
        step: the step its contents state (Lightning's ``global_step``, HF's
            ``trainer_state.json``), where they do.
        nan_logged: the first step whose logged loss is NaN or infinite (HF's log history).
    """

    problems: list[str] = field(default_factory=list)
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    tensors: int = 0
    largest: int = 0
    step: int | None = None
    nan_logged: int | None = None


def _step_of(name: str) -> tuple[int | None, int | None]:
    step = STEP_IN_NAME.search(name)
    epoch = EPOCH_IN_NAME.search(name)
    if step is None and epoch is None:
        step = NUMBER.search(name)
    return (int(step.group(1)) if step else None), (int(epoch.group(1)) if epoch else None)


def find_checkpoints(folder: str) -> list[Checkpoint]:
    """Every checkpoint under ``folder`` (its files and sub-folders), in path order.

    Raises:
        InputError: the folder does not exist or is not a folder.
    """
    root = Path(folder)
    if not root.exists():
        raise InputError("no such folder", path=folder)
    if not root.is_dir():
        raise InputError("not a folder of checkpoints", path=folder)
    found: list[Checkpoint] = []
    hf_folders = sorted(
        p for p in root.rglob("checkpoint-*") if p.is_dir() and HF_FOLDER.match(p.name)
    )
    for d in hf_folders:
        files = tuple(
            str(f)
            for f in sorted(d.iterdir())
            if f.is_file()
            and f.suffix in (*TORCH_SUFFIXES, SAFETENSORS)
            and not f.name.startswith(SKIPPED)
        )
        m = HF_FOLDER.match(d.name)
        assert m is not None
        found.append(Checkpoint(str(d), "huggingface", int(m.group(1)), None, files))
    inside = {Path(c.path) for c in found}
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.suffix not in (*TORCH_SUFFIXES, SAFETENSORS):
            continue
        if any(parent in inside for parent in f.parents) or f.name.startswith(SKIPPED):
            continue
        kind = (
            "lightning"
            if f.suffix == ".ckpt"
            else "safetensors"
            if f.suffix == SAFETENSORS
            else "torch"
        )
        step, epoch = _step_of(f.stem)
        found.append(Checkpoint(str(f), kind, step, epoch, (str(f),)))
    return sorted(found, key=lambda c: c.path)


def read_checkpoint(checkpoint: Checkpoint, *, progress: Progress | None = None) -> Contents:
    """Read every file of ``checkpoint`` to its end and judge every tensor finite.

    Never raises for a bad file: what is wrong is in ``Contents.problems``.
    """
    out = Contents()
    for name in checkpoint.files:
        path = Path(name)
        if path.suffix == SAFETENSORS:
            _read_safetensors(path, out, model=True, progress=progress)
        else:
            model = not path.name.startswith(("optimizer", "scheduler"))
            _read_torch(path, out, model=model, progress=progress)
    if checkpoint.kind == "huggingface":
        _trainer_state(Path(checkpoint.path), out)
    return out


def _trainer_state(folder: Path, out: Contents) -> None:
    state_file = folder / "trainer_state.json"
    if not state_file.is_file():
        out.problems.append("no trainer_state.json: the Trainer cannot resume from this folder")
        return
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        out.problems.append(f"trainer_state.json is not readable JSON (truncated?): {exc}")
        return
    step = state.get("global_step")
    out.step = step if isinstance(step, int) else None
    for entry in state.get("log_history", []):
        loss = entry.get("loss") if isinstance(entry, dict) else None
        if isinstance(loss, (int, float)) and not math.isfinite(loss):
            out.nan_logged = int(entry.get("step", 0))
            out.problems.append(
                f"its trainer_state.json logs a {loss} loss at step {entry.get('step')}"
            )
            break


def _read_safetensors(path: Path, out: Contents, *, model: bool, progress: Progress | None) -> None:
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            out.problems.append(f"{path.name}: truncated ({size} bytes, no header)")
            return
        (length,) = struct.unpack("<Q", head)
        if length > min(MAX_HEADER, size - 8):
            out.problems.append(
                f"{path.name}: truncated or not safetensors (header of {length} bytes)"
            )
            return
        try:
            header = json.loads(f.read(length))
        except (ValueError, UnicodeDecodeError):
            out.problems.append(f"{path.name}: the safetensors header is not JSON")
            return
        header.pop("__metadata__", None)
        end = max((int(t["data_offsets"][1]) for t in header.values()), default=0)
        if 8 + length + end > size:
            out.problems.append(
                f"{path.name}: truncated: {size} bytes, its header describes {8 + length + end}"
            )
            return
        done = 0
        for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            start, stop = (int(x) for x in t["data_offsets"])
            shape = tuple(int(d) for d in t["shape"])
            if model:
                out.shapes[name] = shape
            out.tensors += 1
            out.largest = max(out.largest, stop - start)
            f.seek(8 + length + start)
            buf = f.read(stop - start)
            bad = _nonfinite(buf, t["dtype"])
            if bad:
                out.problems.append(
                    f"{path.name}: {bad} non-finite value(s) (NaN or inf) in {name}"
                )
            done += stop - start
            if progress is not None:
                progress(done, end)


def _nonfinite(buf: bytes, dtype: str) -> int:
    if dtype in FLOATS:
        values = np.frombuffer(buf, dtype=np.dtype(FLOATS[dtype]).newbyteorder("<"))
    elif dtype == "BF16":  # the top half of a float32
        values = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        return 0
    return int(values.size - np.count_nonzero(np.isfinite(values)))


def _read_torch(path: Path, out: Contents, *, model: bool, progress: Progress | None) -> None:
    try:
        import torch
    except ImportError:
        raise UsageError(
            "reading torch checkpoints needs torch: pip install 'labelgate[torch]'"
        ) from None
    import pickle

    zipped = zipfile.is_zipfile(path)
    if not zipped and _looks_zip(path):
        out.problems.append(
            f"{path.name}: truncated: the zip archive torch.save writes has lost its end "
            f"({path.stat().st_size} bytes)"
        )
        return
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True, mmap=zipped)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        unsafe = "Weights only load failed" in str(exc) or "Unsupported" in str(exc)
        why = (
            "holds objects that would run code when loaded: refused, not run"
            if unsafe
            else "not readable"
        )
        detail = _global_named(str(exc))
        out.problems.append(
            f"{path.name}: {why}" + (f" ({detail})" if detail else f" ({first[:200]})")
        )
        return
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        text = " ".join(str(exc).split())[:200]
        out.problems.append(f"{path.name}: not readable to its end: {text}")
        return
    tensors = list(_judged_tensors(loaded, model=model))
    total = sum(int(t.numel()) * t.element_size() for _, t in tensors)
    done = 0
    for name, t in tensors:
        out.tensors += 1
        nbytes = int(t.numel()) * t.element_size()
        out.largest = max(out.largest, nbytes)
        if (t.is_floating_point() or t.is_complex()) and t.numel():
            finite = torch.isfinite(t)
            bad = int(finite.numel() - int(finite.sum()))
            if bad:
                where = "optimizer state" if _is_optimizer(name, model) else "weights"
                out.problems.append(f"{path.name}: {bad} non-finite value(s) in {where} {name}")
        done += nbytes
        if progress is not None:
            progress(done, total)
    if model:
        state = _model_state(loaded)
        out.shapes.update({k: tuple(v.shape) for k, v in state.items() if hasattr(v, "shape")})
    step = loaded.get("global_step") if isinstance(loaded, Mapping) else None
    if isinstance(step, int) and out.step is None:
        out.step = step


def _looks_zip(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"PK\x03\x04"


def _global_named(message: str) -> str | None:
    m = re.search(r"Unsupported global: GLOBAL ([\w.]+)", message)
    if m:
        return f"it asks for {m.group(1)}"
    m = re.search(r"Unsupported operand \d+|Unsupported class [\w.]+", message)
    return m.group(0) if m else None


def _is_optimizer(name: str, model: bool) -> bool:
    return not model or name.startswith(("optimizer_states", "optimizer", "state."))


def _judged_tensors(loaded: Any, *, model: bool) -> Iterator[tuple[str, Any]]:
    """The tensors that training resumes from: the model's state dict and the optimizer's.

    Other tensors are bookkeeping, and some are infinite on purpose: Lightning's
    ``ModelCheckpoint`` keeps ``kth_value = inf`` when it monitors nothing.
    """
    if not model or not isinstance(loaded, Mapping):
        yield from _tensors(loaded, "")
        return
    state = _model_state(loaded)
    if state is loaded:
        yield from _tensors(loaded, "")
        return
    for key, value in loaded.items():
        if value is state or "optim" in str(key):
            yield from _tensors(value, str(key))


def _tensors(obj: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """Every tensor in a loaded checkpoint, with its dotted path."""
    import torch

    if isinstance(obj, torch.Tensor):
        yield prefix, obj
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from _tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _tensors(v, f"{prefix}.{i}" if prefix else str(i))


def _model_state(loaded: Any) -> Mapping[str, Any]:
    """The model's state dict inside a checkpoint (Lightning's ``state_dict``, a ``model`` key)."""
    if not isinstance(loaded, Mapping):
        return {}
    for key in NESTED:
        inner = loaded.get(key)
        if isinstance(inner, Mapping) and any(hasattr(v, "shape") for v in inner.values()):
            return inner
    return loaded
