"""The data already in memory, as an Arrow table the validation reads by reference.

``labelgate.validate(data, classes=K)`` takes what an ML engineer holds: a pandas or polars
DataFrame, a pyarrow Table or RecordBatchReader, a numpy array, torch tensor or Python list of
targets, a Hugging Face ``datasets.Dataset`` (its ``ClassLabel`` names are the class map), or a PyTorch
``Dataset`` exposing ``.targets`` (torchvision's convention) or read through ``target_getter``, or
a dict of columns.
Each becomes one Arrow table: zero-copy where Arrow allows it (pyarrow, polars, a Hugging Face
dataset's own table, numeric numpy and CPU tensors), one conversion otherwise (pandas object
columns, a Python loop over a Dataset), and never a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from labelgate.contract.classmap import ClassMap
from labelgate.errors import UsageError

__all__ = ["InMemory", "as_table", "is_in_memory"]


@dataclass(frozen=True, slots=True)
class InMemory:
    """Data in memory, as Arrow.

    Attributes:
        table: the rows (a ``pyarrow.Table``).
        given_as: what it was (``pandas.DataFrame``, ``numpy.ndarray``...), for the report.
        label_column: the label column, where the object says which it is.
        class_map: the class names the object carries (a ClassLabel, a Dataset's ``classes``).
        task: ``tokens`` for a sequence of ClassLabel (token classification), else ``None``.
    """

    table: Any
    given_as: str
    label_column: str | None = None
    class_map: ClassMap | None = None
    task: str | None = None


def is_in_memory(data: object) -> bool:
    """Whether ``data`` is an object to validate in memory, not paths."""
    if isinstance(data, (str, bytes)):
        return False
    return not (isinstance(data, (list, tuple)) and all(isinstance(p, str) for p in data))


def _kind(data: object) -> str:
    t = type(data)
    return f"{t.__module__.split('.')[0]}.{t.__name__}"


def as_table(data: Any, *, target_getter: Callable[[Any], Any] | None = None) -> InMemory:
    """``data`` as an Arrow table (by reference where Arrow allows).

    Raises:
        UsageError: the object is none of the kinds above, a Dataset has neither ``targets``
            nor a ``target_getter``, or its values cannot become Arrow (a column of mixed types,
            complex or object targets, columns of different lengths): checked here, so that no
            pyarrow or torch exception reaches the caller.
    """
    import pyarrow as pa

    try:
        return _as_table(data, target_getter)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(
            f"cannot read a {_kind(data)} as a table ({type(exc).__name__}): " + _why_not(data)
        ) from None


def _as_table(data: Any, target_getter: Callable[[Any], Any] | None) -> InMemory:
    import pyarrow as pa

    kind = _kind(data)
    if isinstance(data, pa.Table):
        return InMemory(data, "pyarrow.Table")
    if isinstance(data, pa.RecordBatchReader):
        return InMemory(data.read_all(), "pyarrow.RecordBatchReader")
    if isinstance(data, pa.RecordBatch):
        return InMemory(pa.Table.from_batches([data]), "pyarrow.RecordBatch")
    if kind == "pandas.DataFrame":
        return InMemory(pa.Table.from_pandas(data, preserve_index=False), kind)
    if kind.startswith("polars.") and hasattr(data, "to_arrow"):
        return InMemory(data.to_arrow(), "polars.DataFrame")
    if kind == "datasets.Dataset":
        return _hf(data)
    if isinstance(data, Mapping):  # columns by name: {"label": [...], "id": [...]}
        _same_lengths(data)
        return InMemory(pa.table({str(k): v for k, v in data.items()}), "dict of columns")
    if kind == "numpy.ndarray" or kind == "torch.Tensor":
        return InMemory(_targets_table(data), kind)
    if isinstance(data, (list, tuple)):  # one target per item (a list of paths is read above)
        return InMemory(_list_table(data), f"{type(data).__name__} of targets")
    if hasattr(data, "__getitem__") and hasattr(data, "__len__"):
        return _torch_dataset(data, kind, target_getter)
    raise UsageError(
        f"cannot validate a {kind}: pass paths, a pandas or polars DataFrame, a pyarrow Table, a "
        "numpy array, torch tensor or list of targets, a datasets.Dataset, or a Dataset with .targets "
        "(or target_getter=)"
    )


def _targets_table(targets: Any) -> Any:
    """A 1-D array of targets as a ``label`` column (2-D: one list of K values per row)."""
    import numpy as np
    import pyarrow as pa

    if type(targets).__module__.startswith("torch"):
        targets = _tensor_numpy(targets)
    array = np.asarray(targets)
    if array.dtype.kind not in "biufUSO":
        raise UsageError(
            f"targets of dtype {array.dtype}: class targets are integers (or floats, strings "
            "and booleans, which the checks report)"
        )
    if array.ndim == 1:
        return pa.table({"label": pa.array(array)})
    if array.ndim == 2:
        flat = pa.array(np.ascontiguousarray(array).reshape(-1))
        return pa.table({"label": pa.FixedSizeListArray.from_arrays(flat, array.shape[1])})
    raise UsageError(
        f"targets of {array.ndim} dimensions: give one label (or one row of K) per item"
    )


def _list_table(items: list[Any] | tuple[Any, ...]) -> Any:
    """Python targets as a ``label`` column: ints, or lists of them per row (tokens, multi-label);
    numpy scalars and tensors as the array they stack into."""
    import pyarrow as pa

    if items and type(items[0]).__module__.split(".")[0] in ("numpy", "torch"):
        return _targets_table(_stacked(list(items)))
    return pa.table({"label": pa.array(list(items))})


def _tensor_numpy(tensor: Any) -> Any:
    """A tensor's values as numpy (a CPU tensor's view: no copy). bfloat16, which numpy lacks,
    becomes float32 exactly, so the checks judge its values (float targets are LG026/LG002).

    Raises:
        UsageError: a dtype numpy cannot hold (complex32, float8, quantized).
    """
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.to(torch.float32)
    try:
        return tensor.numpy()
    except TypeError:
        raise UsageError(
            f"targets of dtype {tensor.dtype}: class targets are an integer tensor"
        ) from None


def _same_lengths(columns: Mapping[Any, Any]) -> None:
    """Refuse a dict of columns of different lengths, naming each length.

    Raises:
        UsageError: the lengths differ.
    """
    lengths: dict[str, int] = {}
    for name, values in columns.items():
        try:
            lengths[str(name)] = len(values)
        except TypeError:
            raise UsageError(f"column {str(name)!r} is not a sequence of values") from None
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{n!r}: {k}" for n, k in list(lengths.items())[:10])
        raise UsageError(f"the columns differ in length ({shown}): give one value per row")


def _why_not(data: Any) -> str:
    """Which column holds values Arrow cannot take as one type, and of which types (never the
    values themselves)."""
    columns: list[tuple[str, Any]] = []
    if _kind(data) == "pandas.DataFrame":
        columns = [(str(c), data[c]) for c in data.columns]
    elif isinstance(data, Mapping):
        columns = [(str(c), v) for c, v in data.items()]
    elif _kind(data) == "numpy.ndarray":
        columns = [("label", data.reshape(-1))]
    elif isinstance(data, (list, tuple)):
        columns = [("label", data)]
    import pyarrow as pa

    for name, values in columns:
        try:
            pa.array(values, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            types = sorted({type(v).__name__ for v in list(values)[:100_000]})
            return f"column {name!r} holds values of {len(types)} types ({', '.join(types[:6])})"
    return "its values are of no type Arrow holds (complex numbers, Python objects)"


def _hf(ds: Any) -> InMemory:
    """A Hugging Face Dataset: its Arrow table as it is; a ClassLabel's names as the class map."""
    features = ds.features
    label = None
    names: list[str] | None = None
    task = None
    for column in ("label", "labels", "ner_tags", "target"):
        if column in features:
            label = column
            break
    if label is None:  # the one ClassLabel column, wherever it is
        found = [c for c, f in features.items() if _class_names(f) is not None]
        label = found[0] if len(found) == 1 else None
    if label is not None:
        feature = features[label]
        names = _class_names(feature)
        if names is None and hasattr(feature, "feature"):  # Sequence(ClassLabel): tokens
            names = _class_names(feature.feature)
            task = "tokens" if names is not None else None
        elif type(feature).__name__ in ("Sequence", "List") or isinstance(feature, list):
            task = "tokens"
    table = ds.data.table if hasattr(ds.data, "table") else ds.data
    if getattr(ds, "_indices", None) is not None:  # a shuffled or selected view: its rows only
        table = ds.with_format("arrow")[:]
    class_map = ClassMap.from_names(names, origin="datasets ClassLabel") if names else None
    return InMemory(table, "datasets.Dataset", label, class_map, task)


