"""The commands a report prints, completed with the run's own input and contract so they run as printed."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from typing import Any

from labelgate.core.report import Finding, Report

__all__ = ["COMMAND", "command_line", "complete_commands"]

# A command line in a finding's text: in backticks, ``labelgate`` and a subcommand first.
COMMAND = re.compile(r"`(labelgate (?:fix|validate|smoke|repro|diff|export|pin)(?: [^`]*)?)`")
# Where the flags of the run go: right after the subcommand.
_HEAD = re.compile(r"^labelgate (fix|validate|smoke|repro)\b")


def _flags(contract: dict[str, Any], task_given: bool) -> list[str]:
    """The flags that say again what this run was told: the contract file, or K and the options
    that change how targets are judged."""
    if contract.get("origin"):
        return ["--schema", str(contract["origin"])]
    out = ["--classes", str(contract["num_classes"])]
    names = contract.get("class_names")
    if isinstance(names, dict) and names.get("origin") not in (None, "inline"):
        out += ["--class-names", str(names["origin"])]
    model = contract.get("model")
    if isinstance(model, dict) and model.get("origin") not in (None, "model.config"):
        out += ["--model", str(model["origin"])]
    if contract.get("predictions"):
        out += ["--predictions", str(contract["predictions"])]
    if contract.get("ignore_index") not in (None, -100):
        out += ["--ignore-index", str(contract["ignore_index"])]
    if task_given:
        out += ["--task", str(contract["task"])]
    found = contract.get("columns_found", {})
    for role in ("label", "id", "source", "name"):
        column = contract.get(f"{role}_column")
        if column is not None and found.get(role) == "given":
            out += [f"--{role}-column", str(column)]
    return out


def _completed(
    command: str, paths: Sequence[str], flags: list[str], input_format: str | None
) -> str:
    head = _HEAD.match(command)
    if head is None:  # diff, export, pin: other inputs; the text names them
        return command
    given = shlex.split(command)[2:]
    named = {g.split("=")[0] for g in given if g.startswith("--")}
    added: list[str] = []
    for i, flag in enumerate(flags):  # a flag and its value, unless the command has the flag
        if flag.startswith("--") and flag.split("=")[0] not in named:
            takes = "=" not in flag and i + 1 < len(flags) and not flags[i + 1].startswith("--")
            # a value may be negative (--ignore-index -1): only a flag name starts with "--"
            added += [flag, flags[i + 1]] if takes else [flag]
    if input_format and input_format not in ("auto", "table") and "--input-format" not in named:
        added += ["--input-format", input_format]
    if head[1] == "fix" and "--out" not in named:
        given += ["--out", "FIXED_DIR" if input_format == "masks" else "fixed.parquet"]
    words = ["labelgate", head[1], *paths, *added, *given]
    return " ".join(shlex.quote(w) for w in words)


def command_line(
    command: str, paths: Sequence[str], contract: dict[str, Any], input_format: str | None = None
) -> str:
    """``labelgate COMMAND PATHS`` with the flags of the run whose contract is ``contract``
    (``Report.contract``): ``command_line("validate", ["fixed.parquet"], report.contract)``."""
    task_given = contract.get("task") == "multilabel" and not contract.get("origin")
    return _completed(f"labelgate {command}", paths, _flags(contract, task_given), input_format)


def complete_commands(
    report: Report, paths: Sequence[str], *, input_format: str | None = None
) -> Report:
    """``report`` with every command its findings print (in backticks) naming this run's input
    and the flags it ran with (``--classes``, ``--ignore-index``...), so it runs as printed.

    Args:
        report: the report of a run.
        paths: the inputs as the user gave them (``PATH`` for data held in memory).
        input_format: the format the user named with ``--input-format``, if any.
    """
    contract = report.contract
    if contract.get("num_classes") is None and not contract.get("origin"):
        return report
    task_given = contract.get("task") == "multilabel" and not contract.get("origin")
    fmt = input_format
    annotations = report.input.get("annotations") or {}
    if fmt in (None, "auto") and annotations.get("format") == "masks":
        fmt = "masks"  # fix writes index masks: it reads the folder as masks
    flags = _flags(contract, task_given)

    def line(command: str) -> str:
        if " " not in command.removeprefix("labelgate "):  # `labelgate fix` names a command
            return f"`{command}`"
        return f"`{_completed(command, paths, flags, fmt)}`"

    def done(text: str) -> str:
        return COMMAND.sub(lambda m: line(m[1]), text)

    def finding(f: Finding) -> Finding:
        return dataclasses.replace(f, message=done(f.message), fix=done(f.fix))

    return dataclasses.replace(report, findings=tuple(finding(f) for f in report.findings))
