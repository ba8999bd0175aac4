"""An ultralytics dataset YAML given as the path (``labelgate validate data.yaml``): its splits
resolved as ultralytics resolves them, each split a source.

From ``check_det_dataset`` (``ultralytics/data/utils.py``, ultralytics 8.4.190):

- lines 55-63, 751-754: ``path`` is a string; ``train``, ``val``, ``test`` a string or a list of
  them; ``names`` a list or a dict;
- lines 756-763: ``train`` and ``val`` are required; a ``validation`` key is renamed ``val``;
- lines 768-783: ``names`` or ``nc`` is required; with both, their counts must match; ``nc``
  alone names the classes ``class_0``, ``class_1``...; ``check_class_names``
  (``ultralytics/nn/autobackend.py:56-60``) turns a list into ``{index: name}``;
- lines 789-791: the dataset root is ``path``, else the YAML's folder; a relative root that does
  not exist from the working directory is looked up under the ``datasets_dir`` setting;
- lines 795-803: each split is joined to the root; a string starting with ``../`` that does not
  exist so is tried without it (Roboflow writes ``train: ../train/images`` in the YAML inside
  the root); the folders of a list are joined as they are;
- lines 806-817: a ``val`` that does not exist stops the run (FileNotFoundError), unless a
  ``download`` is declared.

An images folder's labels are where ``img2label_paths`` (lines 134-146) puts them: its last
``images`` folder replaced by ``labels``; a text file lists images, ``./`` relative to itself
(``ultralytics/data/base.py:211-215``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelgate.contract.classmap import ClassMap, load_class_map
from labelgate.errors import ClassMapError, InputError
from labelgate.readers.common.roots import Split

__all__ = ["CITED", "DataYaml", "data_yaml", "read_data_yaml"]

CITED = "ultralytics/data/utils.py:789-803@ultralytics 8.4.190"
_KEYS = ("train", "val", "test", "minival")  # the splits check_det_dataset resolves (line 795)


@dataclass(frozen=True, slots=True)
class DataYaml:
    """A dataset YAML resolved.

    Attributes:
        path: the YAML.
        root: the dataset root its splits are joined to.
        splits: each split (``train``, ``val``...): name = its key, path = its labels folder (or
            the text file listing its images), images = its images folder.
        labels: for a split listed by a text file, its label files (split name -> files).
        class_map: ``names`` (or ``nc``'s ``class_0``...).
        notes: what the report should say (a split read once for two keys, images not found).
    """

    path: Path
    root: Path
    splits: tuple[Split, ...]
    labels: dict[str, list[Path]]
    class_map: ClassMap
    notes: tuple[str, ...]


def _load(path: Path) -> Any:
    import yaml

    from labelgate.io.bounded import yaml_problem
    from labelgate.io.files import load_yaml, read_small_text

    try:
        return load_yaml(read_small_text(path, "dataset YAML"))
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {yaml_problem(exc)}", path=str(path)) from None


def data_yaml(path: Path) -> dict[str, Any] | None:
    """The mapping of an ultralytics detection dataset YAML (``train`` and ``val`` keys, and
    ``names`` or ``nc``), or ``None``: a contract, a class list, a semantic-segmentation YAML
    (``masks_dir``: its labels are masks), or no YAML. Never raises."""
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return None
    try:
        data = _load(path)
    except InputError:
        return None
    if not isinstance(data, dict) or "masks_dir" in data:
        return None
    splits = "train" in data and ("val" in data or "validation" in data)
    return data if splits and ("names" in data or "nc" in data) else None


def _class_map(path: Path, data: dict[str, Any]) -> ClassMap:
    if data.get("names") is not None:
        try:
            return load_class_map(path)
        except ClassMapError as exc:
            raise InputError(exc.reason, path=str(path)) from None
    nc = data.get("nc")
    if type(nc) is not int or nc < 1:
        raise InputError(
            f"nc: {nc!r} is no class count, and no names are given (ultralytics/data/"
            "utils.py:768-777@ultralytics 8.4.190)",
            path=str(path),
        )
    names = [f"class_{i}" for i in range(nc)]
    return ClassMap.from_names(names, origin=f"{path} (nc: {nc}, named class_0.. as ultralytics)")


def _labels_of(images: Path) -> Path:
    """The labels folder of an images folder (``img2label_paths``: the last ``images`` part
    replaced by ``labels``; none: the labels lie beside the images)."""
    parts = images.parts
    at = max((i for i, p in enumerate(parts) if p == "images"), default=None)
    return images if at is None else Path(*parts[:at], "labels", *parts[at + 1 :])


def _listed(listing: Path) -> list[Path]:
    """The label files of the images a text file lists (``./`` relative to the file)."""
    from labelgate.io.files import read_small_text

    out = []
    for line in read_small_text(listing, "image list").splitlines():
        image = line.strip()
        if not image:
            continue
        if image.startswith("./"):
            image = str(listing.parent) + "/" + image[2:]
        label = _labels_of(Path(image)).with_suffix(".txt")
        if label.is_file():
            out.append(label)
    return out


def _images(root: Path, value: str) -> Path:
    x = root / value
    if not x.exists() and value.startswith("../"):
        x = root / value[3:]  # Roboflow's ../train/images, from a YAML inside the root
    return x


def _missing(key: str, item: str, images: Path, labels: Path) -> str:
    """A split that is not there, in words, with what ultralytics does then."""
    stop = (
        "ultralytics stops there: FileNotFoundError 'Dataset images not found' "
        "(ultralytics/data/utils.py:806-817@ultralytics 8.4.190)"
        if key == "val"
        else "ultralytics finds no image to read there (ultralytics/data/base.py:204-223"
        "@ultralytics 8.4.190)"
    )
    return (
        f"{key}: {item!r} names {images}, and neither it nor its labels folder ({labels}) "
        f"exists: {stop}"
    )


def _splits(
    root: Path, data: dict[str, Any], path: Path
) -> tuple[list[Split], dict[str, list[Path]], list[str], str | None]:
    """The splits from ``root``, the label files of listed splits, notes, and the first split
    whose labels are missing (in words), or ``None``."""
    splits: list[Split] = []
    listed: dict[str, list[Path]] = {}
    notes: list[str] = []
    seen: dict[Path, str] = {}
    for key in _KEYS:
        value = data.get(key)
        if not value:
            continue
        values = value if isinstance(value, list) else [value]
        for n, item in enumerate(values):
            if not isinstance(item, str):
                raise InputError(f"{key}: holds {item!r}, not a folder", path=str(path))
            images = _images(root, item) if not isinstance(value, list) else root / item
            name = key if len(values) == 1 else f"{key}[{n}]"
            labels = images if images.is_file() else _labels_of(images)
            if labels.resolve() in seen:
                notes.append(f"{name} names the folder of {seen[labels.resolve()]}: read once")
                continue
            if images.is_file():
                listed[name] = _listed(images)
            elif not labels.is_dir():
                return splits, listed, notes, _missing(key, item, images, labels)
            elif not images.is_dir():
                notes.append(
                    f"{name}: the images folder {images} is missing (ultralytics needs it to "
                    f"train); the labels in {labels} are validated"
                )
            seen[labels.resolve()] = name
            splits.append(Split(name, labels, images))
    return splits, listed, notes, None


def read_data_yaml(path: Path) -> DataYaml:
    """The dataset a YAML describes, resolved as ultralytics resolves it.

    Raises:
        InputError: it is not a dataset YAML, a key has the wrong type, or a split's folder is
            missing (ultralytics stops there too).
    """
    data = _load(path)
    if not isinstance(data, dict):
        raise InputError(
            "not a dataset YAML (a mapping of path, train, val, names)", path=str(path)
        )
    if "val" not in data and "validation" in data:
        data["val"] = data.pop("validation")
    for key in ("train", "val"):
        if key not in data:
            raise InputError(
                f"'{key}:' key missing: ultralytics requires train and val "
                "(ultralytics/data/utils.py:756-763@ultralytics 8.4.190)",
                path=str(path),
            )
    for key in (*_KEYS, "path"):
        value = data.get(key)
        allowed: tuple[type, ...] = (str,) if key == "path" else (str, list)
        if value is not None and not isinstance(value, allowed):
            what = " or ".join(t.__name__ for t in allowed)
            raise InputError(f"'{key}' must be a {what}, not {value!r}", path=str(path))
    cmap = _class_map(path, data)
    given = data.get("path")
    if not given:
        roots = [path.parent]
    elif Path(given).is_absolute():
        roots = [Path(given)]
    else:  # ultralytics: from the working directory (then its datasets_dir setting)
        roots = [Path(given), path.parent / given]
    missing = None
    for n, root in enumerate(roots):
        splits, listed, notes, absent = _splits(root, data, path)
        if absent is None:
            if n:
                notes.insert(
                    0,
                    f"path: {given!r} resolved against the YAML's folder ({root}): ultralytics "
                    f"resolves it against the working directory ({CITED}), where these "
                    "folders are missing: run it from the YAML's folder",
                )
            return DataYaml(path, root, tuple(splits), listed, cmap, tuple(notes))
        missing = missing or absent
    later = "; ultralytics then looks for the path: under its datasets_dir setting" if n else ""
    raise InputError(f"{missing}{later}", path=str(path))
