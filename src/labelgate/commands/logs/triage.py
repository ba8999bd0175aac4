"""labelgate triage: read a crashed run's log, keep the first failure, name its family.

The log is streamed line by line (any size, any bytes); only the first error's block, a bounded list
of later errors and the last step markers are kept.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from labelgate.commands.logs.families import FAMILIES, KINDS
from labelgate.commands.logs.loglines import read_lines
from labelgate.commands.logs.logpatterns import (
    ASSERT,
    ASYNC_FOOTER,
    CAPABILITY,
    ENTITY,
    ERROR_START,
    ERROR_WORDS,
    EXCEPTION,
    EXCEPTION_TAIL,
    FENCE,
    FRAME,
    FRAME_TAIL,
    LOGGER,
    MARKS,
    MAX_BLOCK,
    MAX_CONSEQUENCES,
    MESSAGE,
    NOTEBOOK_HEADER,
    NUMBERED,
    PASTED,
    PLAIN_START,
    PROBE,
    RAISED_FROM,
    RANK,
    RECENT_STEPS,
    RESULT_WORDS,
    ROCM,
    SHOWN,
    STEP_PATTERNS,
    STEP_PROBE,
    STEP_WORDS,
    WARNING,
)
from labelgate.commands.logs.verdicts import error_family, error_kind, first_checks

__all__ = ["FAMILIES", "Triage", "normalise", "triage_lines", "triage_stream"]


@dataclass(slots=True)
class _Error:
    line: int
    text: str
    rank: int | None
    lines: list[str] = field(default_factory=list)
    exception: str | None = None


@dataclass(frozen=True, slots=True)
class Triage:
    """What a log says about its failure.

    Attributes:
        family: ``index_out_of_range``, ``out_of_memory``, ``op_unavailable``, ``device_mismatch``,
            ``distributed_timeout``, ``other``, or ``None`` when the log holds no error.
        kind: a named case within the family, or ``None``: ``collective_timeout`` and
            ``store_timeout`` (distributed_timeout), ``checkpoint_class_count`` and
            ``batch_size_mismatch`` (other).
        details: the named case's evidence (for ``checkpoint_class_count``: the parameter and
            the class counts of the checkpoint and of the model).
        first_error: line number (1-based) and text (rank prefix kept) of the earliest error line.
        exception: the first failure's exception line, where there is one.
        step: the last step marker before the failure (``completed``), the one in progress, and
            whether CUDA reported the error asynchronously (then the failing step may be earlier).
        rank: the first failing rank, for distributed logs.
        consequences: later errors, probably consequences of the first.
        checks: what to check first, most specific first.
        avoid: the conclusion to avoid.
        lines: lines read.
    """

    family: str | None
    first_error: dict[str, Any] | None
    exception: str | None
    step: dict[str, Any]
    rank: int | None
    consequences: list[dict[str, Any]]
    checks: list[str]
    avoid: str | None
    lines: int
    kind: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``triage --format json``."""
        return {
            "schema_version": 1,
            "family": self.family,
            "kind": self.kind,
            "details": self.details,
            "first_error": self.first_error,
            "exception": self.exception,
            "step": self.step,
            "rank": self.rank,
            "consequences": self.consequences,
            "checks": self.checks,
            "avoid": self.avoid,
            "lines": self.lines,
        }


def normalise(text: str) -> str:
    """A line as the program printed it, without what pasting added: HTML entities, a log
    viewer's or an editor's line number, Markdown quote markers, pytest's ``E`` prefix, a list
    bullet, a code fence (an empty line), and emphasis or inline-code marks around it."""
    if "&" in text and ENTITY.search(text):
        import html

        text = html.unescape(text)
    if not text or (
        text[-1] not in MARKS
        and (text[0] in PLAIN_START or (text[0].isdigit() and not NUMBERED.match(text)))
    ):
        return text.rstrip()  # most lines of a log: nothing was added to them
    if FENCE.match(text):
        return ""
    m = PASTED.match(text)
    if m:
        text = text[m.end() :]
    stripped = text.strip()
    if stripped[:1] in MARKS or stripped[-1:] in MARKS:
        core = stripped.strip(MARKS).strip()
        if core:
            indent = text[: len(text) - len(text.lstrip())]
            text = indent + core
    return text.rstrip()


def triage_stream(stream: BinaryIO) -> Triage:
    """Triage a log given as a binary stream."""
    return triage_lines(read_lines(stream))


