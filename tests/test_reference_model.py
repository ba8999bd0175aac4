"""The streaming scan against a plain, row-by-row model of the same rules, on random files.

Chunk edges (row groups, files) fall anywhere; counts, examples and batch verdicts must not move.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import Batching, Contract
from labelgate.run.validation import report_of


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, object]:
    k = draw(st.integers(min_value=1, max_value=5))
    ignore = draw(st.sampled_from([-100, -1]))
    value = st.one_of(
        st.none(), st.sampled_from([ignore, -1, -7, 0, k - 1, k, k + 3]), st.integers(0, k - 1)
    )
    labels = draw(st.lists(value, min_size=1, max_size=80))
    sources = draw(
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=len(labels), max_size=len(labels))
    )
    return {
        "k": k,
        "ignore": ignore,
        "labels": labels,
        "sources": sources,
        "size": draw(st.integers(min_value=1, max_value=9)),
        "group": draw(st.integers(min_value=1, max_value=17)),
        "files": draw(st.integers(min_value=1, max_value=3)),
    }


def plain(case: dict[str, object]) -> dict[str, object]:
    """The rules, one row at a time."""
    k, ignore, size = case["k"], case["ignore"], case["size"]
    labels: list[int | None] = case["labels"]  # type: ignore[assignment]
    status = []
    for v in labels:
        if v is None:
            status.append("LG003")
        elif v == ignore:
            status.append("ignored")
        elif v < 0:
            status.append("LG005")
        elif v >= k:  # type: ignore[operator]
            status.append("LG004")
        else:
            status.append("usable")
    batches = [status[i : i + size] for i in range(0, len(status), size)]  # type: ignore[misc]
    crash = {b for b, rows in enumerate(batches) if any(s.startswith("LG") for s in rows)}
    nan = {b for b, rows in enumerate(batches) if b not in crash and "usable" not in rows}
    return {
        "counts": {
            "rows": len(status),
            "usable": status.count("usable"),
            "ignored": status.count("ignored"),
            "rejected": sum(s.startswith("LG") for s in status),
        },
        "rows": {
            code: [i for i, s in enumerate(status) if s == code]
            for code in ("LG003", "LG004", "LG005")
        },
        "failing": sorted(crash | nan),
        "classes": [
            sum(1 for v, s in zip(labels, status, strict=True) if s == "usable" and v == c)
            for c in range(k)
        ],  # type: ignore[arg-type]
    }


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=datasets())
def test_scan_matches_the_plain_model(case: dict[str, object], tmp_path_factory: object) -> None:
    folder = Path(tmp_path_factory.mktemp("ds"))  # type: ignore[attr-defined]
    labels: list[int | None] = case["labels"]  # type: ignore[assignment]
    n, files = len(labels), int(case["files"])  # type: ignore[call-overload]
    cuts = [round(i * n / files) for i in range(files + 1)]
    for f in range(files):
        lo, hi = cuts[f], cuts[f + 1]
        table = pa.table(
            {
                "id": pa.array(range(lo, hi), pa.int64()),
                "label": pa.array(labels[lo:hi], pa.int64()),
                "source": pa.array(case["sources"][lo:hi], pa.string()),  # type: ignore[index]
            }
        )
        pq.write_table(table, folder / f"part-{f:02d}.parquet", row_group_size=int(case["group"]))  # type: ignore[call-overload]
    contract = Contract(
        num_classes=int(case["k"]),  # type: ignore[call-overload]
        ignore_index=int(case["ignore"]),  # type: ignore[call-overload]
        batching=Batching(size=int(case["size"])),  # type: ignore[call-overload]
    )
    report = report_of([str(folder)], contract, max_examples=0)
    expected = plain(case)
    assert report.counts == expected["counts"]
    for code, rows in expected["rows"].items():  # type: ignore[attr-defined]
        found = next((f for f in report.findings if f.code == code), None)
        assert ([e.row for e in found.examples] if found else []) == rows
        if found:
            assert [e.id for e in found.examples] == rows  # ids are the row positions here
            assert [e.batch for e in found.examples] == [r // int(case["size"]) for r in rows]  # type: ignore[call-overload]
    assert report.batches["failing"] == expected["failing"]
    assert [c["count"] for c in report.classes] == expected["classes"]
    assert sum(s["rows"] for s in report.sources) == n
