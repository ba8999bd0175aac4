"""The files of two revisions paired, by content first, then by name; and the by-id comparison of
``diff`` narrowed to the files that changed.

A HEAD file whose content key (``labelgate.io.contentkey``) is a BASE file's is that file,
unchanged where the names match and renamed where they do not; the files left are paired by name
(changed), and what is left then was added (HEAD) or removed (BASE). Names are paths within the
dataset's root (the folder given), so ``base/data/x.parquet`` and ``data/x.parquet`` are one name.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labelgate.core.report import Report
    from labelgate.run.validation import Validation

__all__ = ["LISTED", "file_pairing", "narrowed", "pair_files", "with_pairing"]

LISTED = 1000  # files named per kind of change in the report; the counts are complete


def pair_files(base: list[tuple[str, str]], head: list[tuple[str, str]]) -> dict[str, Any]:
    """Each revision's files as (name, content key), paired.

    Returns:
        ``unchanged`` (a count), ``renamed`` ([base name, head name]), ``changed``, ``added``,
        ``removed`` (names), and ``matched``: the (base index, head index) pairs of equal content.
    """
    pool: dict[str, list[int]] = defaultdict(list)
    for i, (_, key) in enumerate(base):
        pool[key].append(i)
    matched: list[tuple[int, int]] = []
    left_head: list[int] = []
    for j, (name, key) in enumerate(head):
        candidates = pool.get(key)
        if not candidates:
            left_head.append(j)
            continue
        same = [i for i in candidates if base[i][0] == name]
        i = same[0] if same else candidates[0]
        candidates.remove(i)
        matched.append((i, j))
    taken = {i for i, _ in matched}
    left_base = {base[i][0]: i for i in range(len(base)) if i not in taken}
    changed, added = [], []
    for j in left_head:
        name = head[j][0]
        if left_base.pop(name, None) is not None:
            changed.append(name)
        else:
            added.append(name)
    renamed = [[base[i][0], head[j][0]] for i, j in matched if base[i][0] != head[j][0]]
    return {
        "unchanged": len(matched) - len(renamed),
        "renamed": renamed[:LISTED],
        "changed": changed[:LISTED],
        "added": added[:LISTED],
        "removed": list(left_base)[:LISTED],
        "counts": {
            "renamed": len(renamed),
            "changed": len(changed),
            "added": len(added),
            "removed": len(left_base),
        },
        "matched": matched,
    }


def names(report: Report, roots: list[str]) -> list[tuple[str, str]] | None:
    """(name, content key) of the report's files, from its cache section; ``None`` without."""
    if report.cache is None or report.cache.get("unused") is not None:
        return None
    out = []
    for f in report.cache["files"]:
        out.append((_within(f["path"], roots), f["content"]))
    return out


def narrowed(
    base: Validation, head: Validation, pairing: dict[str, Any] | None
) -> tuple[Validation, Validation]:
    """The two runs with only the files not matched by content, for the by-id comparison.

    Files of equal content hold the same rows; when every id is unique on each side (LG014
    found nothing, and ran), an id in such a file is in no other file on either side, so it is
    neither added, removed nor relabelled, and leaving those files out changes nothing. Else
    the runs are returned whole.
    """
    if pairing is None or not (_unique_ids(base) and _unique_ids(head)):
        return base, head
    if len(base.dataset.files) != len(base.report.cache["files"]):  # type: ignore[index]
        return base, head  # a file without row groups is in no pairing: compare everything
    if len(head.dataset.files) != len(head.report.cache["files"]):  # type: ignore[index]
        return base, head
    same_base = {i for i, _ in pairing["matched"]}
    same_head = {j for _, j in pairing["matched"]}
    return _without(base, same_base), _without(head, same_head)


def file_pairing(
    base: Validation, head: Validation, base_roots: list[str], head_roots: list[str]
) -> dict[str, Any] | None:
    """The two runs' files paired (``pair_files``), where both kept a cache; else ``None``."""
    b, h = names(base.report, base_roots), names(head.report, head_roots)
    return None if b is None or h is None else pair_files(b, h)


def with_pairing(report: Report, base: Report, pairing: dict[str, Any] | None) -> Report:
    """``diff``'s report: one line and one section on the cache for both revisions, and the
    pairing of their files."""
    if report.cache is None or base.cache is None:
        return report
    notes = tuple(n for n in report.notes if not n.startswith("cache ("))
    line = f"cache ({report.cache['folder']}): " + "; ".join(
        f"{side} " + _counts(section)
        for side, section in (("HEAD", report.cache), ("BASE", base.cache))
    )
    if pairing is not None:
        counts = pairing["counts"]
        line += (
            f"; files: {pairing['unchanged']} unchanged, {counts['renamed']} renamed, "
            f"{counts['changed']} changed, {counts['added']} added, {counts['removed']} removed"
        )
    section = dict(report.cache) | {"base": base.cache}
    if pairing is not None:
        section["pairing"] = {k: v for k, v in pairing.items() if k != "matched"}
    return replace(report, notes=(*notes, line), cache=section)


def _counts(section: dict[str, Any]) -> str:
    if section["unused"] is not None:
        return f"not used: {section['unused']}"
    out = f"{section['files_read']} files read, {section['files_cached']} from the cache"
    if section["entries_ignored"]:
        out += f", {section['entries_ignored']} entries ignored (corrupt or not this file's)"
    if section["entries_not_stored"]:
        out += f", {section['entries_not_stored']} partials could not be stored"
    return out


def _unique_ids(done: Validation) -> bool:
    ctx = done.context
    if done.dataset.columns.id is None or ctx.contract.severity.get("LG014") == "off":
        return False
    return not any(f.code == "LG014" for f in done.report.findings)


def _without(done: Validation, skipped: set[int]) -> Validation:
    data = done.dataset
    kept = [i for i in range(len(data.files)) if i not in skipped]
    files = [data.files[i] for i in kept]
    schemas = [data.schemas[i] for i in kept]
    return replace(done, dataset=replace(data, files=files, schemas=schemas))


def _within(path: str, roots: list[str]) -> str:
    """The file's name within the root it was found under (a root that is a file: its name)."""
    for root in roots:
        r = Path(root)
        try:
            if r.is_dir():
                return Path(path).relative_to(r).as_posix()
        except ValueError:
            continue
    return Path(path).name
