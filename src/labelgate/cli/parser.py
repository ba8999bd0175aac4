"""The command line's parser: every command, flag and help line, and the exit status of a usage
error (2)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
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


def _command(
    sub: argparse._SubParsersAction[_Parser],
    name: str,
    *,
    summary: str,
    description: str,
    paths: str,
) -> argparse.ArgumentParser:
    """A subcommand that reads label files: its paths and the shared contract options."""
    p = sub.add_parser(name, help=summary, description=description)
    p.add_argument("paths", nargs="+", metavar="PATH", help=paths)
    contract_options(p)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (kept import-light so ``labelgate --help`` is fast)."""
    parser = _Parser(
        prog="labelgate",
        description="Stop bad class labels before they reach the GPU.",
    )
    parser.add_argument("--version", action="version", version=f"labelgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    v = _command(
        sub,
        "validate",
        summary="check label files against PyTorch's rules for class-index targets",
        description=(
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
        paths="label file(s), directory or glob",
    )
    report_options(v)
    cache_option(v)
    consumer_options(v)
    v.add_argument(
        "--engine",
        choices=ENGINES,
        default="streaming",
        help="streaming (default: every check, constant memory), or pandera or gx (Great "
        "Expectations): the row-level checks through that library",
    )
    v.add_argument("--gx-docs", metavar="DIR", help="with --engine gx: build GX's Data Docs in DIR")
    v.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    v.add_argument(
        "--threads",
        type=positive,
        metavar="N",
        help="threads scanning Parquet row groups in parallel (default: the cores available)",
    )
    v.add_argument(
        "--id-memory",
        type=int_between(1, 1 << 20),
        metavar="MB",
        help="memory the duplicate-id check may hold before it spills to temporary files "
        "(default 128)",
    )
    v.add_argument(
        "--input-format",
        default="auto",
        metavar="FORMAT",
        help="what PATH is: auto (default: detected, and the report says why), or a reader's "
        f"name: {', '.join(INPUT_FORMATS)}, or a plugin's (docs/formats.md, docs/plugins.md)",
    )
    v.add_argument(
        "--background",
        type=int_between(-(2**63), 2**63 - 1),
        metavar="INDEX",
        help="the detection background index (torchvision: 0); objects labelled with it are LG032",
    )
    v.add_argument(
        "--source-field",
        metavar="FIELD",
        help="COCO: the field of each annotation's image used as its source, such as file_name "
        "(default: the JSON file's name)",
    )
    v.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the row groups, the masks or a detection input's images on a Dask cluster: "
        "local[N] starts N local worker processes; tcp://host:8786 joins a running scheduler "
        "(needs labelgate[dask])",
    )
    sm = _command(
        sub,
        "smoke",
        summary="replay the simulated batches through CrossEntropyLoss on the device",
        description=(
            "Replay the batches validate simulates through a tiny model and CrossEntropyLoss, "
            "forward and backward, in fresh child processes (a device-side assert loses the CUDA "
            "context). Exit status: 0 every batch ran clean (with --before: the raw file failed "
            "where validate predicted and this one passed), 1 otherwise, 2 usage error, "
            "unreadable input or no torch."
        ),
        paths="the (fixed) label file(s)",
    )
    sm.add_argument(
        "--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default auto)"
    )
    sm.add_argument(
        "--max-batches", type=positive, metavar="N", help="replay the first N batches only"
    )
    sm.add_argument(
        "--before", metavar="RAW", help="the raw file: it must fail where validate predicts"
    )
    sm.add_argument("--format", choices=("text", "json"), default="text")
    fx = _command(
        sub,
        "fix",
        summary="write a fixed copy: only what the data proves, the rest quarantined",
        description=(
            "Rewrite the labels with the fixes the data proves: a source whose name column proves "
            "a shift is remapped from its names; a shift without that proof only with --shift; a "
            "sentinel only with --map-value. Rows still invalid go to --quarantine unchanged, with "
            "the check code that rejected them. The input is never overwritten without "
            "--in-place. Exit status: 0 the fixed file passes validate, 1 it still fails, 2 usage "
            "error or unreadable input."
        ),
        paths="the label file(s) to fix",
    )
    fx.add_argument(
        "--out",
        required=True,
        metavar="FIXED",
        help="the fixed file (.parquet); for masks, a new folder for the fixed mask files",
    )
    fx.add_argument(
        "--input-format",
        default="auto",
        metavar="FORMAT",
        help="what PATH is (default: detected); masks rewrites mask files through --map-value",
    )
    fx.add_argument("--quarantine", metavar="FILE", help="rows that cannot be fixed (.parquet)")
    fx.add_argument(
        "--shift",
        action="append",
        default=[],
        metavar="SOURCE=D",
        help="add D to the labels of SOURCE (just D for an input with no source column)",
    )
    fx.add_argument(
        "--map-value",
        action="append",
        default=[],
        metavar="V=N",
        help="rewrite label V as N, or as ignore_index with V=ignore (e.g. -1=ignore); "
        "cityscapes: Cityscapes labelId -> trainId (others to 255)",
    )
    fx.add_argument(
        "--drop-ignored", action="store_true", help="quarantine rows with no usable target"
    )
    fx.add_argument("--in-place", action="store_true", help="allow --out to be the input (atomic)")
    fx.add_argument(
        "--model",
        metavar="PATH",
        help="align the labels to this Hugging Face "
        "model's id2label, by the names of --class-names",
    )
    fx.add_argument(
        "--predictions",
        metavar="PRED",
        help="a model's predictions on these rows: a source they prove permuted is remapped "
        "whole, its remap table written beside --out (docs/witness.md)",
    )
    fx.add_argument("--log", metavar="FILE", help="write the fix log as JSON here")
    fx.add_argument(
        "--format", choices=("text", "json"), default="text", help="fix log format (default text)"
    )
    rp = _command(
        sub,
        "repro",
        summary="bundle the failing batches with the environment and a replay script",
        description=(
            "Write the failing batches (ids and labels only), the environment and a repro.py that "
            "replays them through CrossEntropyLoss in fresh processes, into a new folder. Exit "
            "status: 0 written (or nothing fails), 2 usage error or unreadable input."
        ),
        paths="the label file(s)",
    )
    rp.add_argument("--out", required=True, metavar="DIR", help="a new (or empty) folder")
    rp.add_argument(
        "--log",
        metavar="LOG",
        help="the crashed run's log: the bundle also holds the failing step's rows (ids and "
        "labels only)",
    )
    rp.add_argument(
        "--checkpoints",
        metavar="DIR",
        help="the run's checkpoints: the bundle names the one to resume from",
    )
    replay_options(rp)
    rp.add_argument("--rank", type=non_negative, metavar="R", help="the failing rank")
    tr = sub.add_parser(
        "triage",
        help="read a crashed run's log: the first failure, its step and its family",
        description=(
            "Read a training log (any size, streamed; - for standard input), keep the first "
            "failure and the step it came after, name its family (index_out_of_range, "
            "out_of_memory, op_unavailable, device_mismatch, other) and say what to check first. "
            "With --data: the batch running at the failing step, its rows and their verdict. "
            "Exit status: 0 no error found, 1 an error (or a NaN loss, with --data) found, 2 "
            "unreadable log or data."
        ),
    )
    tr.add_argument("log", metavar="LOG", help="the log file, or - for standard input")
    tr.add_argument("--format", choices=("text", "json"), default="text")
    tr.add_argument(
        "--data",
        action="append",
        metavar="PATH",
        help="the training data: replay the batch the DataLoader gave at the failing step, name "
        "its rows and judge them (the contract options say K and the batching)",
    )
    contract_options(tr)
    replay_options(tr)
    tr.add_argument(
        "--rank", type=non_negative, metavar="R", help="the failing rank (default: the log's)"
    )
    rs = sub.add_parser(
        "resume",
        help="the newest checkpoint of a crashed run that is safe to resume from",
        description=(
            "Read every checkpoint in DIR without running code (torch files with "
            "weights_only=True, safetensors by their header): readable to the end, every tensor "
            "finite (weights and optimizer state), the classification head fitting the class "
            "map, written before the failure the log shows. Exit status: 0 one is sound (it is "
            "named, with the framework's way to resume), 1 none is, 2 usage error or unusable "
            "input."
        ),
    )
    rs.add_argument("dir", metavar="DIR", help="the run's checkpoint folder")
    rs.add_argument("--log", metavar="LOG", help="the crashed run's log: its failing step")
    rs.add_argument("--head", metavar="PREFIX", help="the head's layer (default: found)")
    rs.add_argument("--format", choices=("text", "json"), default="text")
    rs.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    contract_options(rs)
    replay_options(rs)
    df = sub.add_parser(
        "diff",
        help="CI gate: validate HEAD and compare it with BASE (class map, values, shares, ids)",
        description=(
            "Validate HEAD fully and compare it with BASE, two revisions of one dataset (files or "
            "directories): a renamed or reordered class map (blocks unless the contract's version "
            "changed), label values new in HEAD, classes gone, class and source shares that moved, "
            "rows added, removed or relabelled by id. Exit status: 0 pass, 1 a check failed, 2 "
            "usage error or unreadable input."
        ),
    )
    df.add_argument("base", metavar="BASE", help="the dataset at the base revision")
    df.add_argument("head", metavar="HEAD", help="the dataset at the head revision")
    contract_options(df)
    df.add_argument(
        "--base-schema", metavar="FILE", help="the base revision's contract (default --schema)"
    )
    df.add_argument("--base-class-names", metavar="FILE", help="the base revision's class map")
    df.add_argument(
        "--share-threshold",
        type=float,
        default=0.05,
        metavar="X",
        help="share shift to report (default 0.05)",
    )
    report_options(df)
    cache_option(df)
    ex = sub.add_parser(
        "export",
        help="the contract as a schema of another library",
        description=(
            "Write the contract's row-level rules as a pandera schema (YAML that "
            "DataFrameSchema.from_yaml reads back once labelgate.engines.pandera is imported), or as a "
            "Great Expectations 1.x ExpectationSuite (JSON)."
        ),
    )
    ex.add_argument("target", choices=("pandera", "gx"), help="the library")
    ex.add_argument("schema", metavar="SCHEMA", help="the contract (YAML)")
    ex.add_argument("--output", "-o", metavar="FILE", help="write here (default stdout)")
    pn = sub.add_parser(
        "pin",
        help="write the class map's fingerprint into the contract",
        description=(
            "Compute the fingerprint of the contract's class map and write it into the contract "
            "as class_map_fingerprint; validate and diff then fail (LG018) when the map in use "
            "no longer matches it."
        ),
    )
    pn.add_argument("schema", metavar="SCHEMA", help="the contract (YAML) to pin")
    xp = sub.add_parser(
        "explain",
        help="what a check code finds, the PyTorch rule behind it, an example",
        description=(
            "Print a check's catalog entry and its paragraph of docs/checks.md; for the checks "
            "a table of labels shows, a minimal input that fails it and one that passes."
        ),
    )
    xp.add_argument("code", metavar="CODE", help="the check code, e.g. LG004")
    return parser
