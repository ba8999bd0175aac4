"""The command line's parser: every command, flag and help line, and the exit status of a usage
error (2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import NoReturn

from labelgate._version import __version__
from labelgate.api import ENGINES
from labelgate.cli.options import (
    cache_option,
    consumer_options,
    contract_options,
    int_between,
    non_negative,
    positive,
    replay_options,
    report_options,
)
from labelgate.cli.suggest import unknown_flag
from labelgate.readers.manifest import INPUT_FORMATS
from labelgate.render import FORMATS

__all__ = ["EXIT_FAIL", "EXIT_INTERNAL", "EXIT_PASS", "EXIT_USAGE", "FORMATS", "build_parser"]

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_EPILOG = (
    "Exit status 3, for every command: a defect of labelgate's own, never a verdict on the data."
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2, and a flag it does
    not know is named with the closest one it does (``--clases``: did you mean ``--classes``?)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if not self._subparsers and (message := unknown_flag(self, extras)):
            self.error(message)  # a command's own parser: it knows its flags
        return parsed, extras


def _validate(p: argparse.ArgumentParser) -> None:
    """``validate``'s arguments."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="label file(s), directory or glob")
    contract_options(p)
    report_options(p)
    cache_option(p)
    consumer_options(p)
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="streaming",
        help="streaming (default: every check, constant memory), or pandera or gx (Great "
        "Expectations): the row-level checks through that library",
    )
    p.add_argument("--gx-docs", metavar="DIR", help="with --engine gx: build GX's Data Docs in DIR")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument(
        "--threads",
        type=positive,
        metavar="N",
        help="threads scanning Parquet row groups in parallel (default: the cores available)",
    )
    p.add_argument(
        "--id-memory",
        type=int_between(1, 1 << 20),
        metavar="MB",
        help="memory the duplicate-id check may hold before it spills to temporary files "
        "(default 128)",
    )
    p.add_argument(
        "--input-format",
        default="auto",
        metavar="FORMAT",
        help="what PATH is: auto (default: detected, and the report says why), or a reader's "
        f"name: {', '.join(INPUT_FORMATS)}, or a plugin's (docs/formats.md, docs/plugins.md)",
    )
    p.add_argument(
        "--background",
        type=int_between(-(2**63), 2**63 - 1),
        metavar="INDEX",
        help="the detection background index (torchvision: 0); objects labelled with it are LG032",
    )
    p.add_argument(
        "--source-field",
        metavar="FIELD",
        help="COCO: the field of each annotation's image used as its source, such as file_name "
        "(default: the JSON file's name)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the row groups, the masks or a detection input's images on a Dask cluster: "
        "local[N] starts N local worker processes; tcp://host:8786 joins a running scheduler "
        "(needs labelgate[dask])",
    )


def _smoke(p: argparse.ArgumentParser) -> None:
    """``smoke``'s arguments."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="the (fixed) label file(s)")
    contract_options(p)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default auto)")
    p.add_argument(
        "--max-batches", type=positive, metavar="N", help="replay the first N batches only"
    )
    p.add_argument(
        "--before", metavar="RAW", help="the raw file: it must fail where validate predicts"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")


def _fix(p: argparse.ArgumentParser) -> None:
    """``fix``'s arguments."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="the label file(s) to fix")
    contract_options(p)
    p.add_argument(
        "--out",
        required=True,
        metavar="FIXED",
        help="the fixed file (.parquet); for masks, a new folder for the fixed mask files",
    )
    p.add_argument(
        "--input-format",
        default="auto",
        metavar="FORMAT",
        help="what PATH is (default: detected); masks rewrites mask files through --map-value",
    )
    p.add_argument("--quarantine", metavar="FILE", help="rows that cannot be fixed (.parquet)")
    p.add_argument(
        "--shift",
        action="append",
        default=[],
        metavar="SOURCE=D",
        help="add D to the labels of SOURCE (just D for an input with no source column)",
    )
    p.add_argument(
        "--map-value",
        action="append",
        default=[],
        metavar="V=N",
        help="rewrite label V as N, or as ignore_index with V=ignore (e.g. -1=ignore); "
        "cityscapes: Cityscapes labelId -> trainId (others to 255)",
    )
    p.add_argument(
        "--drop-ignored", action="store_true", help="quarantine rows with no usable target"
    )
    p.add_argument("--in-place", action="store_true", help="allow --out to be the input (atomic)")
    p.add_argument(
        "--model",
        metavar="PATH",
        help="align the labels to this Hugging Face "
        "model's id2label, by the names of --class-names",
    )
    p.add_argument(
        "--predictions",
        metavar="PRED",
        help="a model's predictions on these rows: a source they prove permuted is remapped "
        "whole, its remap table written beside --out (docs/witness.md)",
    )
    p.add_argument("--log", metavar="FILE", help="write the fix log as JSON here")
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="fix log format (default text)"
    )


