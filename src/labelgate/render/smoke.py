"""The smoke step's report: text for a terminal, JSON for machines."""

from __future__ import annotations

import json
from typing import Any

from labelgate.commands.smoke import CPU_HINT, SmokeRun
from labelgate.core.report import listed, shown_batches
from labelgate.render.terminal import no_commands, terminal_text

__all__ = ["SmokeVerdict", "render_smoke"]


class SmokeVerdict:
    """One or two runs (``--before RAW``: the raw file, then the fixed one) and what they prove.

    Attributes:
        after: the run of the file given (the fixed file, with ``--before``).
        before: the run of the raw file, if any.
        predicted: the batches validate predicted to fail in the raw file.
    """

    def __init__(
        self, after: SmokeRun, before: SmokeRun | None = None, predicted: list[int] | None = None
    ) -> None:
        self.after = after
        self.before = before
        self.predicted = predicted or []

    @property
    def before_as_predicted(self) -> bool:
        """The raw file failed at exactly the predicted batches (those it reached)."""
        if self.before is None:
            return True
        seen = self.before.failed_batches
        if self.before.incomplete:
            return seen == self.predicted[: len(seen)]
        return seen == self.predicted

    @property
    def passed(self) -> bool:
        """The file ran clean (and, with a raw file, that one failed where predicted)."""
        return self.after.clean and self.before_as_predicted

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        out: dict[str, Any] = {"schema_version": 1, "status": "pass" if self.passed else "fail"}
        if self.before is not None:
            out["before"] = self.before.to_dict() | {
                "predicted_failures": listed(self.predicted),
                "predicted_count": len(self.predicted),
                "failed_as_predicted": self.before_as_predicted,
            }
        out["after" if self.before is not None else "run"] = self.after.to_dict()
        return out


def _run_lines(run: SmokeRun, title: str) -> list[str]:
    env = run.env
    lines = [f"{title}: {terminal_text(run.path)}"]
    if env:
        versions = f"torch {env.get('torch')}"
        if env.get("cuda"):
            versions += f", CUDA {env['cuda']}"
        if env.get("hip"):
            versions += f", HIP {env['hip']}"
        blocking = ", CUDA_LAUNCH_BLOCKING=1" if env.get("cuda_launch_blocking") else ""
        lines.append(
            f"  device {env.get('device')} ({env.get('device_name')}), backend {env.get('backend')}, "
            f"{versions}{blocking}"
        )
        if env.get("backend") == "cpu":
            lines.append(f"  no GPU used: {CPU_HINT}")
    for which in ("first", "largest"):
        s = run.shapes.get(which)
        if s:
            lines.append(
                f"  {which} batch: logits {tuple(s['logits'])}, target {tuple(s['target'])} {s['dtype']}"
            )
    lines.append(
        f"  batches processed {run.processed} of {run.expected} expected, "
        f"{run.processes} process(es), {run.seconds:.2f} s"
    )
    for f in run.failures:
        lines.append(f"  batch {f.batch}: {f.kind}: {terminal_text(f.error)}")  # a child's words
        lines.extend(f"    device: {terminal_text(m)}" for m in f.device_messages)
        for e in f.examples[:5]:
            ident = f", id {e.id!r}" if e.id is not None else ""
            lines.append(f"    row {e.row}{ident}, value {e.value!r}")
        if f.offending > min(len(f.examples), 5):
            lines.append(f"    (and {f.offending - min(len(f.examples), 5)} more)")
    if run.incomplete:
        lines.append(f"  incomplete: {run.incomplete}")
    return lines


def render_smoke(verdict: SmokeVerdict, fmt: str) -> str:
    """The verdict as ``text`` or ``json``."""
    if fmt == "json":
        return json.dumps(verdict.to_dict(), indent=2, default=str) + "\n"
    lines: list[str] = []
    if verdict.before is not None:
        lines += _run_lines(verdict.before, "before (raw)")
        predicted = shown_batches(verdict.predicted) or "none"
        match = "as predicted" if verdict.before_as_predicted else "NOT as predicted"
        lines.append(
            f"  validate predicted failures in batches: {predicted}; the raw file failed {match}"
        )
        lines += _run_lines(verdict.after, "after (fixed)")
    else:
        lines += _run_lines(verdict.after, "smoke")
    on_cpu = verdict.after.env.get("backend") == "cpu"
    lines.append(
        f"PASS ({CPU_HINT})" if verdict.passed and on_cpu else "PASS" if verdict.passed else "FAIL"
    )
    return no_commands("\n".join(lines) + "\n")
