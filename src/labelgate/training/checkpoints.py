"""Checkpoints read without running their code: found in a folder, read to the end, every tensor
judged finite, the model's parameter shapes handed to the head finder.

- Every file is opened through ``files.open_regular``: a regular file inside the run's folder
  (a FIFO, a device or a link leading out of the folder is refused, never read).
- ``.safetensors``: the header (8 bytes of length, then JSON) says every tensor's dtype, shape and
  byte range, validated in full before any offset is used (``stheader``); each tensor is read
  a bounded piece at a time, so memory holds at most ``CHUNK`` bytes of it. torch is not used.
- torch files (``.pt``, ``.pth``, ``.bin``, Lightning's ``.ckpt``): the zip archive, its pickle's
  nesting and its storages are checked first (``torchzip``), then ``torch.load(weights_only=True,
  mmap=True)``: the unpickler accepts tensors and plain containers only and refuses any other
  object without building it (a pickle that would run code is refused, not run); with ``mmap``
  the tensors stay on disk until each is judged. A file cut short lacks the zip's central
  directory at its end and is named truncated.
- ``trainer_state.json`` through the bounded JSON reader, each field's type checked.
"""

from __future__ import annotations

import math
import os
import re
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labelgate.errors import INSTALL_TORCH, InputError, UsageError
from labelgate.io.bounded import MAX_DEPTH, load_json
from labelgate.io.files import open_regular, read_small_bytes
from labelgate.training.stheader import HeaderError, read_header
from labelgate.training.torchzip import Refused, check_archive

__all__ = ["Checkpoint", "Contents", "find_checkpoints", "read_checkpoint"]

TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")
SAFETENSORS = ".safetensors"
HF_FOLDER = re.compile(r"^checkpoint-(\d+)$")
STEP_IN_NAME = re.compile(r"(?:^|[^a-z])(?:global_step|step|iter|it)[-_=]?(\d+)", re.IGNORECASE)
EPOCH_IN_NAME = re.compile(r"(?:^|[^a-z])epoch[-_=]?(\d+)", re.IGNORECASE)
NUMBER = re.compile(r"(\d+)(?!.*\d)")
SKIPPED = ("rng_state", "training_args")  # HF Trainer's RNG states and arguments: no weights
NESTED = ("state_dict", "model_state_dict", "model", "module")
FLOATS = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "C64": np.float32}
CHUNK = 64 << 20  # bytes of one tensor judged at a time
MAX_STATE = 256 << 20  # bytes of trainer_state.json (a long run's log history is megabytes)

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
        root: the run's folder: no file is read that, links resolved, lies outside it.
    """

    path: str
    kind: str
    step: int | None
    epoch: int | None
    files: tuple[str, ...]
    root: str | None = None


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
        found.append(Checkpoint(str(d), "huggingface", int(m.group(1)), None, files, folder))
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
        found.append(Checkpoint(str(f), kind, step, epoch, (str(f),), folder))
    return sorted(found, key=lambda c: c.path)


def read_checkpoint(checkpoint: Checkpoint, *, progress: Progress | None = None) -> Contents:
    """Read every file of ``checkpoint`` to its end and judge every tensor finite.

    Never raises for a bad file: what is wrong is in ``Contents.problems``.
    """
    out = Contents()
    for name in checkpoint.files:
        path = Path(name)
        try:
            open_regular(path, "checkpoint file", within=checkpoint.root).close()
        except InputError as exc:
            out.problems.append(f"{path.name}: {exc.reason}")
            continue
        if path.suffix == SAFETENSORS:
            _read_safetensors(path, out, model=True, progress=progress)
        else:
            model = not path.name.startswith(("optimizer", "scheduler"))
            _read_torch(path, out, model=model, progress=progress)
    if checkpoint.kind == "huggingface":
        _trainer_state(Path(checkpoint.path), out, checkpoint.root)
    out.problems = [" ".join(p.split()) for p in out.problems]  # each problem one line
    return out


def _trainer_state(folder: Path, out: Contents, root: str | None) -> None:
    state_file = folder / "trainer_state.json"
    if not state_file.exists() and not state_file.is_symlink():
        out.problems.append("no trainer_state.json: the Trainer cannot resume from this folder")
        return
    try:
        data = read_small_bytes(state_file, "trainer_state.json", limit=MAX_STATE, within=root)
        state = load_json(data, str(state_file))
    except InputError as exc:
        out.problems.append(f"trainer_state.json: {exc.reason}")
        return
    except ValueError:
        out.problems.append("trainer_state.json is not readable JSON (truncated?)")
        return
    if not isinstance(state, dict):
        out.problems.append("trainer_state.json is not a JSON object: not the Trainer's state")
        return
    step = state.get("global_step", 0)
    history = state.get("log_history", [])
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < 2**63:
        out.problems.append("trainer_state.json: its global_step is not a step count")
        return
    if not isinstance(history, list):
        out.problems.append("trainer_state.json: its log_history is not a list")
        return
    out.step = step if "global_step" in state else None
    for entry in history:
        loss = entry.get("loss") if isinstance(entry, dict) else None
        if isinstance(loss, int | float) and not math.isfinite(loss):
            at = entry.get("step")
            known = isinstance(at, int) and not isinstance(at, bool) and 0 <= at < 2**63
            out.nan_logged = at if known else 0
            where = f"at step {at}" if known else "at a step it does not say"
            out.problems.append(f"its trainer_state.json logs a {loss} loss {where}")
            break


def _read_safetensors(path: Path, out: Contents, *, model: bool, progress: Progress | None) -> None:
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            data, tensors = read_header(f, size, str(path))
        except HeaderError as exc:
            out.problems.append(f"{path.name}: {exc}")
            return
        total = size - data
        done = 0
        for t in tensors:
            if model:
                out.shapes[t.name] = t.shape
            out.tensors += 1
            out.largest = max(out.largest, t.stop - t.start)
            bad = 0
            if t.dtype in FLOATS or t.dtype == "BF16":
                f.seek(data + t.start)
                step = CHUNK - CHUNK % 8
                for offset in range(t.start, t.stop, step):
                    bad += _nonfinite(f.read(min(step, t.stop - offset)), t.dtype)
            if bad:
                out.problems.append(
                    f"{path.name}: {bad} non-finite value(s) (NaN or inf) in {t.name[:200]}"
                )
            done += t.stop - t.start
            if progress is not None:
                progress(done, total)


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
        raise UsageError(f"reading torch checkpoints needs torch: {INSTALL_TORCH}") from None
    import pickle

    zipped = zipfile.is_zipfile(path)
    if not zipped and _looks_zip(path):
        out.problems.append(
            f"{path.name}: truncated: the zip archive torch.save writes has lost its end "
            f"({path.stat().st_size} bytes)"
        )
        return
    if zipped:
        try:
            check_archive(path)
        except Refused as exc:
            out.problems.append(f"{path.name}: refused, not loaded: {exc}")
            return
    try:
        with (
            warnings.catch_warnings()
        ):  # torch's warnings on a pickle's protocol: not ours to print
            warnings.simplefilter("ignore")
            loaded = torch.load(path, map_location="cpu", weights_only=True, mmap=zipped)
    except pickle.UnpicklingError as exc:
        unsafe = "Weights only load failed" in str(exc) or "Unsupported" in str(exc)
        why = (
            "holds objects that would run code when loaded: refused, not run"
            if unsafe
            else "not readable"
        )
        detail = _global_named(str(exc))
        out.problems.append(f"{path.name}: {why}" + (f" ({detail})" if detail else ""))
        return
    except (
        RuntimeError,
        EOFError,
        OSError,
        ValueError,
        TypeError,
        MemoryError,
        IndexError,  # torch's weights-only unpickler on a stack a damaged pickle left short
        KeyError,
        AttributeError,
    ) as exc:
        text = " ".join(str(exc).split())[:200]
        out.problems.append(f"{path.name}: not readable to its end: {text or type(exc).__name__}")
        return
    try:
        tensors = list(_judged_tensors(loaded, model=model))
        for name, t in _tensors(loaded, ""):
            _inside_storage(name, t)
    except Refused as exc:
        out.problems.append(f"{path.name}: refused: {exc}")
        return
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
    counted = isinstance(step, int) and not isinstance(step, bool) and 0 <= step < 2**63
    if counted and out.step is None:
        out.step = step


def _inside_storage(name: str, t: Any) -> None:
    """Refuse a tensor whose bytes reach outside its storage (torch checks this when it builds
    a tensor; held again here, for a checkpoint is never called sound otherwise). Tensors
    without one strided storage (meta, sparse, nested, quantized) are torch's alone to judge."""
    if t.is_meta or t.is_sparse or t.is_nested or t.is_quantized or not t.numel():
        return
    last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    if t.storage_offset() < 0 or min(t.stride(), default=0) < 0:
        raise Refused(f"tensor {name[:200]} has a negative offset or stride")
    if (last + 1) * t.element_size() > t.untyped_storage().nbytes():
        raise Refused(f"tensor {name[:200]} reaches past its storage")