def triage_lines(lines: Iterable[str]) -> Triage:
    """Triage a log given as text lines (without their newlines)."""
    first: _Error | None = None
    later: list[dict[str, Any]] = []
    in_block = False
    block_open: _Error | None = None
    recent: deque[str] = deque(maxlen=RECENT_STEPS)
    step_at_failure: tuple[str, re.Match[str]] | None = None
    started_at_failure: tuple[str, re.Match[str]] | None = None
    capability: str | None = None
    async_footer = rocm = blocking = False
    count = 0
    frames_from: tuple[int, str, int | None] | None = None  # a headerless traceback's first line
    for count, whole in enumerate(lines, start=1):
        raw = whole[:PROBE]
        # Words of an error or of a failure's message, and of a traceback's frames: decorations
        # never remove them, so a line without any (most lines of a log) is read as it is.
        candidate = (  # ERROR_WORDS and MESSAGE's words, spelt out: an any() costs twice as much
            "rror" in raw
            or "ssert" in raw
            or "Traceback" in raw
            or "terminate" in raw
            or "fault" in raw
            or "Fatal" in raw
            or "Exception" in raw
            or "FAIL" in raw
            or "Could not" in raw
            or "Expected all" in raw
            or "not implemented" in raw
            or "out of" in raw
            or "kernel image" in raw
            or "Watchdog" in raw
            or "Socket" in raw
            or "mismatch" in raw
            or "illegal" in raw
            or "ERROR" in raw
        )
        framed = "File" in raw or "line " in raw or "frame #" in raw or "│" in raw
        rank = None
        text = raw
        # a pending headerless traceback reads its continuation lines whole; a rank's prefix is
        # cheap to strip (a step marker or a frame's tail may follow it)
        if candidate or framed or frames_from is not None or raw[:1] == "[" or "&" in raw:
            text = normalise(raw)
            m = RANK.match(text)
            rank = int(m.group(1)) if m else None
            text = text[m.end() :] if m else text
            prefix = LOGGER.match(text)
            if prefix:
                text = text[prefix.end() :]
            if m is None and "[rank" in text:  # a rank prefix may follow the logger's prefix
                m = RANK.match(text)
                if m:
                    rank, text = int(m.group(1)), text[m.end() :]
        if "CUDA" in text:
            async_footer |= ASYNC_FOOTER in text
            blocking |= "CUDA_LAUNCH_BLOCKING=1" in text and "consider passing" not in text
        if not rocm and (
            "HIP" in text
            or "hip" in text
            or "ROCm" in text
            or "rocm" in text
            or "HSA" in text
            or "AMD" in text
        ):
            rocm = bool(ROCM.search(text))
        starts = is_exception = False
        if candidate and any(word in text for word in ERROR_WORDS):
            starts = bool(ERROR_START.search(text)) or (
                bool(ASSERT.search(text)) and not WARNING.search(text)
            )
            exc = EXCEPTION.match(text.strip()) if not text.startswith((" ", "\t")) else None
            is_exception = exc is not None and not WARNING.search(exc.group(1))
            starts = starts or bool(NOTEBOOK_HEADER.match(text) or EXCEPTION_TAIL.search(text))
        if (
            candidate
            and not (starts or is_exception)
            and MESSAGE.search(text)
            and not WARNING.search(text)
        ):
            starts = True  # a message that names a failure, wherever it stands in the line
        if first is None and not (starts or is_exception) and RAISED_FROM.match(text):
            starts = True  # c10's "Exception raised from f at file:line": an error's location
        if first is None:
            if not (starts or is_exception):
                if framed and FRAME.search(text):
                    if frames_from is None:
                        frames_from = (count, raw[:SHOWN], rank)
                elif frames_from is not None and not FRAME_TAIL.match(text):
                    frames_from = None  # the frames were not followed by their error
                head = text[:STEP_PROBE]
                if any(word in head for word in STEP_WORDS):
                    recent.append(head)  # parsed only if a failure follows
                if capability is None and "capability" in text:
                    found_cap = CAPABILITY.search(text)
                    capability = found_cap.group(1) if found_cap else None
                continue
            first = _Error(count, raw[:SHOWN], rank)
            if frames_from is not None and not text.startswith("Traceback"):
                # a traceback pasted without its header: the error begins at its first frame
                first = _Error(frames_from[0], frames_from[1], frames_from[2])
            step_at_failure, started_at_failure = _steps(recent)
            block_open = first
            in_block = True
        if block_open is first and in_block:
            if len(first.lines) < MAX_BLOCK:
                first.lines.append(text)
            if is_exception and first.exception is None:
                first.exception = text.strip()
                continue
            if first.exception is not None and (starts or is_exception) and not _continues(text):
                in_block = False  # a new error after the first's exception line
            else:
                continue
        consequence = text.startswith("Traceback") or is_exception
        if consequence and not ASSERT.search(text) and len(later) < MAX_CONSEQUENCES:
            later.append({"line": count, "text": raw[:SHOWN]})
    if first is None:
        step = {
            "completed": _describe(_steps(recent)[0]),
            "in_progress": None,
            "asynchronous": False,
        }
        return Triage(None, None, None, step, None, [], [], None, count)
    # the exception line too: a framework's deep traceback can push it past MAX_BLOCK lines
    block = "\n".join([*first.lines, first.exception or ""])
    family = error_family(block)
    kind, details = error_kind(family, block)
    later = [
        c
        for c in later
        if c["line"] > first.line and not (first.exception and c["text"].strip() == first.exception)
    ]
    asynchronous = async_footer and not blocking and not rocm
    checks = first_checks(family, block, asynchronous, rocm)
    if kind is not None:
        checks.insert(0, KINDS[kind]["first_check"])
    if capability is not None and family == "op_unavailable":
        checks.insert(
            0,
            f"the log says this GPU ({capability}) is not among the capabilities this torch "
            "build was compiled for: install a build that lists it (torch.cuda.get_arch_list())",
        )
    completed = _describe(step_at_failure)
    if started_at_failure is None:
        in_progress = _next(step_at_failure)
    elif _is_bar(started_at_failure):
        in_progress = _next(started_at_failure)  # a bar at 0 of N: the first item is in progress
    else:
        in_progress = _describe(started_at_failure)  # a header: that step had begun
    return Triage(
        family=family,
        first_error={"line": first.line, "text": first.text},
        exception=first.exception,
        step={
            "completed": completed,
            "in_progress": in_progress,
            "asynchronous": asynchronous,
        },
        rank=first.rank,
        consequences=later,
        checks=checks,
        avoid=KINDS[kind].get("avoid", FAMILIES[family]["avoid"])
        if kind
        else FAMILIES[family]["avoid"],
        lines=count,
        kind=kind,
        details=details,
    )


