"""The Python API: ``labelgate.validate(data, *, classes=..., engine=...)``, typed, as the CLI is.

``data`` is paths, or the data already in memory (a DataFrame, an Arrow table, an array of
targets, a Hugging Face or PyTorch Dataset: ``labelgate.inputs.memory``). The report it returns
shows itself in a notebook and saves itself in any report format (``ValidationReport``).

The command line and Python callers build the contract the same way (``build_contract``: a
contract file or object, with each given option overriding its field) and choose the engine here.
Importing this module stays light: the engines are imported when a validation runs.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypedDict

from labelgate.contract import Batching, Contract
from labelgate.contract.classmap import load_class_map
from labelgate.core.options import refuse_unknown
from labelgate.core.report import Report
from labelgate.errors import UsageError
from labelgate.render.hints import complete_commands

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from labelgate.contract.modelmap import ModelMap
    from labelgate.inputs.memory import InMemory

__all__ = [
    "CONTRACT_OPTIONS",
    "ENGINES",
    "ContractOptions",
    "ValidationReport",
    "build_contract",
    "validate",
]

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
    world_size: int | None
    grad_accum: int | None
    sampler_drop_last: bool | None
    normalize: str | None
    model: str | ModelMap | None
    images: str | None
    framework: str | None
    reduce_zero_label: bool | None
    predictions: str | None


CONTRACT_OPTIONS: tuple[str, ...] = tuple(ContractOptions.__annotations__)


def build_contract(
    contract: Contract | str | None = None, **options: Unpack[ContractOptions]
) -> Contract:
    """The contract to apply: ``contract`` (an object, a YAML path, or none), each option given
    overriding its field.

    Raises:
        OptionError: an option's name is not known (with the closest one).
        ContractError: the contract file or an option is not valid.
        ClassMapError: the class-name map cannot be read.
    """
    refuse_unknown(options, CONTRACT_OPTIONS, where="build_contract")
    base = Contract.from_yaml(contract) if isinstance(contract, str) else contract or Contract()
    b = base.batching
    drop_last, seed = options.get("drop_last"), options.get("shuffle_seed")
    sampler_drop_last = options.get("sampler_drop_last")
    batching = Batching(
        size=options.get("batch_size") or b.size,
        drop_last=b.drop_last if drop_last is None else drop_last,
        shuffle_seed=b.shuffle_seed if seed is None else seed,
        world_size=options.get("world_size") or b.world_size,
        grad_accum=options.get("grad_accum") or b.grad_accum,
        sampler_drop_last=b.sampler_drop_last if sampler_drop_last is None else sampler_drop_last,
        normalize=options.get("normalize") or b.normalize,
    )
    model = options.get("model")
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
        model=_model_map(model),
        images=options.get("images"),
        framework=options.get("framework"),
        reduce_zero_label=options.get("reduce_zero_label"),
        predictions=options.get("predictions"),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class ValidationReport(Report):
    """A ``labelgate.Report`` that shows itself in a notebook and saves itself.

    ``passed``, ``raise_for_errors()``, ``to_dict()`` and ``to_json()`` come from Report.
    """

    def save(self, path: str | Path, format: str | None = None) -> Path:
        """Write the report to ``path`` (atomically) in ``format``: ``text``, ``json``, ``junit``,
        ``github``, ``markdown`` or ``html`` (default: from the suffix; ``.json``, ``.xml``,
        ``.md``, ``.html``, else text).

        Raises:
            UsageError: the format is unknown, the folder cannot be written, or ``path`` is a file
                the report read (its data or its class map): it would be overwritten.
        """
        from labelgate.io.files import check_outputs, write_output
        from labelgate.render import FORMATS, render

        target = Path(path)
        suffixes = {".json": "json", ".xml": "junit", ".md": "markdown", ".html": "html"}
        fmt = format or suffixes.get(target.suffix.lower(), "text")
        if fmt not in FORMATS:
            raise UsageError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        read = [f.get("path") for f in self.input.get("files", []) if isinstance(f, dict)]
        names = self.contract.get("class_names") if isinstance(self.contract, dict) else None
        origin = names.get("origin") if isinstance(names, dict) else None
        check_outputs({"path": str(target)}, [*read, origin if isinstance(origin, str) else None])
        write_output(str(target), render(self, fmt))
        return target

    def _repr_html_(self) -> str:
        """The ``--format html`` page's body, inline: a notebook shows it in the cell (the page's
        Content-Security-Policy meta tag is a document's, not a cell's)."""
        import re

        from labelgate.render import render
        from labelgate.render.html import STYLE

        page = render(self, "html")
        body = page[page.index("<body>") + len("<body>") : page.rindex("</body>")]
        # the page's style, scoped to the report: it must not restyle the notebook around it
        scoped = re.sub(
            r"(^|})([^{}]+){",
            lambda m: (
                m[1]
                + ",".join(
                    ".labelgate-report" if s.strip() == "body" else f".labelgate-report {s.strip()}"
                    for s in m[2].split(",")
                )
                + "{"
            ),
            STYLE.strip(),
        )
        return f'<div class="labelgate-report"><style>{scoped}</style>{body}</div>'

    def _repr_markdown_(self) -> str:
        from labelgate.render import render

        return render(self, "markdown")

    def __repr__(self) -> str:
        counts = self.counts
        codes = ", ".join(f"{f.code} {f.severity}" for f in self.findings[:5])
        return (
            f"<labelgate report: {self.status}, {counts.get('rows', 0)} rows"
            + (f"; {codes}" if codes else "")
            + (" ..." if len(self.findings) > 5 else "")
            + ">"
        )


def _as_validation_report(report: Report, all_batches: bool = False) -> ValidationReport:
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
    return ValidationReport(**fields | {"all_batches": all_batches})


def validate(
    data: str | Sequence[str] | Any,
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
    target_getter: Callable[[Any], Any] | None = None,
    tokenizer: str | None = None,
    max_length: int | None = None,
    cache: str | None = None,
    all_batches: bool = False,
    **options: Unpack[ContractOptions],
) -> ValidationReport:
    """Validate label files, or the labels already in memory.

    Args:
        data: a file, directory or glob, or several, read as one logical file in sorted order;
            or a pandas or polars DataFrame, a pyarrow Table or RecordBatchReader, a numpy array
            or torch tensor of targets, a ``datasets.Dataset`` (its ClassLabel names are the
            class map, and K their count unless ``classes`` is given), or a PyTorch Dataset with
            ``.targets`` (torchvision) or read through ``target_getter`` (docs/python.md).
        contract: a ``labelgate.Contract``, or the path of a contract YAML file.
        engine: ``streaming`` (the default), ``pandera`` or ``gx``: the row-level checks run in
            that engine, every other check in labelgate; the verdict is the same.
        max_examples: offending rows listed per finding (0: all).
        strict: whether warnings fail the run.
        threads: threads scanning Parquet row groups (streaming engine only).
        dask: a Dask cluster to scan them on (Parquet row groups, masks, a detection input's
            images), ``local[N]`` or a scheduler's address (streaming engine only).
        id_memory: bytes the duplicate-id check may hold before it spills to temporary files
            (default 128 MB; streaming engine only).
        gx_docs: with ``engine="gx"``, a folder where GX builds its Data Docs.
        progress: called with (rows read, rows expected or ``None``) (streaming engine only).
        input_format: ``auto`` (detected), ``table``, ``coco``, ``yolo``, ``voc``,
            ``imagefolder`` or ``hf`` (streaming engine only; docs/formats.md).
        background: the detection background index, whose use as a label is LG032.
        source_field: for COCO, the image field used as each annotation's source (default: the
            file's name).
        target_getter: for a PyTorch Dataset without ``.targets``: a function of one item
            returning its target (``lambda item: item[1]``).
        tokenizer: for supervised fine-tuning data (``prompt`` and ``completion`` columns): a
            ``tokenizer.json`` or its folder; the rows are judged as the targets a causal LM's
            loss sees after completion-only masking, truncation at ``max_length`` and the shift
            (``labelgate.inputs.sft``), K the vocabulary's size unless ``classes`` is given.
        max_length: with ``tokenizer``, the trainer's ``max_length``.
        cache: a folder keeping each Parquet file's partial result under a key of its bytes and
            of the contract, so that a re-run reads only the files that changed (streaming
            engine only; docs/ci-gate.md).
        all_batches: whether ``to_dict()``, ``to_json()`` and ``save()`` list every batch of
            each batch list (``--all-batches``), not the first 1000 with their counts
            (docs/report.md); the report's own ``batches`` and ``findings`` hold every one.
        options: ``classes``, ``task``, ``class_names``, ``ignore_index``, ``label_column``,
            ``id_column``, ``source_column``, ``name_column``, ``batch_size``, ``drop_last``,
            ``shuffle_seed``, ``world_size``, ``grad_accum``, ``sampler_drop_last``,
            ``normalize``, ``model`` (a Hugging Face model folder or config.json, or a
            ``labelgate.contract.modelmap.ModelMap``), ``framework`` (``torchvision``,
            ``detectron2``, ``mmdet``, ``ultralytics``, ``mmseg``: docs/frameworks.md),
            ``reduce_zero_label`` (with mmseg), ``predictions`` (a model's predictions on the
            same rows, judged per source: LG049, docs/witness.md) (``ContractOptions``): each overrides the contract's field, as
            the CLI's flag of the same name does.

    Returns:
        The report; ``report.passed`` says whether training may start, and
        ``report.raise_for_errors()`` stops it with the first findings named.

    Raises:
        OptionError: an option's name is not known, naming the closest one (``batchsize=8``:
            did you mean ``batch_size``?); a ``UsageError`` and a ``TypeError``.
        UsageError: an option or the contract cannot be used.
        InputError: an input cannot be read.
    """
    refuse_unknown(options, (*CONTRACT_OPTIONS, *VALIDATE_KEYWORDS), where="labelgate.validate")
    if engine not in ENGINES:
        raise UsageError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if gx_docs is not None and engine != "gx":
        raise UsageError("--gx-docs needs --engine gx")
    if engine != "streaming" and input_format not in ("auto", "table"):
        raise UsageError(f"--input-format {input_format} runs the streaming engine")
    if engine != "streaming" and dask is not None:
        raise UsageError(f"--dask runs the streaming engine; the {engine} engine loads a frame")
    if engine != "streaming" and cache is not None:
        raise UsageError(f"--cache runs the streaming engine; the {engine} engine loads a frame")
    applied = build_contract(contract, **options)
    settings: dict[str, Any] = {
        "max_examples": max_examples,
        "strict": strict,
        "progress": progress,
        "threads": threads,
        "dask": dask,
        "id_memory": id_memory,
        "input_format": input_format,
        "background": background,
        "source_field": source_field,
        "cache": cache,
    }
    from labelgate.inputs.memory import as_table, is_in_memory

    if tokenizer is not None or max_length is not None:
        sft = _sft(data, applied, settings, tokenizer, max_length)
        return dataclasses.replace(sft, all_batches=all_batches)
    if not is_in_memory(data):
        if target_getter is not None:
            raise UsageError("target_getter= reads a Dataset in memory, not files")
        listed = [data] if isinstance(data, str) else list(data)
        report = _run(listed, applied, engine, gx_docs, settings)
        report = complete_commands(report, listed, input_format=input_format)
        return _as_validation_report(report, all_batches)
    if engine != "streaming":
        raise UsageError(
            f"the {engine} engine reads files; data in memory runs the streaming engine"
        )
    from labelgate.io.sources import held

    found = as_table(data, target_getter=target_getter)
    settings["found"] = _found_in(found)
    report = _run([held(found.table, found.given_as)], applied, engine, gx_docs, settings)
    report = complete_commands(report, ["PATH"])  # the data lives in memory: the user names it
    return _as_validation_report(report, all_batches)


# validate's own keywords, named as the closest match when an option is misspelt
VALIDATE_KEYWORDS: tuple[str, ...] = tuple(
    name for name in inspect.signature(validate).parameters if name not in ("data", "options")
)


def _sft(
    data: Any,
    applied: Contract,
    settings: dict[str, Any],
    tokenizer: str | None,
    max_length: int | None,
) -> ValidationReport:
    """Prompt-completion data judged as the targets the loss will see (``inputs.sft``)."""
    from labelgate.inputs.memory import as_table, is_in_memory
    from labelgate.inputs.sft import completion_targets
    from labelgate.io.sources import held

    if tokenizer is None or max_length is None:
        raise UsageError("--tokenizer and --max-length go together")
    if is_in_memory(data):
        raise UsageError("--tokenizer reads files of prompt and completion columns")
    listed = [data] if isinstance(data, str) else list(data)
    targets = completion_targets(listed, tokenizer, max_length, id_column=applied.id_column)
    has_id = "id" in targets.table.column_names
    # a vocabulary's tokens are not classes a dataset must show: LG012 off unless asked for
    severity = MappingProxyType({"LG012": "off", **applied.severity})
    applied = applied.replace(
        num_classes=applied.num_classes or targets.vocab,
        severity=severity,
        task="tokens",
        label_column="labels",
        id_column="id" if has_id else None,
    )
    found = as_table(targets.table)
    settings["found"] = _found_in(found)
    report = _run([held(found.table, found.given_as)], applied, "streaming", None, settings)
    noted = dataclasses.replace(report, notes=(*report.notes, targets.note(max_length)))
    return _as_validation_report(complete_commands(noted, listed))


def _found_in(held: InMemory) -> list[tuple[str, Any, str]]:
    """What the in-memory object says of itself (its label column, class names and task), each
    with its origin, for the run's resolution (what was given stands)."""
    origin = f"the {held.given_as}"
    found: list[tuple[str, Any, str]] = [
        ("label_column", held.label_column, origin),
        ("task", held.task, origin),
    ]
    if held.class_map is not None:
        found.append(("class_map", held.class_map, f"{origin} ({held.class_map.origin})"))
        found.append(("num_classes", len(held.class_map.entries), f"{origin}'s class names"))
    return found


def _run(
    listed: list[Any], applied: Contract, engine: str, gx_docs: str | None, settings: dict[str, Any]
) -> Report:
    if engine == "gx":
        from labelgate.engines.gx import validate_with_gx

        return validate_with_gx(
            listed,
            applied,
            max_examples=settings["max_examples"],
            strict=settings["strict"],
            docs=gx_docs,
        )
    if engine == "pandera":
        from labelgate.engines.pandera import validate_with_pandera

        return validate_with_pandera(
            listed, applied, max_examples=settings["max_examples"], strict=settings["strict"]
        )
    from labelgate.run.validation import run

    with run(listed, applied, **settings) as done:
        return done.report


def _model_map(model: str | ModelMap | None) -> ModelMap | None:
    """The model map an option names (a folder or config.json), read where one is given: its
    module (the head search) loads only then."""
    if not isinstance(model, str):
        return model
    from labelgate.contract.modelmap import load_model_map

    return load_model_map(model)
