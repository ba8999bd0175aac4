"""A vocabulary-sized K is input too: memory, time and output follow the classes present, not K.

Before the per-class counts were sparse, ``--classes 10000000`` on a three-row file took 208 s,
7.1 GB and wrote a 939 MB JSON report (one row per class).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES
from tests.limits import assert_clean_exit, run_bounded

pytestmark = pytest.mark.slow  # subprocesses: the full tier only

K = 10_000_000  # the most classes a contract or a flag may give (contract/bounds.py)
MEMORY_MB = 512  # address space: the imports alone reserve most of it
TIMEOUT = 30
OOB = str(SAMPLES / "oob_0_2_4.parquet")


def labels_file(path: Path, labels: list[int], names: list[str] | None = None) -> str:
    columns: dict[str, pa.Array] = {"id": pa.array(range(len(labels))), "label": pa.array(labels)}
    if names is not None:
        columns["label_name"] = pa.array(names)
    pq.write_table(pa.table(columns), path)
    return str(path)


def validated(path: str, status: int, *extra: str) -> dict[str, Any]:
    """The JSON report of ``validate PATH --classes K`` under the bounds, which exits ``status``."""
    r = run_bounded(
        "validate", path, "--classes", str(K), "--format", "json", "--no-progress", *extra,
        memory_mb=MEMORY_MB, timeout=TIMEOUT,
    )  # fmt: skip
    assert_clean_exit(r, status)
    assert len(r.stdout) < 100_000  # 939 MB for the three-row file before
    report: dict[str, Any] = json.loads(r.stdout)
    return report


def by_code(report: dict[str, object]) -> dict[str, dict[str, object]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return {f["code"]: f for f in findings}


class TestThreeRowsAtAHugeK:
    def test_json_lists_the_classes_present_and_counts_the_rest(self) -> None:
        report = validated(OOB, 0)
        assert [(c["index"], c["count"]) for c in report["classes"]] == [(0, 1), (2, 1), (4, 1)]
        assert report["classes_omitted"] == {"count": K - 3, "first": 1}
        found = by_code(report)
        assert set(found) == {"LG012", "LG013"}
        assert found["LG012"]["count"] == K - 3
        assert found["LG012"]["details"]["classes"][:4] == [1, 3, 5, 6]  # type: ignore[index]
        assert len(found["LG012"]["details"]["classes"]) == 1000  # type: ignore[arg-type]

    @pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
    def test_the_human_formats_list_three_classes_and_count_the_rest(self, fmt: str) -> None:
        r = run_bounded(
            "validate", OOB, "--classes", str(K), "--no-progress", "--format", fmt,
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert_clean_exit(r, 0)
        assert f"{K - 3} of {K} classes never occur: 1, 3, 5, 6, 7, 8, 9, 10" in r.stdout
        assert f"{K - 3} more classes with no target (from index 1)" in r.stdout
        assert len(r.stdout) < 100_000
        r4 = run_bounded(
            "validate", OOB, "--classes", "4", "--no-progress", "--format", fmt,
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert "more classes with no target" not in r4.stdout

    def test_an_ordinary_k_lists_every_class(self) -> None:
        r = run_bounded(
            "validate", OOB, "--classes", "4", "--format", "json", "--no-progress",
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert_clean_exit(r, 1)  # the 4 is LG004 at K=4
        report = json.loads(r.stdout)
        assert "classes_omitted" not in report
        assert [c["index"] for c in report["classes"]] == [0, 1, 2, 3]

    @pytest.mark.parametrize("fmt", ["text", "json"])
    def test_k_past_the_bound_is_refused_in_one_line(self, fmt: str) -> None:
        r = run_bounded(
            "validate", OOB, "--classes", str(2**31 - 1), "--format", fmt,
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert_clean_exit(r, 2)
        assert "must be from 1 to 10000000, got '2147483647'" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


class TestSparseIds:
    def test_huge_ids_counted_exactly(self, tmp_path: Path) -> None:
        top = K - 1
        path = labels_file(tmp_path / "ids.parquet", [0, 5_000_000, top, top, K, 5_000_000, top])
        report = validated(path, 1)
        classes = [(c["index"], c["count"]) for c in report["classes"]]
        assert classes == [(0, 1), (5_000_000, 2), (top, 3)]
        assert report["classes_omitted"] == {"count": K - 3, "first": 1}
        found = by_code(report)
        assert found["LG004"]["count"] == 1  # the label K itself
        assert found["LG012"]["count"] == K - 3
        assert report["counts"] == {"rows": 7, "usable": 6, "ignored": 0, "rejected": 1}

    def test_a_name_column_names_the_classes_listed(self, tmp_path: Path) -> None:
        path = labels_file(tmp_path / "named.parquet", [7, 9_000_000], ["cat", "dog"])
        report = validated(path, 0)
        assert [(c["index"], c["name"]) for c in report["classes"]] == [
            (7, "cat"),
            (9_000_000, "dog"),
        ]
        assert report["classes_omitted"] == {"count": K - 2, "first": 0}


class TestDiffAtAHugeK:
    def test_diff_of_two_small_files(self, tmp_path: Path) -> None:
        base = labels_file(tmp_path / "base.parquet", [0, 1, 2, 9_999_999])
        head = labels_file(tmp_path / "head.parquet", [0, 1, 2, 5_000_000, K + 5])
        r = run_bounded(
            "diff", base, head, "--classes", str(K), "--format", "json",
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert_clean_exit(r, 1)
        assert len(r.stdout) < 100_000
        report = json.loads(r.stdout)
        found = by_code(report)
        assert found["LG004"]["details"] == {"values": {str(K + 5): 1}}
        assert found["LG021"]["details"] == {"values": {"5000000": 1, str(K + 5): 1}}
        assert found["LG022"]["details"] == {"classes": [9_999_999]}
        shifts = found["LG023"]["details"]["shifts"]  # type: ignore[index]
        assert [(s["key"], s["base"], s["head"]) for s in shifts] == [
            ("5000000", 0.0, 0.25),
            ("9999999", 0.25, 0.0),
        ]
        values = report["diff"]["label_values"]
        assert values["base"] == {"0": 1, "1": 1, "2": 1, "9999999": 1}
        assert values["head"] == {"0": 1, "1": 1, "2": 1, "5000000": 1, str(K + 5): 1}
        assert report["classes_omitted"] == {"count": K - 4, "first": 3}
        text = run_bounded(
            "diff", base, head, "--classes", str(K),
            memory_mb=MEMORY_MB, timeout=TIMEOUT,
        )  # fmt: skip
        assert_clean_exit(text, 1)
        assert "LG004" in text.stdout
