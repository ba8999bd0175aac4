"""The model's own class map: a Hugging Face ``config.json`` (``id2label``, ``label2id``,
``num_labels``, ``problem_type``), compared by name with the data's class map.

transformers' ``PretrainedConfig`` (``configuration_utils.py``) makes ``num_labels`` the length of
``id2label`` and, where only ``num_labels`` is given, fills ``id2label`` with ``LABEL_0``,
``LABEL_1``...: placeholders that were never named. ``problem_type`` decides the loss
(``loss/loss_utils.py``, ``ForSequenceClassificationLoss``): ``single_label_classification`` is
``CrossEntropyLoss``, ``multi_label_classification`` is ``BCEWithLogitsLoss``, ``regression`` is
``MSELoss``.

Real failures this finds: a ``config.json`` whose ``id2label`` was copied from another
checkpoint (transformers#10449); ``roberta-large-mnli``'s ``label2id`` ordering entailment and
contradiction the other way round from the dataset (optimum#197, which led to
``datasets.Dataset.align_labels_with_mapping``); 35 labels in the config against 36 in the
dataset (datasets#6446).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from json import JSONDecodeError
from pathlib import Path
from typing import Any

from labelgate.contract.bounds import LIMITS
from labelgate.contract.classmap import normalise_name
from labelgate.errors import InputError, LabelError, UsageError
from labelgate.io.bounded import load_json
from labelgate.io.files import read_small_text
from labelgate.training.heads import HeadSearch, find_head

__all__ = ["ModelMap", "ModelVerdict", "alignment", "compare", "load_model_map"]

PLACEHOLDER = re.compile(r"LABEL_(\d+)")
PROBLEMS = ("single_label_classification", "multi_label_classification", "regression")
MAX_LABELS = LIMITS["num_classes"][1]  # num_labels and every id2label index, bounded before use


@dataclass(frozen=True, slots=True)
class ModelMap:
    """What a model's config says of its classes.

    Attributes:
        origin: where it was read (a path, or ``model.config``).
        id2label: index -> name, in index order (empty for a checkpoint: it has no names).
        label2id: name -> index, as written (may disagree with ``id2label``).
        problem_type: the config's ``problem_type``, or ``None``.
        head: for a checkpoint, the classification head found (``labelgate.training.heads``):
            its name, the classes it predicts, whether its family counts a background class,
            why it was chosen and the other candidates.
    """

    origin: str
    id2label: tuple[tuple[int, str], ...]
    label2id: tuple[tuple[str, int], ...] = ()
    problem_type: str | None = None
    head: HeadSearch | None = None

    @property
    def num_labels(self) -> int:
        """The head's size: ``len(id2label)`` as transformers counts it, or the classes the
        checkpoint's head predicts."""
        return self.head.chosen.classes if self.head is not None else len(self.id2label)

    @property
    def placeholders(self) -> bool:
        """Whether every name is transformers' ``LABEL_i`` default (never named)."""
        return bool(self.id2label) and all(
            (m := PLACEHOLDER.fullmatch(name)) is not None and int(m[1]) == i
            for i, name in self.id2label
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, origin: str) -> ModelMap:
        """Read a config as a dict (``config.json``, or ``PretrainedConfig.to_dict()``).

        Raises:
            UsageError: ``id2label`` or ``label2id`` is not index -> name / name -> index.
        """
        raw = config.get("id2label")
        if raw is None:
            count = config.get("num_labels", 2)  # transformers' default head is of two labels
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or not 0 <= count <= MAX_LABELS
            ):
                raise UsageError(
                    f"{origin}: num_labels must be an integer from 0 to {MAX_LABELS:,}, got "
                    f"{_short(count)}"
                )
            raw = {str(i): f"LABEL_{i}" for i in range(count)}
        if not isinstance(raw, Mapping):
            raise UsageError(f"{origin}: id2label must be a mapping of index to name")
        if len(raw) > MAX_LABELS:
            raise UsageError(f"{origin}: id2label has more than {MAX_LABELS:,} entries")
        entries: list[tuple[int, str]] = []
        for key, name in raw.items():
            index = _index(key, origin, "id2label key")
            if not isinstance(name, str | int | float) or isinstance(name, bool):
                raise UsageError(
                    f"{origin}: id2label {index} is a {type(name).__name__}, not a name"
                )
            entries.append((index, str(name)))
        label2id_raw = config.get("label2id") or {}
        if not isinstance(label2id_raw, Mapping):
            raise UsageError(f"{origin}: label2id must be a mapping of name to index")
        label2id: list[tuple[str, int]] = []
        if len(label2id_raw) > MAX_LABELS:
            raise UsageError(f"{origin}: label2id has more than {MAX_LABELS:,} entries")
        for name, index in label2id_raw.items():
            label2id.append((str(name), _index(index, origin, "label2id value")))
        problem = config.get("problem_type")
        return cls(
            origin=origin,
            id2label=tuple(sorted(entries)),
            label2id=tuple(label2id),
            problem_type=problem if isinstance(problem, str) else None,
        )


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _index(value: object, origin: str, what: str) -> int:
    """A class index of a config (an int, or its decimal string), within ``[0, MAX_LABELS)``.

    Raises:
        UsageError: naming the value, cut to 40 characters.
    """
    index: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        index = value
    elif isinstance(value, str) and value.strip().lstrip("-").isdecimal() and len(value) < 20:
        index = int(value)
    if index is None or not 0 <= index < MAX_LABELS:
        raise UsageError(
            f"{origin}: {what} {_short(value)} is not an index from 0 to {MAX_LABELS - 1:,}"
        )
    return index


