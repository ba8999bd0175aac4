"""The command line: the only module that prints or exits. Exit status 0 pass, 1 fail, 2 usage/input."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from labelgate import __version__
from labelgate.errors import LabelgateError, UsageError

__all__ = ["main"]

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (kept import-light so ``labelgate --help`` is fast)."""
    parser = _Parser(
        prog="labelgate",
        description="Stop bad class labels before they reach the GPU.",
    )
    parser.add_argument("--version", action="version", version=f"labelgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    v = sub.add_parser(
        "validate",
        help="check label files against PyTorch's rules for class-index targets",
        description=(
            "Check label files (Parquet, CSV, JSONL; files, directories or globs, read in sorted "
            "path order as one logical file) against PyTorch's contract for class-index targets. "
            "Exit status: 0 pass, 1 a check failed, 2 usage error or unreadable input."
        ),
    )
    v.add_argument("paths", nargs="+", metavar="PATH", help="label file(s), directory or glob")
    _contract_options(v)
    v.add_argument("--format", choices=("text", "json"), default="text")
    v.add_argument("--output", "-o", metavar="FILE", help="write the report here (default stdout)")
    v.add_argument(
        "--max-examples",
        type=_non_negative,
        default=20,
        metavar="N",
        help="rows shown per finding; 0 = all",
    )
    v.add_argument("--strict", action="store_true", help="warnings fail too")
    v.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    sm = sub.add_parser(
        "smoke",
        help="replay the simulated batches through CrossEntropyLoss on the device",
        description=(
            "Replay the batches validate simulates through a tiny model and CrossEntropyLoss, "
            "forward and backward, in fresh child processes (a device-side assert loses the CUDA "
            "context). Exit status: 0 every batch ran clean (with --before: the raw file failed "
            "where validate predicted and this one passed), 1 otherwise, 2 usage error, "
            "unreadable input or no torch."
        ),
    )
    sm.add_argument("paths", nargs="+", metavar="PATH", help="the (fixed) label file(s)")
    _contract_options(sm)
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return _smoke(args) if args.command == "smoke" else _validate(args)
    except LabelgateError as exc:
        print(f"labelgate: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("labelgate: interrupted", file=sys.stderr)
        return 130


def _contract(args: argparse.Namespace) -> object:
    from labelgate.classmap import load_class_map
    from labelgate.contract import Batching, Contract

    contract = Contract.from_yaml(args.schema) if args.schema else Contract()
    b = contract.batching
    batching = Batching(
        size=args.batch_size or b.size,
        drop_last=b.drop_last if args.drop_last is None else args.drop_last,
        shuffle_seed=b.shuffle_seed if args.shuffle_seed is None else args.shuffle_seed,
    )
    return contract.replace(
        num_classes=args.classes,
        label_column=args.label_column,
        id_column=args.id_column,
        source_column=args.source_column,
        name_column=args.name_column,
        class_map=load_class_map(args.class_names) if args.class_names else None,
        ignore_index=args.ignore_index,
        batching=batching,
    )


def _validate(args: argparse.Namespace) -> int:
    from labelgate.contract import Contract
    from labelgate.render import render
    from labelgate.validation import validate

    contract = _contract(args)
    assert isinstance(contract, Contract)
    if args.output:
        _refuse_input_as_output(args.output, args.paths)
    progress = None
    if args.format == "text" and not args.no_progress and sys.stderr.isatty():
        progress = _ProgressBar()
    try:
        report = validate(
            args.paths,
            contract,
            max_examples=args.max_examples,
            strict=args.strict,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    to_terminal = args.output is None and sys.stdout.isatty()
    text = render(report, args.format, color=to_terminal)
    if args.output:
        _write_atomic(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return EXIT_FAIL if report.failed else EXIT_PASS


def _refuse_input_as_output(output: str, inputs: list[str]) -> None:
    out = Path(output).resolve()
    for raw in inputs:
        p = Path(raw)
        if p.exists() and (p.resolve() == out or (p.is_dir() and p.resolve() in out.parents)):
            raise UsageError(f"--output {output!r} would overwrite or sit inside the input {raw!r}")


def _write_atomic(path: Path, text: str) -> None:
    """Write next to the target, then rename: a reader never sees half a report."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path())
    except OSError as exc:
        raise UsageError(f"--output {str(path)!r}: cannot write there ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    from labelgate.contract import Contract
    from labelgate.dataset import open_dataset
    from labelgate.render.smoke import SmokeVerdict, render_smoke
    from labelgate.smoke import run_smoke
    from labelgate.validation import validate

    contract = _contract(args)
    assert isinstance(contract, Contract)
    options = {"device": args.device, "max_batches": args.max_batches}
    before = None
    predicted: list[int] = []
    if args.before:
        report = validate([args.before], contract, max_examples=1)
        limit = args.max_batches
        predicted = [b for b in report.batches["failing"] if limit is None or b < limit]
        before = run_smoke(open_dataset([args.before], contract), **options)
    after = run_smoke(open_dataset(args.paths, contract), **options)
    verdict = SmokeVerdict(after, before, predicted)
    sys.stdout.write(render_smoke(verdict, args.format))
    return EXIT_PASS if verdict.passed else EXIT_FAIL
