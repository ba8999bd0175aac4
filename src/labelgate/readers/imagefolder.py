"""torchvision ImageFolder trees: the classes are the sorted subfolders, each image a row.

``ImageFolder`` builds ``class_to_idx`` from ``sorted(entry.name for entry in os.scandir(root) if
entry.is_dir())`` and walks each class folder (links followed) for files with an image extension;
a class folder without one makes it raise. A root whose subfolders are splits (``train``, ``val``,
``test``...) each holding class folders is read split by split (source = the split) and the splits'
class lists compared. Rows: id = the file's path under the root, label = its class index,
name = its class folder.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from labelgate.contract.classmap import ClassMap
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.findings import plural
from labelgate.core.report import Example
from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.layout import any_file
from labelgate.readers.common.sink import RowSink
from labelgate.readers.common.walk import walk_files

__all__ = ["IMG_EXTENSIONS", "ImageFolderReader", "looks_like_imagefolder", "read_imagefolder"]

# torchvision.datasets.folder.IMG_EXTENSIONS
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
_SPLITS = {"train", "training", "val", "valid", "validation", "test", "testing", "dev"}
_STRAY = (".ipynb_checkpoints", "__MACOSX", "__pycache__", ".DS_Store", ".git")


def _classes(root: Path) -> list[str]:
    return sorted(e.name for e in os.scandir(root) if e.is_dir())


def _has_images(folder: Path) -> bool:
    return any(f.lower().endswith(IMG_EXTENSIONS) for _, _, files in os.walk(folder) for f in files)


def looks_like_imagefolder(root: Path) -> bool:
    """Whether some subfolder (or a split's subfolder) holds an image."""
    for name in _classes(root):
        sub = root / name
        if _has_images(sub):
            return True
    return False


def read_imagefolder(root: Path, sink: RowSink, facts: AnnotationFacts) -> ClassMap | None:
    """Read ``root`` as ImageFolder does into rows in ``sink``; the class map is the first split's
    class folders, in ImageFolder's order."""
    top = _classes(root)
    splits = [s for s in top if s.casefold() in _SPLITS and _classes(root / s)]
    roots = (
        [(root / s, s) for s in splits]
        if splits and len(splits) == len([t for t in top if not t.startswith(".")])
        else [(root, root.name)]
    )
    writer = sink.rows(names=True)
    counts: Counter[str] = Counter()
    lists: dict[str, list[str]] = {}
    for folder, source in roots:
        classes = _classes(folder)
        lists[source] = classes
        for index, name in enumerate(classes):
            if name.startswith(".") or name in _STRAY:
                after = len(classes) - index - 1
                facts.hit(
                    "LG033",
                    Example(row=-1, id=f"{source}/{name}", source=source),
                    message=f"folder {name!r} in {source!r} becomes class {index}"
                    + (f" and shifts the {after} classes after it" if after else ""),
                    fix=f"delete {name!r} (ImageFolder makes every subfolder a class)",
                    unit="folders",
                )
            files, loops = walk_files(folder / name)  # links followed, each folder once
            if loops:
                facts.hit(
                    "LG033",
                    Example(row=-1, id=f"{source}/{name}", source=source),
                    message=f"class folder {name!r} in {source!r} holds {loops} link(s) back to a "
                    "folder already walked: ImageFolder's walk (os.walk, links followed) never ends",
                    fix="remove the links that point to a parent folder or to themselves",
                    unit="folders",
                )
            images = [f for f in files if f.name.lower().endswith(IMG_EXTENSIONS)]
            counts["skipped_files"] += len(files) - len(images)
            if not images:
                facts.hit(
                    "LG033",
                    Example(row=-1, id=f"{source}/{name}", source=source),
                    message=f"class folder {name!r} in {source!r} holds no image: ImageFolder "
                    "raises 'Found no valid file for the classes'",
                    fix="add its images or remove the folder (and the class)",
                    unit="folders",
                )
            nested = sorted(
                {f.relative_to(folder / name).parts[0] for f in images} - {f.name for f in images}
            )
            if nested:
                shown = ", ".join(f"{name}/{n}" for n in nested[:3]) + (
                    " ..." if len(nested) > 3 else ""
                )
                facts.notes.append(
                    f"class folder {name!r} in {source!r} holds subfolders with images ({shown}): "
                    f"ImageFolder reads their images as class {index} ({name}), not as classes "
                    "of their own"
                )
            for f in images:
                writer.add(f.relative_to(root).as_posix(), index, source, name)
        counts["images"] = writer.rows
        counts["classes"] = len(classes)
    _compare(facts, lists)
    writer.close()
    loose = [e.name for e in os.scandir(root) if e.is_file() and not e.name.startswith(".")]
    if loose:
        counts["root_files"] = len(loose)
        shown = ", ".join(sorted(loose)[:5]) + (" ..." if len(loose) > 5 else "")
        facts.notes.append(
            f"{plural(len(loose), 'file')} directly in the root "
            + ("is not a row" if len(loose) == 1 else "are not rows")
            + ": ImageFolder reads only "
            f"class folders ({shown})"
        )
    if counts["skipped_files"]:
        facts.notes.append(
            f"{plural(counts['skipped_files'], 'file')} in class folders "
            + ("is not a row" if counts["skipped_files"] == 1 else "are not rows")
            + ": their extension is not one of ImageFolder's"
        )
    facts.counts.update(counts)
    first = next(iter(lists.values()))
    origin = f"{roots[0][0]} (class folders, sorted)"
    return ClassMap.from_names(first, origin=origin) if first else None


def _compare(facts: AnnotationFacts, lists: dict[str, list[str]]) -> None:
    """Splits whose class lists differ: the same index names another class in each."""
    items = list(lists.items())
    for split, classes in items[1:]:
        base_split, base = items[0]
        if classes == base:
            continue
        shifted = next(
            (i for i, (a, b) in enumerate(zip(base, classes, strict=False)) if a != b),
            min(len(base), len(classes)),
        )
        differ = [
            f"{a!r} lacks {_listed(b)}"
            for a, b in ((split, set(base) - set(classes)), (base_split, set(classes) - set(base)))
            if b
        ]
        facts.hit(
            "LG033",
            Example(row=-1, id=split, source=split),
            message=f"split {split!r} has {len(classes)} class folders and {base_split!r} "
            f"{len(base)} ({'; '.join(differ)}); from "
            f"index {shifted} the same index names another class in each",
            fix="give every split the same class folders (an empty one raises; add images or "
            "build class_to_idx once and pass it to each split)",
            unit="splits",
        )


def _listed(names: set[str], shown: int = 5) -> str:
    """Folder names, sorted, the first ``shown`` of them and how many more."""
    first = sorted(names)
    more = f" and {len(first) - shown} more" if len(first) > shown else ""
    return ", ".join(repr(n) for n in first[:shown]) + more


_ANNOTATIONS = (".json", ".xml", ".csv", ".parquet", ".jsonl", ".yaml", ".yml", ".npy")
_LABEL_FOLDERS = {"labels", "annotations", "Annotations"}


def _annotation_files(root: Path) -> bool:
    """Whether annotation files (JSON, XML, tables, arrays) lie under ``root``, or a folder of
    labels (YOLO's ``labels/``, COCO's ``annotations/``): a tree holding them is some annotation
    format, not class folders of images. A stray note (``notes.txt``) in a class folder is
    ImageFolder's own business: it skips the file."""
    if any((root / name).is_dir() for name in _LABEL_FOLDERS):
        return True
    return any_file(root, "*", lambda p: p.suffix.lower() in _ANNOTATIONS, past=True)


class ImageFolderReader(Reader):
    """torchvision ImageFolder trees: class folders of images (or splits of them)."""

    name = "imagefolder"
    title = "torchvision ImageFolder trees (class folders of images)"
    task = "classification"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if not path.is_dir() or task == "segmentation":
            return None
        if looks_like_imagefolder(path) and not _annotation_files(path):
            return Claim(
                0.5,
                "a folder whose subfolders hold images and no annotation file "
                "(torchvision's ImageFolder)",
            )
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        found = read_imagefolder(paths[0], sink, facts)
        return Read(found, "the class folders, sorted (ImageFolder's order)")
