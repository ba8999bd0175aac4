"""The crashed run's batch (triage --data) and its checkpoints (resume), for a terminal or as JSON."""

from __future__ import annotations

import json

from labelgate.commands.crashbatch import CrashBatch
from labelgate.commands.logs.logstep import FailStep
from labelgate.commands.logs.triage import Triage
from labelgate.commands.resume import Resume
from labelgate.io.files import escape_controls
from labelgate.render.triage import render_triage

__all__ = ["render_resume", "render_triage_data"]

ROWS_SHOWN = 12


def _step_text(where: FailStep) -> str:
    if where.step is None and where.epoch_fraction is not None:
        read = f"epoch {where.epoch_fraction} (the Hugging Face Trainer's log)"
    elif where.step is None:
        return "no step in the log before the failure"
    else:
        within = f" of epoch {where.epoch}" if where.within_epoch else " over the run"
        read = f"{where.unit} {where.step}{within}"
    source = f"line {where.line}, {where.style}" if where.line else where.style
    cause = "logged a NaN or infinite loss" if where.cause == "nan" else "running at the failure"
    rank = f", rank {where.rank}" if where.rank is not None else ""
    return f"failing step: {read} ({cause}; read from {source}{rank})"


def render_triage_data(
    t: Triage, where: FailStep, crash: CrashBatch | None, fmt: str, note: str | None = None
) -> str:
    """``triage --data``: triage's own verdict, then the step, the batch's rows and the verdict;
    ``note``: where the batch size came from, when it was not given."""
    if fmt == "json":
        doc = t.to_dict() | {
            "failing_step": where.to_dict(),
            "data": crash.to_dict() if crash else None,
        }
        if note is not None:
            doc["batch_size_note"] = note
        return json.dumps(doc, indent=2) + "\n"
    lines = [render_triage(t, "text").rstrip("\n"), _step_text(where)]
    if note is not None:
        lines.append(f"note: {note}")
    if crash is None:
        return "\n".join(lines) + "\n"
    for b in crash.batches:
        rank = f"rank {b['rank']}, " if len(crash.step["ranks"]) > 1 or b["rank"] else ""
        lines.append(
            f"{rank}epoch {b['epoch']}, batch {b['batch']}: {len(b['rows'])} rows, "
            f"{b['usable']} usable, {b['rejected']} rejected"
        )
        shown = [r for r in b["rows"] if r["status"] != "usable"][:ROWS_SHOWN]
        shown = shown or b["rows"][:ROWS_SHOWN]
        for r in shown:
            ident = f" id {escape_controls(str(r['id']))}" if r["id"] is not None else ""
            label = escape_controls(repr(r["label"]))[:80]
            lines.append(f"  row {r['row']}{ident}: {label} ({r['status']})")
    lines.append(f"verdict: {crash.verdict}")
    return "\n".join(lines) + "\n"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def render_resume(r: Resume, fmt: str) -> str:
    """``resume``: each checkpoint's verdict, the one to resume from and how."""
    if fmt == "json":
        return json.dumps(r.to_dict(), indent=2) + "\n"
    lines = []
    if r.failure is not None:
        step = r.failure.get("optimizer_step")
        cause = "a NaN loss" if r.failure.get("cause") == "nan" else "the first error"
        lines.append(
            f"failure: {cause} at optimizer step {step}"
            if step is not None
            else "failure: step unknown"
        )
    for j in r.judged:
        head = ""
        if j.head is not None:
            fits = {True: "fits", False: "does not fit", None: "not checked"}[j.head["fits"]]
            head = f"; head {j.head['head']} ({j.head['classes']} classes, {fits})"
        step = f"step {j.step}" if j.step is not None else "step ?"
        mark = "sound" if j.sound else "rejected"
        lines.append(
            f"{mark:8} {escape_controls(j.checkpoint.path)} ({j.checkpoint.kind}, {step}, "
            f"{j.tensors} tensors, largest {_size(j.largest)}{head})"
        )
        lines.extend(f"         - {escape_controls(p)}" for p in j.problems)
    if r.chosen is not None:
        lines.append(f"resume from: {escape_controls(r.chosen.checkpoint.path)}")
        lines.append(f"  {escape_controls(r.hint or '')}")
    else:
        lines.append("no sound checkpoint: none is safe to resume from")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines) + "\n"
