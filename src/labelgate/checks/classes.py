"""Checks on the classes: the class map's bijection, label/name agreement, shifted sources, usage."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labelgate.checks.context import Context, join_values, plural
from labelgate.checks.registry import check
from labelgate.contract.classmap import ClassMap, normalise_name
from labelgate.core.findings import finding
from labelgate.core.report import Example, Finding


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Rows of one (source, label, name) triple whose name says another class."""

    source: int
    label: int
    name: str
    expected: int | None
    rows: int
    first_row: int


@dataclass(frozen=True, slots=True)
class Shifts:
    """What the (label, name) pairs prove about each source.

    Attributes:
        reference: normalised name -> index (the class map, or what the unshifted sources agree on).
        from_class_map: whether ``reference`` is the given class map.
        proven: source id -> shift d, where every named row has label = index(name) + d, d != 0.
        evidence: source id -> one sentence of evidence.
        mismatches: triples that disagree and are not explained by a proven shift.
    """

    reference: Mapping[str, int]
    from_class_map: bool
    proven: dict[int, int]
    evidence: dict[int, str]
    mismatches: list[Mismatch]


def reference_sources(pairs: Mapping[tuple[int, int, str], tuple[int, int]], k: int) -> set[int]:
    """Sources whose (label, name) pairs can serve as the reference for the others: all but
    those with a label at K and none at 0, the signature of a 1-based source (a stray label at K
    in a source that uses 0 does not disqualify it, nor a bad label elsewhere)."""
    at_k = {s for (s, v, _) in pairs if v == k}
    at_0 = {s for (s, v, _) in pairs if v == 0}
    return {s for (s, _, _) in pairs} - (at_k - at_0)


def analyse_shifts(ctx: Context) -> Shifts | None:
    """Compare each source's (label, name) pairs with the reference map; ``None`` without names."""
    if "analysis" in ctx.shifts:
        cached: Shifts | None = ctx.shifts["analysis"]
        return cached
    result = _analyse(ctx)
    ctx.shifts["analysis"] = result
    return result


def _analyse(ctx: Context) -> Shifts | None:
    pairs = ctx.scan.pairs
    if not pairs:
        return None
    k, ignore = ctx.k, ctx.contract.ignore_index
    # In order of each pair's first row, so examples and ties do not depend on how rows were split.
    named = {
        key: entry
        for key, entry in sorted(pairs.items(), key=lambda kv: kv[1][1])
        if key[1] != ignore
    }
    cmap = ctx.contract.class_map
    if cmap is not None:
        reference = cmap.index_of()
    else:
        sources = reference_sources(named, k)
        votes: defaultdict[str, Counter[int]] = defaultdict(Counter)
        for (s, v, name), (count, _) in named.items():
            if s in sources and 0 <= v < k:
                votes[normalise_name(name)][v] += count
        reference = {name: c.most_common(1)[0][0] for name, c in votes.items()}
    offsets: defaultdict[int, Counter[int]] = defaultdict(Counter)
    names_seen: defaultdict[int, set[str]] = defaultdict(set)
    sample: dict[tuple[int, int], tuple[str, int, int]] = {}
    for (s, v, name), (count, _) in named.items():
        expected = reference.get(normalise_name(name))
        if expected is None:
            continue
        offsets[s][v - expected] += count
        names_seen[s].add(normalise_name(name))
        sample.setdefault((s, v - expected), (name, v, expected))
    proven: dict[int, int] = {}
    evidence: dict[int, str] = {}
    for s, by_offset in offsets.items():
        if len(by_offset) == 1 and len(names_seen[s]) >= 2:
            ((d, rows),) = by_offset.items()
            if d != 0:
                proven[s] = d
                name, v, expected = sample[(s, d)]
                source = ctx.scan.source_names[s]
                against = "the class map" if cmap is not None else "the other sources"
                evidence[s] = (
                    f"source {source!r}: all {rows} named rows ({len(names_seen[s])} names) have "
                    f"label = index(name) {d:+d}; e.g. {name!r} is stored as {v}, {against} "
                    f"give{'s' if cmap is not None else ''} {expected}"
                )
    mismatches = [
        Mismatch(s, v, name, reference.get(normalise_name(name)), count, first)
        for (s, v, name), (count, first) in sorted(named.items(), key=lambda kv: kv[1][1])
        if s not in proven
        and 0 <= v < k  # out-of-range labels are LG004's and LG005's
        and reference.get(normalise_name(name)) != v
        and (cmap is not None or normalise_name(name) in reference)
    ]
    return Shifts(reference, cmap is not None, proven, evidence, mismatches)


