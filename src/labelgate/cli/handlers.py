"""The commands' handlers: each turns its parsed arguments into a run and an exit status.

A handler imports what its command runs when it runs, so that one command pays for no other's
imports."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.cli.fixargs import blank_policy, model_alignment, parse_pairs
from labelgate.cli.parser import (
    EXIT_FAIL,
    EXIT_PASS,
)
from labelgate.cli.progress import ProgressBar as _ProgressBar
from labelgate.errors import UsageError
from labelgate.io.atomic import write_text_atomic
from labelgate.io.files import append_output, check_outputs, write_output

if TYPE_CHECKING:
    from labelgate.contract import Contract
    from labelgate.readers.base import Reader

__all__ = ["COMMANDS"]


def _inputs(args: argparse.Namespace, *contracts: Contract) -> list[str | None]:
    """Every path a command reads: data, contracts, class maps (the contracts' own included), the
    model (a folder covers its config.json and checkpoints), the tokenizer, the images folder,
    the predictions, logs and checkpoint folders."""
    names = ["paths", "schema", "class_names", "base", "head", "base_schema", "base_class_names"]
    names += ["model", "tokenizer", "images", "checkpoints", "data", "dir"]
    if args.command == "repro":  # fix's --log is an output, repro's the crashed run's log
        names.append("log")
    found: list[str | None] = []
    for name in names:
        value = getattr(args, name, None)
        found += value if isinstance(value, list) else [value if isinstance(value, str) else None]
    for c in contracts:
        if c.class_map is not None and c.class_map.origin != "inline":
            found.append(c.class_map.origin)
        if c.model is not None:
            found.append(c.model.origin)
        found.append(c.images)
        found.append(c.predictions)
    return found


def _contract(args: argparse.Namespace) -> Contract:
    from labelgate.api import CONTRACT_OPTIONS, build_contract

    # a command without a flag (--world-size is validate's) leaves the contract's field as it is
    given = {name: getattr(args, name, None) for name in CONTRACT_OPTIONS}
    return build_contract(args.schema, **given)


def _validate(args: argparse.Namespace) -> int:
    from labelgate.api import validate

    contract = _contract(args)
    check_outputs(_report_outputs(args), _inputs(args, contract))
    progress = None
    if args.format == "text" and not args.no_progress and sys.stderr.isatty():
        progress = _ProgressBar()
    try:
        report = validate(
            args.paths,
            contract,
            engine=args.engine,
            max_examples=args.max_examples,
            strict=args.strict,
            progress=progress,
            threads=args.threads,
            dask=args.dask,
            id_memory=None if args.id_memory is None else args.id_memory << 20,
            gx_docs=args.gx_docs,
            input_format=args.input_format,
            background=args.background,
            source_field=args.source_field,
            tokenizer=args.tokenizer,
            max_length=args.max_length,
            cache=args.cache,
        )
    finally:
        if progress is not None:
            progress.close()
    return _emit(report, args)


def _emit(report: object, args: argparse.Namespace) -> int:
    """Write the report where asked; with --format github, also GitHub's step summary."""
    from labelgate.core.report import Report
    from labelgate.render import render

    assert isinstance(report, Report)
    if args.all_batches:
        report = dataclasses.replace(report, all_batches=True)
    to_terminal = args.output is None and sys.stdout.isatty()
    link = _report_url(args) if args.format == "pr-comment" else None
    text = render(report, args.format, color=to_terminal, link=link)
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    summary = _report_outputs(args).get("GITHUB_STEP_SUMMARY")
    if summary:
        append_output(summary, render(report, "markdown"))
    return EXIT_FAIL if report.failed else EXIT_PASS


def _report_url(args: argparse.Namespace) -> str | None:
    """The full report's link for a pull-request comment: --report-url, else on GitHub Actions
    the run's page (its artifacts are listed there)."""
    url: str | None = args.report_url
    if url is None:
        env = os.environ
        parts = [env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
        if all(parts):
            url = "{}/{}/actions/runs/{}".format(*parts)
    if url is not None and (
        not url.startswith(("https://", "http://")) or any(c in url for c in " ()<>\n\t")
    ):
        raise UsageError(f"--report-url must be an http(s) URL without spaces or brackets: {url!r}")
    return url


def _report_outputs(args: argparse.Namespace) -> dict[str, str | None]:
    """The report's outputs: --output, and with --format github the step summary GitHub names in
    the environment, checked against the inputs like any other output."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if args.format == "github" else None
    _report_url(args)  # a bad --report-url is said before anything is read
    return {"--output": args.output, "GITHUB_STEP_SUMMARY": summary or None}


def _smoke(args: argparse.Namespace) -> int:
    from labelgate.commands.smoke import run_smoke
    from labelgate.inputs.dataset import open_dataset
    from labelgate.render.smoke import SmokeVerdict, render_smoke
    from labelgate.run.validation import run

    contract = _contract(args)
    options = {"device": args.device, "max_batches": args.max_batches}
    before = None
    predicted: list[int] = []
    if args.before:
        with run([args.before], contract, max_examples=1) as done:
            limit = args.max_batches
            predicted = [b for b in done.report.batches["failing"] if limit is None or b < limit]
            before = run_smoke(done.dataset, **options)
    reader = _reader(args, contract)
    if reader is not None and reader.can("stack"):  # smoke stacks the input's own arrays (masks)
        if len(args.paths) > 1:
            raise UsageError(
                f"smoke stacks the masks of one file or folder, got {len(args.paths)} paths"
            )
        from labelgate.readers.masks.masklayout import mask_root

        with run(args.paths, contract, input_format=reader.name, max_examples=1) as done:
            root = str(mask_root(Path(args.paths[0])))
            after = run_smoke(done.dataset, **options, masks=root)
        after.path = args.paths[0]  # the masks, not the histogram rows read from them
    else:
        from contextlib import ExitStack

        from labelgate.run.inputs import unpacked_inputs

        with ExitStack() as stack:  # stdin, .gz, .zst: replayed from what they unpack to
            unpacked = unpacked_inputs(args.paths, stack)
            after = run_smoke(open_dataset(unpacked.paths, contract), **options)
            after.path = unpacked.shown(after.path)
    verdict = SmokeVerdict(after, before, predicted)
    sys.stdout.write(render_smoke(verdict, args.format))
    return EXIT_PASS if verdict.passed else EXIT_FAIL


def _fix(args: argparse.Namespace) -> int:
    from labelgate.commands.fix import FixOptions, fix

    contract = _contract(args)
    shifts: dict[str, int] = {}
    for source, d in parse_pairs(args.shift, "--shift", value_ignore=False).items():
        try:
            shifts[source] = int(d)
        except ValueError:
            raise UsageError(
                f"--shift {source}={d}: the shift must be an integer such as -1"
            ) from None
    maps: dict[int, int | None] = {}
    if "cityscapes" in args.map_value:  # the named table: Cityscapes labelId -> trainId
        from labelgate.contract import cityscapes_value_map

        maps.update(cityscapes_value_map())
        args.map_value = [m for m in args.map_value if m != "cityscapes"]
    pairs = parse_pairs(args.map_value, "--map-value", value_ignore=True)
    blank = pairs.pop("blank", None)  # multi-hot targets: what a blank becomes
    for raw, new in pairs.items():
        try:
            maps[int(raw)] = None if new == "ignore" else int(new)
        except ValueError:
            raise UsageError(f"--map-value {raw}={new}: expected integers, or V=ignore") from None
    if contract.model is not None:  # --model: the model's order, proven by the names
        contract, aligned = model_alignment(contract)
        maps.update({raw: new for raw, new in aligned.items() if raw not in maps})
    if (reader := _reader(args, contract)) is not None and reader.can(
        "files"
    ):  # fix writes the input's own files anew (masks)
        if len(args.paths) > 1:
            raise UsageError(
                f"fix writes the masks of one file or folder at a time, got {len(args.paths)} paths"
            )
        from labelgate.commands.fixmasks import fix_masks

        check_outputs({"--out/": args.out, "--log": args.log}, _inputs(args, contract))
        options = FixOptions(out=args.out, value_maps=maps)
        return _fix_done(args, fix_masks(args.paths[0], contract, options))
    from labelgate.commands.fixwitness import class_map_path, remap_table_path

    outputs = {"--quarantine": args.quarantine, "--log": args.log}
    if contract.predictions is not None:  # a proven remap's table goes beside --out
        outputs["--out's remap table"] = str(remap_table_path(args.out))
    outputs["--out's class map"] = str(class_map_path(args.out))  # where the input held the map
    data = {Path(p).resolve() for p in args.paths}
    if not args.in_place and Path(args.out).resolve() not in data:
        outputs["--out"] = args.out  # --out on the input itself: fix says to pass --in-place
    check_outputs(outputs, _inputs(args, contract))
    options = FixOptions(
        out=args.out,
        quarantine=args.quarantine,
        shifts=shifts,
        value_maps=maps,
        drop_ignored=args.drop_ignored,
        in_place=args.in_place,
        blank=None if blank is None else blank if blank == "ignore" else blank_policy(blank),
    )
    return _fix_done(args, fix(args.paths, contract, options))


def _reader(args: argparse.Namespace, contract: Any) -> Reader | None:
    """The reader of the command's paths: the one ``--input-format`` names, or the detected one;
    ``None`` for a packed input (stdin, ``.gz``, ``.zst``, ``.zip``), whose format is told once it
    is unpacked, and whose own files are never rewritten."""
    from labelgate.readers.manifest import packing
    from labelgate.readers.registry import choose

    if any(packing(p) for p in args.paths):
        return None
    return choose(args.paths, getattr(args, "input_format", "auto"), contract.task).reader


def _fix_done(args: argparse.Namespace, result: Any) -> int:
    from labelgate.render.fixlog import render_fix

    if args.log:
        import json

        write_output(args.log, json.dumps(result.to_dict(), indent=2) + "\n")
    sys.stdout.write(render_fix(result, args.format))
    settled = not any(s.pending for s in result.sources)
    passed = result.after is not None and not result.after.failed
    return EXIT_PASS if passed and settled else EXIT_FAIL


def _repro(args: argparse.Namespace) -> int:
    from labelgate.commands.bundle import make_bundle

    contract = _contract(args)
    check_outputs({"--out/": args.out}, _inputs(args, contract))
    extras = None
    if args.log or args.checkpoints:
        from labelgate.cli.crash import crash_extras

        extras = crash_extras(args, contract)
    bundle = make_bundle(args.paths, contract, args.out, crash=extras)
    if bundle is None:
        print("no batch fails: nothing to reproduce, nothing written")
        return EXIT_PASS
    batches = ", ".join(map(str, bundle.batches))
    print(
        f"wrote {bundle.path}: failing batches {batches}; replay with: python {bundle.path}/repro.py"
    )
    return EXIT_PASS


def _triage(args: argparse.Namespace) -> int:
    if args.data:
        from labelgate.cli.crash import triage_data

        return triage_data(args)
    from labelgate.commands.logs.triage import triage_stream
    from labelgate.render.triage import render_triage

    if args.log == "-":
        result = triage_stream(sys.stdin.buffer)
    else:
        from labelgate.io.files import open_regular

        with open_regular(args.log, "log", pipes=True) as stream:  # a device is refused
            result = triage_stream(stream)
    sys.stdout.write(render_triage(result, args.format))
    return EXIT_PASS if result.first_error is None else EXIT_FAIL


def _resume(args: argparse.Namespace) -> int:
    from labelgate.cli.crash import resume

    return resume(args)


def _diff(args: argparse.Namespace) -> int:
    from labelgate.api import build_contract
    from labelgate.commands.diff import diff

    head = _contract(args)
    if args.base_schema:  # the base's own contract, with the columns, K and ignore_index given
        shared = ("classes", "label_column", "id_column", "source_column", "name_column")
        options = {name: getattr(args, name) for name in (*shared, "ignore_index")}
        base = build_contract(args.base_schema, class_names=args.base_class_names, **options)
    else:
        base = build_contract(head, class_names=args.base_class_names)
    check_outputs(_report_outputs(args), _inputs(args, base, head))
    report = diff(
        [args.base],
        [args.head],
        base,
        head,
        threshold=args.share_threshold,
        max_examples=args.max_examples,
        strict=args.strict,
        cache=args.cache,
    )
    return _emit(report, args)


def _explain(args: argparse.Namespace) -> int:
    from labelgate.explain import explain

    sys.stdout.write(explain(args.code))
    return EXIT_PASS


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
    check_outputs({"--output": args.output}, _inputs(args, contract))
    if contract.label_column is None:
        raise UsageError(f"{args.schema}: name the label_column to export a schema")
    if args.target == "gx":
        from labelgate.engines.gx import suite_json

        text = json.dumps(suite_json(contract), indent=2) + "\n"
    else:
        from labelgate.engines.pandera import export_schema

        text = export_schema(contract).to_yaml() or ""
    if args.output:
        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_PASS


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "validate": _validate,
    "smoke": _smoke,
    "fix": _fix,
    "repro": _repro,
    "triage": _triage,
    "resume": _resume,
    "diff": _diff,
    "pin": _pin,
    "export": _export,
    "explain": _explain,
}
