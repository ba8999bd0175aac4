"""The step a crashed run was on: read from the log's own progress lines, as a number.

``triage`` keeps the first failure's line; this module reads the progress markers before it (or
the first NaN loss, if earlier) and says which step was running, in the unit the log counts:

| style | line | counts | the failing step (0-based) |
|---|---|---|---|
| Lightning (tqdm) | ``Epoch 2:  45%|████▌ | 45/100 [..., loss=0.3]`` | batches done in epoch 2 | batch 45 of epoch 2 |
| Lightning (rich) | ``Epoch 2/9 ━━━━━━ 45/100 0:00:01 • ...`` | the same | the same |
| tqdm, Hugging Face Trainer | `` 12%|█▏ | 30/250 [00:05<...]`` | steps done, over the run | step 30 |
| Hugging Face Trainer's logs | ``{'loss': '1.2', ..., 'epoch': '0.48'}`` | epochs done, as a fraction | the batch after ``0.48 x`` the batches of an epoch |
| a plain print | ``step 29 loss 0.41`` (Python's ``enumerate``) | the last step done, from 0 | step 30 |
| a plain print | ``step 30/1000 loss 0.41`` | steps done, from 1 | step 30 |

A line that reports ``loss`` ``nan`` (or ``inf``) is a failure of its own: the step it reports is
the failing one when no error came earlier.

A line that reports a finite loss was printed after that loss was read back from the device, so
every kernel of its step had run: an error CUDA reports asynchronously came from a later step.
``since`` keeps the step after the last such line (the reference recording
``train_loop.txt``: the assert of step 3 surfaces after ``iter 3 step done``, at step 3's
``loss.item()``; ``iter 1 loss 1.6570`` is the last step known to have run).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from labelgate.commands.logs.logpatterns import RANK, RESULT_WORDS

__all__ = ["FailStep", "read_step"]

LIGHTNING = re.compile(
    r"\bEpoch (?P<epoch>\d+)(?::\s+\d{1,3}%\|[^|\n]{0,200}\||/\d+\s+[━╸╺╾─\- ]+)\s*"
    r"(?P<n>\d+)/(?P<of>\d+)"
)
BAR = re.compile(r"\d{1,3}%\|[^|\n]{0,200}\|\s*(?P<n>\d+)/(?P<of>\d+)")
# transformers 5 writes floats as strings ('epoch': '0.48'); 4.x as numbers ('epoch': 0.48)
HF_LOGS = re.compile(
    r"^\s*\{['\"](?:loss|train_loss)['\"]:.*['\"]epoch['\"]:\s*['\"]?(?P<f>\d+(?:\.\d+)?)"
)
HF_STEP = re.compile(r"['\"]step['\"]:\s*['\"]?(?P<n>\d+)")
PLAIN = re.compile(
    r"\b(?:global_step|step|Step|STEP|iter(?:ation)?|Iter(?:ation)?)\s*[:=#]?\s*\[?\s*(?P<n>\d+)"
    r"(?:\s*/\s*(?P<of>\d+))?"
)
EPOCH = re.compile(r"\b[Ee]poch\s*[:=#]?\s*\[?\s*(?P<e>\d+)")
NAN_LOSS = re.compile(r"loss['\"]?\s*[:=]?\s*['\"]?(?:nan|NaN|NAN|-?inf|-?Inf)\b")
LOSS_VALUE = re.compile(r"loss['\"]?\s*[:=]?\s*['\"]?-?\d")  # a finite loss, read back


@dataclass(frozen=True, slots=True)
class FailStep:
    """Where a run failed, as its log counts.

    Attributes:
        step: the failing step, 0-based: within ``epoch`` when ``within_epoch``, else over the
            run; ``None`` when the log shows no progress.
        unit: ``batch`` (a DataLoader batch, as Lightning's bar counts) or ``optimizer step``
            (as the Hugging Face Trainer and most plain loops count; with gradient accumulation
            one covers several batches).
        epoch: the epoch (0-based), when the log shows it.
        within_epoch: whether ``step`` counts from the start of ``epoch``.
        per_epoch: steps per epoch, when a progress bar shows its total.
        epoch_fraction: the Hugging Face Trainer's logged ``epoch`` (batches done / per epoch),
            to be turned into a batch once the batches per epoch are known.
        rank: the rank the failure was read on.
        line: the log line the step was read from, and its ``style``.
        cause: ``error`` (the first error followed this step) or ``nan`` (this step logged a
            NaN or infinite loss).
        since: the step after the last one whose finite loss the log printed, counted as
            ``step`` is (same epoch and unit): an asynchronous error came from it or a later
            step. ``None``: no such line before the failure.
    """

    step: int | None
    unit: str = "optimizer step"
    epoch: int | None = None
    within_epoch: bool = False
    per_epoch: int | None = None
    epoch_fraction: float | None = None
    rank: int | None = None
    line: int | None = None
    style: str = "none"
    cause: str = "error"
    since: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """As JSON."""
        return asdict(self)

    @property
    def global_step(self) -> int | None:
        """The failing step counted over the run, where the log gives enough to count it."""
        if self.step is None:
            return None
        if not self.within_epoch:
            return self.step
        if self.epoch is not None and self.per_epoch is not None:
            return self.epoch * self.per_epoch + self.step
        return None


def _marker(text: str, line: int) -> tuple[FailStep, FailStep] | None:
    """A progress marker's (step done, step next), both 0-based, or ``None``."""
    m = LIGHTNING.search(text)
    if m:
        epoch, n, of = int(m["epoch"]), int(m["n"]), int(m["of"])
        done = FailStep(max(n - 1, 0), "batch", epoch, True, of, line=line, style="lightning")
        nxt = (
            FailStep(0, "batch", epoch + 1, True, of, line=line, style="lightning")
            if n >= of
            else FailStep(n, "batch", epoch, True, of, line=line, style="lightning")
        )
        return done, nxt
    m = HF_LOGS.search(text)
    if m:
        s = HF_STEP.search(text)
        if s:
            n = int(s["n"])
            done = FailStep(max(n - 1, 0), line=line, style="huggingface")
            return done, FailStep(n, line=line, style="huggingface")
        fraction = float(m["f"])
        done = FailStep(None, "batch", epoch_fraction=fraction, line=line, style="huggingface")
        return done, done
    m = BAR.search(text)
    if m:
        n = int(m["n"])
        return FailStep(max(n - 1, 0), line=line, style="tqdm"), FailStep(
            n, line=line, style="tqdm"
        )
    m = PLAIN.search(text)
    if m:
        n = int(m["n"])
        e = EPOCH.search(text)
        in_epoch = int(e["e"]) if e else None
        base = 1 if m["of"] else 0  # "step 30/1000" counts from 1; enumerate() from 0
        done_at = n - base
        begun = not RESULT_WORDS.search(text)  # a bare header: that step had begun
        within = in_epoch is not None
        done = FailStep(
            max(done_at - (1 if begun else 0), 0),
            epoch=in_epoch,
            within_epoch=within,
            line=line,
            style="plain",
        )
        following = done_at if begun else done_at + 1
        return done, FailStep(
            following, epoch=in_epoch, within_epoch=within, line=line, style="plain"
        )
    return None


def read_step(lines: Iterable[str], *, until: int | None, rank: int | None = None) -> FailStep:
    """The step running at the failure.

    Args:
        lines: the log's lines (as ``triage.read_lines`` decodes them).
        until: the first error's line number (1-based); markers after it are not read.
            ``None``: the whole log (a run that ended on a NaN loss, or no error).
        rank: the rank triage names, kept in the result.

    Returns:
        The failing step; ``step`` is ``None`` when the log shows no progress.
    """
    last: tuple[FailStep, FailStep] | None = None
    synced: FailStep | None = None  # the last step whose loss was read back from the device
    for number, whole in enumerate(lines, start=1):
        if until is not None and number > until:
            break  # the error's own line is read: a bar the error was printed after is on it
        # a terminal's progress bar rewrites itself with \r: the last state is the one to read
        for text in reversed(whole.split("\r")):
            text = RANK.sub("", text[:4096])
            found = _marker(text, number)
            if found is None:
                continue
            last = found
            if NAN_LOSS.search(text):  # the step that logged it failed
                return _with(found[0], rank=rank, cause="nan")
            if LOSS_VALUE.search(text):
                synced = found[0]
            break
    if last is None:
        return FailStep(None, rank=rank)
    failing = last[1]
    since = None
    if synced is not None and synced.step is not None and failing.step is not None:
        same = (synced.epoch, synced.within_epoch, synced.unit) == (
            failing.epoch,
            failing.within_epoch,
            failing.unit,
        )
        since = min(synced.step + 1, failing.step) if same else None
    return _with(failing, rank=rank, cause="error", since=since)


def _with(step: FailStep, **changes: Any) -> FailStep:
    return FailStep(**(step.to_dict() | changes))