@check("LG009")
def class_map_bijection(ctx: Context) -> list[Finding]:
    cmap = ctx.contract.class_map
    if cmap is None:
        return []
    problems = cmap.problems(ctx.k, background=ctx.background)
    if not problems:
        return []
    return [
        finding(
            "LG009",
            count=len(problems),
            unit="problems",
            message=f"the class map {cmap.origin} is not a bijection onto 0..{ctx.k - 1}: "
            + "; ".join(problems[:10])
            + (f"; and {len(problems) - 10} more" if len(problems) > 10 else ""),
            fix=(
                "Give every class exactly one distinct name and every index 0..K-1 exactly one "
                "entry; a duplicated name maps back to one index and silently merges two classes."
            ),
            details={"problems": problems},
        )
    ]


@check("LG010")
def label_name_disagree(ctx: Context) -> list[Finding]:
    shifts = analyse_shifts(ctx)
    if shifts is None or not shifts.mismatches:
        return []
    rows = sum(m.rows for m in shifts.mismatches)
    scan = ctx.scan
    limit = len(shifts.mismatches) if scan.max_examples == 0 else scan.max_examples
    examples = tuple(
        Example(
            row=m.first_row,
            batch=int(scan.plan.batch_of(m.first_row, 1)[0]),
            source=scan.source_names[m.source] if ctx.contract.source_column else None,
            value=m.label,
        )
        for m in shifts.mismatches[:limit]
    )
    described = [
        f"label {m.label} named {m.name!r} "
        + (f"(the map says {m.expected})" if m.expected is not None else "(name not in the map)")
        + f" x{m.rows}"
        for m in shifts.mismatches[:5]
    ]
    against = "the class map" if shifts.from_class_map else "the labels the other rows use for it"
    return [
        finding(
            "LG010",
            count=rows,
            unit="rows",
            message=(
                f"{rows} rows have a label that disagrees with their name column and {against}: "
                + "; ".join(described)
                + ("; ..." if len(shifts.mismatches) > 5 else "")
            ),
            fix=(
                "Decide which column is right from the source data, and fix the mapping where it "
                "was made; examples show the first row of each disagreeing (label, name) pair."
            ),
            examples=examples,
            details={
                "pairs": [
                    {
                        "source": scan.source_names[m.source],
                        "label": m.label,
                        "name": m.name,
                        "expected": m.expected,
                        "rows": m.rows,
                        "first_row": m.first_row,
                    }
                    for m in shifts.mismatches[:100]
                ]
            },
        )
    ]


@check("LG011")
def shifted_source(ctx: Context) -> list[Finding]:
    scan = ctx.scan
    k = ctx.k
    shifts = analyse_shifts(ctx)
    proven = {} if shifts is None else shifts.proven
    high = scan.tallies.get("LG004")
    patterns: dict[int, str] = {}
    for s, hist in enumerate(scan.source_hist):
        if s in proven or scan.source_rows[s] == 0 or ctx.background == 0:
            continue  # a declared background 0 is why class 0 is unused: not a 1-based pattern
        at_k = hist.count(k)
        only_k = high is not None and high.by_source.get(s, 0) == at_k
        if hist.count(0) == 0 and at_k > 0 and only_k and hist.total() > at_k:
            used = [v for v, _ in hist.items()]
            live = int((scan.source_rows > 0).sum())
            where = "the input" if live == 1 else f"source {scan.source_names[s]!r}"
            patterns[s] = (
                f"{where}: values {join_values(used)} with 0 unused and "
                f"{at_k} rows at K={k}: the pattern of a 1-based encoding (no name column proves it)"
            )
    if not proven and not patterns:
        return []
    lines = [shifts.evidence[s] for s in proven] if shifts else []
    lines += list(patterns.values())
    examples: list[Example] = []
    for s in proven:
        examples.extend(scan.source_firsts.get(s, []))
    limit = len(examples) if scan.max_examples == 0 else scan.max_examples
    shifted_rows = sum(int(scan.source_rows[s]) for s in [*proven, *patterns])
    if proven:
        fix = (
            "Remap each proven source from its name column (the names are the truth), per source; "
            "never subtract 1 from every row: the other sources are right as they are."
        )
    else:
        fix = (
            "Confirm against the source's documentation (or add a name column), then shift that "
            "source alone; never subtract 1 from every row."
        )
    return [
        finding(
            "LG011",
            severity="error" if proven else "warning",
            count=shifted_rows,
            unit="rows",
            message="; ".join(lines),
            fix=fix,
            examples=tuple(examples[:limit]),
            details={
                "sources": {
                    **{
                        scan.source_names[s]: {"shift": d, "proof": "names"}
                        for s, d in proven.items()
                    },
                    **{scan.source_names[s]: {"shift": 1, "proof": "pattern"} for s in patterns},
                }
            },
        )
    ]


