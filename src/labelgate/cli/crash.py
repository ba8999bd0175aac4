"""The commands that start from a crashed run: triage with its data, resume, and what repro adds."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from labelgate.cli.parser import EXIT_FAIL, EXIT_PASS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from labelgate.commands.crashbatch import CrashBatch
    from labelgate.commands.logs.logbatch import Shown
    from labelgate.commands.logs.logstep import FailStep
    from labelgate.commands.logs.triage import Triage
    from labelgate.contract import Contract
    from labelgate.training.loaderorder import LoaderSpec

__all__ = ["crash_extras", "resume", "triage_data"]


def _contract(args: argparse.Namespace) -> Contract:
    from labelgate.api import CONTRACT_OPTIONS, build_contract

    given = {name: getattr(args, name, None) for name in CONTRACT_OPTIONS}  # validate's flags too
    return build_contract(args.schema, **given)


@contextmanager
def _log(path: str) -> Iterator[BinaryIO]:
    """The log as a seekable binary file (standard input is spooled: it is read twice)."""
    if path == "-":
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool)
            spool.seek(0)
            yield spool
        return
    from labelgate.io.files import open_regular

    with open_regular(path, "log") as stream:  # a FIFO or /dev/zero: refused, never read
        yield stream


def read_failure(path: str, args: argparse.Namespace) -> tuple[Triage, FailStep, list[Shown]]:
    """The log's first failure, the step it stopped (``--step``/``--epoch``/``--rank``
    overriding) and the batch sizes the log shows (the failing message's, a print's)."""
    from dataclasses import replace

    from labelgate.commands.logs.logbatch import batch_sizes_in
    from labelgate.commands.logs.loglines import read_lines
    from labelgate.commands.logs.logstep import FailStep, read_step
    from labelgate.commands.logs.triage import triage_stream

    with _log(path) as stream:
        result = triage_stream(stream)
        stream.seek(0)
        until = result.first_error["line"] if result.first_error else None
        where = read_step(read_lines(stream), until=until, rank=result.rank)
        stream.seek(0)
        shown = batch_sizes_in(read_lines(stream), until=until, message=result.exception)
    if args.step is not None:
        where = FailStep(
            args.step,
            "optimizer step",
            args.epoch,
            args.epoch is not None,
            rank=where.rank,
            style="given",
            cause=where.cause,
        )
    elif args.epoch is not None:
        where = replace(where, epoch=args.epoch)
    rank = getattr(args, "rank", None)
    if rank is not None:
        where = replace(where, rank=rank)
    return result, where, shown


def batched(
    args: argparse.Namespace, contract: Contract, shown: list[Shown]
) -> tuple[Contract, str | None]:
    """The batch size the failing step is replayed with, and a note of where it came from: the
    one given (``--batch-size``, the contract) is used as it is; else the failing step's message's;
    else a print's before the failure; else the default, said, since another size puts the
    failing rows in another batch."""
    from dataclasses import replace

    from labelgate.commands.logs.logbatch import run_batch_size

    if args.batch_size is not None or getattr(args, "schema", None):
        return contract, None
    chosen = run_batch_size(shown, task=contract.task)
    if chosen is not None:
        read, other = chosen
        batching = replace(contract.batching, size=read.size)
        return replace(contract, batching=batching), _read_note(read, other)
    return contract, (
        f"batch size {contract.batching.size}: assumed, as no --batch-size was given and the log "
        "shows none; with the run's own size the failing rows may be in another batch, so give "
        "--batch-size N"
    )


def _read_note(read: Shown, other: Shown | None) -> str:
    """Where the batch size was read, and another size the log shows, if any."""
    where = "the failing step's message" if read.failing else "a print before the failure"
    note = f"batch size {read.size}: read from line {read.line} of the log ({where}: {read.text})"
    if read.failing:
        note += "; it counts the failing batch's labels: the run's batch size unless that batch "
        note += "was an epoch's last, incomplete one"
    if other is not None:
        note += f"; line {other.line} shows {other.text}"
    return note + "; --batch-size N overrides it"


def judged(
    paths: list[str], contract: Contract, spec: LoaderSpec, where: FailStep, result: Triage
) -> CrashBatch:
    """The failing step's batches judged, as the log's triage reads the failure (its family,
    named case, and whether CUDA reported it asynchronously)."""
    from labelgate.commands.crashbatch import failing_batch

    return failing_batch(
        paths,
        contract,
        spec,
        where,
        family=result.family,
        kind=result.kind,
        asynchronous=result.step["asynchronous"],
    )


def triage_data(args: argparse.Namespace) -> int:
    """``triage LOG --data PATH``: the failure, its step, its batch's rows and their verdict."""
    from labelgate.commands.crashbatch import loader_spec
    from labelgate.render.crash import render_triage_data

    result, where, shown = read_failure(args.log, args)
    contract, note = batched(args, _contract(args), shown)
    spec = loader_spec(
        contract,
        world_size=args.world_size,
        grad_accum=args.grad_accum,
        sampler_drop_last=args.sampler_drop_last,
    )
    failed = result.first_error is not None or where.cause == "nan"
    crash = judged(args.data, contract, spec, where, result) if failed else None
    sys.stdout.write(render_triage_data(result, where, crash, args.format, note))
    return EXIT_FAIL if failed else EXIT_PASS