CHECKPOINTS = (".pt", ".pth", ".bin", ".ckpt", ".safetensors")


def load_model_map(path: str | Path, *, head: str | None = None) -> ModelMap:
    """Read a Hugging Face model folder's ``config.json``, that file itself, or a checkpoint's
    classification head (``.pt``/``.pth``/``.bin``, Lightning's ``.ckpt``, ``.safetensors``:
    read without running code, ``labelgate.training.checkpoints``).

    Args:
        path: the folder, config or checkpoint.
        head: a checkpoint's head prefix, overriding the search.

    Raises:
        InputError: the path holds no ``config.json``, it is not JSON, or the checkpoint cannot
            be read.
        UsageError: its class map cannot be read, or no layer of the checkpoint can be a head.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("model not found", path=str(p))
    if p.is_file() and p.suffix.lower() in CHECKPOINTS:
        return _checkpoint_map(p, head)
    config = p / "config.json" if p.is_dir() else p
    if p.is_dir() and not config.exists():
        raise InputError("a model folder without config.json", path=str(p))
    if config.suffix.lower() != ".json":
        raise InputError(
            "--model takes a Hugging Face model folder or its config.json, or a checkpoint "
            "(.pt, .pth, .bin, .ckpt, .safetensors)",
            path=str(p),
        )
    text = read_small_text(config, "model config", within=p if p.is_dir() else None)
    try:
        data = load_json(text, str(config))  # nesting and values bounded before parsing
    except JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} (line {exc.lineno})", path=str(config)
        ) from None
    if not isinstance(data, dict):
        raise InputError("a model config is a JSON object", path=str(config))
    return ModelMap.from_config(data, origin=str(config))


def _checkpoint_map(path: Path, head: str | None) -> ModelMap:
    """A checkpoint's head, found from its parameter shapes (no code run, no names)."""
    from labelgate.training.checkpoints import Checkpoint, read_checkpoint

    kind = "safetensors" if path.suffix.lower() == ".safetensors" else "torch"
    contents = read_checkpoint(Checkpoint(str(path), kind, None, None, (str(path),)))
    if not contents.shapes:
        why = "; ".join(contents.problems) or "no model parameters in it"
        raise InputError(f"cannot read the checkpoint's head: {why}", path=str(path))
    try:
        search = find_head(contents.shapes, head=head)
    except LabelError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return ModelMap(origin=str(path), id2label=(), head=search)


@dataclass(frozen=True, slots=True)
class ModelVerdict:
    """The model's map against the data's.

    Attributes:
        errors: what makes the head's outputs mean other classes than the labels (or crash).
        warnings: what is worth fixing but trains as intended (placeholder names).
        remap: data index -> model index that aligns them, where the names say it.
    """

    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    remap: Mapping[int, int]


def _names(pairs: Mapping[int, str], indices: list[int]) -> str:
    shown = ", ".join(f"{i} {pairs[i]!r}" for i in indices[:8])
    return shown + (f" and {len(indices) - 8} more" if len(indices) > 8 else "")