def _continues(text: str) -> bool:
    """Lines that belong to the exception just read (CUDA's footer, chained-exception glue, the
    size mismatches of a state dict)."""
    return text.lstrip().startswith(
        ("size mismatch for", "Missing key(s)", "Unexpected key(s)")
    ) or text.startswith(
        (
            "CUDA kernel errors",
            "For debugging",
            "Compile with",
            "Search for",
            "Exception raised from",
            "frame #",
        )
    )


def _step(text: str) -> tuple[str, re.Match[str]] | None:
    for pattern in STEP_PATTERNS:
        m = pattern.search(text)
        if m:
            return text, m
    return None


def _bar_label(step: tuple[str, re.Match[str]]) -> str:
    """What a progress bar is about: the text before it (tqdm's description, such as Epoch 1/5)."""
    text, m = step
    return text[: m.start()].split("|")[-1].strip(" :")[-80:]


def _is_bar(step: tuple[str, re.Match[str]]) -> bool:
    return step[1].groupdict().get("pct") is not None


def _steps(
    recent: Iterable[str],
) -> tuple[tuple[str, re.Match[str]] | None, tuple[str, re.Match[str]] | None]:
    """The last completed step marker, and a step header after it (a step begun), if any.

    A marker on a line that reports results (loss, accuracy, done, it/s...) is a completed step;
    a bare marker (``Epoch 3/10``, a bar at 0) announces one that has begun.
    """
    started = None
    for head in reversed(list(recent)):
        found = _step(head)
        if found is None:
            continue
        if RESULT_WORDS.search(head) and not _no_progress(found):
            return found, started
        if started is None:
            started = found
    return None, started


def _no_progress(step: tuple[str, re.Match[str]]) -> bool:
    """A progress bar at 0 of N has completed nothing."""
    return _is_bar(step) and step[1].group("n") == "0"


def _describe(step: tuple[str, re.Match[str]] | None) -> str | None:
    """The marker as the log shows it."""
    return _marker(step, following=False)


def _next(step: tuple[str, re.Match[str]] | None) -> str | None:
    """The marker after the last completed one: where the failure most likely is."""
    return _marker(step, following=True)


def _marker(step: tuple[str, re.Match[str]] | None, *, following: bool) -> str | None:
    if step is None:
        return None
    _, m = step
    groups = m.groupdict()
    n = int(m.group("n")) + (1 if following else 0)
    if groups.get("pct") is not None:
        return f"{_bar_label(step)} {n}/{m.group('of')}".strip()
    kind = m.group("kind").lower()
    if groups.get("i") is not None:
        where = "after " if following else ""
        return f"{kind} {m.group('n')} [{where}{m.group('i')}/{m.group('of')}]"
    of = f"/{m.group('of')}" if groups.get("of") and not following else ""
    return f"{kind} {n}{of}"
