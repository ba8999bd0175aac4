"""ClassCounts: dense and sparse counts give the same answers, and so do the checks and the
report built on them, at any K."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import labelgate
from labelgate.core import classcounts
from labelgate.core.classcounts import SOURCES_DENSE, ClassCounts, add_grouped, source_counts
from labelgate.core.classrange import absent_of


def both(k: int) -> tuple[ClassCounts, ClassCounts]:
    """The same counts, dense and sparse."""
    return ClassCounts(k, dense_limit=k), ClassCounts(k, dense_limit=k - 1)


class TestClassCounts:
    @given(
        k=st.integers(1, 300),
        batches=st.lists(st.lists(st.integers(0, 10**6), max_size=40), max_size=8),
        weighted=st.booleans(),
    )
    def test_dense_and_sparse_agree(self, k: int, batches: list[list[int]], weighted: bool) -> None:
        dense, sparse = both(k)
        assert dense.dense and not sparse.dense
        expected: dict[int, int] = {}
        for raw in batches:
            labels = np.array([v % k for v in raw], np.int64)
            weights = np.array([v % 7 for v in raw], np.int64) if weighted else None
            for counts in (dense, sparse):
                counts.add(labels, weights)
            for i, v in enumerate(labels.tolist()):
                expected[v] = expected.get(v, 0) + (1 if weights is None else int(weights[i]))
        held = {c: n for c, n in expected.items() if n}
        for counts in (dense, sparse):
            assert dict(counts.items()) == held
            assert counts.total() == sum(held.values())
            assert counts.present() == len(held)
            assert [counts.count(i) for i in range(-1, k + 1)] == [
                held.get(i, 0) for i in range(-1, k + 1)
            ]
            assert counts.absent(frozenset({0}), first=5) == absent_of(k, set(held) | {0}, 5)
            every = np.arange(k, dtype=np.int64)
            assert counts.counts_of(every).tolist() == [held.get(i, 0) for i in range(k)]
            assert counts.counts_of(every[::-1][:3]).tolist() == [
                held.get(i, 0) for i in range(k - 1, max(k - 4, -1), -1)
            ]
        assert dense == sparse

    def test_many_batches_are_summed_once_they_outweigh_the_counts(self) -> None:
        counts = ClassCounts(10**9)
        for start in range(0, 300_000, 1_000):  # more classes than the 65,536 kept aside
            counts.add(np.arange(start, start + 1_000, dtype=np.int64) * 3)
            counts.add(np.array([5], np.int64))
        assert counts.present() == 300_001  # 5 is no multiple of 3: one class more
        assert counts.count(5) == 300
        assert counts.count(3 * 299_999) == 1
        assert counts.total() == 300_000 + 300

    def test_merge_and_add_counts(self) -> None:
        a, b = ClassCounts(100, dense_limit=0), ClassCounts(100)
        a.add_counts(np.array([3, 3, 50]), np.array([1, 2, 4]))
        b.add(np.array([50, 99]))
        a.merge(b)
        b.merge(a)
        assert list(a.items()) == [(3, 3), (50, 5), (99, 1)]
        assert list(b.items()) == [(3, 3), (50, 6), (99, 2)]
        with pytest.raises(ValueError, match="over 100 classes to counts over 7"):
            ClassCounts(7).merge(a)

    def test_a_huge_k_allocates_nothing_of_its_size(self) -> None:
        counts = ClassCounts(2**31 - 1)
        counts.add(np.array([2**31 - 2, 0, 2**31 - 2], np.int64))
        assert list(counts.items()) == [(0, 1), (2**31 - 2, 2)]
        assert counts.absent(first=3) == (2**31 - 3, [1, 2, 3])

    def test_frozen_counts_refuse_to_change(self) -> None:
        for counts in both(10):
            counts.add(np.array([1]))
            counts.freeze()
            with pytest.raises(ValueError, match="frozen"):
                counts.add(np.array([1]))
            assert counts.count(1) == 1

    def test_grouped(self) -> None:
        into = [ClassCounts(10, dense_limit=0), ClassCounts(10)]
        add_grouped(into, np.array([1, 0, 1, 1]), np.array([4, 4, 9, 4]))
        add_grouped(into, np.zeros(0, np.int64), np.zeros(0, np.int64))
        assert [dict(c.items()) for c in into] == [{4: 1}, {4: 2, 9: 1}]

    def test_negative_k_is_refused(self) -> None:
        with pytest.raises(ValueError, match="0 or more, not -1"):
            ClassCounts(-1)


class TestAbsent:
    def test_counts_and_names_without_building_k(self) -> None:
        assert absent_of(10, {0, 2, 11, -1}, 3) == (8, [1, 3, 4])
        assert absent_of(3, {0, 1, 2}) == (0, [])
        assert absent_of(10**18, set(), 2) == (10**18, [0, 1])


def _files(folder: Path, labels: list[int], sources: list[str]) -> list[str]:
    table = pa.table({"id": list(range(len(labels))), "label": labels, "source": sources})
    pq.write_table(table, folder / "l.parquet")  # the pieces (row groups on threads)
    pacsv.write_csv(table, folder / "l.csv")  # the sequential scan
    return [str(folder / "l.parquet"), str(folder / "l.csv")]


def _report(path: str, k: int, limit: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(classcounts, "DENSE_LIMIT", limit)
    report = labelgate.validate(path, classes=k, source_column="source").to_dict()
    report.pop("environment")
    return report


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(1, 200_000),
    picks=st.lists(st.tuples(st.integers(-3, 400), st.sampled_from("ab")), min_size=1, max_size=60),
    spread=st.sampled_from([1, 7, 1_000]),
)
def test_checks_and_report_agree_across_the_dense_limit(
    k: int, picks: list[tuple[int, str]], spread: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random labels (a few past K, negative, at K) over a random K: every finding and count is
    the same dense and sparse; the sparse table is the dense one's rows of the classes present."""
    labels = [v * spread if v < 0 or v * spread < k else min(v, k) for v, _ in picks]
    with tempfile.TemporaryDirectory() as folder:
        for path in _files(Path(folder), labels, [s for _, s in picks]):
            dense = _report(path, k, 10**9, monkeypatch)
            sparse = _report(path, k, 0, monkeypatch)
            table = dense.pop("classes")
            listed = sparse.pop("classes")
            omitted = sparse.pop("classes_omitted", None)
            assert dense == sparse  # findings, counts, sources, batches: all the same
            present = [row for row in table if row["count"]]
            assert listed == present
            if len(present) < k:
                first = min(i for i in range(k) if i not in {r["index"] for r in present})
                assert omitted == {"count": k - len(present), "first": first}
            else:
                assert omitted is None


