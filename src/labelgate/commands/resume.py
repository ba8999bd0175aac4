"""labelgate resume: which checkpoint of a crashed run is safe to resume from, and why the others
are not.

Each checkpoint is read without running code (``labelgate.training.checkpoints``), to its end, every
tensor judged finite (model and optimizer state); its head is found (``labelgate.training.heads``) and
held to the class map where one is given; and its step is held to the failure the log shows
(``labelgate.commands.logs.logstep``): a checkpoint written at or after the failing step holds what the
failure did to the weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labelgate.commands.logs.logstep import FailStep
from labelgate.errors import InputError, LabelError
from labelgate.training.checkpoints import Checkpoint, Progress, find_checkpoints, read_checkpoint
from labelgate.training.heads import find_head

__all__ = ["Judged", "Resume", "judge_checkpoints", "resume_hint"]


@dataclass(frozen=True, slots=True)
class Judged:
    """One checkpoint and its verdict."""

    checkpoint: Checkpoint
    sound: bool
    problems: list[str]
    step: int | None
    head: dict[str, Any] | None
    tensors: int
    largest: int

    def to_dict(self) -> dict[str, Any]:
        """As JSON."""
        return {
            "path": self.checkpoint.path,
            "kind": self.checkpoint.kind,
            "step": self.step,
            "epoch": self.checkpoint.epoch,
            "sound": self.sound,
            "problems": self.problems,
            "head": self.head,
            "tensors": self.tensors,
            "largest_tensor_bytes": self.largest,
        }


@dataclass(frozen=True, slots=True)
class Resume:
    """Every checkpoint judged, the one to resume from, and how."""

    folder: str
    failure: dict[str, Any] | None
    judged: list[Judged]
    chosen: Judged | None
    hint: str | None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``resume --format json``."""
        return {
            "schema_version": 1,
            "folder": self.folder,
            "failure": self.failure,
            "resume_from": self.chosen.checkpoint.path if self.chosen else None,
            "how": self.hint,
            "checkpoints": [j.to_dict() for j in self.judged],
            "notes": self.notes,
        }


def resume_hint(checkpoint: Checkpoint) -> str:
    """The framework's own way to resume from ``checkpoint``."""
    path = checkpoint.path
    if checkpoint.kind == "lightning":
        return f'trainer.fit(model, datamodule, ckpt_path="{path}")  # Lightning'
    if checkpoint.kind == "huggingface":
        return f'trainer.train(resume_from_checkpoint="{path}")  # Hugging Face Trainer'
    if checkpoint.kind == "safetensors":
        return (
            f'model.load_state_dict(safetensors.torch.load_file("{path}"))  # then restart the '
            "loop at its step"
        )
    return (
        f'model.load_state_dict(torch.load("{path}", weights_only=True)[...])  # the state '
        "dict's key; then the optimizer's, and restart the loop at its step"
    )


def _failing_step(failure: FailStep | None, grad_accum: int) -> int | None:
    """The failing step in optimizer steps over the run, where the log says enough."""
    if failure is None:
        return None
    step = failure.global_step
    if step is None:
        return None
    return step // grad_accum if failure.unit == "batch" else step


def judge_checkpoints(
    folder: str,
    *,
    failure: FailStep | None = None,
    classes: int | None = None,
    head: str | None = None,
    grad_accum: int = 1,
    progress: Progress | None = None,
) -> Resume:
    """Judge every checkpoint in ``folder`` and name the newest sound one.

    Args:
        folder: the run's checkpoint folder.
        failure: the failing step read from the log (``None``: no log given).
        classes: K, the class map's size, that the head must fit (``None``: not checked).
        head: the head's prefix, overriding the head finder.
        grad_accum: batches per optimizer step, to compare a log that counts batches
            (Lightning's bar) with checkpoint steps (optimizer steps).
        progress: called with (bytes done, bytes in all) as tensors are read.

    Raises:
        InputError: the folder is missing or holds no checkpoint.
    """
    found = find_checkpoints(folder)
    if not found:
        raise InputError(
            "no checkpoint here (*.pt, *.pth, *.bin, *.ckpt, *.safetensors, checkpoint-N/)",
            path=folder,
        )
    failing = _failing_step(failure, grad_accum)
    notes: list[str] = []
    if failure is None:
        notes.append("no log given: no checkpoint was compared with the failure's step")
    elif failing is None:
        notes.append(
            "the log does not say the failing step over the run: give --step N; no checkpoint "
            "was compared with it"
        )
    if classes is None:
        notes.append("no class map given (--classes, --class-names): heads found, not checked")
    judged = [
        _judge(c, failing=failing, classes=classes, head=head, progress=progress) for c in found
    ]
    sound = [j for j in judged if j.sound]
    chosen = max(sound, key=_newest) if sound else None
    failure_doc = None
    if failure is not None:
        failure_doc = failure.to_dict() | {"optimizer_step": failing}
    return Resume(
        folder,
        failure_doc,
        judged,
        chosen,
        resume_hint(chosen.checkpoint) if chosen else None,
        notes,
    )


def _newest(j: Judged) -> tuple[int, float]:
    return (j.step if j.step is not None else -1, Path(j.checkpoint.path).stat().st_mtime)


def _judge(
    c: Checkpoint,
    *,
    failing: int | None,
    classes: int | None,
    head: str | None,
    progress: Progress | None,
) -> Judged:
    contents = read_checkpoint(c, progress=progress)
    problems = list(contents.problems)
    step = c.step if c.step is not None else contents.step
    if failing is not None:
        if step is None:
            problems.append("its step is unknown (neither its name nor its contents say it)")
        elif step > failing:
            problems.append(
                f"written at step {step}, after the failure at step {failing}: it holds what the "
                "failing step did to the weights"
            )
    found_head: dict[str, Any] | None = None
    if contents.shapes and not any("truncated" in p or "refused" in p for p in problems):
        try:
            search = find_head(contents.shapes, head=head)
        except LabelError as exc:
            if classes is not None or head is not None:  # asked to check it: it cannot be
                problems.append(f"head: {exc}")
        else:
            found_head = search.to_dict()
            chosen = search.chosen
            fits = (
                chosen.classes == classes or (chosen.background and chosen.classes == classes + 1)
                if classes is not None
                else None
            )
            found_head["fits"] = fits
            if fits is False:
                problems.append(
                    f"its head {chosen.name!r} predicts {chosen.classes} classes, the class map "
                    f"has {classes}"
                )
    return Judged(c, not problems, problems, step, found_head, contents.tensors, contents.largest)
