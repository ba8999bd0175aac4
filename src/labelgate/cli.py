"""The command line: the only module that prints or exits. Exit status 0 pass, 1 fail, 2 usage/input."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from labelgate._version import __version__
from labelgate.atomic import write_text_atomic
from labelgate.errors import LabelgateError, UsageError

if TYPE_CHECKING:
    from labelgate.contract import Contract

__all__ = ["main"]

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "junit", "github", "markdown", "html")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer, got {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _contract_options(p: argparse.ArgumentParser) -> None:
    """The options every command shares: K, the contract, columns, class map, batching."""
    p.add_argument(
        "--classes", "-k", type=_positive, metavar="K", help="number of classes (logits)"
    )
    p.add_argument("--schema", metavar="FILE", help="dataset contract (YAML); flags override it")
    p.add_argument("--label-column", metavar="COL", help="label column (auto-detected)")
    p.add_argument("--id-column", metavar="COL", help="row id column (auto-detected)")
    p.add_argument("--source-column", metavar="COL", help="data source column (auto-detected)")
    p.add_argument("--name-column", metavar="COL", help="class name column (auto-detected)")
    p.add_argument(
        "--class-names", metavar="FILE", help="class-name map: txt, json, yaml or csv index,name"
    )
    p.add_argument("--ignore-index", type=_integer, metavar="N", help="default -100")
    p.add_argument("--batch-size", type=_positive, metavar="N", help="default 32")
    p.add_argument(
        "--drop-last", action="store_true", default=None, help="drop an incomplete last batch"
    )
    p.add_argument(
        "--shuffle-seed",
        type=_integer,
        metavar="S",
        help="replay DataLoader(shuffle=True, generator=Generator().manual_seed(S)) (needs torch)",
    )


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
    _contract_options(p)
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
            "Check label files (Parquet, CSV, JSONL; files, directories or globs, read in sorted "
            "path order as one logical file) against PyTorch's contract for class-index targets. "
            "Exit status: 0 pass, 1 a check failed, 2 usage error or unreadable input."
        ),
        paths="label file(s), directory or glob",
    )
    v.add_argument("--format", choices=FORMATS, default="text", help="report format (default text)")
    v.add_argument("--output", "-o", metavar="FILE", help="write the report here (default stdout)")
    v.add_argument(
        "--max-examples",
        type=_non_negative,
        default=20,
        metavar="N",
        help="rows shown per finding; 0 = all",
    )
    v.add_argument("--strict", action="store_true", help="warnings fail too")
    v.add_argument(
        "--engine",
        choices=("streaming", "pandera", "gx"),
        default="streaming",
        help="streaming (default: every check, constant memory), or pandera or gx (Great "
        "Expectations): the row-level checks through that library",
    )
    v.add_argument("--gx-docs", metavar="DIR", help="with --engine gx: build GX's Data Docs in DIR")
    v.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    v.add_argument(
        "--threads",
        type=_positive,
        metavar="N",
        help="threads scanning Parquet row groups in parallel (default: the cores available)",
    )
    v.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the row groups on a Dask cluster: local[N] starts N local worker processes; "
        "tcp://host:8786 joins a running scheduler (needs labelgate[dask])",
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
        "--max-batches", type=_positive, metavar="N", help="replay the first N batches only"
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
    fx.add_argument("--out", required=True, metavar="FIXED", help="the fixed file (.parquet)")
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
        help="rewrite label V as N, or as ignore_index with V=ignore (e.g. -1=ignore)",
    )
    fx.add_argument(
        "--drop-ignored", action="store_true", help="quarantine rows with no usable target"
    )
    fx.add_argument("--in-place", action="store_true", help="allow --out to be the input (atomic)")
    fx.add_argument("--log", metavar="FILE", help="write the fix log as JSON here")
    fx.add_argument("--format", choices=("text", "json"), default="text")
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
    tr = sub.add_parser(
        "triage",
        help="read a crashed run's log: the first failure, its step and its family",
        description=(
            "Read a training log (any size, streamed; - for standard input), keep the first "
            "failure and the step it came after, name its family (index_out_of_range, "
            "out_of_memory, op_unavailable, device_mismatch, other) and say what to check first. "
            "Exit status: 0 no error found, 1 an error found, 2 unreadable log."
        ),
    )
    tr.add_argument("log", metavar="LOG", help="the log file, or - for standard input")
    tr.add_argument("--format", choices=("text", "json"), default="text")
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
    _contract_options(df)
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
    df.add_argument("--format", choices=FORMATS, default="text")
    df.add_argument("--output", "-o", metavar="FILE", help="write the report here (default stdout)")
    df.add_argument("--max-examples", type=_non_negative, default=20, metavar="N")
    df.add_argument("--strict", action="store_true", help="warnings fail too")
    ex = sub.add_parser(
        "export",
        help="the contract as a schema of another library",
        description=(
            "Write the contract's row-level rules as a pandera schema (YAML that "
            "DataFrameSchema.from_yaml reads back once labelgate.pandera is imported), or as a "
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        commands = {
            "validate": _validate,
            "smoke": _smoke,
            "fix": _fix,
            "repro": _repro,
            "triage": _triage,
            "diff": _diff,
            "pin": _pin,
            "export": _export,
        }
        return commands[args.command](args)
    except LabelgateError as exc:
        print(f"labelgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("labelgate: interrupted", file=sys.stderr)
        return 130


def _contract(args: argparse.Namespace) -> Contract:
    from labelgate.api import build_contract

    return build_contract(
        args.schema,
        classes=args.classes,
        class_names=args.class_names,
        ignore_index=args.ignore_index,
        label_column=args.label_column,
        id_column=args.id_column,
        source_column=args.source_column,
        name_column=args.name_column,
        batch_size=args.batch_size,
        drop_last=args.drop_last,
        shuffle_seed=args.shuffle_seed,
    )


def _validate(args: argparse.Namespace) -> int:
    from labelgate.api import validate

    if args.output:
        _refuse_input_as_output(args.output, args.paths)
    progress = None
    if args.format == "text" and not args.no_progress and sys.stderr.isatty():
        progress = _ProgressBar()
    try:
        report = validate(
            args.paths,
            _contract(args),
            engine=args.engine,
            max_examples=args.max_examples,
            strict=args.strict,
            progress=progress,
            threads=args.threads,
            dask=args.dask,
            gx_docs=args.gx_docs,
        )
    finally:
        if progress is not None:
            progress.close()
    return _emit(report, args)


def _emit(report: object, args: argparse.Namespace) -> int:
    """Write the report where asked; with --format github, also GitHub's step summary."""
    import os

    from labelgate.render import render
    from labelgate.report import Report

    assert isinstance(report, Report)
    to_terminal = args.output is None and sys.stdout.isatty()
    text = render(report, args.format, color=to_terminal)
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if args.format == "github" and summary:
        with Path(summary).open("a", encoding="utf-8") as f:
            f.write(render(report, "markdown"))
    return EXIT_FAIL if report.failed else EXIT_PASS


