"""The commands a report prints, completed with the run's own input and contract so they run as printed."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from typing import Any

from labelgate.core.report import Finding, Report
from labelgate.inputs.resolved import GIVEN

__all__ = ["COMMAND", "command_line", "complete_commands"]

# A command line in a finding's text: in backticks, ``labelgate`` and a subcommand first.
COMMAND = re.compile(r"`(labelgate (?:fix|validate|smoke|repro|diff|export|pin)(?: [^`]*)?)`")
# Where the flags of the run go: right after the subcommand.
_HEAD = re.compile(r"^labelgate (fix|validate|smoke|repro)\b")


# A flag of the run and its value (None for a switch); a value may start with "-" (-1) or "--".
Flag = tuple[str, str | None]


def _class_map_flags(contract: dict[str, Any]) -> list[Flag]:
    """The flags that give the class map again: the file the user named, or the class columns; a
    map a reader found in the input itself (CVAT's ``<meta>``, COCO's categories) comes again."""
    columns = contract.get("label_columns")
    if columns:
        return [("--label-columns", ",".join(str(c) for c in columns))]
    names = contract.get("class_names")
    if not isinstance(names, dict) or names.get("origin") in (None, "inline"):
        return []
    found = (contract.get("resolved") or {}).get("class_map", {}).get("from", GIVEN)
    return [("--class-names", str(names["origin"]))] if found == GIVEN else []


def _flags(contract: dict[str, Any], task_given: bool) -> list[Flag]:
    """The flags that say again what this run was told: the contract file, or K and the options
    that change how targets are judged."""
    if contract.get("origin"):
        return [("--schema", str(contract["origin"]))]
    out: list[Flag] = [("--classes", str(contract["num_classes"])), *_class_map_flags(contract)]
    model = contract.get("model")
    if isinstance(model, dict) and model.get("origin") not in (None, "model.config"):
        out.append(("--model", str(model["origin"])))
    if contract.get("predictions"):
        out.append(("--predictions", str(contract["predictions"])))
    if contract.get("ignore_index") not in (None, -100):
        out.append(("--ignore-index", str(contract["ignore_index"])))
    if task_given:
        out.append(("--task", str(contract["task"])))
    found = contract.get("columns_found", {})
    for role in ("label", "id", "source", "name"):
        column = contract.get(f"{role}_column")
        if column is not None and found.get(role) == "given":
            out.append((f"--{role}-column", str(column)))
    return out


def _completed(
    command: str, paths: Sequence[str], flags: list[Flag], input_format: str | None
) -> str:
    head = _HEAD.match(command)
    if head is None:  # diff, export, pin: other inputs; the text names them
        return command
    given = shlex.split(command)[2:]
    named = {g.split("=")[0] for g in given if g.startswith("--")}
    added: list[str] = []
    for flag, value in flags:  # a flag and its value, unless the command has the flag
        if flag not in named:
            added += [flag] if value is None else [flag, value]
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