def compare(
    model: ModelMap, *, k: int | None, names: Mapping[int, str] | None, task: str
) -> ModelVerdict:
    """Compare the model's class map with the data's K, class names and task.

    Args:
        model: the model's map.
        k: the data's K, where known.
        names: the data's index -> name, where it has names.
        task: the data's task (``multiclass``, ``multilabel``, ``tokens``...).
    """
    errors: list[str] = []
    warnings: list[str] = []
    remap: dict[int, int] = {}
    ours = dict(model.id2label)
    for name, index in model.label2id:
        if ours.get(index) != name:
            errors.append(
                f"the model's label2id says {name!r} is {index}, its id2label says {index} is "
                f"{ours.get(index)!r}: the config contradicts itself"
            )
            break
    if model.head is not None:
        return _judge_head(model.head, k)
    if k is not None and model.num_labels != k:
        errors.append(
            f"the model has {model.num_labels} labels (id2label), the data K={k}: the head's "
            "outputs cannot be the data's classes"
        )
    problem = model.problem_type
    if problem == "multi_label_classification" and task != "multilabel":
        errors.append(
            f"problem_type multi_label_classification (BCEWithLogitsLoss, K values per row) for "
            f"{task} data (one class index per row)"
        )
    elif problem == "single_label_classification" and task == "multilabel":
        errors.append(
            "problem_type single_label_classification (CrossEntropyLoss, one index per row) for "
            "multilabel data"
        )
    elif problem == "regression":
        errors.append(f"problem_type regression (MSELoss) for {task} class labels")
    if names is None:
        return ModelVerdict(tuple(errors), tuple(warnings), remap)
    if model.placeholders:
        warnings.append(
            f"the model's id2label is transformers' placeholders LABEL_0..LABEL_{model.num_labels - 1}: "
            "never named; set id2label/label2id from the data's class map so predictions name classes"
        )
        return ModelVerdict(tuple(errors), tuple(warnings), remap)
    by_name = {normalise_name(n): i for i, n in model.id2label}
    data_by_name = {normalise_name(n): i for i, n in names.items()}
    moved = {
        i: by_name[normalise_name(n)] for i, n in names.items() if normalise_name(n) in by_name
    }
    missing = sorted(i for i, n in names.items() if normalise_name(n) not in by_name)
    extra = sorted(j for j, n in model.id2label if normalise_name(n) not in data_by_name)
    swapped = sorted(i for i, j in moved.items() if i != j)
    if swapped:
        pairs = ", ".join(f"{names[i]!r} {i} -> {moved[i]}" for i in swapped[:8])
        errors.append(
            f"{len(swapped)} classes at another index in the model than in the data ({pairs}): "
            "the loss trains each on another class's output"
        )
        if not missing:
            remap = {i: moved[i] for i in sorted(moved)}
    renamed = [i for i in missing if i in ours and i in extra]
    if renamed:
        shown = ", ".join(f"{i}: data {names[i]!r}, model {ours[i]!r}" for i in renamed[:8])
        errors.append(f"{len(renamed)} classes named otherwise in the model ({shown})")
    gone = [i for i in missing if i not in renamed]
    if gone:
        errors.append(f"{len(gone)} data classes the model lacks: {_names(names, gone)}")
    added = [j for j in extra if j not in renamed]
    if added:
        errors.append(f"{len(added)} model classes the data lacks: {_names(ours, added)}")
    return ModelVerdict(tuple(errors), tuple(warnings), remap)


def _judge_head(search: HeadSearch, k: int | None) -> ModelVerdict:
    """A checkpoint's head against K: a family whose ``num_classes`` counts the background
    (torchvision detection) fits K or K+1."""
    chosen = search.chosen
    others = [c.name for c in search.candidates if c.name != chosen.name]
    seen = f" (other candidates: {', '.join(others[:6])})" if others else ""
    told = f"head {chosen.name!r} ({chosen.family}: {search.why}{seen})"
    if k is None or chosen.classes == k or (chosen.background and chosen.classes == k + 1):
        return ModelVerdict((), (), {})
    counted = (
        f"{chosen.outputs} outputs for {chosen.outputs // chosen.classes} anchors, "
        if (chosen.outputs != chosen.classes)
        else ""
    )
    background = "; one of them is the background" if chosen.background else ""
    return ModelVerdict(
        (
            f"the checkpoint's {told} predicts {counted}{chosen.classes} classes{background}, the "
            f"data K={k}: load_state_dict fails with 'size mismatch', or a rebuilt head loses "
            "the trained one",
        ),
        (),
        {},
    )


def alignment(
    model: ModelMap, names: Mapping[int, str], *, k: int | None, task: str
) -> dict[int, int]:
    """The remap data label -> model label that ``labelgate fix --model`` applies: only where
    the names say it, every data class found in the model and nothing else amiss.

    Raises:
        UsageError: the model has no names (a checkpoint, placeholders), or the maps differ in
            more than the order of the same names.
    """
    if model.head is not None or model.placeholders:
        raise UsageError(
            f"{model.origin}: the model names no classes, so nothing says which data label is "
            "which of its outputs"
        )
    verdict = compare(model, k=k, names=names, task=task)
    if not verdict.remap:
        if verdict.errors:
            raise UsageError(f"{model.origin}: cannot align by name: {verdict.errors[0]}")
        return {}
    return {i: j for i, j in verdict.remap.items() if i != j}
