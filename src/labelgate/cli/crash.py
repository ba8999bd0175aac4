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
from labelgate.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from labelgate.commands.logstep import FailStep
    from labelgate.commands.triage import Triage
    from labelgate.contract import Contract

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
    try:
        with Path(path).open("rb") as stream:
            yield stream
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a log file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None


def read_failure(path: str, args: argparse.Namespace) -> tuple[Triage, FailStep]:
    """The log's first failure and the step it stopped, ``--step``/``--epoch``/``--rank`` overriding."""
    from dataclasses import replace

    from labelgate.commands.loglines import read_lines
    from labelgate.commands.logstep import FailStep, read_step
    from labelgate.commands.triage import triage_stream

    with _log(path) as stream:
        result = triage_stream(stream)
        stream.seek(0)
        until = result.first_error["line"] if result.first_error else None
        where = read_step(read_lines(stream), until=until, rank=result.rank)
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
    return result, where


def triage_data(args: argparse.Namespace) -> int:
    """``triage LOG --data PATH``: the failure, its step, its batch's rows and their verdict."""
    from labelgate.commands.crashbatch import failing_batch, loader_spec
    from labelgate.render.crash import render_triage_data

    contract = _contract(args)
    result, where = read_failure(args.log, args)
    spec = loader_spec(
        contract,
        world_size=args.world_size,
        grad_accum=args.grad_accum,
        sampler_drop_last=args.sampler_drop_last,
    )
    failed = result.first_error is not None or where.cause == "nan"
    crash = (
        failing_batch(args.data, contract, spec, where, family=result.family) if failed else None
    )
    sys.stdout.write(render_triage_data(result, where, crash, args.format))
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
        from labelgate.commands.logstep import FailStep

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
    from labelgate.commands.crashbatch import failing_batch, loader_spec
    from labelgate.commands.resume import judge_checkpoints

    extras: dict[str, Any] = {}
    where = None
    if args.log:
        result, where = read_failure(args.log, args)
        spec = loader_spec(
            contract,
            world_size=args.world_size,
            grad_accum=args.grad_accum,
            sampler_drop_last=args.sampler_drop_last,
        )
        crash = failing_batch(args.paths, contract, spec, where, family=result.family)
        line = result.first_error["line"] if result.first_error else None
        extras["crash"] = {"family": result.family, "first_error_line": line} | {
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