@check("LG012")
def class_usage(ctx: Context) -> list[Finding]:
    counts = ctx.scan.class_counts
    if counts.total() == 0 or ctx.task == "soft":
        return []
    found: list[Finding] = []
    background = ctx.annotations.background if ctx.annotations is not None else None
    cmap = ctx.contract.class_map
    filled = cmap.placeholders if cmap is not None else frozenset()  # gaps, not classes
    skip = filled if background is None else filled | {background}
    # the message names the first ten and counts the rest: K can be 2**31, so the unused
    # classes are counted and the first thousand listed, never gathered
    absent, unused = counts.absent(skip, first=1000)
    if absent:
        named = [
            f"{i} ({ctx.class_name(i)!r})" if ctx.class_name(i) else str(i) for i in unused[:10]
        ]
        found.append(
            finding(
                "LG012",
                count=absent,
                unit="classes",
                message=f"{absent} of {ctx.k} classes never occur: "
                + join_values(named, total=absent),
                fix=(
                    "A class the data never shows is never learned: check K, the class map, and "
                    "whether a source is shifted (LG011)."
                ),
                details={"classes": unused[:1000]},
            )
        )
    held = list(counts.items())
    used = sorted(n for _, n in held)
    mid = len(used) // 2
    median = used[mid] if len(used) % 2 else (used[mid - 1] + used[mid]) / 2
    rare = [(i, n) for i, n in held if n * 20 < median]
    if rare:
        found.append(
            finding(
                "LG012",
                severity="info",
                count=len(rare),
                unit="classes",
                message=(
                    f"{plural(len(rare), 'class', 'classes')} under 1/20 of the median class count "
                    f"({median:g}): " + join_values([f"{i} ({n})" for i, n in rare])
                ),
                fix="Consider class weights or more data for these classes.",
                details={"classes": [i for i, _ in rare[:1000]]},
            )
        )
    return found


@check("LG018")
def pinned_map(ctx: Context) -> list[Finding]:
    pinned = ctx.contract.class_map_fingerprint
    if pinned is None:
        return []
    cmap = ctx.contract.class_map
    origin = "the class map"
    if cmap is None and ctx.names_seen:
        cmap = ClassMap(tuple(sorted(ctx.names_seen.items())), origin="the (label, name) pairs")
        origin = "the map the data's (label, name) pairs give"
    details: dict[str, Any] = {"pinned": pinned}
    if cmap is None:
        message = "the contract pins a class map, but there is none to check: no class_names and no name column"
    else:
        found = cmap.fingerprint()
        if found == pinned:
            return []
        details["found"] = found
        message = f"{origin} has fingerprint {found[:19]}..., the contract pins {pinned[:19]}...: the class map changed"
    return [
        finding(
            "LG018",
            count=1,
            unit="maps",
            message=message,
            fix=(
                "A changed class map remaps labels silently. If the change is intended, bump the "
                "contract's version and run `labelgate pin` again; otherwise restore the map (or "
                "give the contract's class_names, or a name column, so the pin can be checked)."
            ),
            details=details,
        )
    ]