def _repro(p: argparse.ArgumentParser) -> None:
    """``repro``'s arguments."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="the label file(s)")
    contract_options(p)
    p.add_argument("--out", required=True, metavar="DIR", help="a new (or empty) folder")
    p.add_argument(
        "--log",
        metavar="LOG",
        help="the crashed run's log: the bundle also holds the failing step's rows (ids and "
        "labels only)",
    )
    p.add_argument(
        "--checkpoints",
        metavar="DIR",
        help="the run's checkpoints: the bundle names the one to resume from",
    )
    replay_options(p)
    p.add_argument("--rank", type=non_negative, metavar="R", help="the failing rank")


def _triage(p: argparse.ArgumentParser) -> None:
    """``triage``'s arguments."""
    p.add_argument("log", metavar="LOG", help="the log file, or - for standard input")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--data",
        action="append",
        metavar="PATH",
        help="the training data: replay the batch the DataLoader gave at the failing step, name "
        "its rows and judge them (the contract options say K and the batching)",
    )
    contract_options(p)
    replay_options(p)
    p.add_argument(
        "--rank", type=non_negative, metavar="R", help="the failing rank (default: the log's)"
    )


def _resume(p: argparse.ArgumentParser) -> None:
    """``resume``'s arguments."""
    p.add_argument("dir", metavar="DIR", help="the run's checkpoint folder")
    p.add_argument("--log", metavar="LOG", help="the crashed run's log: its failing step")
    p.add_argument("--head", metavar="PREFIX", help="the head's layer (default: found)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    contract_options(p)
    replay_options(p)


def _diff(p: argparse.ArgumentParser) -> None:
    """``diff``'s arguments."""
    p.add_argument("base", metavar="BASE", help="the dataset at the base revision")
    p.add_argument("head", metavar="HEAD", help="the dataset at the head revision")
    contract_options(p)
    p.add_argument(
        "--base-schema", metavar="FILE", help="the base revision's contract (default --schema)"
    )
    p.add_argument("--base-class-names", metavar="FILE", help="the base revision's class map")
    p.add_argument(
        "--share-threshold",
        type=float,
        default=0.05,
        metavar="X",
        help="share shift to report (default 0.05)",
    )
    report_options(p)
    cache_option(p)


def _export(p: argparse.ArgumentParser) -> None:
    """``export``'s arguments."""
    p.add_argument("target", choices=("pandera", "gx"), help="the library")
    p.add_argument("schema", metavar="SCHEMA", help="the contract (YAML)")
    p.add_argument("--output", "-o", metavar="FILE", help="write here (default stdout)")


def _pin(p: argparse.ArgumentParser) -> None:
    """``pin``'s arguments."""
    p.add_argument("schema", metavar="SCHEMA", help="the contract (YAML) to pin")


def _explain(p: argparse.ArgumentParser) -> None:
    """``explain``'s arguments."""
    p.add_argument("code", metavar="CODE", help="the check code, e.g. LG004")


# Each command: its one-line help (``labelgate --help``), its description and what adds its
# arguments. Only the command a run asks for gets its arguments built (about 220 add_argument
# calls in all, most of the parser's time); ``--help`` lists every command from its help line.
_COMMANDS: dict[str, tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = {
    "validate": (
        "check label files against PyTorch's rules for class-index targets",
        (
            "Check labels against PyTorch's contract for class-index targets: tables (Parquet, "
            "CSV, TSV, JSONL; files, directories or globs, read in sorted path order as one "
            "logical file), annotation formats and dataset roots (COCO, YOLO, VOC, CVAT, Label "
            "Studio, LabelMe, detection CSVs, ImageFolder, Hugging Face datasets, masks), and "
            "training shards (WebDataset, TFRecord, MDS, LitData), each detected by its content "
            "(--input-format names one). JSON, JSONL, CSV and TSV files may be compressed (.gz, "
            ".zst); a CVAT or Label Studio export may be given as its .zip; - reads standard "
            "input (its format told by its content). Exit status: 0 pass, 1 a check failed, 2 "
            "usage error or unreadable input."
        ),
        _validate,
    ),
    "smoke": (
        "replay the simulated batches through CrossEntropyLoss on the device",
        (
            "Replay the batches validate simulates through a tiny model and CrossEntropyLoss, "
            "forward and backward, in fresh child processes (a device-side assert loses the CUDA "
            "context). Exit status: 0 every batch ran clean (with --before: the raw file failed "
            "where validate predicted and this one passed), 1 otherwise, 2 usage error, "
            "unreadable input or no torch."
        ),
        _smoke,
    ),
    "fix": (
        "write a fixed copy: only what the data proves, the rest quarantined",
        (
            "Rewrite the labels with the fixes the data proves: a source whose name column proves "
            "a shift is remapped from its names; a shift without that proof only with --shift; a "
            "sentinel only with --map-value. Rows still invalid go to --quarantine unchanged, with "
            "the check code that rejected them. The input is never overwritten without "
            "--in-place. Exit status: 0 the fixed file passes validate, 1 it still fails, 2 usage "
            "error or unreadable input."
        ),
        _fix,
    ),
    "repro": (
        "bundle the failing batches with the environment and a replay script",
        (
            "Write the failing batches (ids and labels only), the environment and a repro.py that "
            "replays them through CrossEntropyLoss in fresh processes, into a new folder. Exit "
            "status: 0 written (or nothing fails), 2 usage error or unreadable input."
        ),
        _repro,
    ),
    "triage": (
        "read a crashed run's log: the first failure, its step and its family",
        (
            "Read a training log (any size, streamed; - for standard input), keep the first "
            "failure and the step it came after, name its family (index_out_of_range, "
            "out_of_memory, op_unavailable, device_mismatch, distributed_timeout, other) and say what to check first. "
            "With --data: the batch running at the failing step, its rows and their verdict. "
            "Exit status: 0 no error found, 1 an error (or a NaN loss, with --data) found, 2 "
            "unreadable log or data."
        ),
        _triage,
    ),
    "resume": (
        "the newest checkpoint of a crashed run that is safe to resume from",
        (
            "Read every checkpoint in DIR without running code (torch files with "
            "weights_only=True, safetensors by their header): readable to the end, every tensor "
            "finite (weights and optimizer state), the classification head fitting the class "
            "map, written before the failure the log shows. Exit status: 0 one is sound (it is "
            "named, with the framework's way to resume), 1 none is, 2 usage error or unusable "
            "input."
        ),
        _resume,
    ),
    "diff": (
        "CI gate: validate HEAD and compare it with BASE (class map, values, shares, ids)",
        (
            "Validate HEAD fully and compare it with BASE, two revisions of one dataset (files or "
            "directories): a renamed or reordered class map (blocks unless the contract's version "
            "changed), label values new in HEAD, classes gone, class and source shares that moved, "
            "rows added, removed or relabelled by id. Exit status: 0 pass, 1 a check failed, 2 "
            "usage error or unreadable input."
        ),
        _diff,
    ),
    "export": (
        "the contract as a schema of another library",
        (
            "Write the contract's row-level rules as a pandera schema (YAML that "
            "DataFrameSchema.from_yaml reads back once labelgate.engines.pandera is imported), or as a "
            "Great Expectations 1.x ExpectationSuite (JSON)."
        ),
        _export,
    ),
    "pin": (
        "write the class map's fingerprint into the contract",
        (
            "Compute the fingerprint of the contract's class map and write it into the contract "
            "as class_map_fingerprint; validate and diff then fail (LG018) when the map in use "
            "no longer matches it."
        ),
        _pin,
    ),
    "explain": (
        "what a check code finds, the PyTorch rule behind it, an example",
        (
            "Print a check's catalog entry and its paragraph of docs/checks.md; for the checks "
            "a table of labels shows, a minimal input that fails it and one that passes."
        ),
        _explain,
    ),
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser (kept import-light so ``labelgate --help`` is fast).

    Args:
        argv: the arguments it will parse; where their first word names a command, only that
            command's arguments are built (the others still parse as commands, without flags).
            ``None`` builds every command's.
    """
    parser = _Parser(
        prog="labelgate",
        description="Stop bad class labels before they reach the GPU.",
        epilog=EXIT_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"labelgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    first = next((a for a in argv or () if not a.startswith("-")), None)
    wanted = first if argv is not None and first in _COMMANDS else None
    for name, (summary, description, arguments) in _COMMANDS.items():
        p = sub.add_parser(name, help=summary, description=description, epilog=EXIT_EPILOG)
        if wanted is None or name == wanted:
            arguments(p)
    return parser