def _refuse_input_as_output(output: str, inputs: list[str]) -> None:
    out = Path(output).resolve()
    for raw in inputs:
        p = Path(raw)
        if p.exists() and (p.resolve() == out or (p.is_dir() and p.resolve() in out.parents)):
            raise UsageError(f"--output {output!r} would overwrite or sit inside the input {raw!r}")


class _ProgressBar:
    """A rich progress bar on stderr, shown only once a scan has taken more than half a second."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self._bar: object | None = None
        self._task: object | None = None
        self._update: Callable[..., None] | None = None

    def __call__(self, done: int, total: int | None) -> None:
        if self._update is None:
            if self._clock() - self._start < 0.5:
                return
            from rich.console import Console
            from rich.progress import Progress

            bar = Progress(console=Console(stderr=True), transient=True)
            bar.start()
            task = bar.add_task("scanning labels", total=total)
            self._bar, self._task = bar, task
            self._update = lambda n: bar.update(task, completed=n)
        self._update(done)

    def close(self) -> None:
        if self._bar is not None:
            from rich.progress import Progress

            assert isinstance(self._bar, Progress)
            self._bar.stop()


def _smoke(args: argparse.Namespace) -> int:
    from labelgate.dataset import open_dataset
    from labelgate.render.smoke import SmokeVerdict, render_smoke
    from labelgate.smoke import run_smoke
    from labelgate.validation import run

    contract = _contract(args)
    options = {"device": args.device, "max_batches": args.max_batches}
    before = None
    predicted: list[int] = []
    if args.before:
        done = run([args.before], contract, max_examples=1)
        limit = args.max_batches
        predicted = [b for b in done.report.batches["failing"] if limit is None or b < limit]
        before = run_smoke(done.dataset, **options)
    after = run_smoke(open_dataset(args.paths, contract), **options)
    verdict = SmokeVerdict(after, before, predicted)
    sys.stdout.write(render_smoke(verdict, args.format))
    return EXIT_PASS if verdict.passed else EXIT_FAIL


def _parse_pairs(items: list[str], flag: str, *, value_ignore: bool) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        if not sep:
            key, value = "*", item
        if not value:
            raise UsageError(
                f"{flag} {item!r}: expected {'V=N or V=ignore' if value_ignore else 'SOURCE=D'}"
            )
        pairs[key] = value
    return pairs


def _fix(args: argparse.Namespace) -> int:
    from labelgate.fix import FixOptions, fix
    from labelgate.render.fixlog import render_fix

    contract = _contract(args)
    shifts: dict[str, int] = {}
    for source, d in _parse_pairs(args.shift, "--shift", value_ignore=False).items():
        try:
            shifts[source] = int(d)
        except ValueError:
            raise UsageError(
                f"--shift {source}={d}: the shift must be an integer such as -1"
            ) from None
    maps: dict[int, int | None] = {}
    for raw, new in _parse_pairs(args.map_value, "--map-value", value_ignore=True).items():
        try:
            maps[int(raw)] = None if new == "ignore" else int(new)
        except ValueError:
            raise UsageError(f"--map-value {raw}={new}: expected integers, or V=ignore") from None
    options = FixOptions(
        out=args.out,
        quarantine=args.quarantine,
        shifts=shifts,
        value_maps=maps,
        drop_ignored=args.drop_ignored,
        in_place=args.in_place,
    )
    result = fix(args.paths, contract, options)
    if args.log:
        import json

        write_text_atomic(args.log, json.dumps(result.to_dict(), indent=2) + "\n")
    sys.stdout.write(render_fix(result, args.format))
    return EXIT_PASS if result.after is not None and not result.after.failed else EXIT_FAIL


def _repro(args: argparse.Namespace) -> int:
    from labelgate.bundle import make_bundle

    contract = _contract(args)
    bundle = make_bundle(args.paths, contract, args.out)
    if bundle is None:
        print("no batch fails: nothing to reproduce, nothing written")
        return EXIT_PASS
    batches = ", ".join(map(str, bundle.batches))
    print(
        f"wrote {bundle.path}: failing batches {batches}; replay with: python {bundle.path}/repro.py"
    )
    return EXIT_PASS


def _triage(args: argparse.Namespace) -> int:
    from labelgate.errors import InputError
    from labelgate.render.triage import render_triage
    from labelgate.triage import triage_stream

    if args.log == "-":
        result = triage_stream(sys.stdin.buffer)
    else:
        try:
            with Path(args.log).open("rb") as stream:
                result = triage_stream(stream)
        except FileNotFoundError:
            raise InputError("no such file", path=args.log) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a log file", path=args.log) from None
        except PermissionError:
            raise InputError("permission denied", path=args.log) from None
    sys.stdout.write(render_triage(result, args.format))
    return EXIT_PASS if result.first_error is None else EXIT_FAIL


def _diff(args: argparse.Namespace) -> int:
    from labelgate.classmap import load_class_map
    from labelgate.contract import Contract
    from labelgate.diff import diff

    head = _contract(args)
    base = Contract.from_yaml(args.base_schema) if args.base_schema else head
    if args.base_schema:
        base = base.replace(
            num_classes=args.classes,
            label_column=args.label_column,
            id_column=args.id_column,
            source_column=args.source_column,
            name_column=args.name_column,
            ignore_index=args.ignore_index,
        )
    if args.base_class_names:
        base = base.replace(class_map=load_class_map(args.base_class_names))
    if args.output:
        _refuse_input_as_output(args.output, [args.base, args.head])
    report = diff(
        [args.base],
        [args.head],
        base,
        head,
        threshold=args.share_threshold,
        max_examples=args.max_examples,
        strict=args.strict,
    )
    return _emit(report, args)


def _pin(args: argparse.Namespace) -> int:
    import re

    from labelgate.contract import Contract

    contract = Contract.from_yaml(args.schema)
    if contract.class_map is None:
        raise UsageError(f"{args.schema}: the contract has no class_names to pin")
    fingerprint = contract.class_map.fingerprint()
    text = Path(args.schema).read_text(encoding="utf-8")
    line = f"class_map_fingerprint: {fingerprint}"
    pattern = re.compile(r"^class_map_fingerprint:.*$", re.MULTILINE)
    if pattern.search(text):
        text = pattern.sub(line, text)
    else:
        text = text + ("" if text.endswith("\n") else "\n") + line + "\n"
    write_text_atomic(args.schema, text)
    Contract.from_yaml(args.schema)  # the pinned contract still reads
    print(f"pinned {args.schema}: {fingerprint}")
    return EXIT_PASS


def _export(args: argparse.Namespace) -> int:
    import json

    from labelgate.contract import Contract

    contract = Contract.from_yaml(args.schema)
    if contract.label_column is None:
        raise UsageError(f"{args.schema}: name the label_column to export a schema")
    if args.target == "gx":
        from labelgate.gx import suite_json

        text = json.dumps(suite_json(contract), indent=2) + "\n"
    else:
        from labelgate.pandera import schema

        text = schema(contract).to_yaml() or ""
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_PASS