def _looks_zip(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"PK\x03\x04"


def _global_named(message: str) -> str | None:
    """What torch's weights-only unpickler refused, named from its message (torch 2.13:
    ``Trying to load unsupported GLOBAL posix.system whose module posix is blocked``; earlier:
    ``Unsupported global: GLOBAL posix.system``), without the rest of the message."""
    m = re.search(r"[Uu]nsupported (?:global: )?GLOBAL ([\w.]{1,200})", message)
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
    """Every tensor in a loaded checkpoint, with its dotted path, in order; iterative, each
    container visited once (a pickle can make a list hold itself).

    Raises:
        Refused: containers nested deeper than ``MAX_DEPTH`` (a legacy file's pickle, which
            ``torchzip`` does not scan).
    """
    import torch

    seen: set[int] = set()
    stack: list[tuple[Any, str, int]] = [(obj, prefix, 0)]
    while stack:
        item, name, depth = stack.pop()
        if isinstance(item, torch.Tensor):
            yield name, item
            continue
        if not isinstance(item, Mapping | list | tuple) or id(item) in seen:
            continue
        if depth >= MAX_DEPTH:
            raise Refused(f"containers nested deeper than {MAX_DEPTH} levels")
        seen.add(id(item))
        pairs = item.items() if isinstance(item, Mapping) else enumerate(item)
        children = [(v, f"{name}.{k}" if name else str(k), depth + 1) for k, v in pairs]
        stack.extend(reversed(children))


def _model_state(loaded: Any) -> Mapping[str, Any]:
    """The model's state dict inside a checkpoint (Lightning's ``state_dict``, a ``model`` key)."""
    if not isinstance(loaded, Mapping):
        return {}
    for key in NESTED:
        inner = loaded.get(key)
        if isinstance(inner, Mapping) and any(hasattr(v, "shape") for v in inner.values()):
            return inner
    return loaded