@pytest.mark.parametrize("encoding", ["indices", "multi-hot"])
def test_multi_label_positives_agree_across_the_dense_limit(
    tmp_path: Path, encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = 6
    rows = [[0, 3], [3], [], [5, 3, 0], [7], [2, 2]]  # [7]: past K; [2, 2]: one positive
    if encoding == "multi-hot":
        rows = [[1.0 if i in r else 0.0 for i in range(k)] for r in rows if max(r, default=0) < k]
    path = tmp_path / "ml.parquet"
    pq.write_table(pa.table({"labels": rows}), path)
    reports = []
    for limit in (10**9, 0):
        monkeypatch.setattr(classcounts, "DENSE_LIMIT", limit)
        report = labelgate.validate(
            str(path), classes=k, task="multilabel", label_encoding=encoding
        ).to_dict()
        report.pop("environment")
        reports.append(report)
    dense, sparse = reports
    listed = [(c["index"], c["count"]) for c in sparse.pop("classes")]
    assert listed == [(0, 2), (2, 1), (3, 3), (5, 1)]  # a class once per row
    assert listed == [(c["index"], c["count"]) for c in dense.pop("classes") if c["count"]]
    assert sparse.pop("classes_omitted") == {"count": 2, "first": 1}
    assert dense == sparse


def test_sparse_sums_stay_exact_past_2_53() -> None:
    counts = ClassCounts(10**7, dense_limit=0)
    big = 2**53 + 1  # a float sum rounds it to 2**53
    counts.add(np.array([9, 9]), np.array([big, 2], np.int64))
    counts.add_counts(np.array([9]), np.array([1]))
    assert counts.count(9) == big + 3


def test_sources_histograms_are_arrays_of_k_up_to_their_budget_only() -> None:
    k = 65_535
    within = SOURCES_DENSE // k
    made = [source_counts(k, held) for held in range(within + 2)]
    assert [c.dense for c in made] == [True] * within + [False, False]
    labels = np.array([0, 3, 3, k - 1], np.int64)
    for counts in (made[0], made[-1]):
        counts.add(labels)
    assert made[0] == made[-1]
    assert list(made[-1].items()) == [(0, 1), (3, 2), (k - 1, 1)]