def _classes(contract: Contract) -> int | None:
    if contract.num_classes is not None:
        return contract.num_classes
    return len(contract.class_map.entries) if contract.class_map is not None else None


def resume(args: argparse.Namespace) -> int:
    """``resume DIR [--log LOG]``: the newest sound checkpoint; exit 0 one, 1 none."""
    from labelgate.cli.progress import ProgressBar

    show = args.format == "text" and not args.no_progress and sys.stderr.isatty()
    progress = ProgressBar(what="reading checkpoints") if show else None
    try:
        return _resume(args, progress)
    finally:
        if progress is not None:
            progress.close()


def _resume(args: argparse.Namespace, progress: Callable[[int, int | None], None] | None) -> int:
    from labelgate.commands.resume import judge_checkpoints
    from labelgate.render.crash import render_resume

    contract = _contract(args)
    where = read_failure(args.log, args)[1] if args.log else None
    if where is None and args.step is not None:
        from labelgate.commands.logs.logstep import FailStep

        where = FailStep(args.step, "optimizer step", style="given")
    found = judge_checkpoints(
        args.dir,
        failure=where,
        classes=_classes(contract),
        head=args.head,
        grad_accum=args.grad_accum,
        progress=progress,
    )
    sys.stdout.write(render_resume(found, args.format))
    return EXIT_PASS if found.chosen is not None else EXIT_FAIL


def crash_extras(args: argparse.Namespace, contract: Contract) -> dict[str, Any]:
    """What ``repro --log/--checkpoints`` adds to a bundle: the failing step's rows (ids and
    labels only) and the checkpoint to resume from."""
    from labelgate.commands.crashbatch import loader_spec
    from labelgate.commands.resume import judge_checkpoints

    extras: dict[str, Any] = {}
    where = None
    if args.log:
        result, where, shown = read_failure(args.log, args)
        contract, note = batched(args, contract, shown)
        spec = loader_spec(
            contract,
            world_size=args.world_size,
            grad_accum=args.grad_accum,
            sampler_drop_last=args.sampler_drop_last,
        )
        crash = judged(args.paths, contract, spec, where, result)
        line = result.first_error["line"] if result.first_error else None
        extras["crash"] = {"family": result.family, "first_error_line": line} | {
            "batch_size": spec.batch_size,
            "batch_size_note": note,
            "step": crash.step,
            "verdict": crash.verdict,
            "explained": crash.explained,
        }
        extras["rows"] = [
            {"rank": b["rank"], "epoch": b["epoch"], "batch": b["batch"]} | r
            for b in crash.batches
            for r in b["rows"]
        ]
    if args.checkpoints:
        found = judge_checkpoints(
            args.checkpoints, failure=where, classes=_classes(contract), grad_accum=args.grad_accum
        )
        # names only, as everywhere in a bundle: no folders (user or host names)
        chosen = found.chosen.checkpoint.path if found.chosen else None
        extras["resume"] = {
            "resume_from": Path(chosen).name if chosen else None,
            "how": found.hint.replace(chosen, Path(chosen).name) if found.hint and chosen else None,
            "rejected": {
                Path(j.checkpoint.path).name: j.problems for j in found.judged if not j.sound
            },
        }
    return extras