def _class_names(feature: Any) -> list[str] | None:
    if type(feature).__name__ == "ClassLabel":
        return list(feature.names)
    return None


def _torch_dataset(ds: Any, kind: str, target_getter: Callable[[Any], Any] | None) -> InMemory:
    """A PyTorch Dataset: its ``targets`` (torchvision's convention), or ``target_getter`` applied
    to each item; ``classes`` (torchvision) as the class map."""
    classes = getattr(ds, "classes", None)
    class_map = (
        ClassMap.from_names([str(c) for c in classes], origin=f"{kind}.classes")
        if isinstance(classes, (list, tuple)) and classes
        else None
    )
    if target_getter is not None:
        targets = [target_getter(ds[i]) for i in range(len(ds))]
        return InMemory(_targets_table(_stacked(targets)), kind, class_map=class_map)
    if hasattr(ds, "targets"):
        return InMemory(_targets_table(ds.targets), kind, class_map=class_map)
    raise UsageError(
        f"a {kind} has no .targets: pass target_getter=, a function of one item returning its "
        "target (for (image, label) items: lambda item: item[1])"
    )


def _stacked(targets: list[Any]) -> Any:
    import numpy as np

    if targets and type(targets[0]).__module__.startswith("torch"):
        return np.asarray([t.item() if t.ndim == 0 else t.tolist() for t in targets])
    return np.asarray(targets)
