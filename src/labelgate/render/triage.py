"""The triage verdict for a terminal or for machines."""

from __future__ import annotations

import json

from labelgate.commands.logs.triage import Triage
from labelgate.render.terminal import no_commands, terminal_text

__all__ = ["render_triage"]


def render_triage(t: Triage, fmt: str) -> str:
    """``t`` as ``text`` or ``json``; the text with every piece of the log escaped
    (terminal.py): a log cannot steer the terminal or start a workflow command."""
    if fmt == "json":
        return json.dumps(t.to_dict(), indent=2) + "\n"
    if t.first_error is None:
        return f"no error found in {t.lines} lines\n"
    lines = [f"family: {t.family}" + (f" ({t.kind})" if t.kind else "")]
    if t.kind == "checkpoint_class_count":
        d = t.details
        lines.append(
            f"class count: the checkpoint's {terminal_text(d['parameter'])} has {d['checkpoint']} outputs, the "
            f"model {d['model']}"
        )
    if t.kind == "batch_size_mismatch":
        d = t.details
        lines.append(
            f"batch size: the model's output has {d['input']} rows, the target {d['target']}"
        )
    rank = f" (rank {t.rank})" if t.rank is not None else ""
    first = terminal_text(t.first_error["text"])
    lines.append(f"first error, line {t.first_error['line']}{rank}: {first}")
    if t.exception and t.exception != t.first_error["text"].strip():
        lines.append(f"  raised: {terminal_text(t.exception)}")
    step = t.step
    if step["completed"] or step["in_progress"]:
        lines.append(
            f"last step completed: {terminal_text(step['completed'] or 'none shown')}; "
            f"in progress: {terminal_text(step['in_progress'] or 'unknown')}"
        )
        if step["asynchronous"]:
            lines.append(
                "  reported asynchronously: the failing step may be the completed one or earlier"
            )
    if t.consequences:
        lines.append(f"later errors ({len(t.consequences)}), probably consequences of the first:")
        lines.extend(f"  line {c['line']}: {terminal_text(c['text'])}" for c in t.consequences[:10])
    lines.append("check first:")
    lines.extend(f"  - {c}" for c in t.checks)
    lines.append(f"avoid: {t.avoid}")
    return no_commands("\n".join(lines) + "\n")
