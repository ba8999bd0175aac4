"""The Python API: ``labelgate.validate(paths, *, classes=..., engine=...)``, typed, as the CLI is.

The command line and Python callers build the contract the same way (:func:`build_contract`: a
contract file or object, with each given option overriding its field) and choose the engine here.
Importing this module stays light: the engines are imported when a validation runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

from labelgate.classmap import load_class_map
from labelgate.contract import Batching, Contract
from labelgate.errors import UsageError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from labelgate.report import Report

__all__ = ["CONTRACT_OPTIONS", "ENGINES", "ContractOptions", "build_contract", "validate"]

ENGINES = ("streaming", "pandera", "gx")


class ContractOptions(TypedDict, total=False):
    """The contract fields an option overrides: the CLI's flags of the same names."""

    classes: int | None
    task: str | None
    class_names: str | None
    ignore_index: int | None
    label_column: str | None
    id_column: str | None
    source_column: str | None
    name_column: str | None
    label_columns: str | Sequence[str] | None
    label_encoding: str | None
    batch_size: int | None
    drop_last: bool | None
    shuffle_seed: int | None


CONTRACT_OPTIONS: tuple[str, ...] = tuple(ContractOptions.__annotations__)


def build_contract(
    contract: Contract | str | None = None, **options: Unpack[ContractOptions]
) -> Contract:
    """The contract to apply: ``contract`` (an object, a YAML path, or none), each option given
    overriding its field.

    Raises:
        ContractError: the contract file or an option is not valid.
        ClassMapError: the class-name map cannot be read.
    """
    base = Contract.from_yaml(contract) if isinstance(contract, str) else contract or Contract()
    b = base.batching
    drop_last, seed = options.get("drop_last"), options.get("shuffle_seed")
    batching = Batching(
        size=options.get("batch_size") or b.size,
        drop_last=b.drop_last if drop_last is None else drop_last,
        shuffle_seed=b.shuffle_seed if seed is None else seed,
    )
    names = options.get("class_names")
    members = options.get("label_columns")
    if isinstance(members, str):
        members = [m.strip() for m in members.split(",") if m.strip()]
    return base.replace(
        label_columns=None if members is None else tuple(members),
        label_encoding=options.get("label_encoding"),
        num_classes=options.get("classes"),
        task=options.get("task"),
        label_column=options.get("label_column"),
        id_column=options.get("id_column"),
        source_column=options.get("source_column"),
        name_column=options.get("name_column"),
        class_map=load_class_map(names) if names else None,
        ignore_index=options.get("ignore_index"),
        batching=batching,
    )


def validate(
    paths: str | Sequence[str],
    contract: Contract | str | None = None,
    *,
    engine: str = "streaming",
    max_examples: int = 20,
    strict: bool = False,
    threads: int | None = None,
    dask: str | None = None,
    id_memory: int | None = None,
    gx_docs: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    input_format: str = "auto",
    background: int | None = None,
    source_field: str | None = None,
    **options: Unpack[ContractOptions],
) -> Report:
    """Validate label files.

    Args:
        paths: a file, directory or glob, or several, read as one logical file in sorted order.
        contract: a :class:`~labelgate.Contract`, or the path of a contract YAML file.
        engine: ``streaming`` (the default), ``pandera`` or ``gx``: the row-level checks run in
            that engine, every other check in labelgate; the verdict is the same.
        max_examples: offending rows listed per finding (0: all).
        strict: whether warnings fail the run.
        threads, dask: where the Parquet row groups are scanned (streaming engine only).
        id_memory: bytes the duplicate-id check may hold before it spills to temporary files
            (default 128 MB; streaming engine only).
        gx_docs: with ``engine="gx"``, a folder where GX builds its Data Docs.
        progress: called with (rows read, rows expected or ``None``) (streaming engine only).
        input_format: ``auto`` (detected), ``table``, ``coco``, ``yolo``, ``voc``,
            ``imagefolder`` or ``hf`` (streaming engine only; docs/formats.md).
        background: the detection background index, whose use as a label is LG032.
        source_field: for COCO, the image field used as each annotation's source (default: the
            file's name).
        options: ``classes``, ``task``, ``class_names``, ``ignore_index``, ``label_column``,
            ``id_column``, ``source_column``, ``name_column``, ``batch_size``, ``drop_last``,
            ``shuffle_seed`` (:class:`ContractOptions`): each overrides the contract's field, as
            the CLI's flag of the same name does.

    Returns:
        The report; ``report.failed`` says whether training should stop.

    Raises:
        UsageError: an option or the contract cannot be used.
        InputError: an input cannot be read.
    """
    if engine not in ENGINES:
        raise UsageError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if gx_docs is not None and engine != "gx":
        raise UsageError("--gx-docs needs --engine gx")
    if engine != "streaming" and input_format not in ("auto", "table"):
        raise UsageError(f"--input-format {input_format} runs the streaming engine")
    if engine != "streaming" and dask is not None:
        raise UsageError(f"--dask runs the streaming engine; the {engine} engine loads a frame")
    applied = build_contract(contract, **options)
    listed = [paths] if isinstance(paths, str) else list(paths)
    if engine == "gx":
        from labelgate.gx import validate_with_gx

        return validate_with_gx(
            listed, applied, max_examples=max_examples, strict=strict, docs=gx_docs
        )
    if engine == "pandera":
        from labelgate.pandera import validate_with_pandera

        return validate_with_pandera(listed, applied, max_examples=max_examples, strict=strict)
    from labelgate.validation import run

    done = run(
        listed,
        applied,
        max_examples=max_examples,
        strict=strict,
        progress=progress,
        threads=threads,
        dask=dask,
        id_memory=id_memory,
        input_format=input_format,
        background=background,
        source_field=source_field,
    )
    return done.report
